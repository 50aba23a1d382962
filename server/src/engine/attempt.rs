//! One attempt of a claimed run, from the attempt row to the fenced write-back.
//!
//! Fencing: every write-back matches the run on (id, `running`, lease owner, attempt number).
//! A node that was presumed dead and wakes up finds no matching row and writes nothing, so it
//! cannot overwrite a run that another node has taken over.

use std::sync::Arc;
use std::time::Duration;

use app::domain::job::{JobSpec, OnExhausted};
use app::domain::mail::FailedRun;
use app::domain::run::{AttemptReport, ErrorClass, Next, Outcome, RunStatus, Trigger, decide};
use app::domain::timeout::{self, EffectiveTimeout};
use app::entities::{job, job_attempt, job_run};
use app::services::alerts;
use app::services::jobs::to_spec;
use chrono::{DateTime, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, Set,
    TransactionTrait,
};
use tracing::Instrument;

use super::Shared;
use super::claim::Claimed;
use super::executor::{self, AttemptInput, Execution};

/// Runs one attempt of `claimed` and records it. Errors are logged: the lease then expires and
/// recovery retries the run.
pub async fn run(shared: &Shared, claimed: Claimed) {
    let span = tracing::info_span!(
        "attempt",
        job = %claimed.job.name,
        run = claimed.run.id,
        attempt = claimed.run.attempts
    );
    if let Err(e) = attempt(shared, claimed).instrument(span.clone()).await {
        span.in_scope(|| tracing::error!(error = %e, "attempt could not be recorded; recovery will retry the run"));
    }
}

async fn attempt(shared: &Shared, Claimed { run, job }: Claimed) -> Result<(), DbErr> {
    let started = crate::clock::now();
    let spec = to_spec(&job);
    let history = match &spec {
        Ok(spec) => {
            app::services::runs::recent_success_ms(&shared.db, job.id, spec.timeout.window.max(20))
                .await?
        }
        Err(_) => Vec::new(),
    };
    let spec = spec.map(|spec| with_overrides(spec, &run));
    let effective = match &spec {
        Ok(spec) => timeout::effective(&spec.timeout, &history),
        Err(_) => EffectiveTimeout {
            ms: 0,
            source: timeout::TimeoutSource::Static,
        },
    };
    let load = executor::load_average();
    let attempt_row = job_attempt::ActiveModel {
        run_id: Set(run.id),
        number: Set(run.attempts),
        started_at: Set(started),
        timeout_ms: Set(effective.ms as i64),
        node: Set(shared.config.node_id.clone()),
        load_avg: Set(load),
        slow: Set(false),
        ..Default::default()
    }
    .insert(&shared.db)
    .await?;

    let spec = match spec {
        Ok(spec) => spec,
        Err(e) => {
            let execution = Execution {
                report: AttemptReport::failed(ErrorClass::Permanent),
                message: Some(e.to_string()),
                output_tail: String::new(),
            };
            return finish(shared, &run, &job, None, attempt_row, execution, &history).await;
        }
    };

    // Renew the lease while the attempt runs; if renewal finds the run gone, stop at once.
    let lost = Arc::new(tokio::sync::Notify::new());
    let renewer = tokio::spawn(renew_lease(
        shared.db.clone(),
        run.id,
        run.attempts,
        shared.config.node_id.clone(),
        shared.config.lease,
        lost.clone(),
    ));
    let input = AttemptInput {
        timeout: Duration::from_millis(effective.ms),
        idempotency_key: &run.idempotency_key,
        run_id: run.id,
        job_name: &job.name,
        timezone: spec.timezone,
    };
    let execution = tokio::select! {
        execution = executor::execute(shared, &spec.kind, &input) => Some(execution),
        () = lost.notified() => None,
    };
    renewer.abort();
    let Some(execution) = execution else {
        tracing::warn!(
            "lease lost while running: another node has taken this run over; nothing written"
        );
        return Ok(());
    };
    if execution.report.outcome == Outcome::TimedOut {
        tracing::warn!(
            scheduled_for = %run.scheduled_for,
            elapsed_ms = (crate::clock::now() - started).num_milliseconds(),
            timeout_ms = effective.ms,
            load = ?load,
            output_tail = %execution.output_tail,
            "attempt timed out"
        );
    }
    finish(
        shared,
        &run,
        &job,
        Some(&spec),
        attempt_row,
        execution,
        &history,
    )
    .await
}

