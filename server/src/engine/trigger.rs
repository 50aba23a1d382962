//! Cron ticks become runs.
//!
//! Every pass looks at each enabled job's ticks since its last recorded one and inserts a
//! `job_runs` row per tick. `UNIQUE(job_id, cron_tick)` makes the insert idempotent: any number
//! of passes, on any number of nodes, record a tick once. Ticks found late (the process was
//! down) follow the job's misfire policy; none is dropped without a row saying so.

use std::collections::HashMap;
use std::time::Duration;

use app::domain::run::{Resolution, RunStatus, Trigger};
use app::domain::ticks::{self, MAX_MISSED_RECORDED, PlannedTick, Situation};
use app::entities::{job, job_run};
use app::services::jobs::to_spec;
use chrono::{DateTime, Utc};
use sea_orm::sea_query::OnConflict;
use sea_orm::{ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QuerySelect, Set};

/// What one pass of the trigger did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TickPass {
    /// Runs newly recorded (ticks another pass or node recorded already are not counted).
    pub inserted: u64,
    /// The earliest tick still to come, so the engine can wake for it.
    pub next_tick: Option<DateTime<Utc>>,
}

/// Inserts a run for every due tick of every enabled job.
pub async fn enqueue_due_ticks(
    db: &impl ConnectionTrait,
    now: DateTime<Utc>,
    misfire_after: Duration,
) -> Result<TickPass, DbErr> {
    let jobs = job::Entity::find()
        .filter(job::Column::Enabled.eq(true))
        .all(db)
        .await?;
    if jobs.is_empty() {
        return Ok(TickPass::default());
    }
    let last_ticks: HashMap<i64, Option<DateTime<Utc>>> = job_run::Entity::find()
        .select_only()
        .column(job_run::Column::JobId)
        .column_as(job_run::Column::CronTick.max(), "last")
        .group_by(job_run::Column::JobId)
        .into_tuple::<(i64, Option<DateTime<Utc>>)>()
        .all(db)
        .await?
        .into_iter()
        .collect();
    let active: HashMap<i64, i64> = job_run::Entity::find()
        .select_only()
        .column(job_run::Column::JobId)
        .column_as(job_run::Column::Id.count(), "n")
        .filter(job_run::Column::Status.is_in(RunStatus::ACTIVE.iter().copied()))
        .group_by(job_run::Column::JobId)
        .into_tuple::<(i64, i64)>()
        .all(db)
        .await?
        .into_iter()
        .collect();

    let held = holds(db, &jobs).await?;
    release_blocked(db, &jobs, &held, now).await?;

    let misfire_after =
        chrono::Duration::from_std(misfire_after).unwrap_or(chrono::Duration::seconds(30));
    let mut rows = Vec::new();
    let mut next_tick: Option<DateTime<Utc>> = None;
    for job in &jobs {
        let spec = match to_spec(job) {
            Ok(spec) => spec,
            Err(e) => {
                tracing::error!(job = %job.name, error = %e, "job definition unreadable; not triggered");
                continue;
            }
        };
        // Count from the last recorded tick, or from when the job was last (re)defined or
        // re-enabled: a new or re-enabled job does not fire for the time before it.
        let since = last_ticks
            .get(&job.id)
            .copied()
            .flatten()
            .map_or(job.updated_at, |last| last.max(job.updated_at));
        if let Ok(upcoming) = spec.cron.next_after(spec.timezone, now) {
            let upcoming = upcoming.with_timezone(&Utc);
            next_tick = Some(next_tick.map_or(upcoming, |t| t.min(upcoming)));
        }
        // Bounded: a process down for a long time records at most this many ticks per job
        // and pass (the rest follow in the next passes, oldest first).
        let due = spec
            .cron
            .fire_times_between(spec.timezone, since, now, 10_000);
        if due.is_empty() {
            continue;
        }
        let plan = ticks::plan(
            &due,
            Situation {
                now,
                misfire_after,
                misfire: spec.misfire,
                overlap: spec.overlap,
                busy: active.get(&job.id).copied().unwrap_or(0) > 0,
                hold: held.get(&job.name).map(String::as_str),
            },
        );
        if plan.unrecorded_missed > 0 {
            tracing::warn!(
                job = %job.name,
                missed = plan.unrecorded_missed + MAX_MISSED_RECORDED,
                recorded = MAX_MISSED_RECORDED,
                "many ticks were missed while Bulwark was down; recording the latest"
            );
        }
        rows.extend(plan.runs.iter().map(|p| tick_row(job, p, now)));
    }
    if rows.is_empty() {
        return Ok(TickPass {
            inserted: 0,
            next_tick,
        });
    }
    let mut inserted = 0;
    for chunk in rows.chunks(200) {
        let result = job_run::Entity::insert_many(chunk.to_vec())
            .on_conflict(
                OnConflict::columns([job_run::Column::JobId, job_run::Column::CronTick])
                    .do_nothing()
                    .to_owned(),
            )
            .exec_without_returning(db)
            .await;
        match result {
            Ok(n) => inserted += n,
            Err(DbErr::RecordNotInserted) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(TickPass {
        inserted,
        next_tick,
    })
}

fn tick_row(job: &job::Model, planned: &PlannedTick, now: DateTime<Utc>) -> job_run::ActiveModel {
    let PlannedTick { tick, status, note } = planned;
    let finished = !status.is_active();
    job_run::ActiveModel {
        job_id: Set(job.id),
        trigger: Set(Trigger::Cron),
        scheduled_for: Set(*tick),
        cron_tick: Set(Some(*tick)),
        status: Set(*status),
        attempts: Set(0),
        next_attempt_at: Set(None),
        idempotency_key: Set(format!("{}@{}", job.name, tick.to_rfc3339())),
        policy: Set(app::services::runs::policy_snapshot(job)),
        last_error: Set(note.clone()),
        created_at: Set(now),
        updated_at: Set(now),
        finished_at: Set(finished.then_some(now)),
        ..Default::default()
    }
}

/// Which jobs are held, and why: a job is held while a job that names it as a dependant has a
/// dead latest run (one an administrator resolved by hand no longer holds anything).
async fn holds(
    db: &impl ConnectionTrait,
    jobs: &[job::Model],
) -> Result<HashMap<String, String>, DbErr> {
    use sea_orm::QueryOrder;
    let mut held = HashMap::new();
    for upstream in jobs
        .iter()
        .filter(|j| j.dependants != "[]" && !j.dependants.is_empty())
    {
        let dependants: Vec<String> = match serde_json::from_str(&upstream.dependants) {
            Ok(list) => list,
            Err(e) => {
                tracing::error!(job = %upstream.name, error = %e, "the job's dependants are unreadable; re-save the job");
                continue;
            }
        };
        if dependants.is_empty() {
            continue;
        }
        let latest = job_run::Entity::find()
            .filter(job_run::Column::JobId.eq(upstream.id))
            .filter(job_run::Column::Status.is_in([RunStatus::Succeeded, RunStatus::Dead]))
            .order_by_desc(job_run::Column::FinishedAt)
            .order_by_desc(job_run::Column::Id)
            .one(db)
            .await?;
        let Some(latest) = latest else { continue };
        if latest.status == RunStatus::Dead && latest.resolution != Some(Resolution::Resolved) {
            for dependant in dependants {
                held.entry(dependant).or_insert_with(|| {
                    format!(
                        "held: job {} is failing (run #{})",
                        upstream.name, latest.id
                    )
                });
            }
        }
    }
    Ok(held)
}

/// Releases the blocked runs of jobs no longer held: they become pending and run.
async fn release_blocked(
    db: &impl ConnectionTrait,
    jobs: &[job::Model],
    held: &HashMap<String, String>,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    use sea_orm::sea_query::Expr;
    let free: Vec<i64> = jobs
        .iter()
        .filter(|j| !held.contains_key(&j.name))
        .map(|j| j.id)
        .collect();
    if free.is_empty() {
        return Ok(());
    }
    let released = job_run::Entity::update_many()
        .col_expr(job_run::Column::Status, Expr::value(RunStatus::Pending))
        .col_expr(
            job_run::Column::LastError,
            Expr::value(Option::<String>::None),
        )
        .col_expr(job_run::Column::UpdatedAt, Expr::value(now))
        .filter(job_run::Column::Status.eq(RunStatus::Blocked))
        .filter(job_run::Column::JobId.is_in(free))
        .exec(db)
        .await?;
    if released.rows_affected > 0 {
        tracing::info!(
            runs = released.rows_affected,
            "released runs held for a failing upstream job"
        );
    }
    Ok(())
}
