//! Cron ticks become runs.
//!
//! Each job keeps `next_fire_at`, the next tick not yet recorded. A pass takes the jobs whose
//! tick has come (locking their rows, skipping jobs another node is triggering at that
//! moment), records one run row per due tick — pending, skipped or held, by
//! [`app::domain::ticks::plan`] — and moves `next_fire_at` past now, all in one transaction.
//! So every tick becomes exactly one run whatever the number of nodes (and
//! `UNIQUE(job_id, cron_tick)` would refuse a second), and ticks missed during an outage are
//! planned once: the newest runs (`misfire = run_once`), the latest hundred are recorded as
//! skipped and the rest only mentioned in the log — never enumerated, however long the outage.
//!
//! Each pass also starts the next runs of running backfills (`app::services::backfills`).
//!
//! Paused jobs (`app::domain::maintenance`) are passed over: their `next_fire_at` stays where
//! it is, so when the pause ends their ticks are due at once and planned like an outage's.

use std::collections::HashMap;
use std::time::Duration;

use app::domain::run::{Resolution, RunStatus, Trigger};
use app::domain::ticks::{self, Due, MAX_MISSED_RECORDED, PlannedTick, Situation};
use app::entities::{job, job_run};
use app::services::jobs::to_spec;
use app::services::lanes;
use app::services::maintenance::Paused;
use app::services::sql::{self, Binder, Values};
use chrono::{DateTime, Utc};
use sea_orm::sea_query::OnConflict;
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect, Set, TransactionTrait,
};

/// Jobs taken per transaction.
const JOBS_PER_BATCH: u64 = 200;
/// Ticks looked at per job and pass, at most: the missed ones recorded, and every on-time one.
/// Older ones are never enumerated (`CronExpr::ticks_between` steps back from now), so a
/// pass after a long outage is as short as any other and holds its locks no longer.
const KEEP: usize = MAX_MISSED_RECORDED + 1_000;

/// What one pass of the trigger did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TickPass {
    /// Runs newly recorded.
    pub inserted: u64,
    /// The earliest tick still to come, so the trigger can sleep until it.
    pub next_tick: Option<DateTime<Utc>>,
}

/// Records a run for every due tick of every enabled job, and releases held runs whose
/// upstream job recovered.
pub async fn enqueue_due_ticks(
    db: &DatabaseConnection,
    now: DateTime<Utc>,
    misfire_after: Duration,
) -> Result<TickPass, DbErr> {
    let misfire_after =
        chrono::Duration::from_std(misfire_after).unwrap_or(chrono::Duration::seconds(30));
    let paused = app::services::maintenance::paused(db, now).await?;
    let holds = holds(db).await?;
    let mut inserted = 0;
    // Most passes find nothing due: one indexed read, no write transaction.
    if earliest_next_fire(db, now, &paused)
        .await?
        .is_some_and(|at| at <= now)
    {
        loop {
            let (runs, jobs) = batch(db, now, misfire_after, &holds, &paused).await?;
            inserted += runs;
            if jobs < JOBS_PER_BATCH {
                break;
            }
        }
    }
    release_blocked(db, &holds, now).await?;
    // Backfills start their next runs as their earlier ones end: within a pass of it.
    app::services::backfills::advance(db, now).await?;
    Ok(TickPass {
        inserted,
        next_tick: earliest_next_fire(db, now, &paused).await?,
    })
}

/// One transaction: up to [`JOBS_PER_BATCH`] due jobs. Returns (runs inserted, jobs taken).
async fn batch(
    db: &DatabaseConnection,
    now: DateTime<Utc>,
    misfire_after: chrono::Duration,
    holds: &HashMap<String, String>,
    paused: &Paused,
) -> Result<(u64, u64), DbErr> {
    let backend = db.get_database_backend();
    let mut b = Binder::new(backend);
    let Some(not_paused) = paused.exclude(&mut b, "id") else {
        return Ok((0, 0));
    };
    let txn = db.begin().await?;
    // The first statement writes (bumping the jobs' lane counters), so it takes the jobs' row
    // locks on PostgreSQL — passing over jobs another node holds — and the write lock on
    // SQLite.
    let sql = format!(
        "UPDATE jobs SET lane_seq = lane_seq + 1 WHERE id IN \
           (SELECT id FROM jobs WHERE enabled = {} AND (next_fire_at IS NULL OR next_fire_at <= {}) \
            AND {not_paused} ORDER BY id LIMIT {JOBS_PER_BATCH}{}) RETURNING *",
        b.bind(true),
        b.bind(now),
        sql::skip_locked(backend),
    );
    let jobs = job::Entity::find()
        .from_raw_sql(b.statement(sql))
        .all(&txn)
        .await?;
    if jobs.is_empty() {
        txn.commit().await?;
        return Ok((0, 0));
    }
    let planning = Planning::read(&txn, &jobs, now, misfire_after, holds).await?;
    let mut rows = Vec::new();
    let mut next: Vec<(i64, Option<DateTime<Utc>>)> = Vec::with_capacity(jobs.len());
    for job in &jobs {
        next.push((job.id, planning.plan(job, &mut rows)));
    }
    let due = lanes::place(&txn, &mut rows).await?;
    let inserted = insert_ticks(&txn, &rows).await?;
    set_next_fire(&txn, &next).await?;
    let mut wake = app::wake::Wake::default();
    if due > 0 {
        wake = app::wake::runs_changed_in(&txn).await;
    }
    txn.commit().await?;
    wake.after_commit();
    Ok((inserted, jobs.len() as u64))
}

