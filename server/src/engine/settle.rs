//! Writing attempts back: many at once, each fenced on the lease it ran under.
//!
//! A [`Finished`] attempt is decided here ([`app::domain::run::decide`]: succeeded, retry
//! after a delay, or exhausted and then by `on_exhausted`) and written in one transaction with
//! the others of its batch, in a fixed handful of statements whatever the batch's size:
//!
//! 1. lock the jobs involved (their lanes change);
//! 2. update the runs — *fenced*: a run is only written while it is still `running` under the
//!    same owner and attempt number (and, for a takeover, only if its lease has expired by
//!    then), so a node presumed dead that wakes up, or a recovery racing a late write-back,
//!    changes nothing;
//! 3. update the attempts of the runs that were written;
//! 4. alert episodes, for the jobs whose run ended (`app::services::alerts`);
//! 5. fallback runs, and the next run of each lane whose head ended.
//!
//! A batch that fails is written again by the caller; nothing of it is half written.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use app::domain::job::{JobSpec, OnExhausted};
use app::domain::mail::FailedRun;
use app::domain::run::{ErrorClass, Next, RunStatus, Trigger, decide};
use app::entities::{job, job_run};
use app::services::alerts::{self, Settled};
use app::services::lanes;
use app::services::sql::{self, Binder, Values};
use chrono::{DateTime, Utc};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait, QueryFilter, Set,
    TransactionTrait, Value,
};

use super::executor::Execution;

/// How an attempt came to an end, which decides the fence its write-back needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// It ran to an outcome on the node that holds the lease.
    Ran,
    /// The node that held it stopped renewing its lease: another node records it as
    /// interrupted, only if the lease has expired by the database's clock.
    Expired,
    /// A graceful shutdown gave it back before it finished: interrupted, no retry spent.
    HandedBack,
    /// Someone cancelled the run while it ran, and this node stopped the attempt.
    Cancelled,
}

/// An attempt with its outcome, ready to be written back.
#[derive(Debug)]
pub struct Finished {
    /// The run as it was when claimed (its id, job, attempt number and owner are the fence).
    pub run: job_run::Model,
    pub spec: Result<Arc<JobSpec>, String>,
    pub job_name: String,
    pub attempt_id: i64,
    pub started_at: DateTime<Utc>,
    pub finished_at: DateTime<Utc>,
    pub timeout_ms: u64,
    pub execution: Execution,
    /// A success that took longer than its job ever should: the longest it should have taken.
    pub slow: Option<u64>,
    pub ending: Ending,
}

/// What became of one write-back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    pub run_id: i64,
    /// False when the fence refused it (someone else owns the run now): nothing was written.
    pub settled: bool,
    pub next: Next,
    /// What the run became (still active while it retries).
    pub status: RunStatus,
}

/// Writes `batch` back in one transaction (see the module's documentation).
pub async fn settle(
    db: &DatabaseConnection,
    batch: &[Finished],
    now: DateTime<Utc>,
    default_locale: app::i18n::Locale,
) -> Result<Vec<Written>, DbErr> {
    if batch.is_empty() {
        return Ok(Vec::new());
    }
    // Read before the transaction (a SQLite transaction must write first).
    let fallbacks = fallback_jobs(db, batch).await?;
    let txn = db.begin().await?;
    let mut locked: Vec<i64> = batch.iter().map(|f| f.run.job_id).collect();
    locked.extend(fallbacks.values().map(|j| j.id));
    lanes::lock(&txn, &locked).await?;
    let (written, wake) = settle_in(&txn, batch, &fallbacks, now, default_locale).await?;
    txn.commit().await?;
    wake.after_commit();
    count(batch, &written);
    Ok(written)
}

