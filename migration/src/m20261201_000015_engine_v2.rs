//! The engine's second design (`docs/ARCHITECTURE.md` §3):
//!
//! - `jobs.next_fire_at`: the next cron tick not yet recorded, indexed, so the trigger reads the
//!   jobs that are due instead of every job and every run; `lane_seq`, bumped by every
//!   transaction that adds runs to a job or ends one, so those transactions take the job's
//!   row lock first and a job's lane changes one transaction at a time.
//! - `jobs.stall_timeout_ms`: end a command attempt that prints nothing for this long.
//! - `job_runs.due_at`: when the run may be claimed, set only on the head of its job's lane
//!   (the one run that may go next); a partial index on it is the whole claim query.
//!   `handbacks` counts attempts a graceful shutdown gave back, which spend no retry.
//! - `job_attempts.timeout_kind` (`timeout` or `stalled`) and `spent_retry`.
//! - Indexes for the per-node lease renewal and the recovery sweep; the old claim's
//!   `(status, next_attempt_at)` index goes.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Jobs::Table)
                    .add_column(timestamp_with_time_zone_null(Jobs::NextFireAt))
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(Jobs::Table)
                    .add_column(big_integer(Jobs::LaneSeq).default(0))
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(Jobs::Table)
                    .add_column(big_integer_null(Jobs::StallTimeoutMs))
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(JobRuns::Table)
                    .add_column(timestamp_with_time_zone_null(JobRuns::DueAt))
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(JobRuns::Table)
                    .add_column(integer(JobRuns::Handbacks).default(0))
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(JobAttempts::Table)
                    .add_column(string_len_null(JobAttempts::TimeoutKind, 16))
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(JobAttempts::Table)
                    .add_column(boolean(JobAttempts::SpentRetry).default(true))
                    .to_owned(),
            )
            .await?;

        let db = manager.get_connection();
        // The head of each job's lane: its oldest active run, unless that one is running.
        db.execute_unprepared(
            "UPDATE job_runs SET due_at = COALESCE(next_attempt_at, scheduled_for) \
             WHERE status IN ('pending', 'retry_wait') AND id IN \
               (SELECT MIN(id) FROM job_runs \
                WHERE status IN ('pending', 'retry_wait', 'running') GROUP BY job_id)",
        )
        .await?;
        for sql in [
            "CREATE INDEX idx_job_runs_due ON job_runs (due_at, id) WHERE due_at IS NOT NULL",
            "CREATE INDEX idx_job_runs_lease_owner ON job_runs (lease_owner) \
             WHERE lease_owner IS NOT NULL",
            "CREATE INDEX idx_job_runs_lease_expiry ON job_runs (lease_expires_at) \
             WHERE lease_owner IS NOT NULL",
            "CREATE INDEX idx_jobs_next_fire ON jobs (next_fire_at)",
            "DROP INDEX idx_job_runs_status_next_attempt",
        ] {
            db.execute_unprepared(sql).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        for sql in [
            "CREATE INDEX idx_job_runs_status_next_attempt ON job_runs (status, next_attempt_at)",
            "DROP INDEX idx_jobs_next_fire",
            "DROP INDEX idx_job_runs_lease_expiry",
            "DROP INDEX idx_job_runs_lease_owner",
            "DROP INDEX idx_job_runs_due",
        ] {
            db.execute_unprepared(sql).await?;
        }
        for (table, column) in [
            (
                JobAttempts::Table.into_iden(),
                JobAttempts::SpentRetry.into_iden(),
            ),
            (
                JobAttempts::Table.into_iden(),
                JobAttempts::TimeoutKind.into_iden(),
            ),
            (JobRuns::Table.into_iden(), JobRuns::Handbacks.into_iden()),
            (JobRuns::Table.into_iden(), JobRuns::DueAt.into_iden()),
            (Jobs::Table.into_iden(), Jobs::StallTimeoutMs.into_iden()),
            (Jobs::Table.into_iden(), Jobs::LaneSeq.into_iden()),
            (Jobs::Table.into_iden(), Jobs::NextFireAt.into_iden()),
        ] {
            manager
                .alter_table(Table::alter().table(table).drop_column(column).to_owned())
                .await?;
        }
        Ok(())
    }
}

#[derive(DeriveIden)]
enum Jobs {
    Table,
    NextFireAt,
    LaneSeq,
    StallTimeoutMs,
}

#[derive(DeriveIden)]
enum JobRuns {
    Table,
    DueAt,
    Handbacks,
}

#[derive(DeriveIden)]
enum JobAttempts {
    Table,
    TimeoutKind,
    SpentRetry,
}