/// What planning a batch's ticks reads besides the jobs: when each job without a next tick
/// last ticked, and which jobs have a run under way.
struct Planning<'a> {
    now: DateTime<Utc>,
    misfire_after: chrono::Duration,
    holds: &'a HashMap<String, String>,
    last_ticks: HashMap<i64, DateTime<Utc>>,
    busy: std::collections::HashSet<i64>,
    /// The calendars the batch's jobs follow, by name.
    calendars: HashMap<String, app::domain::calendar::Calendar>,
}

impl<'a> Planning<'a> {
    async fn read(
        txn: &sea_orm::DatabaseTransaction,
        jobs: &[job::Model],
        now: DateTime<Utc>,
        misfire_after: chrono::Duration,
        holds: &'a HashMap<String, String>,
    ) -> Result<Self, DbErr> {
        let ids: Vec<i64> = jobs.iter().map(|j| j.id).collect();
        let without_next: Vec<i64> = jobs
            .iter()
            .filter(|j| j.next_fire_at.is_none())
            .map(|j| j.id)
            .collect();
        let calendars = if jobs.iter().any(|j| j.calendar.is_some()) {
            use app::services::calendars::{self, CalendarServiceError};
            match calendars::all(txn).await {
                Ok(all) => all,
                Err(CalendarServiceError::Db(e)) => return Err(e),
                // Their jobs are not triggered until it is fixed (`plan`), and say why.
                Err(e) => {
                    tracing::error!(error = %e, "a calendar is unreadable");
                    HashMap::new()
                }
            }
        } else {
            HashMap::new()
        };
        Ok(Self {
            now,
            misfire_after,
            holds,
            last_ticks: last_ticks(txn, &without_next).await?,
            busy: lanes::busy(txn, &ids).await?,
            calendars,
        })
    }

    /// Adds the job's due ticks to `rows` as its misfire and overlap policies plan them;
    /// returns its next fire time.
    fn plan(
        &self,
        job: &job::Model,
        rows: &mut Vec<job_run::ActiveModel>,
    ) -> Option<DateTime<Utc>> {
        let now = self.now;
        let spec = match to_spec(job) {
            Ok(spec) => spec,
            Err(e) => {
                tracing::error!(job = %job.name, error = %e, "job definition unreadable; not triggered (looked at again in a minute)");
                return Some(now + chrono::Duration::minutes(1));
            }
        };
        let Ok(calendar) = self.calendar_of(job, &spec) else {
            return Some(now + chrono::Duration::minutes(1));
        };
        let (due, more) = self.due(job, &spec, calendar);
        let plan = ticks::plan(
            &due,
            Situation {
                now,
                misfire_after: self.misfire_after,
                misfire: spec.misfire,
                overlap: spec.overlap,
                busy: self.busy.contains(&job.id),
                hold: self.holds.get(&job.name).map(String::as_str),
                watch: spec.kind.watch().is_some(),
            },
        );
        if plan.unrecorded_missed > 0 || more {
            tracing::warn!(
                job = %job.name,
                since = ?due.first().map(|d| d.fire),
                missed = format!(
                    "{}{}",
                    if more { "more than " } else { "" },
                    plan.unrecorded_missed + MAX_MISSED_RECORDED
                ),
                recorded = MAX_MISSED_RECORDED,
                "many ticks were missed while Bulwark was down; the latest are recorded"
            );
        }
        let policy = app::services::runs::policy_snapshot(job);
        rows.extend(plan.runs.iter().map(|p| match spec.kind.watch() {
            Some(watch) if p.status == RunStatus::AwaitingPing => {
                app::services::watch::tick_row(job, &p.due, watch, now)
            }
            _ => tick_row(job, p, policy.clone(), now),
        }));
        match spec.kind.watch().and_then(|w| w.every_ms) {
            Some(every) => due
                .last()
                .map(|d| d.fire + chrono::Duration::milliseconds(every as i64))
                .or(job.next_fire_at)
                .or_else(|| spec.next_tick_after(now)),
            None => spec.next_fire_after(calendar, now),
        }
    }

