//! Jobs, their runs and every attempt of a run (`docs/ARCHITECTURE.md` §3).
//!
//! The database is the queue: a run's status, attempt counter, next attempt time and lease are
//! columns here, so a restarted process resumes from rows, never from memory.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        create_jobs(manager).await?;
        create_runs(manager).await?;
        create_attempts(manager).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(JobAttempts::Table).to_owned())
            .await?;
        manager
            .drop_table(Table::drop().table(JobRuns::Table).to_owned())
            .await?;
        manager
            .drop_table(Table::drop().table(Jobs::Table).to_owned())
            .await
    }
}

/// The jobs table.
async fn create_jobs(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    manager
        .create_table(
            Table::create()
                .table(Jobs::Table)
                .col(big_pk_auto(Jobs::Id))
                .col(string_len_uniq(Jobs::Name, 128))
                .col(text(Jobs::Description).default(""))
                .col(string_len(Jobs::Kind, 16))
                // Kind-specific settings (URL, command, built-in task) as a JSON document.
                .col(text(Jobs::Config))
                .col(string_len(Jobs::Cron, 128))
                .col(string_len(Jobs::Timezone, 64))
                .col(boolean(Jobs::Enabled).default(true))
                .col(big_integer(Jobs::RetryFirstMs))
                // The multiplier has one decimal: stored ×10 so it round-trips exactly.
                .col(integer(Jobs::RetryMultiplierX10))
                .col(integer(Jobs::RetryMax))
                .col(string_len(Jobs::RetryJitter, 16))
                .col(big_integer_null(Jobs::RetryCapMs))
                .col(string_len(Jobs::TimeoutMode, 8))
                .col(big_integer(Jobs::TimeoutStaticMs))
                .col(integer(Jobs::TimeoutWindow))
                .col(integer(Jobs::TimeoutFactorX10))
                .col(big_integer(Jobs::TimeoutFloorMs))
                .col(big_integer(Jobs::TimeoutHardCapMs))
                .col(string_len(Jobs::Overlap, 16))
                .col(string_len(Jobs::Misfire, 16))
                .col(string_len(Jobs::OnExhausted, 160))
                // JSON arrays of addresses.
                .col(text(Jobs::AlertTo))
                .col(integer(Jobs::EscalateAfter))
                .col(text(Jobs::EscalateTo))
                .col(timestamp_with_time_zone(Jobs::CreatedAt))
                .col(timestamp_with_time_zone(Jobs::UpdatedAt))
                .to_owned(),
        )
        .await?;
    Ok(())
}

/// The runs table, with the index that records each cron tick once.
async fn create_runs(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    manager
        .create_table(
            Table::create()
                .table(JobRuns::Table)
                .col(big_pk_auto(JobRuns::Id))
                .col(big_integer(JobRuns::JobId))
                .col(string_len(JobRuns::Trigger, 16))
                .col(timestamp_with_time_zone(JobRuns::ScheduledFor))
                // Equal to scheduled_for for cron runs and NULL otherwise: the unique index
                // below then records each cron tick once, while manual runs never collide
                // (NULLs are distinct in both SQLite and PostgreSQL).
                .col(timestamp_with_time_zone_null(JobRuns::CronTick))
                .col(string_len(JobRuns::Status, 16))
                .col(integer(JobRuns::Attempts).default(0))
                .col(timestamp_with_time_zone_null(JobRuns::NextAttemptAt))
                .col(string_len_null(JobRuns::LeaseOwner, 128))
                .col(timestamp_with_time_zone_null(JobRuns::LeaseExpiresAt))
                .col(string_len(JobRuns::IdempotencyKey, 160))
                .col(string_len_null(JobRuns::LastErrorClass, 16))
                .col(text_null(JobRuns::LastError))
                // Decorrelated jitter draws from the previous delay: persisted per run.
                .col(big_integer_null(JobRuns::PreviousDelayMs))
                .col(big_integer_null(JobRuns::RetriggerOf))
                .col(timestamp_with_time_zone(JobRuns::CreatedAt))
                .col(timestamp_with_time_zone(JobRuns::UpdatedAt))
                .col(timestamp_with_time_zone_null(JobRuns::FinishedAt))
                .foreign_key(
                    ForeignKey::create()
                        .from(JobRuns::Table, JobRuns::JobId)
                        .to(Jobs::Table, Jobs::Id),
                )
                .to_owned(),
        )
        .await?;
    manager
        .create_index(
            Index::create()
                .name("uq_job_runs_job_cron_tick")
                .table(JobRuns::Table)
                .col(JobRuns::JobId)
                .col(JobRuns::CronTick)
                .unique()
                .to_owned(),
        )
        .await?;
    manager
        .create_index(
            Index::create()
                .name("idx_job_runs_status_next_attempt")
                .table(JobRuns::Table)
                .col(JobRuns::Status)
                .col(JobRuns::NextAttemptAt)
                .to_owned(),
        )
        .await?;
    manager
        .create_index(
            Index::create()
                .name("idx_job_runs_created_at")
                .table(JobRuns::Table)
                .col(JobRuns::CreatedAt)
                .to_owned(),
        )
        .await?;
    Ok(())
}