/// Counts each settled attempt for `/metrics`: how late it started after it was due — a cron
/// tick's first attempt at the tick, a retry after its planned wait, another run's first
/// attempt when it was created or scheduled — and the run it ended.
fn count(batch: &[Finished], written: &[Written]) {
    for (f, w) in batch.iter().zip(written).filter(|(_, w)| w.settled) {
        let report = &f.execution.report;
        let (kind, due) = if f.run.attempts > 1 {
            ("retry", f.run.next_attempt_at)
        } else if f.run.cron_tick.is_some() {
            ("tick", f.run.cron_tick)
        } else {
            ("start", Some(f.run.scheduled_for))
        };
        let seconds = |from: DateTime<Utc>, to: DateTime<Utc>| {
            (to - from).num_milliseconds().max(0) as f64 / 1000.0
        };
        crate::metrics::attempt_settled(&crate::metrics::AttemptSettled {
            job: &f.job_name,
            outcome: report.outcome,
            class: report.class,
            seconds: seconds(f.started_at, f.finished_at),
            lateness: due.map(|due| (kind, seconds(due, f.started_at))),
            run_ended: (!w.status.is_active()).then_some(w.status),
        });
    }
}

/// The fallback jobs that exhausted runs of `batch` would start, by name.
pub async fn fallback_jobs(
    db: &impl ConnectionTrait,
    batch: &[Finished],
) -> Result<HashMap<String, job::Model>, DbErr> {
    let names: Vec<String> = batch
        .iter()
        .filter_map(|f| match f.spec.as_deref() {
            Ok(JobSpec {
                on_exhausted: OnExhausted::Fallback(name),
                ..
            }) => Some(name.clone()),
            _ => None,
        })
        .collect();
    if names.is_empty() {
        return Ok(HashMap::new());
    }
    Ok(job::Entity::find()
        .filter(job::Column::Name.is_in(names))
        .all(db)
        .await?
        .into_iter()
        .map(|j| (j.name.clone(), j))
        .collect())
}

/// [`settle`] inside the caller's transaction, which has locked the jobs of `batch` and of
/// `fallbacks` (`app::services::lanes::lock`); the caller gives the wake-up after its commit.
pub async fn settle_in(
    txn: &impl ConnectionTrait,
    batch: &[Finished],
    fallbacks: &HashMap<String, job::Model>,
    now: DateTime<Utc>,
    // The language of alert mails and chat messages where nothing sets one.
    default_locale: app::i18n::Locale,
) -> Result<(Vec<Written>, app::wake::Wake), DbErr> {
    let passed = fence(txn, batch).await?;
    let decided: Vec<(Next, Plan)> = batch
        .iter()
        .map(|f| plan(f, now, passed.get(&f.run.id) == Some(&true)))
        .collect();
    let settled = update_runs(txn, batch, &decided, &passed, now).await?;
    update_attempts(txn, batch, &settled).await?;

    // Alerts for the runs that ended (a retry ends nothing), in the order they finished.
    let mut ended: Vec<(i64, &JobSpec, String, Settled)> = Vec::new();
    let mut exhausted_with_fallback: Vec<(&Finished, &job::Model)> = Vec::new();
    let mut lanes_freed: HashSet<i64> = HashSet::new();
    let mut children_ended: Vec<&Finished> = Vec::new();
    for (f, (next, plan)) in batch.iter().zip(&decided) {
        if !settled.contains(&f.run.id) {
            continue;
        }
        if plan.status.is_active() {
            continue;
        }
        lanes_freed.insert(f.run.job_id);
        // A child's outcome is its parent's to alert on and fall back from, once all end.
        if f.run.parent_id.is_some() {
            children_ended.push(f);
            continue;
        }
        // Someone stopped it on purpose: not a failure to alert on, nor to fall back from.
        if plan.status == RunStatus::Cancelled {
            continue;
        }
        let Ok(spec) = f.spec.as_deref() else {
            continue;
        };
        let outcome = match next {
            Next::Succeeded => Settled::Succeeded { run_id: f.run.id },
            _ => Settled::Failed(FailedRun {
                job: f.job_name.clone(),
                run_id: f.run.id,
                status: plan.status,
                error_class: f.execution.report.class,
                message: f.execution.message.clone(),
                attempts: f.run.attempts,
                finished_at: now,
            }),
        };
        ended.push((f.run.job_id, spec, f.job_name.clone(), outcome));
        if let OnExhausted::Fallback(name) = &spec.on_exhausted
            && matches!(next, Next::Exhausted)
        {
            match fallbacks.get(name) {
                Some(target) => exhausted_with_fallback.push((f, target)),
                None => {
                    tracing::error!(job = %f.job_name, fallback = %name, "fallback job does not exist; the run stays dead")
                }
            }
        }
    }
    ended.extend(parents_ended(txn, &children_ended, now).await?);
    alerts::record_batch(txn, &ended, now, default_locale).await?;
    too_slow(txn, batch, &decided, &settled, now, default_locale).await?;
    let mut due = 0;
    if !exhausted_with_fallback.is_empty() {
        let mut runs: Vec<job_run::ActiveModel> = exhausted_with_fallback
            .iter()
            .map(|(f, target)| fallback_run(f, target, now))
            .collect();
        due += lanes::place(txn, &mut runs).await?;
        for run in runs {
            job_run::Entity::insert(run).exec(txn).await?;
        }
        for (f, target) in &exhausted_with_fallback {
            tracing::warn!(job = %f.job_name, fallback = %target.name, "retries exhausted: fallback job triggered");
        }
    }
    let freed: Vec<i64> = lanes_freed.into_iter().collect();
    let promoted = lanes::promote(txn, &freed, now).await?;
    let mut wake = app::wake::Wake::default();
    if due > 0 || promoted > 0 {
        wake = app::wake::runs_changed_in(txn).await;
    }

    let written = batch
        .iter()
        .zip(decided)
        .map(|(f, (next, plan))| Written {
            run_id: f.run.id,
            settled: settled.contains(&f.run.id),
            next,
            status: plan.status,
        })
        .collect();
    Ok((written, wake))
}