    /// The calendar the job follows, if any. `Err` when it names one this batch could not
    /// read: the job waits (looked at again in a minute), since by its cron alone it would run
    /// on holidays.
    fn calendar_of(
        &self,
        job: &job::Model,
        spec: &app::domain::job::JobSpec,
    ) -> Result<Option<&app::domain::calendar::Calendar>, ()> {
        let Some(name) = &spec.calendar else {
            return Ok(None);
        };
        match self.calendars.get(name) {
            Some(calendar) => Ok(Some(calendar)),
            None => {
                tracing::error!(job = %job.name, calendar = %name, "the job's calendar is missing or unreadable; not triggered (looked at again in a minute)");
                Err(())
            }
        }
    }

    /// The job's due ticks from the one not yet recorded (a job without one, after an upgrade,
    /// counts from its last recorded tick or from when it was last defined), and whether older
    /// ones were not looked at.
    fn due(
        &self,
        job: &job::Model,
        spec: &app::domain::job::JobSpec,
        calendar: Option<&app::domain::calendar::Calendar>,
    ) -> (Vec<Due>, bool) {
        let after = match job.next_fire_at {
            Some(at) => at - chrono::Duration::milliseconds(1),
            None => self
                .last_ticks
                .get(&job.id)
                .copied()
                .map_or(job.updated_at, |last| last.max(job.updated_at)),
        };
        match (job.next_fire_at, spec.kind.watch().and_then(|w| w.every_ms)) {
            // Watched `every` so long: its next tick is kept (a ping moves it), and each
            // period without one is another.
            (Some(at), Some(every)) => {
                let ticks = app::domain::cron::periods_between(
                    at - chrono::Duration::milliseconds(every as i64),
                    self.now,
                    every,
                    KEEP,
                );
                let due = ticks.last.iter().map(|t| Due::at(*t, spec.date_of(*t)));
                (due.collect(), ticks.more)
            }
            _ => spec.due_between(calendar, after, self.now, KEEP),
        }
    }
}

