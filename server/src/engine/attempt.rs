//! One attempt of a claimed run, under its fence.
//!
//! The work runs in a task of its own, so a panic in it ends the attempt as a failure with the
//! panic's message (and the run follows its retry policy) instead of taking the engine down.
//! Three things can stop it before it ends:
//!
//! - the fence ([`super::lease`]): the lease could not be renewed and is about to run out, or
//!   another node took the run over. The work is cancelled — a command's process group killed,
//!   an HTTP call dropped, a built-in's future dropped — and *nothing is written*: whoever
//!   takes the run over records the attempt as interrupted. When the fence fell because
//!   someone cancelled the run, the attempt is written back as cancelled instead.
//! - the end of a graceful shutdown's grace period: the work is cancelled the same way and the
//!   attempt is handed back (interrupted, no retry spent).
//! - nothing else: timeouts and stalls are the executor's own outcomes.

use std::sync::Arc;
use std::time::Duration;

use app::domain::run::ErrorClass;
use chrono::{DateTime, Utc};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::Shared;
use super::claim::Claimed;
use super::executor::{self, AttemptInput, Execution};
use super::lease::{self, Fence};
use super::settle::{Ending, Finished};

/// How an attempt left this node.
pub enum Left {
    /// It has an outcome (or was given back) to write.
    Finished(Box<Finished>),
    /// The fence stopped it: nothing may be written.
    Abandoned { run_id: i64 },
}

/// Runs one claimed attempt to its end (or until the fence or the shutdown stops it).
pub async fn run(
    shared: Arc<Shared>,
    claimed: Claimed,
    mut fence: Fence,
    hand_back: CancellationToken,
) -> Left {
    let span = tracing::info_span!(
        "attempt",
        job = %claimed.job.name,
        run = claimed.run.id,
        attempt = claimed.run.attempts
    );
    async move {
        let started = crate::clock::now();
        if lease::expired(&fence) {
            if shared.leases.cancel_requested(claimed.run.id) {
                return cancelled(&claimed, started);
            }
            // Claimed ahead and waited in the queue while renewals failed: not started at all.
            tracing::warn!("lease lost before the attempt started: not started; nothing written");
            return Left::Abandoned {
                run_id: claimed.run.id,
            };
        }
        let (live, _stop_live_writer) = live_output(&shared, &claimed);
        let mut work = AbortOnDrop(spawn_work(&shared, &claimed, live));
        let execution = tokio::select! {
            joined = &mut work.0 => match joined {
                Ok(execution) => execution,
                Err(e) => Execution::failed(
                    ErrorClass::Transient,
                    format!("the attempt panicked: {}", panic_text(e)),
                    String::new(),
                ),
            },
            () = lease::lost(&mut fence) => {
                work.stop().await;
                if shared.leases.cancel_requested(claimed.run.id) {
                    tracing::info!("cancelled by request: the attempt was stopped");
                    return cancelled(&claimed, started);
                }
                tracing::warn!("lease lost or about to run out without renewal: the attempt was stopped; nothing written");
                return Left::Abandoned { run_id: claimed.run.id };
            }
            () = hand_back.cancelled() => {
                work.stop().await;
                return handed_back(&shared.config.node_id, &claimed, started);
            }
        };
        if execution.report.class == Some(ErrorClass::Timeout) {
            log_timeout(&claimed, started, &execution);
        }
        Left::Finished(Box::new(finished(&claimed, started, execution, Ending::Ran)))
    }
    .instrument(span)
    .await
}

/// Cancelled by request: written back as cancelled.
fn cancelled(claimed: &Claimed, started: DateTime<Utc>) -> Left {
    let interrupted = super::settle::interrupted("cancelled".into(), String::new());
    Left::Finished(Box::new(finished(
        claimed,
        started,
        interrupted,
        Ending::Cancelled,
    )))
}

/// Stopped because this node is shutting down: handed back for another attempt.
fn handed_back(node: &str, claimed: &Claimed, started: DateTime<Utc>) -> Left {
    let interrupted = super::settle::interrupted(
        format!("interrupted: node {node} shut down before the attempt finished"),
        String::new(),
    );
    Left::Finished(Box::new(finished(
        claimed,
        started,
        interrupted,
        Ending::HandedBack,
    )))
}

/// Where the attempt's output goes while it runs, and the guard that stops the task writing it
/// down when the attempt ends. The task starts with the first output the attempt publishes:
/// most attempts print nothing while they run and then cost no task at all.
fn live_output(shared: &Shared, claimed: &Claimed) -> (executor::LiveOutput, LiveWriter) {
    let (live_sender, live) = tokio::sync::watch::channel(String::new());
    let live_writer = Arc::new(std::sync::Mutex::new(None));
    let stop = LiveWriter(live_writer.clone());
    let db = shared.db.clone();
    let attempt_id = claimed.attempt_id;
    let start = move || {
        let task = tokio::spawn(write_live_output(db, attempt_id, live));
        if let Ok(mut slot) = live_writer.lock() {
            *slot = Some(task);
        }
    };
    (executor::LiveOutput::new(live_sender, start), stop)
}

