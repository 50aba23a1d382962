//! Indexes that let the failed queue's counts by job and by class read an index instead of
//! every dead run (measured with `bulwark bench queue`).

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

const INDEXES: [(&str, JobRuns); 2] = [
    ("idx_job_runs_queue_job", JobRuns::JobId),
    ("idx_job_runs_queue_class", JobRuns::LastErrorClass),
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for (name, column) in INDEXES {
            manager
                .create_index(
                    Index::create()
                        .name(name)
                        .table(JobRuns::Table)
                        .col(JobRuns::Status)
                        .col(JobRuns::Resolution)
                        .col(column)
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for (name, _) in INDEXES {
            manager
                .drop_index(Index::drop().name(name).table(JobRuns::Table).to_owned())
                .await?;
        }
        Ok(())
    }
}

#[derive(DeriveIden, Clone, Copy)]
enum JobRuns {
    Table,
    Status,
    Resolution,
    JobId,
    LastErrorClass,
}
