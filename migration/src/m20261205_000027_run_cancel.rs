//! `job_runs.cancel_requested_at`: a running run someone cancelled keeps its lease and its
//! place at the head of its job's lane until the node running it has stopped the attempt and
//! written it back as cancelled — so the job's next run cannot start beside it
//! (`app/src/services/runs.rs`, `cancel`).

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(JobRuns::Table)
                    .add_column(timestamp_with_time_zone_null(JobRuns::CancelRequestedAt))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(JobRuns::Table)
                    .drop_column(JobRuns::CancelRequestedAt)
                    .to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden)]
enum JobRuns {
    Table,
    CancelRequestedAt,
}
