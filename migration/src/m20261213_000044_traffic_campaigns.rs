//! `traffic_statistics.utm_source`, `utm_medium`, `utm_campaign`: a landing URL's campaign tags
//! (empty when untagged; never the whole query string), and `channel`: an arrival's channel
//! (`app/src/domain/channels.rs`; empty for a step within a site). Rows from before stay
//! untagged. The rollup blocks are emptied again: their people's lists now include campaigns
//! and channels.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // One column per statement: SQLite's ALTER TABLE adds one at a time.
        for column in [
            string_len(TrafficStatistics::UtmSource, 200).default(""),
            string_len(TrafficStatistics::UtmMedium, 200).default(""),
            string_len(TrafficStatistics::UtmCampaign, 200).default(""),
            string_len(TrafficStatistics::Channel, 16).default(""),
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(TrafficStatistics::Table)
                        .add_column(column)
                        .to_owned(),
                )
                .await?;
        }
        manager
            .exec_stmt(Query::delete().from_table(TrafficBlocks::Table).to_owned())
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .exec_stmt(Query::delete().from_table(TrafficBlocks::Table).to_owned())
            .await?;
        for column in [
            TrafficStatistics::UtmSource,
            TrafficStatistics::UtmMedium,
            TrafficStatistics::UtmCampaign,
            TrafficStatistics::Channel,
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(TrafficStatistics::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }
}

#[derive(DeriveIden, Clone, Copy)]
enum TrafficStatistics {
    Table,
    UtmSource,
    UtmMedium,
    UtmCampaign,
    Channel,
}

#[derive(DeriveIden)]
enum TrafficBlocks {
    Table,
}
