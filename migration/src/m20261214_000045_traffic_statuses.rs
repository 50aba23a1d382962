//! `traffic_statistics.status`: the HTTP status code the response had, for hits counted by
//! the console's own layer and by log imports; `0` where nothing saw a response (the collect
//! script, and rows from before). The rollup blocks are emptied again: their people's lists
//! now include statuses and pages not found.

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
                    .add_column(small_integer(TrafficStatistics::Status).default(0))
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
                    .drop_column(TrafficStatistics::Status)
                    .to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden, Clone, Copy)]
enum TrafficStatistics {
    Table,
    Status,
}

#[derive(DeriveIden)]
enum TrafficBlocks {
    Table,
}