/// Ends the parents whose last child ended in this batch (before their lanes are promoted),
/// with what each ended as for the alerts: a parent dead says what its latest failed child
/// did; a parent stopped by hand says nothing.
async fn parents_ended<'a>(
    txn: &impl ConnectionTrait,
    children: &[&'a Finished],
    now: DateTime<Utc>,
) -> Result<Vec<(i64, &'a JobSpec, String, Settled)>, DbErr> {
    if children.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<i64> = children.iter().filter_map(|f| f.run.parent_id).collect();
    let mut ended = Vec::new();
    for parent in app::services::children::settle_parents(txn, &ids, now).await? {
        let Some(f) = children
            .iter()
            .find(|f| f.run.parent_id == Some(parent.parent_id))
        else {
            continue;
        };
        let Ok(spec) = f.spec.as_deref() else {
            continue;
        };
        let outcome = match (parent.status, parent.failed_child) {
            (RunStatus::Succeeded, _) => Settled::Succeeded {
                run_id: parent.parent_id,
            },
            (RunStatus::Dead, Some(child)) => Settled::Failed(FailedRun {
                job: f.job_name.clone(),
                run_id: parent.parent_id,
                status: RunStatus::Dead,
                error_class: child.last_error_class,
                message: child.last_error,
                attempts: child.attempts,
                finished_at: now,
            }),
            _ => continue,
        };
        ended.push((f.run.job_id, spec, f.job_name.clone(), outcome));
    }
    Ok(ended)
}

/// Says so for each success of `batch` that took longer than its job ever should.
async fn too_slow(
    txn: &impl ConnectionTrait,
    batch: &[Finished],
    decided: &[(Next, Plan)],
    settled: &HashSet<i64>,
    now: DateTime<Utc>,
    default_locale: app::i18n::Locale,
) -> Result<(), DbErr> {
    for (f, (next, _)) in batch.iter().zip(decided) {
        let (Some(limit_ms), Ok(spec), Next::Succeeded) = (f.slow, f.spec.as_deref(), next) else {
            continue;
        };
        if !settled.contains(&f.run.id) {
            continue;
        }
        let slow = alerts::TooSlow {
            run_id: f.run.id,
            took_ms: (f.finished_at - f.started_at).num_milliseconds().max(0) as u64,
            limit_ms,
        };
        alerts::too_slow(txn, f.run.job_id, spec, &slow, now, default_locale).await?;
    }
    Ok(())
}