/// Inserts the ticks' runs, 200 to a statement; a tick already recorded (by another node, or
/// before a restart) is passed over. Returns how many were inserted.
async fn insert_ticks(
    txn: &sea_orm::DatabaseTransaction,
    rows: &[job_run::ActiveModel],
) -> Result<u64, DbErr> {
    let mut inserted = 0;
    for chunk in rows.chunks(200) {
        match job_run::Entity::insert_many(chunk.to_vec())
            .on_conflict(
                OnConflict::columns([job_run::Column::JobId, job_run::Column::CronTick])
                    .do_nothing()
                    .to_owned(),
            )
            .exec_without_returning(txn)
            .await
        {
            Ok(n) => inserted += n,
            Err(DbErr::RecordNotInserted) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(inserted)
}

fn tick_row(
    job: &job::Model,
    planned: &PlannedTick,
    policy: Option<String>,
    now: DateTime<Utc>,
) -> job_run::ActiveModel {
    let PlannedTick { due, status, note } = planned;
    let finished = !status.is_active();
    let tick = &due.tick;
    job_run::ActiveModel {
        job_id: Set(job.id),
        trigger: Set(Trigger::Cron),
        scheduled_for: Set(due.fire),
        cron_tick: Set(Some(*tick)),
        business_date: Set(Some(due.business_date)),
        status: Set(*status),
        attempts: Set(0),
        next_attempt_at: Set(None),
        idempotency_key: Set(format!("{}@{}", job.name, tick.to_rfc3339())),
        policy: Set(policy),
        last_error: Set(note.clone()),
        created_at: Set(now),
        updated_at: Set(now),
        finished_at: Set(finished.then_some(now)),
        ..Default::default()
    }
}

/// The newest recorded tick of each job among `ids`.
async fn last_ticks(
    db: &impl ConnectionTrait,
    ids: &[i64],
) -> Result<HashMap<i64, DateTime<Utc>>, DbErr> {
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    Ok(job_run::Entity::find()
        .select_only()
        .column(job_run::Column::JobId)
        .column_as(job_run::Column::CronTick.max(), "last")
        .filter(job_run::Column::JobId.is_in(ids.to_vec()))
        .group_by(job_run::Column::JobId)
        .into_tuple::<(i64, Option<DateTime<Utc>>)>()
        .all(db)
        .await?
        .into_iter()
        .filter_map(|(id, last)| last.map(|last| (id, last)))
        .collect())
}

async fn set_next_fire(
    db: &impl ConnectionTrait,
    next: &[(i64, Option<DateTime<Utc>>)],
) -> Result<(), DbErr> {
    for chunk in next.chunks(200) {
        let mut b = Binder::new(db.get_database_backend());
        let values = Values {
            columns: &[("id", "bigint"), ("next", "timestamptz")],
            rows: chunk
                .iter()
                .map(|(id, at)| vec![(*id).into(), (*at).into()])
                .collect(),
        };
        let sql = sql::update_from(&mut b, "jobs", &values, "next_fire_at = v.v_next", "", "");
        db.execute_raw(b.statement(sql)).await?;
    }
    Ok(())
}

/// The earliest tick still to come over all enabled jobs not paused; now, when a job has none
/// yet.
async fn earliest_next_fire(
    db: &impl ConnectionTrait,
    now: DateTime<Utc>,
    paused: &Paused,
) -> Result<Option<DateTime<Utc>>, DbErr> {
    if paused.all {
        return Ok(None);
    }
    let uninitialised = job::Entity::find()
        .filter(job::Column::Enabled.eq(true))
        .filter(job::Column::Paused.eq(false))
        .filter(job::Column::Id.is_not_in(paused.tagged.clone()))
        .filter(job::Column::NextFireAt.is_null())
        .one(db)
        .await?;
    if uninitialised.is_some() {
        return Ok(Some(now));
    }
    Ok(job::Entity::find()
        .select_only()
        .column(job::Column::NextFireAt)
        .filter(job::Column::Enabled.eq(true))
        .filter(job::Column::Paused.eq(false))
        .filter(job::Column::Id.is_not_in(paused.tagged.clone()))
        .filter(job::Column::NextFireAt.is_not_null())
        .order_by_asc(job::Column::NextFireAt)
        .into_tuple::<Option<DateTime<Utc>>>()
        .one(db)
        .await?
        .flatten())
}

/// Which jobs are held, and why: a job is held while a job that names it as a dependant has a
/// dead latest run (one an administrator resolved by hand no longer holds anything).
async fn holds(db: &impl ConnectionTrait) -> Result<HashMap<String, String>, DbErr> {
    let upstreams = job::Entity::find()
        .filter(job::Column::Dependants.ne("[]"))
        .filter(job::Column::Dependants.ne(""))
        .all(db)
        .await?;
    let mut held = HashMap::new();
    for upstream in upstreams {
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

/// Releases the held runs of jobs no longer held: they become pending and join their lanes.
async fn release_blocked(
    db: &DatabaseConnection,
    held: &HashMap<String, String>,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    use sea_orm::sea_query::Expr;
    let blocked: Vec<(i64, String)> = job_run::Entity::find()
        .select_only()
        .column(job_run::Column::JobId)
        .column(job::Column::Name)
        .inner_join(job::Entity)
        .filter(job_run::Column::Status.eq(RunStatus::Blocked))
        // A backfill's runs wait for the backfill, not for an upstream job.
        .filter(job_run::Column::BackfillId.is_null())
        .distinct()
        .into_tuple()
        .all(db)
        .await?;
    let free: Vec<i64> = blocked
        .into_iter()
        .filter(|(_, name)| !held.contains_key(name))
        .map(|(id, _)| id)
        .collect();
    if free.is_empty() {
        return Ok(());
    }
    let txn = db.begin().await?;
    lanes::lock(&txn, &free).await?;
    let released = job_run::Entity::update_many()
        .col_expr(job_run::Column::Status, Expr::value(RunStatus::Pending))
        .col_expr(
            job_run::Column::LastError,
            Expr::value(Option::<String>::None),
        )
        .col_expr(job_run::Column::UpdatedAt, Expr::value(now))
        .filter(job_run::Column::Status.eq(RunStatus::Blocked))
        .filter(job_run::Column::BackfillId.is_null())
        .filter(job_run::Column::JobId.is_in(free.clone()))
        .exec(&txn)
        .await?;
    let mut wake = app::wake::Wake::default();
    if lanes::promote(&txn, &free, now).await? > 0 {
        wake = app::wake::runs_changed_in(&txn).await;
    }
    txn.commit().await?;
    wake.after_commit();
    tracing::info!(
        runs = released.rows_affected,
        "released runs held for a failing upstream job"
    );
    Ok(())
}