/// The attempts table.
async fn create_attempts(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    manager
        .create_table(
            Table::create()
                .table(JobAttempts::Table)
                .col(big_pk_auto(JobAttempts::Id))
                .col(big_integer(JobAttempts::RunId))
                .col(integer(JobAttempts::Number))
                .col(timestamp_with_time_zone(JobAttempts::StartedAt))
                .col(timestamp_with_time_zone_null(JobAttempts::FinishedAt))
                .col(big_integer_null(JobAttempts::DurationMs))
                .col(big_integer(JobAttempts::TimeoutMs))
                .col(string_len_null(JobAttempts::Outcome, 16))
                .col(string_len_null(JobAttempts::ErrorClass, 16))
                .col(text_null(JobAttempts::Message))
                .col(text_null(JobAttempts::OutputTail))
                .col(string_len(JobAttempts::Node, 128))
                .col(double_null(JobAttempts::LoadAvg))
                .foreign_key(
                    ForeignKey::create()
                        .from(JobAttempts::Table, JobAttempts::RunId)
                        .to(JobRuns::Table, JobRuns::Id),
                )
                .to_owned(),
        )
        .await?;
    manager
        .create_index(
            Index::create()
                .name("uq_job_attempts_run_number")
                .table(JobAttempts::Table)
                .col(JobAttempts::RunId)
                .col(JobAttempts::Number)
                .unique()
                .to_owned(),
        )
        .await
}

#[derive(DeriveIden)]
enum Jobs {
    Table,
    Id,
    Name,
    Description,
    Kind,
    Config,
    Cron,
    Timezone,
    Enabled,
    RetryFirstMs,
    RetryMultiplierX10,
    RetryMax,
    RetryJitter,
    RetryCapMs,
    TimeoutMode,
    TimeoutStaticMs,
    TimeoutWindow,
    TimeoutFactorX10,
    TimeoutFloorMs,
    TimeoutHardCapMs,
    Overlap,
    Misfire,
    OnExhausted,
    AlertTo,
    EscalateAfter,
    EscalateTo,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum JobRuns {
    Table,
    Id,
    JobId,
    Trigger,
    ScheduledFor,
    CronTick,
    Status,
    Attempts,
    NextAttemptAt,
    LeaseOwner,
    LeaseExpiresAt,
    IdempotencyKey,
    LastErrorClass,
    LastError,
    PreviousDelayMs,
    RetriggerOf,
    CreatedAt,
    UpdatedAt,
    FinishedAt,
}

#[derive(DeriveIden)]
enum JobAttempts {
    Table,
    Id,
    RunId,
    Number,
    StartedAt,
    FinishedAt,
    DurationMs,
    TimeoutMs,
    Outcome,
    ErrorClass,
    Message,
    OutputTail,
    Node,
    LoadAvg,
}