/// The job's definition with the one-off timeout or retry policy a re-trigger may carry.
pub(crate) fn with_overrides(mut spec: JobSpec, run: &job_run::Model) -> JobSpec {
    if let Some(retry) = run
        .override_retry
        .as_deref()
        .and_then(|json| serde_json::from_str(json).ok())
        .and_then(|input| app::domain::retry::RetryPolicy::parse(&input).ok())
    {
        spec.retry = retry;
    }
    if let Some(ms) = run.override_timeout_ms.filter(|ms| *ms > 0) {
        spec.timeout.mode = app::domain::job::TimeoutMode::Static;
        spec.timeout.static_ms = ms as u64;
        spec.timeout.hard_cap_ms = spec.timeout.hard_cap_ms.max(ms as u64);
    }
    spec
}

async fn finish(
    shared: &Shared,
    run: &job_run::Model,
    job: &job::Model,
    spec: Option<&JobSpec>,
    attempt_row: job_attempt::Model,
    execution: Execution,
    history: &[u64],
) -> Result<(), DbErr> {
    let finished = crate::clock::now();
    let duration_ms = (finished - attempt_row.started_at)
        .num_milliseconds()
        .max(0) as u64;
    let slow = timeout::is_slow(duration_ms, history);
    if slow {
        tracing::warn!(
            duration_ms,
            "slow attempt: beyond mean + 3σ of recent successes"
        );
    }
    let txn = shared.db.begin().await?;
    job_attempt::Entity::update_many()
        .col_expr(job_attempt::Column::FinishedAt, Expr::value(finished))
        .col_expr(
            job_attempt::Column::DurationMs,
            Expr::value(duration_ms as i64),
        )
        .col_expr(
            job_attempt::Column::Outcome,
            Expr::value(execution.report.outcome),
        )
        .col_expr(
            job_attempt::Column::ErrorClass,
            Expr::value(execution.report.class),
        )
        .col_expr(
            job_attempt::Column::Message,
            Expr::value(execution.message.clone()),
        )
        .col_expr(
            job_attempt::Column::OutputTail,
            Expr::value(execution.output_tail.clone()),
        )
        .col_expr(job_attempt::Column::Slow, Expr::value(slow))
        .filter(job_attempt::Column::Id.eq(attempt_row.id))
        .filter(job_attempt::Column::Outcome.is_null())
        .exec(&txn)
        .await?;
    let next = match spec {
        Some(spec) => decide(
            &spec.retry,
            run.attempts.max(0) as u32,
            &execution.report,
            run.previous_delay_ms.map(|d| d.max(0) as u64),
            fastrand::f64(),
        ),
        None => Next::Exhausted,
    };
    let settled = settle(
        &txn,
        run,
        job,
        spec.map(|s| &s.on_exhausted),
        next,
        &execution.report,
        execution.message.as_deref(),
        finished,
    )
    .await?;
    if settled {
        txn.commit().await?;
        if let Next::Retry { delay_ms, .. } = next {
            wake_after(shared, Duration::from_millis(delay_ms));
        }
        tracing::info!(outcome = %execution.report.outcome, ?next, duration_ms, "attempt recorded");
    } else {
        txn.rollback().await?;
        tracing::warn!(
            "lease lost before the write-back: another node owns this run; nothing written"
        );
    }
    Ok(())
}

/// Wakes this node's dispatcher when a retry it scheduled falls due, so it starts on time
/// rather than at the next poll.
fn wake_after(shared: &Shared, delay: Duration) {
    if delay >= shared.config.poll {
        return;
    }
    let wake = shared.wake.clone();
    tokio::spawn(async move {
        tokio::time::sleep(delay).await;
        wake.notify_one();
    });
}

