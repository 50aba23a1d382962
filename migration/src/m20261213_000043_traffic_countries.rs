//! `traffic_statistics.country`: the visitor's country (ISO 3166-1 alpha-2, `""` when unknown),
//! looked up at flush time (`server/src/traffic/geo.rs`). Rows from before stay unknown. The
//! rollup blocks are emptied: they are caches rebuilt when read, and the people's lists they
//! hold now include countries (`app/src/services/traffic/blocks.rs`).

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(TrafficStatistics::Table)
                    .add_column(string_len(TrafficStatistics::Country, 2).default(""))
                    .to_owned(),
            )
            .await?;
        manager
            .exec_stmt(Query::delete().from_table(TrafficBlocks::Table).to_owned())
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .exec_stmt(Query::delete().from_table(TrafficBlocks::Table).to_owned())
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(TrafficStatistics::Table)
                    .drop_column(TrafficStatistics::Country)
                    .to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden)]
enum TrafficStatistics {
    Table,
    Country,
}

#[derive(DeriveIden)]
enum TrafficBlocks {
    Table,
}
