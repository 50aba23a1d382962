//! Turning a settled run into alert mails, inside the transaction that settled it: the rules
//! are [`crate::domain::alerts`], the words [`crate::domain::mail`], delivery the outbox's.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::OnConflict;
use sea_orm::{ActiveValue::Set, ConnectionTrait, DbErr, EntityTrait, QuerySelect};

use super::outbox::{self, NewMail};
use crate::domain::alerts::{self, Alert, AlertState, RunOutcome};
use crate::domain::email::EmailAddress;
use crate::domain::mail::{self, FailedRun};
use crate::entities::{job, job_alert};

/// How a run ended, as the alerts need it.
pub enum Settled {
    Succeeded { run_id: i64 },
    Failed(FailedRun),
}

/// Steps the job's episode for this outcome and queues the mails it calls for. Returns the
/// alerts (queued or, with no recipients, only logged).
pub async fn record(
    db: &impl ConnectionTrait,
    job: &job::Model,
    settled: &Settled,
    now: DateTime<Utc>,
) -> Result<Vec<Alert>, DbErr> {
    let state = lock_state(db, job.id, now).await?;
    let outcome = match settled {
        Settled::Succeeded { .. } => RunOutcome::Succeeded,
        Settled::Failed(_) => RunOutcome::Failed,
    };
    let (next, fired) = alerts::step(&state, outcome, job.escalate_after, now);
    if next == state {
        return Ok(fired);
    }
    let first_run_id = match (settled, state.open, next.open) {
        (Settled::Failed(run), false, true) => Some(run.run_id),
        _ => None,
    };
    job_alert::Entity::update(job_alert::ActiveModel {
        job_id: Set(job.id),
        episode: Set(next.episode),
        open: Set(next.open),
        opened_at: Set(next.opened_at),
        first_run_id: if first_run_id.is_some() {
            Set(first_run_id)
        } else {
            Default::default()
        },
        failed_runs: Set(next.failed_runs),
        escalated: Set(next.escalated),
        updated_at: Set(now),
    })
    .exec(db)
    .await?;

    let to = addresses(job, &job.alert_to);
    let escalate_to = addresses(job, &job.escalate_to);
    for alert in &fired {
        let (composed, recipients, run_id) = match (alert, settled) {
            (Alert::FirstFailure, Settled::Failed(run)) => {
                (mail::first_failure(run), to.clone(), run.run_id)
            }
            (Alert::Escalation { failed_runs }, Settled::Failed(run)) => (
                mail::escalation(run, *failed_runs, next.opened_at.unwrap_or(now)),
                if escalate_to.is_empty() {
                    to.clone()
                } else {
                    escalate_to.clone()
                },
                run.run_id,
            ),
            (Alert::Recovered { down_for }, Settled::Succeeded { run_id }) => {
                let mut recipients = to.clone();
                if state.escalated {
                    recipients.extend(escalate_to.iter().cloned());
                    recipients.dedup();
                }
                (
                    mail::recovered(&job.name, *run_id, *down_for, state.failed_runs),
                    recipients,
                    *run_id,
                )
            }
            _ => continue,
        };
        if recipients.is_empty() {
            tracing::warn!(job = %job.name, alert = alert.kind(), "no recipients configured: alert not mailed");
            continue;
        }
        outbox::enqueue(
            db,
            NewMail {
                dedupe_key: format!("alert:{}:{}:{}", job.id, next.episode, alert.kind()),
                kind: alert.kind().to_string(),
                job_id: Some(job.id),
                run_id: Some(run_id),
                recipients,
                composed,
            },
            now,
        )
        .await?;
    }
    Ok(fired)
}

/// A job's stored address list. The engine settles the run whatever this says, so an
/// unreadable list (a row edited by hand) is logged loudly and alerts nobody, rather than
/// failing the run's write-back.
fn addresses(job: &job::Model, json: &str) -> Vec<EmailAddress> {
    serde_json::from_str(json).unwrap_or_else(|e| {
        tracing::error!(job = %job.name, error = %e, "the job's alert addresses are unreadable; alert not mailed, re-save the job");
        Vec::new()
    })
}

/// The job's alert state, created on first use and locked until the transaction ends (on
/// PostgreSQL; SQLite's write lock already serialises writers), so two runs of one job settling
/// at once step the episode one after the other.
async fn lock_state(
    db: &impl ConnectionTrait,
    job_id: i64,
    now: DateTime<Utc>,
) -> Result<AlertState, DbErr> {
    job_alert::Entity::insert(job_alert::ActiveModel {
        job_id: Set(job_id),
        episode: Set(0),
        open: Set(false),
        opened_at: Set(None),
        first_run_id: Set(None),
        failed_runs: Set(0),
        escalated: Set(false),
        updated_at: Set(now),
    })
    .on_conflict(
        OnConflict::column(job_alert::Column::JobId)
            .do_nothing()
            .to_owned(),
    )
    .exec_without_returning(db)
    .await?;
    let row = job_alert::Entity::find_by_id(job_id)
        .lock_exclusive()
        .one(db)
        .await?
        .ok_or_else(|| DbErr::RecordNotFound(format!("job_alerts {job_id}")))?;
    Ok(AlertState {
        episode: row.episode,
        open: row.open,
        opened_at: row.opened_at,
        failed_runs: row.failed_runs,
        escalated: row.escalated,
    })
}
