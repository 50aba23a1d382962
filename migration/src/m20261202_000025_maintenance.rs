//! Pausing: a job can be paused (`jobs.paused`: its schedule is kept, its ticks wait, and on
//! resume they follow its misfire policy), a job carries tags (`jobs.tags`, a JSON array of
//! lowercase words teams split jobs by), and `maintenance_windows` pauses every job, or every
//! job with one tag, from `starts_at` until `ends_at` (open-ended while NULL). "Pause all" is a
//! window starting now; "resume" ends the open ones. A window's row stays after it ends, with
//! who ended it, so the history of pauses can be read back.
//!
//! `idx_job_runs_job_id` (job_id, id) serves the Jobs page: each job's newest runs, read
//! newest first without sorting.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in [
            boolean(Jobs::Paused).default(false).to_owned(),
            text(Jobs::Tags).default("[]").to_owned(),
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Jobs::Table)
                        .add_column(column)
                        .to_owned(),
                )
                .await?;
        }
        manager
            .create_table(
                Table::create()
                    .table(MaintenanceWindows::Table)
                    .col(big_pk_auto(MaintenanceWindows::Id))
                    .col(timestamp_with_time_zone(MaintenanceWindows::StartsAt))
                    .col(timestamp_with_time_zone_null(MaintenanceWindows::EndsAt))
                    .col(string_len(MaintenanceWindows::Reason, 500))
                    .col(string_len_null(MaintenanceWindows::Tag, 40))
                    .col(string_len(MaintenanceWindows::CreatedBy, 64))
                    .col(timestamp_with_time_zone(MaintenanceWindows::CreatedAt))
                    .col(string_len_null(MaintenanceWindows::EndedBy, 64))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("idx_job_runs_job_id")
                    .table(JobRuns::Table)
                    .col(JobRuns::JobId)
                    .col(JobRuns::Id)
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("maintenance_windows_ends_at")
                    .table(MaintenanceWindows::Table)
                    .col(MaintenanceWindows::EndsAt)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(MaintenanceWindows::Table).to_owned())
            .await?;
        manager
            .drop_index(
                Index::drop()
                    .name("idx_job_runs_job_id")
                    .table(JobRuns::Table)
                    .to_owned(),
            )
            .await?;
        for column in [Jobs::Paused, Jobs::Tags] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Jobs::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }
}

#[derive(DeriveIden)]
enum Jobs {
    Table,
    Paused,
    Tags,
}

#[derive(DeriveIden)]
enum JobRuns {
    Table,
    Id,
    JobId,
}

#[derive(DeriveIden)]
enum MaintenanceWindows {
    Table,
    Id,
    StartsAt,
    EndsAt,
    Reason,
    Tag,
    CreatedBy,
    CreatedAt,
    EndedBy,
}
