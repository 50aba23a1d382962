//! Backfills in the database (`crate::domain::backfill`).
//!
//! [`start`] records a backfill and one run per tick that has none (or, with `rerun`, whose
//! latest run ended dead), each `blocked` with the backfill's id — keyed by its tick like a
//! cron run, so a tick is backfilled once however often it is asked. [`advance`], on every
//! trigger pass of every node, starts them: oldest tick first, at most `parallel` going and
//! `per_minute` started a minute, each backfill's row locked while it does, so two nodes
//! never start more between them. The job's own ticks keep their turns meanwhile: only the
//! runs a backfill has started stand in the job's lane.

use chrono::{DateTime, Duration, NaiveDate, Utc};
use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait,
    IntoActiveModel, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, Set,
};

use crate::domain::backfill::{self, BackfillError, BackfillState, Pace};
use crate::domain::due::Due;
use crate::domain::job::JobSpec;
use crate::domain::run::{RunStatus, Trigger};
use crate::entities::{backfill as row, job, job_run};
use crate::services::audit::{self, Actor};

#[derive(Debug, thiserror::Error)]
pub enum BackfillServiceError {
    #[error("{0}")]
    Refused(BackfillError),
    #[error("there is no backfill #{0}")]
    NotFound(i64),
    #[error("backfill #{id} is {state}: it cannot be {action}")]
    State {
        id: i64,
        state: &'static str,
        action: &'static str,
    },
    #[error("the job cannot be read: {0}")]
    Job(String),
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// What a backfill is asked to do.
#[derive(Debug, Clone, Copy)]
pub struct Request {
    pub from: NaiveDate,
    pub to: NaiveDate,
    pub pace: Pace,
    /// Ticks whose latest run ended dead get a new run.
    pub rerun: bool,
}

/// What [`plan`] found for each tick of the range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    pub due: Due,
    /// The run it gets: new, again (its latest ended dead, `rerun`), or none (it has one).
    pub action: TickAction,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TickAction {
    New,
    /// A new run after the latest one, which ended dead (its id).
    Rerun(i64),
    /// It has a run (its id) and is left alone.
    Has(i64),
}

/// The job's ticks over the range and what each would get; changes nothing.
pub async fn plan(
    db: &impl ConnectionTrait,
    job: &job::Model,
    request: &Request,
    now: DateTime<Utc>,
) -> Result<(JobSpec, Vec<Planned>), BackfillServiceError> {
    let spec = super::jobs::to_spec(job).map_err(|e| BackfillServiceError::Job(e.to_string()))?;
    request
        .pace
        .check()
        .map_err(BackfillServiceError::Refused)?;
    let calendar = super::jobs::calendar_of(db, &spec)
        .await
        .map_err(|e| BackfillServiceError::Job(e.to_string()))?;
    let ticks = backfill::ticks(&spec, calendar.as_ref(), request.from, request.to, now)
        .map_err(BackfillServiceError::Refused)?;
    let latest = latest_runs(db, job, &ticks).await?;
    let planned = ticks
        .into_iter()
        .map(|due| {
            let action = match latest.get(&due.tick) {
                None => TickAction::New,
                Some((id, RunStatus::Dead)) if request.rerun => TickAction::Rerun(*id),
                Some((id, _)) => TickAction::Has(*id),
            };
            Planned { due, action }
        })
        .collect();
    Ok((spec, planned))
}

/// The newest run standing for each tick — its own, or a later one with its key — read 500
/// ticks to a query (a backfill plans up to 10,000 inside its write transaction).
async fn latest_runs(
    db: &impl ConnectionTrait,
    job: &job::Model,
    ticks: &[Due],
) -> Result<std::collections::HashMap<DateTime<Utc>, (i64, RunStatus)>, DbErr> {
    let mut latest = std::collections::HashMap::new();
    for chunk in ticks.chunks(500) {
        let by_key: std::collections::HashMap<String, DateTime<Utc>> =
            chunk.iter().map(|d| (tick_key(job, d), d.tick)).collect();
        let rows: Vec<(i64, RunStatus, Option<DateTime<Utc>>, String)> = job_run::Entity::find()
            .select_only()
            .column(job_run::Column::Id)
            .column(job_run::Column::Status)
            .column(job_run::Column::CronTick)
            .column(job_run::Column::IdempotencyKey)
            .filter(job_run::Column::JobId.eq(job.id))
            .filter(
                sea_orm::Condition::any()
                    .add(job_run::Column::CronTick.is_in(chunk.iter().map(|d| d.tick)))
                    .add(job_run::Column::IdempotencyKey.is_in(by_key.keys().cloned())),
            )
            .into_tuple()
            .all(db)
            .await?;
        for (id, status, cron_tick, key) in rows {
            let Some(tick) = cron_tick.or_else(|| by_key.get(&key).copied()) else {
                continue;
            };
            let newest = latest.get(&tick).is_none_or(|(seen, _)| *seen < id);
            if newest {
                latest.insert(tick, (id, status));
            }
        }
    }
    Ok(latest)
}

fn tick_key(job: &job::Model, due: &Due) -> String {
    format!("{}@{}", job.name, due.tick.to_rfc3339())
}

/// The plan as the job page and the REST API show it.
pub fn plan_view(
    spec: &JobSpec,
    backfill: Option<i64>,
    planned: &[Planned],
) -> crate::views::backfills::BackfillPlan {
    use crate::views::backfills::{BackfillPlan, BackfillTick};
    let ticks = planned
        .iter()
        .map(|p| {
            let (action, run) = match p.action {
                TickAction::New => ("new", None),
                TickAction::Rerun(id) => ("rerun", Some(id)),
                TickAction::Has(id) => ("has_run", Some(id)),
            };
            BackfillTick {
                scheduled_at: p.due.fire.with_timezone(&spec.timezone).to_rfc3339(),
                business_date: p.due.business_date,
                action: action.into(),
                run,
            }
        })
        .collect();
    BackfillPlan { backfill, ticks }
}

/// Records a backfill of the ticks [`plan`] gives new runs, and those runs, waiting their turn;
/// `None` (and nothing written) when every tick has its run.
pub async fn start(
    db: &DatabaseConnection,
    job: &job::Model,
    request: &Request,
    who: &Actor<'_>,
    now: DateTime<Utc>,
) -> Result<(Option<row::Model>, Vec<Planned>), BackfillServiceError> {
    let txn = super::sql::begin_write(db).await?;
    let (_, planned) = plan(&txn, job, request, now).await?;
    let runs: Vec<&Planned> = planned
        .iter()
        .filter(|p| !matches!(p.action, TickAction::Has(_)))
        .collect();
    if runs.is_empty() {
        txn.rollback().await?;
        return Ok((None, planned));
    }
    let made = row::ActiveModel {
        job_id: Set(job.id),
        from_date: Set(request.from),
        to_date: Set(request.to),
        per_minute: Set(request.pace.per_minute.map(|n| n as i32)),
        parallel: Set(request.pace.parallel as i32),
        rerun: Set(request.rerun),
        state: Set(BackfillState::Running),
        total: Set(runs.len() as i32),
        window_start: Set(None),
        window_started: Set(0),
        created_by: Set(who.name.chars().take(64).collect()),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
    .insert(&txn)
    .await?;
    let rows: Vec<job_run::ActiveModel> = runs
        .iter()
        .map(|p| waiting_run(job, made.id, p, now))
        .collect();
    for chunk in rows.chunks(200) {
        let inserted = job_run::Entity::insert_many(chunk.to_vec())
            .on_conflict(
                OnConflict::columns([job_run::Column::JobId, job_run::Column::CronTick])
                    .do_nothing()
                    .to_owned(),
            )
            .exec_without_returning(&txn)
            .await;
        match inserted {
            Ok(_) | Err(DbErr::RecordNotInserted) => {}
            Err(e) => return Err(e.into()),
        }
    }
    // A dead run a rerun repeats leaves the failed queue, as a re-trigger takes it.
    let reruns: Vec<i64> = runs
        .iter()
        .filter_map(|p| match p.action {
            TickAction::Rerun(id) => Some(id),
            _ => None,
        })
        .collect();
    if !reruns.is_empty() {
        use crate::domain::run::Resolution;
        job_run::Entity::update_many()
            .col_expr(
                job_run::Column::Resolution,
                Expr::value(Resolution::Retriggered),
            )
            .col_expr(
                job_run::Column::ResolvedBy,
                Expr::value(who.name.to_string()),
            )
            .col_expr(job_run::Column::ResolvedAt, Expr::value(now))
            .filter(job_run::Column::Id.is_in(reruns))
            .filter(job_run::Column::Resolution.is_null())
            .exec(&txn)
            .await?;
    }
    // A tick the trigger recorded meanwhile kept its own run: the total is what went in.
    let total = job_run::Entity::find()
        .filter(job_run::Column::BackfillId.eq(made.id))
        .count(&txn)
        .await?;
    let mut model = made.clone().into_active_model();
    model.total = Set(total as i32);
    let made = model.update(&txn).await?;
    let detail = serde_json::json!({
        "backfill": made.id, "from": request.from, "to": request.to, "runs": runs.len(),
        "parallel": request.pace.parallel, "per_minute": request.pace.per_minute,
        "rerun": request.rerun,
    });
    audit::record(&txn, who, "backfill.started", &job.name, detail, now).await?;
    txn.commit().await?;
    Ok((Some(made), planned))
}

/// A run of the backfill for a planned tick, waiting its turn. A rerun has no tick of its
/// own (the dead run keeps it) but the tick's key, like a re-trigger.
fn waiting_run(
    job: &job::Model,
    backfill: i64,
    p: &Planned,
    now: DateTime<Utc>,
) -> job_run::ActiveModel {
    let rerun_of = match p.action {
        TickAction::Rerun(id) => Some(id),
        _ => None,
    };
    job_run::ActiveModel {
        job_id: Set(job.id),
        trigger: Set(Trigger::Backfill),
        scheduled_for: Set(p.due.fire),
        cron_tick: Set(rerun_of.is_none().then_some(p.due.tick)),
        business_date: Set(Some(p.due.business_date)),
        backfill_id: Set(Some(backfill)),
        retrigger_of: Set(rerun_of),
        status: Set(RunStatus::Blocked),
        attempts: Set(0),
        idempotency_key: Set(tick_key(job, &p.due)),
        policy: Set(super::runs::policy_snapshot(job)),
        last_error: Set(Some(format!("waiting its turn in backfill #{backfill}"))),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
}

/// Starts the next runs of every running backfill, and ends the backfills whose runs have all
/// ended. Returns how many runs it started.
pub async fn advance(db: &DatabaseConnection, now: DateTime<Utc>) -> Result<u64, DbErr> {
    let running: Vec<i64> = row::Entity::find()
        .select_only()
        .column(row::Column::Id)
        .filter(row::Column::State.eq(BackfillState::Running))
        .into_tuple()
        .all(db)
        .await?;
    let mut started = 0;
    for id in running {
        started += advance_one(db, id, now).await?;
    }
    Ok(started)
}

/// One backfill, its row locked for the transaction (on PostgreSQL; SQLite's write lock).
async fn advance_one(db: &DatabaseConnection, id: i64, now: DateTime<Utc>) -> Result<u64, DbErr> {
    let txn = super::sql::begin_write(db).await?;
    // The write takes the row's lock first: another node's pass waits, then sees these runs.
    let locked = row::Entity::update_many()
        .col_expr(row::Column::UpdatedAt, Expr::value(now))
        .filter(row::Column::Id.eq(id))
        .filter(row::Column::State.eq(BackfillState::Running))
        .exec(&txn)
        .await?;
    let found = match locked.rows_affected {
        0 => None,
        _ => row::Entity::find_by_id(id).one(&txn).await?,
    };
    let Some(b) = found else {
        txn.rollback().await?;
        return Ok(0);
    };
    let counts = counts(&txn, id).await?;
    if counts.waiting == 0 && counts.going == 0 {
        set_state(&txn, b, BackfillState::Done, now).await?;
        txn.commit().await?;
        return Ok(0);
    }
    let (room, window) = room(&b, counts.going, now);
    let ids: Vec<i64> = job_run::Entity::find()
        .select_only()
        .column(job_run::Column::Id)
        .filter(job_run::Column::BackfillId.eq(id))
        .filter(job_run::Column::Status.eq(RunStatus::Blocked))
        .order_by_asc(job_run::Column::ScheduledFor)
        .order_by_asc(job_run::Column::Id)
        .limit(room)
        .into_tuple()
        .all(&txn)
        .await?;
    if ids.is_empty() {
        txn.commit().await?;
        return Ok(0);
    }
    super::lanes::lock(&txn, &[b.job_id]).await?;
    let released = job_run::Entity::update_many()
        .col_expr(job_run::Column::Status, Expr::value(RunStatus::Pending))
        .col_expr(
            job_run::Column::LastError,
            Expr::value(Option::<String>::None),
        )
        .col_expr(job_run::Column::UpdatedAt, Expr::value(now))
        .filter(job_run::Column::Id.is_in(ids))
        .exec(&txn)
        .await?
        .rows_affected;
    let mut wake = crate::wake::Wake::default();
    if super::lanes::promote(&txn, &[b.job_id], now).await? > 0 {
        wake = crate::wake::runs_changed_in(&txn).await;
    }
    let (window_start, window_started) = window;
    let mut model = b.into_active_model();
    model.window_start = Set(Some(window_start));
    model.window_started = Set(window_started + released as i32);
    model.update(&txn).await?;
    txn.commit().await?;
    wake.after_commit();
    Ok(released)
}

/// A backfill's runs still to start, and started but not ended.
struct Counts {
    waiting: u64,
    going: u64,
}

async fn counts(db: &impl ConnectionTrait, id: i64) -> Result<Counts, DbErr> {
    let of = |status: Vec<RunStatus>| {
        job_run::Entity::find()
            .filter(job_run::Column::BackfillId.eq(id))
            .filter(job_run::Column::Status.is_in(status))
    };
    let going: Vec<RunStatus> = RunStatus::ALL
        .iter()
        .copied()
        .filter(|s| s.is_active() && *s != RunStatus::Blocked)
        .collect();
    Ok(Counts {
        waiting: of(vec![RunStatus::Blocked]).count(db).await?,
        going: of(going).count(db).await?,
    })
}

/// How many runs the backfill may start now, and its per-minute window after starting them
/// (its start, and how many it had started in it before).
fn room(b: &row::Model, going: u64, now: DateTime<Utc>) -> (u64, (DateTime<Utc>, i32)) {
    let slots = (b.parallel.max(1) as u64).saturating_sub(going);
    let window = match b.window_start {
        Some(start) if now - start < Duration::minutes(1) => (start, b.window_started),
        _ => (now, 0),
    };
    let room = match b.per_minute {
        Some(n) => slots.min((n - window.1).max(0) as u64),
        None => slots,
    };
    (room, window)
}

async fn set_state(
    db: &impl ConnectionTrait,
    b: row::Model,
    state: BackfillState,
    now: DateTime<Utc>,
) -> Result<row::Model, DbErr> {
    let mut model = b.into_active_model();
    model.state = Set(state);
    model.updated_at = Set(now);
    model.update(db).await
}

/// The job backfill `id` runs.
pub async fn job_of(
    db: &impl ConnectionTrait,
    id: i64,
) -> Result<job::Model, BackfillServiceError> {
    let b = row::Entity::find_by_id(id)
        .one(db)
        .await?
        .ok_or(BackfillServiceError::NotFound(id))?;
    job::Entity::find_by_id(b.job_id)
        .one(db)
        .await?
        .ok_or(BackfillServiceError::NotFound(id))
}

/// Pauses, resumes or cancels a backfill as a whole, and records who did. Cancelling
/// cancels its runs not yet running; the ones running finish.
pub async fn change(
    db: &DatabaseConnection,
    id: i64,
    to: BackfillState,
    who: &Actor<'_>,
    now: DateTime<Utc>,
) -> Result<row::Model, BackfillServiceError> {
    let txn = super::sql::begin_write(db).await?;
    let b = row::Entity::find_by_id(id)
        .one(&txn)
        .await?
        .ok_or(BackfillServiceError::NotFound(id))?;
    let allowed = matches!(
        (b.state, to),
        (BackfillState::Running, BackfillState::Paused)
            | (BackfillState::Paused, BackfillState::Running)
            | (
                BackfillState::Running | BackfillState::Paused,
                BackfillState::Cancelled
            )
    );
    if !allowed {
        return Err(BackfillServiceError::State {
            id,
            state: b.state.as_str(),
            action: to.as_str(),
        });
    }
    let job_id = b.job_id;
    let changed = set_state(&txn, b, to, now).await?;
    if to == BackfillState::Cancelled {
        cancel_runs(&txn, id, job_id, now).await?;
    }
    let job_name = job::Entity::find_by_id(job_id)
        .one(&txn)
        .await?
        .map(|j| j.name)
        .unwrap_or_default();
    let action = format!("backfill.{}", to.as_str());
    audit::record(
        &txn,
        who,
        &action,
        &job_name,
        serde_json::json!({ "backfill": id }),
        now,
    )
    .await?;
    txn.commit().await?;
    Ok(changed)
}

/// The backfill's runs that have not started: cancelled, the job's lane given its next head.
async fn cancel_runs(
    db: &impl ConnectionTrait,
    id: i64,
    job_id: i64,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    super::lanes::lock(db, &[job_id]).await?;
    job_run::Entity::update_many()
        .col_expr(job_run::Column::Status, Expr::value(RunStatus::Cancelled))
        .col_expr(
            job_run::Column::DueAt,
            Expr::value(Option::<DateTime<Utc>>::None),
        )
        .col_expr(job_run::Column::FinishedAt, Expr::value(now))
        .col_expr(job_run::Column::UpdatedAt, Expr::value(now))
        .col_expr(
            job_run::Column::LastError,
            Expr::value(format!("backfill #{id} was cancelled")),
        )
        .filter(job_run::Column::BackfillId.eq(id))
        .filter(job_run::Column::Status.is_in([RunStatus::Blocked, RunStatus::Pending]))
        .exec(db)
        .await?;
    super::lanes::promote(db, &[job_id], now).await?;
    Ok(())
}

/// A job's backfills, newest first, with how many of each one's runs have ended.
pub async fn of_job(
    db: &impl ConnectionTrait,
    job_id: i64,
) -> Result<Vec<crate::views::backfills::BackfillRow>, DbErr> {
    let rows = row::Entity::find()
        .filter(row::Column::JobId.eq(job_id))
        .order_by_desc(row::Column::Id)
        .limit(20)
        .all(db)
        .await?;
    let mut out = Vec::with_capacity(rows.len());
    for b in rows {
        let counts = counts(db, b.id).await?;
        let done = (b.total as u64).saturating_sub(counts.waiting + counts.going);
        out.push(crate::views::backfills::BackfillRow {
            id: b.id,
            from: b.from_date,
            to: b.to_date,
            state: b.state,
            total: b.total.max(0) as u64,
            done,
            going: counts.going,
            parallel: b.parallel.max(1) as u32,
            per_minute: b.per_minute.map(|n| n.max(0) as u32),
            rerun: b.rerun,
            created_by: b.created_by,
            created_at: b.created_at,
        });
    }
    Ok(out)
}
