//! Turning settled runs into alert mails, inside the transaction that settled them: the rules
//! are [`crate::domain::alerts`], the words [`crate::i18n::mail`], delivery the outbox's.
//!
//! The caller has locked the jobs' rows (`services::lanes::lock`), so two transactions never
//! step one job's episode at once. A batch of healthy runs costs one read: a job with no
//! episode open stays without a row until it first fails.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sea_orm::sea_query::OnConflict;
use sea_orm::{ActiveValue::Set, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter};

use super::notifications::channel_outbox::{self, NewEvent};
use super::outbox::{self, NewMail};
use crate::domain::alerts::{self, Alert, AlertState, RunOutcome};
use crate::domain::chat::{ChatEvent, EventType};
use crate::domain::job::JobSpec;
use crate::domain::mail::FailedRun;
use crate::entities::job_alert;
use crate::i18n::mail;

/// How a run ended, as the alerts need it.
pub enum Settled {
    Succeeded { run_id: i64 },
    Failed(FailedRun),
}

/// One ended run: its job's id, definition and name, and how it ended.
pub type Ended<'a> = (i64, &'a JobSpec, String, Settled);

/// Steps each job's episode for its runs' outcomes, in order, and queues the mails they call
/// for. Returns the alerts (queued or, with no recipients, only logged).
pub async fn record_batch(
    db: &impl ConnectionTrait,
    ended: &[Ended<'_>],
    now: DateTime<Utc>,
    default_locale: crate::i18n::Locale,
) -> Result<Vec<Alert>, DbErr> {
    if ended.is_empty() {
        return Ok(Vec::new());
    }
    let mut states = read_states(db, ended).await?;
    let mut changed: HashMap<i64, ()> = HashMap::new();
    let mut all_fired = Vec::new();
    for (job_id, spec, name, settled) in ended {
        let (state, first_run) = states.get(job_id).cloned().unwrap_or_default();
        let outcome = match settled {
            Settled::Succeeded { .. } => RunOutcome::Succeeded,
            Settled::Failed(_) => RunOutcome::Failed,
        };
        let escalate_after = i32::try_from(spec.alerts.escalate_after).unwrap_or(i32::MAX);
        let (next, fired) = alerts::step(&state, outcome, escalate_after, now);
        if next == state {
            continue;
        }
        let first_run = match (settled, state.open, next.open) {
            (Settled::Failed(run), false, true) => Some(run.run_id),
            _ => first_run,
        };
        states.insert(*job_id, (next.clone(), first_run));
        changed.insert(*job_id, ());
        queue_mails(
            db,
            *job_id,
            spec,
            name,
            settled,
            &state,
            &next,
            &fired,
            now,
            default_locale,
        )
        .await?;
        all_fired.extend(fired);
    }
    for job_id in changed.keys() {
        if let Some((state, first_run)) = states.get(job_id) {
            write_state(db, *job_id, state, *first_run, now).await?;
        }
    }
    Ok(all_fired)
}

/// Each ended run's job's alert state and the run its open episode began with.
async fn read_states(
    db: &impl ConnectionTrait,
    ended: &[Ended<'_>],
) -> Result<HashMap<i64, (AlertState, Option<i64>)>, DbErr> {
    let mut ids: Vec<i64> = ended.iter().map(|(id, ..)| *id).collect();
    ids.sort_unstable();
    ids.dedup();
    let mut states = HashMap::new();
    for chunk in ids.chunks(500) {
        for row in job_alert::Entity::find()
            .filter(job_alert::Column::JobId.is_in(chunk.to_vec()))
            .all(db)
            .await?
        {
            let state = AlertState {
                episode: row.episode,
                open: row.open,
                opened_at: row.opened_at,
                failed_runs: row.failed_runs,
                escalated: row.escalated,
            };
            states.insert(row.job_id, (state, row.first_run_id));
        }
    }
    Ok(states)
}

async fn write_state(
    db: &impl ConnectionTrait,
    job_id: i64,
    state: &AlertState,
    first_run: Option<i64>,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    job_alert::Entity::insert(job_alert::ActiveModel {
        job_id: Set(job_id),
        episode: Set(state.episode),
        open: Set(state.open),
        opened_at: Set(state.opened_at),
        first_run_id: Set(first_run),
        failed_runs: Set(state.failed_runs),
        escalated: Set(state.escalated),
        updated_at: Set(now),
    })
    .on_conflict(
        OnConflict::column(job_alert::Column::JobId)
            .update_columns([
                job_alert::Column::Episode,
                job_alert::Column::Open,
                job_alert::Column::OpenedAt,
                job_alert::Column::FirstRunId,
                job_alert::Column::FailedRuns,
                job_alert::Column::Escalated,
                job_alert::Column::UpdatedAt,
            ])
            .to_owned(),
    )
    .exec_without_returning(db)
    .await?;
    Ok(())
}

/// Queues what `fired` calls for: a mail to the job's addresses and its e-mail channels, and a
/// message to each of its chat and webhook channels.
#[allow(clippy::too_many_arguments)]
async fn queue_mails(
    db: &impl ConnectionTrait,
    job_id: i64,
    spec: &JobSpec,
    name: &str,
    settled: &Settled,
    before: &AlertState,
    next: &AlertState,
    fired: &[Alert],
    now: DateTime<Utc>,
    default_locale: crate::i18n::Locale,
) -> Result<(), DbErr> {
    if fired.is_empty() {
        return Ok(());
    }
    let locale = super::notifications::mail_locale(db, default_locale).await?;
    for alert in fired {
        let Some(said) = say(alert, settled, spec, name, (before, next), now, locale) else {
            continue;
        };
        let dedupe_key = format!("alert:{job_id}:{}:{}", next.episode, alert.kind());
        let sent = send(
            db,
            job_id,
            said,
            &dedupe_key,
            alert.kind(),
            now,
            default_locale,
        )
        .await?;
        if !sent {
            tracing::warn!(job = %name, alert = alert.kind(), "no recipients or channels configured: alert not sent");
        }
    }
    Ok(())
}

/// Queues what was `said` to its channels and, by mail, to its recipients (and the channels
/// that are mail), once per `dedupe_key`; false when it had nowhere to go.
async fn send(
    db: &impl ConnectionTrait,
    job_id: i64,
    said: Said,
    dedupe_key: &str,
    kind: &str,
    now: DateTime<Utc>,
    default_locale: crate::i18n::Locale,
) -> Result<bool, DbErr> {
    let Said {
        composed,
        mut recipients,
        channels,
        event,
        run_id,
    } = said;
    let by_mail = channel_outbox::enqueue(
        db,
        &channels,
        &NewEvent {
            dedupe_key: dedupe_key.to_string(),
            job_id: Some(job_id),
            run_id: Some(run_id),
            event,
            worded: Vec::new(),
        },
        now,
        default_locale,
    )
    .await?;
    for address in by_mail {
        if !recipients.contains(&address) {
            recipients.push(address);
        }
    }
    if recipients.is_empty() {
        return Ok(!channels.is_empty());
    }
    outbox::enqueue(
        db,
        NewMail {
            dedupe_key: dedupe_key.to_string(),
            kind: kind.to_string(),
            job_id: Some(job_id),
            run_id: Some(run_id),
            recipients,
            composed,
        },
        now,
    )
    .await?;
    Ok(true)
}

/// An alert as it goes out: the mail, who gets it, the chat channels and their event.
struct Said {
    composed: crate::domain::mail::Composed,
    recipients: Vec<crate::domain::email::EmailAddress>,
    channels: Vec<String>,
    event: ChatEvent,
    run_id: i64,
}

/// What `alert` says and to whom, for the run that `settled`, the episode's state `before` it
/// and `next`; `None` when the alert and the run do not go together.
fn say(
    alert: &Alert,
    settled: &Settled,
    spec: &JobSpec,
    name: &str,
    (before, next): (&AlertState, &AlertState),
    now: DateTime<Utc>,
    locale: crate::i18n::Locale,
) -> Option<Said> {
    let alerts_to = &spec.alerts;
    Some(match (alert, settled) {
        (Alert::FirstFailure, Settled::Failed(run)) => Said {
            composed: mail::first_failure(locale, run),
            recipients: alerts_to.to.clone(),
            channels: alerts_to.channels.clone(),
            event: ChatEvent::failure(
                EventType::FirstFailure,
                run,
                next.failed_runs,
                next.opened_at,
                now,
            ),
            run_id: run.run_id,
        },
        (Alert::Escalation { failed_runs }, Settled::Failed(run)) => Said {
            composed: mail::escalation(locale, run, *failed_runs, next.opened_at.unwrap_or(now)),
            recipients: if alerts_to.escalate_to.is_empty() {
                alerts_to.to.clone()
            } else {
                alerts_to.escalate_to.clone()
            },
            channels: alerts_to.escalation_channels().to_vec(),
            event: ChatEvent::failure(
                EventType::Escalation,
                run,
                *failed_runs,
                next.opened_at,
                now,
            ),
            run_id: run.run_id,
        },
        (Alert::Recovered { down_for }, Settled::Succeeded { run_id }) => {
            // Everyone who heard the job was failing hears it recovered.
            let mut recipients = alerts_to.to.clone();
            let mut channels = alerts_to.channels.clone();
            if before.escalated {
                for address in &alerts_to.escalate_to {
                    if !recipients.contains(address) {
                        recipients.push(address.clone());
                    }
                }
                for channel in alerts_to.escalation_channels() {
                    if !channels.contains(channel) {
                        channels.push(channel.clone());
                    }
                }
            }
            Said {
                composed: mail::recovered(locale, name, *run_id, *down_for, before.failed_runs),
                recipients,
                channels,
                event: ChatEvent::recovered(name, *run_id, *down_for, before.failed_runs, now),
                run_id: *run_id,
            }
        }
        _ => return None,
    })
}

/// Says that a run has waited long for a node allowed to run it, to the job's alert
/// recipients and channels: once per run (`crate::services::placement`).
pub async fn waiting_for_node(
    db: &impl ConnectionTrait,
    job: &crate::entities::job::Model,
    wait: &crate::services::placement::Waiting,
    now: DateTime<Utc>,
    default_locale: crate::i18n::Locale,
) -> Result<bool, DbErr> {
    let spec = match super::jobs::to_spec(job) {
        Ok(spec) => spec,
        // An unreadable job cannot say whom to tell; its page says what is wrong with it.
        Err(_) => return Ok(false),
    };
    let locale = super::notifications::mail_locale(db, default_locale).await?;
    let said = mail::NodeWait {
        job: &spec.name,
        run_id: wait.run_id,
        run_on: &job.run_on,
        waited_ms: u64::try_from((now - wait.due_at).num_milliseconds()).unwrap_or(0),
    };
    let said = Said {
        composed: mail::waiting_for_node(locale, &said),
        recipients: spec.alerts.to.clone(),
        channels: spec.alerts.channels.clone(),
        event: mail::waiting_for_node_event(locale, &said, now),
        run_id: wait.run_id,
    };
    let dedupe_key = format!("no_node:{}:{}", job.id, wait.run_id);
    send(
        db,
        job.id,
        said,
        &dedupe_key,
        "waiting_for_node",
        now,
        default_locale,
    )
    .await
}

/// What a too-slow run is, for [`too_slow`].
pub struct TooSlow {
    pub run_id: i64,
    pub took_ms: u64,
    /// The longest it should have taken (`crate::domain::watch::Limits`).
    pub limit_ms: u64,
}

/// Says that a run took longer than its job ever should, to the job's alert recipients and
/// channels: once per run, outside any failure episode (the run's outcome is unchanged).
pub async fn too_slow(
    db: &impl ConnectionTrait,
    job_id: i64,
    spec: &JobSpec,
    slow: &TooSlow,
    now: DateTime<Utc>,
    default_locale: crate::i18n::Locale,
) -> Result<(), DbErr> {
    let locale = super::notifications::mail_locale(db, default_locale).await?;
    let (name, run, took, limit) = (&spec.name, slow.run_id, slow.took_ms, slow.limit_ms);
    tracing::warn!(job = %name, run, took_ms = took, limit_ms = limit, "a run took longer than its job ever should");
    let said = Said {
        composed: mail::too_slow(locale, name, run, took, limit),
        recipients: spec.alerts.to.clone(),
        channels: spec.alerts.channels.clone(),
        event: mail::too_slow_event(locale, name, run, took, limit, now),
        run_id: run,
    };
    let dedupe_key = format!("too_slow:{job_id}:{run}");
    send(
        db,
        job_id,
        said,
        &dedupe_key,
        "too_slow",
        now,
        default_locale,
    )
    .await?;
    Ok(())
}
