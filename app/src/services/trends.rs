//! Trend alerts: counts attempts over the windows of [`crate::domain::trends`], and mails each
//! condition once per episode to the digest's recipients (they watch the whole system).

use chrono::{DateTime, Duration, Utc};
use sea_orm::sea_query::OnConflict;
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait,
    QueryFilter, QuerySelect, TransactionTrait,
};

use super::outbox::{self, NewMail};
use crate::domain::email::EmailAddress;
use crate::domain::run::{ErrorClass, Outcome};
use crate::domain::trends::{self, CLEAR_AFTER_MINUTES, Finding, Window};
use crate::entities::{job_attempt, trend_alert};

pub async fn window(db: &impl ConnectionTrait, now: DateTime<Utc>) -> Result<Window, DbErr> {
    let by_class = |from: DateTime<Utc>, to: DateTime<Utc>| {
        job_attempt::Entity::find()
            .select_only()
            .column(job_attempt::Column::ErrorClass)
            .column_as(job_attempt::Column::Id.count(), "n")
            .filter(job_attempt::Column::FinishedAt.gte(from))
            .filter(job_attempt::Column::FinishedAt.lt(to))
            .filter(job_attempt::Column::Outcome.is_in(Outcome::FAILURES.iter().copied()))
            .group_by(job_attempt::Column::ErrorClass)
            .into_tuple::<(Option<ErrorClass>, i64)>()
    };
    let collect = |rows: Vec<(Option<ErrorClass>, i64)>| {
        rows.into_iter()
            .map(|(class, n)| (class, n.max(0) as u64))
            .collect()
    };
    let five = now - Duration::minutes(5);
    let fifteen = now - Duration::minutes(15);
    let failed_5m = collect(by_class(five, now).all(db).await?);
    let failed_baseline = collect(by_class(five - Duration::hours(24), five).all(db).await?);
    let count = |failed_only: bool| {
        let mut q = job_attempt::Entity::find()
            .select_only()
            .column_as(job_attempt::Column::Id.count(), "n")
            .filter(job_attempt::Column::FinishedAt.gte(fifteen))
            .filter(job_attempt::Column::FinishedAt.lt(now));
        if failed_only {
            q = q.filter(job_attempt::Column::Outcome.is_in(Outcome::FAILURES.iter().copied()));
        }
        q.into_tuple::<i64>()
    };
    let attempts_15m = count(false).one(db).await?.unwrap_or(0).max(0) as u64;
    let failed_15m = count(true).one(db).await?.unwrap_or(0).max(0) as u64;
    Ok(Window {
        failed_5m,
        attempts_15m,
        failed_15m,
        failed_baseline,
    })
}

/// Evaluates the trends at `now`: opens an episode (and queues its mail) for each new
/// condition, closes those clear for long enough. Says what it did.
///
/// The counts are read before the transaction, whose first statement writes: on SQLite a
/// transaction that reads first and writes later fails ("database is locked") if another
/// writer committed in between, where one that writes first simply waits its turn.
pub async fn check(
    db: &DatabaseConnection,
    now: DateTime<Utc>,
    default_locale: crate::i18n::Locale,
) -> Result<String, DbErr> {
    let findings = trends::evaluate(&window(db, now).await?);
    let mut recipients = super::notifications::recipients(db).await?;
    let channels = super::notifications::channels(db).await?;
    for address in super::notifications::channel_outbox::email_addresses(db, &channels).await? {
        if !recipients.contains(&address) {
            recipients.push(address);
        }
    }
    let txn = db.begin().await?;
    let locale = super::notifications::mail_locale(&txn, default_locale).await?;
    let said = record(
        &txn,
        &findings,
        &recipients,
        &channels,
        now,
        (locale, default_locale),
    )
    .await?;
    txn.commit().await?;
    Ok(said)
}