/// What the run row becomes.
struct Plan {
    status: RunStatus,
    next_attempt_at: Option<DateTime<Utc>>,
    due_at: Option<DateTime<Utc>>,
    finished_at: Option<DateTime<Utc>>,
    previous_delay_ms: Option<i64>,
    /// The attempt's class and message become the run's last error (not for a success).
    failed: bool,
    handback: i32,
}

/// What `f` makes of its run; `cancel_requested`: someone cancelled the run meanwhile, so a
/// run that did not succeed ends cancelled instead of trying again.
fn plan(f: &Finished, now: DateTime<Utc>, cancel_requested: bool) -> (Next, Plan) {
    let report = &f.execution.report;
    let failed = report.class.is_some();
    if f.ending == Ending::Cancelled || (cancel_requested && failed) {
        return (
            Next::Exhausted,
            Plan {
                status: RunStatus::Cancelled,
                next_attempt_at: None,
                due_at: None,
                finished_at: Some(now),
                previous_delay_ms: None,
                failed,
                handback: 0,
            },
        );
    }
    let next = match (&f.ending, f.spec.as_deref()) {
        // Given back, not failed: the next node tries again at once, spending nothing.
        (Ending::HandedBack, _) => Next::Retry {
            retry: 0,
            delay_ms: 0,
        },
        (_, Ok(spec)) => decide(
            &spec.retry,
            (f.run.attempts - f.run.handbacks).max(0) as u32,
            report,
            f.run.previous_delay_ms.map(|d| d.max(0) as u64),
            fastrand::f64(),
        ),
        (_, Err(_)) => Next::Exhausted,
    };
    let handback = i32::from(f.ending == Ending::HandedBack);
    let plan = match next {
        Next::Succeeded => Plan {
            status: RunStatus::Succeeded,
            next_attempt_at: None,
            due_at: None,
            finished_at: Some(now),
            previous_delay_ms: None,
            failed,
            handback,
        },
        Next::Retry { delay_ms, .. } => {
            let at = now + chrono::Duration::milliseconds(delay_ms as i64);
            Plan {
                status: RunStatus::RetryWait,
                next_attempt_at: Some(at),
                due_at: Some(at),
                finished_at: None,
                previous_delay_ms: (f.ending != Ending::HandedBack).then_some(delay_ms as i64),
                failed,
                handback,
            }
        }
        Next::Exhausted => Plan {
            status: match f.spec.as_deref() {
                Ok(JobSpec {
                    on_exhausted: OnExhausted::SkipToNext,
                    ..
                }) => RunStatus::Skipped,
                _ => RunStatus::Dead,
            },
            next_attempt_at: None,
            due_at: None,
            finished_at: Some(now),
            previous_delay_ms: None,
            failed,
            handback,
        },
    };
    (next, plan)
}

