//! Trend alerts' episodes (`domain::trends`): one row per condition (`spike`, `rate`,
//! `burst:<class>`), open while it holds, so each episode mails once.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(TrendAlerts::Table)
                    .col(string_len(TrendAlerts::Key, 64).primary_key())
                    .col(integer(TrendAlerts::Episode))
                    .col(boolean(TrendAlerts::Open))
                    .col(timestamp_with_time_zone(TrendAlerts::OpenedAt))
                    // The last evaluation that saw the condition hold.
                    .col(timestamp_with_time_zone(TrendAlerts::LastSeenAt))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(TrendAlerts::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
enum TrendAlerts {
    Table,
    Key,
    Episode,
    Open,
    OpenedAt,
    LastSeenAt,
}
