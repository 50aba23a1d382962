//! What the engine needs beyond the first cut: a per-job index for the claim query's
//! "no older active run of this job" check, and a flag for attempts slower than their history.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_index(
                Index::create()
                    .name("idx_job_runs_job_status")
                    .table(JobRuns::Table)
                    .col(JobRuns::JobId)
                    .col(JobRuns::Status)
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(JobAttempts::Table)
                    .add_column(boolean(JobAttempts::Slow).default(false))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(JobAttempts::Table)
                    .drop_column(JobAttempts::Slow)
                    .to_owned(),
            )
            .await?;
        manager
            .drop_index(
                Index::drop()
                    .name("idx_job_runs_job_status")
                    .table(JobRuns::Table)
                    .to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden)]
enum JobRuns {
    Table,
    JobId,
    Status,
}

#[derive(DeriveIden)]
enum JobAttempts {
    Table,
    Slow,
}