async fn record(
    db: &impl ConnectionTrait,
    findings: &[Finding],
    recipients: &[EmailAddress],
    channels: &[String],
    now: DateTime<Utc>,
    // The language of mails, and the default for channels without one.
    (mail_locale, default_locale): (crate::i18n::Locale, crate::i18n::Locale),
) -> Result<String, DbErr> {
    let mut opened = Vec::new();
    for finding in findings {
        if open_or_touch(db, finding, now).await? {
            opened.push(finding.key.clone());
            if recipients.is_empty() && channels.is_empty() {
                tracing::warn!(trend = %finding.key, "no recipients or channels for trend alerts (the digest's): not sent");
                continue;
            }
            let episode = trend_alert::Entity::find_by_id(finding.key.clone())
                .one(db)
                .await?
                .map_or(0, |row| row.episode);
            super::notifications::channel_outbox::enqueue(
                db,
                channels,
                &super::notifications::channel_outbox::NewEvent::in_every_language(
                    format!("trend:{}:{episode}", finding.key),
                    |l| crate::i18n::trends::chat_event(finding, now, l),
                    default_locale,
                ),
                now,
                default_locale,
            )
            .await?;
            if recipients.is_empty() {
                continue;
            }
            outbox::enqueue(
                db,
                NewMail {
                    dedupe_key: format!("trend:{}:{episode}", finding.key),
                    kind: "trend".into(),
                    job_id: None,
                    run_id: None,
                    recipients: recipients.to_vec(),
                    composed: crate::i18n::mail::trend(mail_locale, finding),
                },
                now,
            )
            .await?;
        }
    }
    // Traffic episodes end by their own check (`super::traffic::alerts`), with a recovery.
    let closed = trend_alert::Entity::update_many()
        .col_expr(
            trend_alert::Column::Open,
            sea_orm::sea_query::Expr::value(false),
        )
        .filter(trend_alert::Column::Open.eq(true))
        .filter(trend_alert::Column::Key.not_like(format!("{TRAFFIC}%")))
        .filter(trend_alert::Column::LastSeenAt.lt(now - Duration::minutes(CLEAR_AFTER_MINUTES)))
        .exec(db)
        .await?
        .rows_affected;
    Ok(format!(
        "{} condition(s) hold{}; {closed} episode(s) ended",
        findings.len(),
        if opened.is_empty() {
            String::new()
        } else {
            format!(", new: {}", opened.join(", "))
        }
    ))
}

/// Where traffic episodes' keys start (`crate::domain::traffic_alerts::key`).
const TRAFFIC: &str = "traffic:";

/// Marks `finding` seen now; true when that starts a new episode.
async fn open_or_touch(
    db: &impl ConnectionTrait,
    finding: &Finding,
    now: DateTime<Utc>,
) -> Result<bool, DbErr> {
    Ok(open_key(db, &finding.key, now).await?.is_some())
}

/// The keys of the episodes open now whose key starts with `prefix`.
pub async fn open_keys(db: &impl ConnectionTrait, prefix: &str) -> Result<Vec<String>, DbErr> {
    Ok(trend_alert::Entity::find()
        .filter(trend_alert::Column::Open.eq(true))
        .filter(trend_alert::Column::Key.starts_with(prefix))
        .all(db)
        .await?
        .into_iter()
        .map(|row| row.key)
        .collect())
}

/// Ends `key`'s episode if it is open; its number when it was.
pub async fn close_key(db: &impl ConnectionTrait, key: &str) -> Result<Option<i32>, DbErr> {
    let row = trend_alert::Entity::find_by_id(key.to_string())
        .lock_exclusive()
        .one(db)
        .await?;
    let Some(row) = row.filter(|row| row.open) else {
        return Ok(None);
    };
    let episode = row.episode;
    trend_alert::Entity::update(trend_alert::ActiveModel {
        key: Set(row.key),
        open: Set(false),
        ..Default::default()
    })
    .exec(db)
    .await?;
    Ok(Some(episode))
}

/// Marks `key` seen now; the new episode's number when that starts one. The row is locked for
/// the rest of the transaction on PostgreSQL, so two nodes evaluating at once open it once.
pub async fn open_key(
    db: &impl ConnectionTrait,
    key: &str,
    now: DateTime<Utc>,
) -> Result<Option<i32>, DbErr> {
    trend_alert::Entity::insert(trend_alert::ActiveModel {
        key: Set(key.to_string()),
        episode: Set(0),
        open: Set(false),
        opened_at: Set(now),
        last_seen_at: Set(now),
    })
    .on_conflict(
        OnConflict::column(trend_alert::Column::Key)
            .do_nothing()
            .to_owned(),
    )
    .exec_without_returning(db)
    .await?;
    // `FOR UPDATE` on PostgreSQL; SQLite has no row locks (its write lock serialises writers)
    // and the query builder leaves the clause out there.
    let row = trend_alert::Entity::find_by_id(key.to_string())
        .lock_exclusive()
        .one(db)
        .await?
        .ok_or_else(|| DbErr::RecordNotFound(format!("trend_alerts {key}")))?;
    let starts = !row.open;
    let episode = if starts { row.episode + 1 } else { row.episode };
    trend_alert::Entity::update(trend_alert::ActiveModel {
        key: Set(row.key),
        episode: Set(episode),
        open: Set(true),
        opened_at: Set(if starts { now } else { row.opened_at }),
        last_seen_at: Set(now),
    })
    .exec(db)
    .await?;
    Ok(starts.then_some(episode))
}