/// The update of every run in the batch that `passed` the fence; returns the ids it wrote.
async fn update_runs(
    db: &impl ConnectionTrait,
    batch: &[Finished],
    decided: &[(Next, Plan)],
    passed: &HashMap<i64, bool>,
    now: DateTime<Utc>,
) -> Result<HashSet<i64>, DbErr> {
    let rows: Vec<Vec<Value>> = batch
        .iter()
        .zip(decided)
        .filter(|(f, _)| passed.contains_key(&f.run.id))
        .map(|(f, (_, p))| {
            vec![
                f.run.id.into(),
                p.status.as_str().into(),
                p.next_attempt_at.into(),
                p.due_at.into(),
                p.finished_at.into(),
                p.previous_delay_ms.into(),
                p.failed.into(),
                f.execution.report.class.map(ErrorClass::as_str).into(),
                f.execution.message.clone().into(),
                p.handback.into(),
                // The node a child was meant for lost it (died, or shut down): any node that
                // may run the job takes it from here.
                matches!(f.ending, Ending::Expired | Ending::HandedBack).into(),
                now.into(),
            ]
        })
        .collect();
    const COLUMNS: &[(&str, &str)] = &[
        ("id", "bigint"),
        ("status", "text"),
        ("next_attempt_at", "timestamptz"),
        ("due_at", "timestamptz"),
        ("finished_at", "timestamptz"),
        ("delay", "bigint"),
        ("failed", "boolean"),
        ("class", "text"),
        ("message", "text"),
        ("handback", "integer"),
        ("lost", "boolean"),
        ("now", "timestamptz"),
    ];
    for chunk in rows.chunks(500) {
        let mut b = Binder::new(db.get_database_backend());
        let values = Values {
            columns: COLUMNS,
            rows: chunk.to_vec(),
        };
        let statement = sql::update_from(
            &mut b,
            "job_runs",
            &values,
            "status = v.v_status, next_attempt_at = v.v_next_attempt_at, due_at = v.v_due_at, \
             finished_at = v.v_finished_at, \
             previous_delay_ms = COALESCE(v.v_delay, previous_delay_ms), \
             last_error_class = CASE WHEN v.v_failed THEN v.v_class ELSE last_error_class END, \
             last_error = CASE WHEN v.v_failed THEN v.v_message ELSE last_error END, \
             handbacks = handbacks + v.v_handback, \
             node_hint = CASE WHEN v.v_lost THEN NULL ELSE node_hint END, \
             lease_owner = NULL, lease_expires_at = NULL, updated_at = v.v_now",
            "",
            "",
        );
        db.execute_raw(b.statement(statement)).await?;
    }
    Ok(passed.keys().copied().collect())
}

/// A run's status, attempt number, lease owner, whether its lease has lapsed (by the
/// database's clock) and whether someone asked to cancel it, as the fence reads them.
type Lease = (String, i32, Option<String>, bool, bool);

/// The fence: locks the batch's runs (on PostgreSQL; SQLite's write lock is held already) and
/// returns those still `running` under the lease each attempt ran under — same owner, same
/// attempt number and, for a takeover, a lease that has lapsed by the database's clock — with
/// whether a cancel was asked for. A run that fails it belongs to someone else now, and
/// nothing of its attempt is written.
///
/// Checked here rather than in the update's `WHERE`: given the lease columns there, a planner
/// reads the runs through the index of leases — on PostgreSQL a trail of dead entries, one per
/// claim since the last vacuum — instead of by id.
async fn fence(db: &impl ConnectionTrait, batch: &[Finished]) -> Result<HashMap<i64, bool>, DbErr> {
    let ids: Vec<i64> = batch.iter().map(|f| f.run.id).collect();
    let mut current: HashMap<i64, Lease> = HashMap::with_capacity(ids.len());
    for chunk in ids.chunks(500) {
        let mut b = Binder::new(db.get_database_backend());
        let sql = format!(
            "SELECT id, status, attempts, lease_owner, \
               CASE WHEN lease_expires_at < {} THEN 1 ELSE 0 END AS lapsed, \
               CASE WHEN cancel_requested_at IS NULL THEN 0 ELSE 1 END AS cancel \
             FROM job_runs WHERE {}{}",
            b.db_now(),
            b.in_ids("id", chunk),
            sql::for_update(db.get_database_backend()),
        );
        for row in db.query_all_raw(b.statement(sql)).await? {
            current.insert(
                row.try_get("", "id")?,
                (
                    row.try_get("", "status")?,
                    row.try_get("", "attempts")?,
                    row.try_get("", "lease_owner")?,
                    row.try_get::<i32>("", "lapsed")? == 1,
                    row.try_get::<i32>("", "cancel")? == 1,
                ),
            );
        }
    }
    Ok(batch
        .iter()
        .filter(|f| {
            let Some((status, attempts, owner, lapsed, _)) = current.get(&f.run.id) else {
                return false;
            };
            let expired = f.ending != Ending::Expired || *lapsed;
            status == RunStatus::Running.as_str()
                && *attempts == f.run.attempts
                && owner.is_some()
                && *owner == f.run.lease_owner
                && expired
        })
        .map(|f| (f.run.id, current.get(&f.run.id).is_some_and(|c| c.4)))
        .collect())
}