/// Starts the attempt's work: the job's request, command or task, or — when its stored
/// definition cannot be read — a permanent failure saying why.
fn spawn_work(
    shared: &Arc<Shared>,
    claimed: &Claimed,
    live: executor::LiveOutput,
) -> tokio::task::JoinHandle<Execution> {
    let spec = match &claimed.spec {
        Ok(spec) => spec.clone(),
        Err(message) => {
            let message = message.clone();
            return tokio::spawn(async move {
                Execution::failed(ErrorClass::Permanent, message, String::new())
            });
        }
    };
    let input = AttemptInput {
        timeout: Duration::from_millis(claimed.timeout.ms),
        idempotency_key: claimed.run.idempotency_key.clone(),
        run_id: claimed.run.id,
        attempt: claimed.run.attempts,
        attempt_id: claimed.attempt_id,
        job_name: claimed.job.name.clone(),
        timezone: spec.timezone,
        stall: spec.timeout.stall_ms.map(Duration::from_millis),
        params: run_params(&spec.parameters, claimed.run.params.as_deref()),
        live,
        params_as_written: claimed.job.params_as_written,
        tick: app::services::runs::tick_of(&claimed.run, &spec.timezone),
    };
    let shared = shared.clone();
    tokio::spawn(async move { executor::execute(&shared, &spec, &input).await })
}

fn log_timeout(claimed: &Claimed, started: DateTime<Utc>, execution: &Execution) {
    tracing::warn!(
        scheduled_for = %claimed.run.scheduled_for,
        elapsed_ms = (crate::clock::now() - started).num_milliseconds(),
        timeout_ms = claimed.timeout.ms,
        kind = ?execution.report.timeout_kind,
        load = ?executor::load_average(),
        output_tail = %execution.output_tail,
        "attempt timed out"
    );
}

/// A claimed run given back before its attempt started (the node is shutting down): written
/// back like a hand-back, spending no retry.
pub fn not_started(node: &str, claimed: &Claimed) -> Finished {
    finished(
        claimed,
        crate::clock::now(),
        super::settle::interrupted(
            format!("interrupted: node {node} shut down before the attempt started"),
            String::new(),
        ),
        Ending::HandedBack,
    )
}

fn finished(
    claimed: &Claimed,
    started: chrono::DateTime<chrono::Utc>,
    execution: Execution,
    ending: Ending,
) -> Finished {
    let finished_at = crate::clock::now();
    let duration_ms = (finished_at - started).num_milliseconds().max(0) as u64;
    // Too slow: past max(max_duration, 1.5 × P99 of recent successes) — a run job has no
    // max_duration of its own, a watched one is judged where its pings land.
    let slow =
        match app::domain::watch::Limits::learn(None, None, &claimed.history).judge(duration_ms) {
            app::domain::watch::Pace::TooSlow { above_ms } if execution.report.class.is_none() => {
                Some(above_ms)
            }
            _ => None,
        };
    Finished {
        run: claimed.run.clone(),
        spec: claimed.spec.clone(),
        job_name: claimed.job.name.clone(),
        attempt_id: claimed.attempt_id,
        started_at: started,
        finished_at,
        timeout_ms: claimed.timeout.ms,
        execution,
        slow,
        ending,
    }
}

/// The live-output writer's task, if output started it, aborted when the attempt ends.
struct LiveWriter(Arc<std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>>);

impl Drop for LiveWriter {
    fn drop(&mut self) {
        let task = match self.0.lock() {
            Ok(mut slot) => slot.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        };
        if let Some(task) = task {
            task.abort();
        }
    }
}

/// The work's task, aborted when this is dropped however the attempt ends.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> AbortOnDrop<T> {
    /// Aborts the work and waits until it has stopped (its process group killed).
    async fn stop(mut self) {
        self.0.abort();
        let _ = (&mut self.0).await;
    }
}

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// What a task that ended by a panic said.
pub(super) fn panic_text(e: tokio::task::JoinError) -> String {
    if !e.is_panic() {
        return "the attempt's task was cancelled".into();
    }
    let payload = e.into_panic();
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into())
}

/// A run's parameters as its attempt gets them: the values it was started with, or (a cron run,
/// a run from before the job declared them) the declared defaults; an error when a required
/// one has no value.
fn run_params(
    declared: &[app::domain::job::params::Parameter],
    stored: Option<&str>,
) -> Result<std::collections::BTreeMap<String, serde_json::Value>, String> {
    let given: serde_json::Map<String, serde_json::Value> = match stored {
        Some(json) => serde_json::from_str(json)
            .map_err(|e| format!("the run's parameters are unreadable: {e}"))?,
        None => serde_json::Map::new(),
    };
    // Values stored with the run were checked when it was started; a parameter since removed
    // from the job is simply not passed.
    let given: serde_json::Map<String, serde_json::Value> = given
        .into_iter()
        .filter(|(name, _)| declared.iter().any(|p| &p.name == name))
        .collect();
    app::domain::job::params::resolve(declared, &given).map_err(|errors| {
        errors
            .into_iter()
            .map(|e| e.problem.to_string())
            .collect::<Vec<_>>()
            .join("; ")
    })
}

/// Writes a running attempt's output to its row as it comes (at most once per
/// [`executor::LIVE_EVERY`]), so the run page can show it from any instance. Only while the
/// attempt is unfinished: the settled row's tail is the last word. Ends when the attempt's
/// output sender is dropped (the attempt ended) or with the attempt's task.
async fn write_live_output(
    db: sea_orm::DatabaseConnection,
    attempt_id: i64,
    mut live: tokio::sync::watch::Receiver<String>,
) {
    use app::entities::job_attempt;
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, sea_query::Expr};
    while live.changed().await.is_ok() {
        let text = app::services::sql::storable(&live.borrow_and_update()).into_owned();
        let written = job_attempt::Entity::update_many()
            .col_expr(job_attempt::Column::OutputTail, Expr::value(text))
            .filter(job_attempt::Column::Id.eq(attempt_id))
            .filter(job_attempt::Column::FinishedAt.is_null())
            .exec(&db)
            .await;
        if let Err(e) = written {
            // Only the live view suffers; the final tail is written with the outcome.
            tracing::debug!(error = %e, "could not write the live output");
        }
        tokio::time::sleep(executor::LIVE_EVERY).await;
    }
}
