//! Watched jobs (`app/src/domain/watch.rs`): jobs that run elsewhere and ping.
//!
//! - `jobs.ping_token_hash`: the SHA-256 of the job's ping token, which `/ping/{token}` finds
//!   the job by (unique); `jobs.ping_token`: the token itself, sealed with the secret key so an
//!   admin can read the URL again (`app/src/services/watch.rs`).
//! - `job_runs.expect_by`: when a watched run gives up waiting — an awaiting tick at tick +
//!   grace (then it is missed), a started one at its timeout. Only watched runs carry it, so
//!   the sweep's index holds nothing else.
//! - `job_runs.ping_rid`: the `?rid=` a started run was given, so its end finds it among
//!   overlapping runs of the same job.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // One column per statement: SQLite alters one thing at a time.
        for column in [
            (Jobs::Table.into_iden(), string_null(Jobs::PingTokenHash)),
            (Jobs::Table.into_iden(), text_null(Jobs::PingToken)),
            (
                JobRuns::Table.into_iden(),
                timestamp_with_time_zone_null(JobRuns::ExpectBy),
            ),
            (JobRuns::Table.into_iden(), string_null(JobRuns::PingRid)),
        ] {
            let (table, mut def) = column;
            manager
                .alter_table(Table::alter().table(table).add_column(&mut def).to_owned())
                .await?;
        }
        let db = manager.get_connection();
        for sql in [
            "CREATE UNIQUE INDEX idx_jobs_ping_token_hash ON jobs (ping_token_hash) \
             WHERE ping_token_hash IS NOT NULL",
            "CREATE INDEX idx_job_runs_expect_by ON job_runs (expect_by) \
             WHERE expect_by IS NOT NULL",
        ] {
            db.execute_unprepared(sql).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        for sql in [
            "DROP INDEX IF EXISTS idx_job_runs_expect_by",
            "DROP INDEX IF EXISTS idx_jobs_ping_token_hash",
        ] {
            db.execute_unprepared(sql).await?;
        }
        for (table, column) in [
            (JobRuns::Table.into_iden(), JobRuns::ExpectBy.into_iden()),
            (JobRuns::Table.into_iden(), JobRuns::PingRid.into_iden()),
            (Jobs::Table.into_iden(), Jobs::PingTokenHash.into_iden()),
            (Jobs::Table.into_iden(), Jobs::PingToken.into_iden()),
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
    PingTokenHash,
    PingToken,
}

#[derive(DeriveIden)]
enum JobRuns {
    Table,
    ExpectBy,
    PingRid,
}