/// Each written run's attempt (the run's fence makes it this write-back's attempt).
async fn update_attempts(
    db: &impl ConnectionTrait,
    batch: &[Finished],
    settled: &HashSet<i64>,
) -> Result<(), DbErr> {
    let rows: Vec<Vec<Value>> = batch
        .iter()
        .filter(|f| settled.contains(&f.run.id))
        .map(|f| {
            let duration_ms = (f.finished_at - f.started_at).num_milliseconds().max(0);
            let report = &f.execution.report;
            vec![
                f.attempt_id.into(),
                f.started_at.into(),
                f.finished_at.into(),
                duration_ms.into(),
                report.outcome.as_str().into(),
                report.class.map(ErrorClass::as_str).into(),
                f.execution.message.clone().into(),
                f.execution.output_tail.clone().into(),
                f.slow.is_some().into(),
                (f.timeout_ms as i64).into(),
                report.timeout_kind.map(|k| k.as_str()).into(),
                (f.ending != Ending::HandedBack).into(),
            ]
        })
        .collect();
    const COLUMNS: &[(&str, &str)] = &[
        ("id", "bigint"),
        ("started_at", "timestamptz"),
        ("finished_at", "timestamptz"),
        ("duration_ms", "bigint"),
        ("outcome", "text"),
        ("class", "text"),
        ("message", "text"),
        ("output", "text"),
        ("slow", "boolean"),
        ("timeout_ms", "bigint"),
        ("timeout_kind", "text"),
        ("spent", "boolean"),
    ];
    for chunk in rows.chunks(500) {
        let mut b = Binder::new(db.get_database_backend());
        let values = Values {
            columns: COLUMNS,
            rows: chunk.to_vec(),
        };
        let statement = sql::update_from(
            &mut b,
            "job_attempts",
            &values,
            "started_at = v.v_started_at, finished_at = v.v_finished_at, \
             duration_ms = v.v_duration_ms, outcome = v.v_outcome, error_class = v.v_class, \
             message = v.v_message, output_tail = v.v_output, slow = v.v_slow, \
             timeout_ms = v.v_timeout_ms, timeout_kind = v.v_timeout_kind, \
             spent_retry = v.v_spent",
            // No `outcome IS NULL` guard: the run's fence already decided this attempt is
            // this lease's to write (see `update_from` on conditions).
            "",
            "",
        );
        db.execute_raw(b.statement(statement)).await?;
    }
    Ok(())
}

fn fallback_run(f: &Finished, target: &job::Model, now: DateTime<Utc>) -> job_run::ActiveModel {
    job_run::ActiveModel {
        job_id: Set(target.id),
        trigger: Set(Trigger::Fallback),
        scheduled_for: Set(now),
        status: Set(RunStatus::Pending),
        attempts: Set(0),
        idempotency_key: Set(format!("fallback-of-run-{}", f.run.id)),
        policy: Set(app::services::runs::policy_snapshot(target)),
        retrigger_of: Set(Some(f.run.id)),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
}

/// An attempt that ended without an outcome of its own: what recovery and a hand-back write.
pub fn interrupted(message: String, output: String) -> Execution {
    Execution {
        report: app::domain::run::AttemptReport::failed(ErrorClass::Interrupted),
        message: Some(message),
        output_tail: output,
    }
}
