//! Mail (`docs/ARCHITECTURE.md` §6): the outbox every mail goes through, and each job's alert
//! state.
//!
//! - `mail_outbox`: one row per mail, unique on `dedupe_key`, so whatever decides to send a
//!   mail (an alert inside the transaction that settled the run, the digest job, a person) can
//!   do so twice without a second mail existing. A sender claims due rows with a lease
//!   (`claimed_by`, `claimed_until`), delivers them, and records the server's reply; a failed
//!   attempt moves `next_attempt_at` on. `status`: `pending`, `sent`, `written` (no SMTP
//!   server configured: kept here and as an .eml file), `failed` (refused for good; resend
//!   puts it back to pending).
//! - `job_alerts`: per job, the current failure episode (`episode` counts them; `open` while
//!   failing), how many runs of it failed, and whether it was escalated.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Outbox::Table)
                    .col(big_pk_auto(Outbox::Id))
                    .col(string_len(Outbox::DedupeKey, 200))
                    .col(string_len(Outbox::Kind, 32))
                    .col(big_integer_null(Outbox::JobId))
                    .col(big_integer_null(Outbox::RunId))
                    // Addresses, comma-separated.
                    .col(text(Outbox::Recipients))
                    .col(text(Outbox::Subject))
                    .col(text(Outbox::BodyText))
                    .col(text_null(Outbox::BodyHtml))
                    .col(string_len(Outbox::Status, 16))
                    .col(integer(Outbox::Attempts).default(0))
                    .col(timestamp_with_time_zone(Outbox::NextAttemptAt))
                    .col(text_null(Outbox::LastError))
                    .col(text_null(Outbox::Reply))
                    .col(string_len_null(Outbox::ClaimedBy, 128))
                    .col(timestamp_with_time_zone_null(Outbox::ClaimedUntil))
                    .col(timestamp_with_time_zone(Outbox::CreatedAt))
                    .col(timestamp_with_time_zone_null(Outbox::SentAt))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("uq_mail_outbox_dedupe_key")
                    .table(Outbox::Table)
                    .col(Outbox::DedupeKey)
                    .unique()
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("idx_mail_outbox_due")
                    .table(Outbox::Table)
                    .col(Outbox::Status)
                    .col(Outbox::NextAttemptAt)
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(JobAlerts::Table)
                    .col(big_integer(JobAlerts::JobId).primary_key())
                    .col(integer(JobAlerts::Episode))
                    .col(boolean(JobAlerts::Open))
                    .col(timestamp_with_time_zone_null(JobAlerts::OpenedAt))
                    .col(big_integer_null(JobAlerts::FirstRunId))
                    .col(integer(JobAlerts::FailedRuns))
                    .col(boolean(JobAlerts::Escalated))
                    .col(timestamp_with_time_zone(JobAlerts::UpdatedAt))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(JobAlerts::Table).to_owned())
            .await?;
        manager
            .drop_table(Table::drop().table(Outbox::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
enum Outbox {
    #[sea_orm(iden = "mail_outbox")]
    Table,
    Id,
    DedupeKey,
    Kind,
    JobId,
    RunId,
    Recipients,
    Subject,
    BodyText,
    BodyHtml,
    Status,
    Attempts,
    NextAttemptAt,
    LastError,
    Reply,
    ClaimedBy,
    ClaimedUntil,
    CreatedAt,
    SentAt,
}

#[derive(DeriveIden)]
enum JobAlerts {
    #[sea_orm(iden = "job_alerts")]
    Table,
    JobId,
    Episode,
    Open,
    OpenedAt,
    FirstRunId,
    FailedRuns,
    Escalated,
    UpdatedAt,
}