/// Applies the decision to the run, fenced on the lease. Returns false when the run is no
/// longer ours (nothing was changed).
#[allow(clippy::too_many_arguments)]
pub(crate) async fn settle(
    db: &impl ConnectionTrait,
    run: &job_run::Model,
    job: &job::Model,
    on_exhausted: Option<&OnExhausted>,
    next: Next,
    report: &AttemptReport,
    message: Option<&str>,
    now: DateTime<Utc>,
) -> Result<bool, DbErr> {
    let class = report.class;
    let mut update = job_run::Entity::update_many()
        .col_expr(
            job_run::Column::LeaseOwner,
            Expr::value(Option::<String>::None),
        )
        .col_expr(
            job_run::Column::LeaseExpiresAt,
            Expr::value(Option::<DateTime<Utc>>::None),
        )
        .col_expr(job_run::Column::UpdatedAt, Expr::value(now));
    let mut fallback: Option<&str> = None;
    match next {
        Next::Succeeded => {
            update = update
                .col_expr(job_run::Column::Status, Expr::value(RunStatus::Succeeded))
                .col_expr(job_run::Column::FinishedAt, Expr::value(now))
                .col_expr(
                    job_run::Column::NextAttemptAt,
                    Expr::value(Option::<DateTime<Utc>>::None),
                );
        }
        Next::Retry { delay_ms, .. } => {
            update = update
                .col_expr(job_run::Column::Status, Expr::value(RunStatus::RetryWait))
                .col_expr(
                    job_run::Column::NextAttemptAt,
                    Expr::value(now + chrono::Duration::milliseconds(delay_ms as i64)),
                )
                .col_expr(
                    job_run::Column::PreviousDelayMs,
                    Expr::value(delay_ms as i64),
                )
                .col_expr(job_run::Column::LastErrorClass, Expr::value(class))
                .col_expr(
                    job_run::Column::LastError,
                    Expr::value(message.map(str::to_string)),
                );
        }
        Next::Exhausted => {
            let status = match on_exhausted {
                Some(OnExhausted::SkipToNext) => RunStatus::Skipped,
                Some(OnExhausted::Fallback(name)) => {
                    fallback = Some(name);
                    RunStatus::Dead
                }
                _ => RunStatus::Dead,
            };
            update = update
                .col_expr(job_run::Column::Status, Expr::value(status))
                .col_expr(job_run::Column::FinishedAt, Expr::value(now))
                .col_expr(
                    job_run::Column::NextAttemptAt,
                    Expr::value(Option::<DateTime<Utc>>::None),
                )
                .col_expr(job_run::Column::LastErrorClass, Expr::value(class))
                .col_expr(
                    job_run::Column::LastError,
                    Expr::value(message.map(str::to_string)),
                );
        }
    }
    let result = update
        .filter(job_run::Column::Id.eq(run.id))
        .filter(job_run::Column::Status.eq(RunStatus::Running))
        .filter(job_run::Column::Attempts.eq(run.attempts))
        .filter(match &run.lease_owner {
            Some(owner) => job_run::Column::LeaseOwner.eq(owner.clone()),
            None => job_run::Column::LeaseOwner.is_null(),
        })
        .exec(db)
        .await?;
    if result.rows_affected == 0 {
        return Ok(false);
    }
    // Alert mails commit with the run's new state, or not at all.
    let settled = match next {
        Next::Succeeded => Some(alerts::Settled::Succeeded { run_id: run.id }),
        Next::Retry { .. } => None,
        Next::Exhausted => Some(alerts::Settled::Failed(FailedRun {
            job: job.name.clone(),
            run_id: run.id,
            status: match on_exhausted {
                Some(OnExhausted::SkipToNext) => RunStatus::Skipped,
                _ => RunStatus::Dead,
            },
            error_class: class,
            message: message.map(str::to_string),
            attempts: run.attempts,
            finished_at: now,
        })),
    };
    if let Some(settled) = settled {
        alerts::record(db, job, &settled, now).await?;
    }
    if let Some(name) = fallback {
        trigger_fallback(db, run, job, name, now).await?;
    }
    Ok(true)
}

async fn trigger_fallback(
    db: &impl ConnectionTrait,
    run: &job_run::Model,
    job: &job::Model,
    fallback: &str,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    let Some(target) = job::Entity::find()
        .filter(job::Column::Name.eq(fallback))
        .one(db)
        .await?
    else {
        tracing::error!(job = %job.name, fallback, "fallback job does not exist; the run stays dead");
        return Ok(());
    };
    job_run::ActiveModel {
        job_id: Set(target.id),
        trigger: Set(Trigger::Fallback),
        scheduled_for: Set(now),
        status: Set(RunStatus::Pending),
        attempts: Set(0),
        idempotency_key: Set(format!("fallback-of-run-{}", run.id)),
        policy: Set(app::services::runs::policy_snapshot(&target)),
        retrigger_of: Set(Some(run.id)),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
    .insert(db)
    .await?;
    tracing::warn!(job = %job.name, fallback, "retries exhausted: fallback job triggered");
    Ok(())
}

async fn renew_lease(
    db: sea_orm::DatabaseConnection,
    run_id: i64,
    attempts: i32,
    node: String,
    lease: Duration,
    lost: Arc<tokio::sync::Notify>,
) {
    let every = lease / 3;
    loop {
        tokio::time::sleep(every).await;
        let until = crate::clock::now()
            + chrono::Duration::from_std(lease).unwrap_or(chrono::Duration::seconds(30));
        let renewed = job_run::Entity::update_many()
            .col_expr(job_run::Column::LeaseExpiresAt, Expr::value(until))
            .filter(job_run::Column::Id.eq(run_id))
            .filter(job_run::Column::Status.eq(RunStatus::Running))
            .filter(job_run::Column::Attempts.eq(attempts))
            .filter(job_run::Column::LeaseOwner.eq(node.clone()))
            .exec(&db)
            .await;
        match renewed {
            Ok(r) if r.rows_affected == 1 => {}
            Ok(_) => {
                lost.notify_one();
                return;
            }
            // A database hiccup is not a lost lease; try again at the next beat.
            Err(e) => tracing::warn!(error = %e, run_id, "lease renewal failed"),
        }
    }
}
