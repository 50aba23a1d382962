//! Scheduled traffic reports (`app/src/domain/traffic_report.rs`): one row per site that has
//! one, with how often it goes out and to whom. The reports themselves are rows of the mail and
//! channel outboxes, deduplicated per site and period.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Reports::Table)
                    .col(big_pk_auto(Reports::Id))
                    .col(string_len_uniq(Reports::Site, 255))
                    .col(string_len(Reports::Every, 8))
                    // Addresses, comma-separated (`app/src/domain/email.rs`'s `join`).
                    .col(text(Reports::Recipients))
                    // Channel names, a JSON array (as a job's `alert_channels`).
                    .col(text(Reports::Channels))
                    .col(timestamp_with_time_zone(Reports::CreatedAt))
                    .col(timestamp_with_time_zone(Reports::UpdatedAt))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(Reports::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
enum Reports {
    #[sea_orm(iden = "traffic_reports")]
    Table,
    Id,
    Site,
    Every,
    Recipients,
    Channels,
    CreatedAt,
    UpdatedAt,
}
