//! What Bulwark forgets, and when: the daily `cleanup` system job deletes, in batches so other
//! writers get the database in between,
//!
//! - runs (with their attempts and their output) that ended more than `run_retention_days` ago — except dead
//!   runs still waiting in the failed queue, which stay until someone handles them;
//! - audit entries after a year; mails and channel messages 30 days after they were delivered
//!   (or written as .eml), and those that failed for good 30 days after they were queued;
//! - expired sessions.
//!
//! The digest (24 hours), learned timeouts and the slow flag (the latest successes) read far
//! less history than is kept.

use chrono::{DateTime, Duration, Utc};
use sea_orm::{ConnectionTrait, DbErr};
use serde::{Deserialize, Serialize};

use super::sql::Binder;
use crate::domain::mail::MailStatus;
use crate::domain::run::RunStatus;

/// How long things are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Retention {
    pub run_days: u32,
    pub audit_days: u32,
    pub mail_days: u32,
}

impl Default for Retention {
    fn default() -> Self {
        Retention {
            run_days: 90,
            audit_days: 365,
            mail_days: 30,
        }
    }
}

/// Rows deleted per statement.
pub const BATCH: u64 = 1000;

/// What one cleanup deleted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cleaned {
    pub runs: u64,
    pub attempts: u64,
    pub audit: u64,
    pub mails: u64,
    pub sessions: u64,
}

impl std::fmt::Display for Cleaned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "deleted {} runs with {} attempts, {} audit entries, {} old mails and channel messages, {} expired sessions",
            self.runs, self.attempts, self.audit, self.mails, self.sessions
        )
    }
}

/// Deletes what `retention` says is old at `now`.
pub async fn clean(
    db: &impl ConnectionTrait,
    now: DateTime<Utc>,
    retention: Retention,
) -> Result<Cleaned, DbErr> {
    let mut cleaned = Cleaned::default();
    let before = now - Duration::days(i64::from(retention.run_days));
    loop {
        let (runs, attempts) = old_runs_batch(db, before).await?;
        cleaned.runs += runs;
        cleaned.attempts += attempts;
        if runs < BATCH {
            break;
        }
        tokio::task::yield_now().await;
    }
    cleaned.audit = batched(
        db,
        "audit_log",
        "at",
        now - days(retention.audit_days),
        None,
    )
    .await?;
    cleaned.mails = batched(
        db,
        "mail_outbox",
        "sent_at",
        now - days(retention.mail_days),
        Some(&[MailStatus::Sent.as_str(), MailStatus::Written.as_str()]),
    )
    .await?;
    // Channel messages live as long as mails: delivered ones (and those a summary carried).
    cleaned.mails += batched(
        db,
        "channel_deliveries",
        "sent_at",
        now - days(retention.mail_days),
        Some(&[
            crate::domain::chat::DeliveryStatus::Sent.as_str(),
            crate::domain::chat::DeliveryStatus::Summarised.as_str(),
        ]),
    )
    .await?;
    // Those that failed for good (a person could resend them) go as long after they were
    // queued: they have no delivery time. Both tables call that state `failed`.
    debug_assert_eq!(
        MailStatus::Failed.as_str(),
        crate::domain::chat::DeliveryStatus::Failed.as_str()
    );
    for table in ["mail_outbox", "channel_deliveries"] {
        cleaned.mails += batched(
            db,
            table,
            "created_at",
            now - days(retention.mail_days),
            Some(&[MailStatus::Failed.as_str()]),
        )
        .await?;
    }
    cleaned.sessions = super::sessions::purge_expired(db, now).await?;
    Ok(cleaned)
}

fn days(n: u32) -> Duration {
    Duration::days(i64::from(n))
}

/// One batch of ended runs older than `before` (not the failed queue's), attempts first.
async fn old_runs_batch(
    db: &impl ConnectionTrait,
    before: DateTime<Utc>,
) -> Result<(u64, u64), DbErr> {
    let backend = db.get_database_backend();
    let mut b = Binder::new(backend);
    let before = b.bind(before);
    let ended = b.bind_list(
        [
            RunStatus::Succeeded,
            RunStatus::Skipped,
            RunStatus::Cancelled,
            RunStatus::Dead,
        ]
        .map(RunStatus::as_str),
    );
    let dead = b.bind(RunStatus::Dead.as_str());
    let sql = format!(
        "SELECT id FROM job_runs WHERE finished_at < {before} AND status IN ({ended}) \
         AND NOT (status = {dead} AND resolution IS NULL) ORDER BY id LIMIT {BATCH}"
    );
    let ids: Vec<i64> = db
        .query_all_raw(b.statement(sql))
        .await?
        .iter()
        .map(|row| row.try_get::<i64>("", "id"))
        .collect::<Result<_, _>>()?;
    if ids.is_empty() {
        return Ok((0, 0));
    }
    super::run_logs::delete_for_runs(db, &ids).await?;
    let mut b = Binder::new(backend);
    let list = b.bind_list(ids.iter().copied());
    let attempts = db
        .execute_raw(b.statement(format!("DELETE FROM job_attempts WHERE run_id IN ({list})")))
        .await?
        .rows_affected();
    let mut b = Binder::new(backend);
    let list = b.bind_list(ids.iter().copied());
    let runs = db
        .execute_raw(b.statement(format!("DELETE FROM job_runs WHERE id IN ({list})")))
        .await?
        .rows_affected();
    Ok((runs, attempts))
}

/// Deletes rows of `table` whose `column` is before `before` (and whose status is one of
/// `statuses`, when given), [`BATCH`] at a time.
async fn batched(
    db: &impl ConnectionTrait,
    table: &str,
    column: &str,
    before: DateTime<Utc>,
    statuses: Option<&[&str]>,
) -> Result<u64, DbErr> {
    let mut deleted = 0;
    loop {
        let mut b = Binder::new(db.get_database_backend());
        let before = b.bind(before);
        let status = match statuses {
            Some(list) => format!(" AND status IN ({})", b.bind_list(list.iter().copied())),
            None => String::new(),
        };
        let sql = format!(
            "DELETE FROM {table} WHERE id IN (SELECT id FROM {table} WHERE {column} < {before}{status} \
             ORDER BY id LIMIT {BATCH})"
        );
        let n = db.execute_raw(b.statement(sql)).await?.rows_affected();
        deleted += n;
        if n < BATCH {
            return Ok(deleted);
        }
        tokio::task::yield_now().await;
    }
}
