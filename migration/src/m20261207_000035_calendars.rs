//! Work calendars, the date each run stands for, and backfills
//! (`app/src/domain/calendar.rs`).
//!
//! - `calendars`: a name, the base rule's weekdays (`mon-fri` or `mon,tue,…`), and the dated
//!   exceptions as JSON arrays of `{date, name}`: `off` (days the base rule works that are
//!   off) and `on` (make-up workdays). A year holds a few dozen, so they travel as one value.
//! - `jobs.calendar`: the calendar a job follows, by name; `jobs.on_off_day`: what becomes of a
//!   tick the base rule gives on an off day (`skip`, `next_workday`).
//! - `job_runs.business_date`: the date a run stands for in the job's zone (a moved tick's is
//!   its off day; a manual run's the day it was asked for, or the one given). Older runs have
//!   none: the date of their `scheduled_for` is theirs.
//! - `backfills`: a range of a job's past ticks run again as a whole — paused, cancelled or
//!   done together, its progress counted by `job_runs.backfill_id`. Its runs wait as `blocked`
//!   until it starts them, `parallel` at a time; `window_start` / `window_started` count the
//!   runs started in the current minute against `per_minute`.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Calendars::Table)
                    .col(big_pk_auto(Calendars::Id))
                    .col(string_len_uniq(Calendars::Name, 64))
                    .col(string(Calendars::Base))
                    .col(text(Calendars::Off))
                    .col(text(Calendars::On))
                    .col(timestamp_with_time_zone(Calendars::CreatedAt))
                    .col(timestamp_with_time_zone(Calendars::UpdatedAt))
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(Backfills::Table)
                    .col(big_pk_auto(Backfills::Id))
                    .col(big_integer(Backfills::JobId))
                    .col(date(Backfills::FromDate))
                    .col(date(Backfills::ToDate))
                    .col(integer_null(Backfills::PerMinute))
                    .col(integer(Backfills::Parallel))
                    .col(boolean(Backfills::Rerun))
                    .col(string(Backfills::State))
                    .col(integer(Backfills::Total))
                    .col(timestamp_with_time_zone_null(Backfills::WindowStart))
                    .col(integer(Backfills::WindowStarted).default(0))
                    .col(string(Backfills::CreatedBy))
                    .col(timestamp_with_time_zone(Backfills::CreatedAt))
                    .col(timestamp_with_time_zone(Backfills::UpdatedAt))
                    .to_owned(),
            )
            .await?;
        // One column per statement: SQLite alters one thing at a time.
        for (table, mut def) in [
            (Jobs::Table.into_iden(), string_null(Jobs::Calendar)),
            (
                Jobs::Table.into_iden(),
                string(Jobs::OnOffDay).default("skip").to_owned(),
            ),
            (JobRuns::Table.into_iden(), date_null(JobRuns::BusinessDate)),
            (
                JobRuns::Table.into_iden(),
                big_integer_null(JobRuns::BackfillId),
            ),
        ] {
            manager
                .alter_table(Table::alter().table(table).add_column(&mut def).to_owned())
                .await?;
        }
        manager
            .get_connection()
            .execute_unprepared(
                "CREATE INDEX idx_job_runs_backfill ON job_runs (backfill_id) \
                 WHERE backfill_id IS NOT NULL",
            )
            .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .get_connection()
            .execute_unprepared("DROP INDEX IF EXISTS idx_job_runs_backfill")
            .await?;
        for (table, column) in [
            (JobRuns::Table.into_iden(), JobRuns::BackfillId.into_iden()),
            (
                JobRuns::Table.into_iden(),
                JobRuns::BusinessDate.into_iden(),
            ),
            (Jobs::Table.into_iden(), Jobs::OnOffDay.into_iden()),
            (Jobs::Table.into_iden(), Jobs::Calendar.into_iden()),
        ] {
            manager
                .alter_table(Table::alter().table(table).drop_column(column).to_owned())
                .await?;
        }
        for table in [Backfills::Table.into_iden(), Calendars::Table.into_iden()] {
            manager
                .drop_table(Table::drop().table(table).to_owned())
                .await?;
        }
        Ok(())
    }
}

#[derive(DeriveIden)]
enum Calendars {
    Table,
    Id,
    Name,
    Base,
    Off,
    On,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum Backfills {
    Table,
    Id,
    JobId,
    FromDate,
    ToDate,
    PerMinute,
    Parallel,
    Rerun,
    State,
    Total,
    WindowStart,
    WindowStarted,
    CreatedBy,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum Jobs {
    Table,
    Calendar,
    OnOffDay,
}

#[derive(DeriveIden)]
enum JobRuns {
    Table,
    BusinessDate,
    BackfillId,
}
