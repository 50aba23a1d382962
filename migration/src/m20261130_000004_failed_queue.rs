//! The failed queue: how a dead run left the queue (re-triggered, resolved by hand, discarded),
//! by whom and why; one-off overrides a re-trigger may carry; the policy a run ran under.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // One column per statement: SQLite's ALTER TABLE adds one at a time.
        for column in [
            string_len_null(JobRuns::Resolution, 16),
            string_len_null(JobRuns::ResolvedBy, 64),
            timestamp_with_time_zone_null(JobRuns::ResolvedAt),
            text_null(JobRuns::ResolutionReason),
            big_integer_null(JobRuns::OverrideTimeoutMs),
            text_null(JobRuns::OverrideRetry),
            text_null(JobRuns::Policy),
        ] {
            let mut column = column;
            manager
                .alter_table(
                    Table::alter()
                        .table(JobRuns::Table)
                        .add_column(&mut column)
                        .to_owned(),
                )
                .await?;
        }
        manager
            .create_index(
                Index::create()
                    .name("idx_job_runs_status_finished")
                    .table(JobRuns::Table)
                    .col(JobRuns::Status)
                    .col(JobRuns::FinishedAt)
                    .col(JobRuns::Id)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(
                Index::drop()
                    .name("idx_job_runs_status_finished")
                    .table(JobRuns::Table)
                    .to_owned(),
            )
            .await?;
        for column in [
            JobRuns::Policy,
            JobRuns::OverrideRetry,
            JobRuns::OverrideTimeoutMs,
            JobRuns::ResolutionReason,
            JobRuns::ResolvedAt,
            JobRuns::ResolvedBy,
            JobRuns::Resolution,
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(JobRuns::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }
}

#[derive(DeriveIden, Clone, Copy)]
enum JobRuns {
    Table,
    Id,
    Status,
    FinishedAt,
    Resolution,
    ResolvedBy,
    ResolvedAt,
    ResolutionReason,
    OverrideTimeoutMs,
    OverrideRetry,
    Policy,
}
