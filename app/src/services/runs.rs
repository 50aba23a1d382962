//! Runs: creating manual runs, listing runs with their attempts, the home page's counts,
//! releasing held runs.

use chrono::{DateTime, Duration, DurationRound, Utc};
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait, QueryFilter,
    QueryOrder, QuerySelect, Set, TransactionTrait,
};

use crate::domain::run::{Outcome, RunStatus, Trigger};
use crate::entities::{job, job_attempt, job_run};
use crate::views::runs::{AttemptView, HourBucket, RunView};

/// Which runs to list.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunFilter {
    pub job: Option<String>,
    pub status: Option<RunStatus>,
    /// Only runs of jobs with this tag (a checked tag).
    pub tag: Option<String>,
    /// Only runs created at or after this time.
    pub since: Option<DateTime<Utc>>,
    pub limit: u64,
    /// Keyset paging: only runs older than this (created_at, id).
    pub before: Option<(DateTime<Utc>, i64)>,
}

/// Runs created in each of the last `hours` whole hours (the current one included), split by
/// how they ended. Hours without runs are present with zeros, oldest first.
pub async fn per_hour(
    db: &impl ConnectionTrait,
    now: DateTime<Utc>,
    hours: u32,
) -> Result<Vec<HourBucket>, DbErr> {
    // Truncating a representable instant to the hour cannot fail; keep `now` if it ever did.
    let current_hour = now.duration_trunc(Duration::hours(1)).unwrap_or(now);
    let start = current_hour - Duration::hours(i64::from(hours.saturating_sub(1)));

    let rows: Vec<(DateTime<Utc>, RunStatus)> = job_run::Entity::find()
        .select_only()
        .column(job_run::Column::CreatedAt)
        .column(job_run::Column::Status)
        .filter(job_run::Column::CreatedAt.gte(start))
        .into_tuple()
        .all(db)
        .await?;

    let mut buckets: Vec<HourBucket> = (0..hours)
        .map(|i| HourBucket {
            hour: start + Duration::hours(i64::from(i)),
            ..HourBucket::default()
        })
        .collect();
    for (created_at, status) in rows {
        let index = (created_at - start).num_hours();
        let Some(bucket) = usize::try_from(index).ok().and_then(|i| buckets.get_mut(i)) else {
            continue;
        };
        match status {
            RunStatus::Succeeded => bucket.succeeded += 1,
            RunStatus::Dead => bucket.failed += 1,
            _ => bucket.other += 1,
        }
    }
    Ok(buckets)
}

/// The retry and timeout policy of a job as JSON, recorded on each run so its story shows the
/// policy it ran under even after the job is edited.
pub fn policy_snapshot(job: &job::Model) -> Option<String> {
    let spec = crate::services::jobs::to_spec(job).ok()?;
    serde_json::to_string(&serde_json::json!({
        "retry": spec.retry.to_input(),
        "timeout": spec.timeout,
    }))
    .ok()
}

/// Starts a run of `job_id` now (Run now, `bulwark jobs run`): it joins the job's lane, and
/// the engines are woken. Returns the run as stored.
pub async fn create_manual(
    db: &DatabaseConnection,
    job_id: i64,
    now: DateTime<Utc>,
) -> Result<job_run::Model, DbErr> {
    match trigger(db, job_id, Request::default(), now).await? {
        Triggered::Created(run) | Triggered::Existing(run) => Ok(run),
    }
}

/// What [`trigger`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum Triggered {
    Created(job_run::Model),
    /// A run with the same request key existed: that run.
    Existing(job_run::Model),
}

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// Parameter values the job's declarations refuse, each named `params.NAME`.
    #[error("invalid parameters")]
    Invalid(Vec<crate::domain::FieldProblem>),
    #[error(transparent)]
    Job(#[from] super::jobs::JobError),
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// Starts a run of `job` now with the `given` parameter values, checked against its
/// declarations and completed with their defaults (Run now, the API, a trigger URL), unless
/// `request_key` names a run already ([`trigger`]). A run that `waits_for_pause` is not
/// claimed while its job is paused (other runs started by hand are).
pub async fn start(
    db: &DatabaseConnection,
    job: &job::Model,
    given: &serde_json::Map<String, serde_json::Value>,
    how: Start<'_>,
    by: Asker<'_>,
    now: DateTime<Utc>,
) -> Result<Triggered, StartError> {
    let Start {
        key: request_key,
        waits_for_pause,
        business_date,
    } = how;
    let spec = super::jobs::to_spec(job)?;
    if spec.kind.watch().is_some() {
        return Err(StartError::Invalid(vec![crate::domain::FieldProblem::new(
            "kind",
            crate::problem!("error-watch-runs-elsewhere", job = job.name.clone()),
        )]));
    }
    if let Some(super::jobs::JobError::Invalid(refused)) = super::held::resume_refused(job) {
        return Err(StartError::Invalid(refused));
    }
    let values = crate::domain::job::params::resolve(&spec.parameters, given)
        .map_err(StartError::Invalid)?;
    if !job.params_as_written {
        fits_its_places(&spec, &values).map_err(|e| StartError::Invalid(vec![e]))?;
    }
    let params = (!spec.parameters.is_empty())
        .then(|| serde_json::to_string(&values).unwrap_or_else(|_| "{}".into()));
    let request = Request {
        params: params.clone(),
        key: request_key,
        waits_for_pause,
        by: Some(by),
        business_date,
    };
    match trigger(db, job.id, request, now).await? {
        // The same key with other values is another request, not a retry of the first: it is
        // refused rather than answered with a run that did not get them.
        Triggered::Existing(run) if run.params != params => {
            Err(StartError::Invalid(vec![crate::domain::FieldProblem::new(
                "Idempotency-Key",
                crate::problem!("error-idempotency-reused"),
            )]))
        }
        triggered => Ok(triggered),
    }
}

/// Whether each value can be written where the job puts it (a header value without a line
/// break, a path segment other than `..`), so a value that cannot is refused when the run is
/// asked for, not when its attempt starts. Secrets do not matter here and stand in empty.
fn fits_its_places(
    spec: &crate::domain::job::JobSpec,
    values: &std::collections::BTreeMap<String, serde_json::Value>,
) -> Result<(), crate::domain::FieldProblem> {
    use crate::domain::job::placement::{FillError, fill};
    let field = |param: &str| format!("params.{param}");
    match fill(
        &spec.kind,
        |_| Some(String::new()),
        values,
        &spec.parameters,
    ) {
        Err(FillError::HeaderBreak { param }) => Err(crate::domain::FieldProblem::new(
            &field(&param),
            crate::problem!("error-param-header-break", name = param.clone()),
        )),
        Err(FillError::DotSegment { param }) => Err(crate::domain::FieldProblem::new(
            &field(&param),
            crate::problem!("error-param-dot-segment", name = param.clone()),
        )),
        Err(FillError::Origin) => Err(crate::domain::FieldProblem::new(
            "params",
            crate::problem!("error-param-origin"),
        )),
        // Missing values were refused by `resolve`; misplaced ones hold the job.
        _ => Ok(()),
    }
}

/// The tick `run` stands for: when it was scheduled, its business date (an older run's is the
/// date it was scheduled for, in the job's zone), and a child's shard.
pub fn tick_of(run: &job_run::Model, zone: &chrono_tz::Tz) -> crate::domain::tick::RunTick {
    let date = run
        .business_date
        .unwrap_or_else(|| run.scheduled_for.with_timezone(zone).date_naive());
    let mut tick = crate::domain::tick::RunTick::new(run.scheduled_for, zone, date);
    tick.shard = run
        .parent_id
        .and(super::children::shard_of(run.shard_index, run.shard_total));
    tick
}

/// The date `run` stands for: its own, or the date it was scheduled for in its job's zone.
fn business_date(run: &job_run::Model, job: Option<&job::Model>) -> chrono::NaiveDate {
    let zone = job
        .and_then(|j| crate::domain::cron::parse_timezone(&j.timezone).ok())
        .unwrap_or(chrono_tz::UTC);
    tick_of(run, &zone).business_date
}

/// How a run asked for with parameters ([`start`]) is started.
#[derive(Debug, Clone, Copy, Default)]
pub struct Start<'a> {
    /// The caller's `Idempotency-Key`.
    pub key: Option<&'a str>,
    /// Not claimed while the job is paused.
    pub waits_for_pause: bool,
    /// The date it stands for; `None`: the day it was asked for.
    pub business_date: Option<chrono::NaiveDate>,
}

/// A run asked for through [`trigger`].
#[derive(Debug, Clone, Default)]
pub struct Request<'a> {
    /// The parameters (a JSON object, already checked against the job's), if it takes any.
    pub params: Option<String>,
    /// The caller's `Idempotency-Key`.
    pub key: Option<&'a str>,
    /// Not claimed while the job is paused.
    pub waits_for_pause: bool,
    /// Who asked, recorded in the audit log with the new run (not when a key finds one).
    pub by: Option<Asker<'a>>,
    /// The date the run stands for; `None`: the day it was asked for, in the job's zone.
    pub business_date: Option<chrono::NaiveDate>,
}

/// Who asked for a run, and what the audit log calls the asking.
#[derive(Debug, Clone, Copy)]
pub struct Asker<'a> {
    pub who: &'a super::audit::Actor<'a>,
    /// `run.manual` from the console, `run.triggered` from the API and trigger URLs.
    pub action: &'static str,
}

/// Starts a run of `job_id` now with the request's parameters unless a run with `request_key` exists for the job, in which case that
/// run is the answer. The key is unique per job in the database, so concurrent requests with
/// one key make one run whichever instance they reach.
pub async fn trigger(
    db: &DatabaseConnection,
    job_id: i64,
    request: Request<'_>,
    now: DateTime<Utc>,
) -> Result<Triggered, DbErr> {
    let Request {
        params,
        key: request_key,
        waits_for_pause,
        by,
        business_date,
    } = request;
    if let Some(key) = request_key
        && let Some(existing) = by_request_key(db, job_id, key).await?
    {
        return Ok(Triggered::Existing(existing));
    }
    // Read before the transaction: a SQLite transaction must write first (services::lanes).
    let job_row = job::Entity::find_by_id(job_id).one(db).await?;
    let policy = job_row.as_ref().and_then(policy_snapshot);
    let run = job_run::ActiveModel {
        policy: Set(policy),
        job_id: Set(job_id),
        trigger: Set(Trigger::Manual),
        scheduled_for: Set(now),
        status: Set(RunStatus::Pending),
        attempts: Set(0),
        idempotency_key: Set(format!(
            "manual-{job_id}-{}-{:08x}",
            now.timestamp_millis(),
            rand_suffix()
        )),
        request_key: Set(request_key.map(str::to_string)),
        params: Set(params),
        waits_for_pause: Set(waits_for_pause),
        business_date: Set(business_date),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    };
    let txn = db.begin().await?;
    let inserted = super::lanes::insert(&txn, vec![run]).await;
    let (id, wake) = match inserted {
        Ok((ids, wake)) => (ids[0], wake),
        Err(e) => {
            let _ = txn.rollback().await;
            // Another request with the same key won the race: its run is the answer.
            if let (Some(key), Some(sea_orm::SqlErr::UniqueConstraintViolation(_))) =
                (request_key, e.sql_err())
                && let Some(existing) = by_request_key(db, job_id, key).await?
            {
                return Ok(Triggered::Existing(existing));
            }
            return Err(e);
        }
    };
    if let Some(by) = by {
        let subject = job_row.map(|j| j.name).unwrap_or_default();
        let detail = serde_json::json!({ "run": id, "idempotency_key": request_key });
        super::audit::record(&txn, by.who, by.action, &subject, detail, now).await?;
    }
    txn.commit().await?;
    wake.after_commit();
    job_run::Entity::find_by_id(id)
        .one(db)
        .await?
        .map(Triggered::Created)
        .ok_or_else(|| DbErr::RecordNotFound(format!("run {id}")))
}

async fn by_request_key(
    db: &impl ConnectionTrait,
    job_id: i64,
    key: &str,
) -> Result<Option<job_run::Model>, DbErr> {
    job_run::Entity::find()
        .filter(job_run::Column::JobId.eq(job_id))
        .filter(job_run::Column::RequestKey.eq(key))
        .one(db)
        .await
}

#[derive(Debug, thiserror::Error)]
pub enum CancelError {
    #[error("run {0} was not found")]
    NotFound(i64),
    #[error("run {0} has ended ({1}): only a pending, waiting or running run can be cancelled")]
    Ended(i64, RunStatus),
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// Cancels a run that has not ended: it will not be attempted (again).
///
/// A run waiting its turn ends here, cancelled, and the job's next waiting run takes the
/// lane. A *running* one is asked to stop: it keeps its lease and the head of its lane, the
/// node running it learns of the request at its next lease renewal, stops the attempt and
/// writes the run back as cancelled (a node that died meanwhile: recovery does) — and only
/// then does the job's next run start, so two never run side by side.
///
/// The cancelling, or the request to stop, is recorded as `who`'s doing with it.
pub async fn cancel(
    db: &DatabaseConnection,
    id: i64,
    who: &super::audit::Actor<'_>,
    now: DateTime<Utc>,
) -> Result<job_run::Model, CancelError> {
    let run = job_run::Entity::find_by_id(id)
        .one(db)
        .await?
        .ok_or(CancelError::NotFound(id))?;
    let txn = db.begin().await?;
    super::lanes::lock(&txn, &[run.job_id]).await?;
    if super::children::is_parent(&run) && run.status.is_active() {
        stop_children(&txn, id, now).await?;
    } else if end_waiting(&txn, id, now).await? == 0 {
        return ask_to_stop(db, txn, &run, who, now).await;
    }
    close_open_attempt(&txn, id, now).await?;
    // A child's parent ends once its last child has; a parent whose children were all
    // waiting ends now, one with children running once they have stopped.
    let parent = run
        .parent_id
        .or(super::children::is_parent(&run).then_some(id));
    if let Some(parent) = parent {
        super::children::settle_parents(&txn, &[parent], now).await?;
    }
    super::lanes::promote(&txn, &[run.job_id], now).await?;
    record_cancel(&txn, id, who, now).await?;
    txn.commit().await?;
    crate::wake::runs_changed(db).await;
    job_run::Entity::find_by_id(id)
        .one(db)
        .await?
        .ok_or(CancelError::NotFound(id))
}

/// Ends the run cancelled if it is waiting (pending, due, in retry wait, awaiting a ping) or
/// is a watched run started elsewhere (running without a lease: nothing here to stop); how
/// many rows that changed (0 when it is running here or has ended).
async fn end_waiting(
    txn: &sea_orm::DatabaseTransaction,
    id: i64,
    now: DateTime<Utc>,
) -> Result<u64, DbErr> {
    use sea_orm::sea_query::Expr;
    let none_at = || Expr::value(Option::<DateTime<Utc>>::None);
    Ok(job_run::Entity::update_many()
        .col_expr(job_run::Column::Status, Expr::value(RunStatus::Cancelled))
        .col_expr(job_run::Column::FinishedAt, Expr::value(now))
        .col_expr(job_run::Column::UpdatedAt, Expr::value(now))
        .col_expr(job_run::Column::DueAt, none_at())
        .col_expr(job_run::Column::NextAttemptAt, none_at())
        .col_expr(
            job_run::Column::LeaseOwner,
            Expr::value(Option::<String>::None),
        )
        .col_expr(job_run::Column::LeaseExpiresAt, none_at())
        .col_expr(job_run::Column::ExpectBy, none_at())
        .filter(job_run::Column::Id.eq(id))
        .filter(
            Condition::any()
                .add(
                    Condition::all()
                        .add(job_run::Column::Status.is_in(RunStatus::ACTIVE.iter().copied()))
                        .add(job_run::Column::Status.ne(RunStatus::Running)),
                )
                .add(job_run::Column::Status.eq(RunStatus::AwaitingPing))
                .add(
                    Condition::all()
                        .add(job_run::Column::Status.eq(RunStatus::Running))
                        .add(job_run::Column::ExpectBy.is_not_null()),
                ),
        )
        .exec(txn)
        .await?
        .rows_affected)
}

/// A parent's children still going: the waiting ones end cancelled, the running ones are asked
/// to stop (their nodes stop them at their next lease renewal).
async fn stop_children(
    txn: &sea_orm::DatabaseTransaction,
    parent: i64,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    use sea_orm::sea_query::Expr;
    for (child, _) in super::children::active(txn, parent).await? {
        if end_waiting(txn, child, now).await? == 0 {
            job_run::Entity::update_many()
                .col_expr(job_run::Column::CancelRequestedAt, Expr::value(now))
                .filter(job_run::Column::Id.eq(child))
                .filter(job_run::Column::Status.eq(RunStatus::Running))
                .filter(job_run::Column::CancelRequestedAt.is_null())
                .exec(txn)
                .await?;
        }
    }
    Ok(())
}

/// A running run is asked to stop (once; a second cancel finds it asked already); a run that
/// has ended cannot be cancelled.
async fn ask_to_stop(
    db: &DatabaseConnection,
    txn: sea_orm::DatabaseTransaction,
    run: &job_run::Model,
    who: &super::audit::Actor<'_>,
    now: DateTime<Utc>,
) -> Result<job_run::Model, CancelError> {
    use sea_orm::sea_query::Expr;
    let id = run.id;
    let asked = job_run::Entity::update_many()
        .col_expr(job_run::Column::CancelRequestedAt, Expr::value(now))
        .filter(job_run::Column::Id.eq(id))
        .filter(job_run::Column::Status.eq(RunStatus::Running))
        .filter(job_run::Column::CancelRequestedAt.is_null())
        .exec(&txn)
        .await?
        .rows_affected;
    let current = job_run::Entity::find_by_id(id).one(&txn).await?;
    if let Some(current) = current.filter(|r| r.status == RunStatus::Running) {
        if asked > 0 {
            record_cancel(&txn, id, who, now).await?;
        }
        txn.commit().await?;
        if asked > 0 {
            tracing::info!(
                run = id,
                "cancel requested: the node running it stops it at its next lease renewal"
            );
        }
        return Ok(current);
    }
    let _ = txn.rollback().await;
    let now_status = job_run::Entity::find_by_id(id)
        .one(db)
        .await?
        .map_or(run.status, |r| r.status);
    Err(CancelError::Ended(id, now_status))
}

async fn record_cancel(
    txn: &sea_orm::DatabaseTransaction,
    id: i64,
    who: &super::audit::Actor<'_>,
    now: DateTime<Utc>,
) -> Result<i64, DbErr> {
    let (subject, detail) = (format!("run {id}"), serde_json::json!({}));
    super::audit::record(txn, who, "run.cancelled", &subject, detail, now).await
}

/// The cancelled run's unfinished attempt, if any, ends interrupted.
async fn close_open_attempt(
    txn: &sea_orm::DatabaseTransaction,
    id: i64,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    use sea_orm::sea_query::Expr;
    job_attempt::Entity::update_many()
        .col_expr(job_attempt::Column::FinishedAt, Expr::value(now))
        .col_expr(
            job_attempt::Column::Outcome,
            Expr::value(crate::domain::run::Outcome::Interrupted),
        )
        .col_expr(
            job_attempt::Column::Message,
            Expr::value("cancelled".to_string()),
        )
        .filter(job_attempt::Column::RunId.eq(id))
        .filter(job_attempt::Column::FinishedAt.is_null())
        .exec(txn)
        .await?;
    Ok(())
}

/// Enough randomness that two manual runs in the same millisecond get different keys.
fn rand_suffix() -> u32 {
    use rand_core::{OsRng, RngCore};
    OsRng.next_u32()
}

/// Runs newest first, with their attempts.
pub async fn list(db: &impl ConnectionTrait, filter: &RunFilter) -> Result<Vec<RunView>, DbErr> {
    let mut query = job_run::Entity::find()
        .find_also_related(job::Entity)
        .order_by_desc(job_run::Column::CreatedAt)
        .order_by_desc(job_run::Column::Id)
        .limit(filter.limit.clamp(1, 1000));
    if let Some(name) = &filter.job {
        query = query.filter(job::Column::Name.eq(name.clone()));
    }
    if let Some(status) = filter.status {
        query = query.filter(job_run::Column::Status.eq(status));
    }
    if let Some(tag) = &filter.tag {
        query = query.filter(job_run::Column::JobId.in_subquery(super::jobs::tagged(tag)));
    }
    if let Some(since) = filter.since {
        query = query.filter(job_run::Column::CreatedAt.gte(since));
    }
    if let Some((at, id)) = filter.before {
        use sea_orm::Condition;
        query = query.filter(
            Condition::any().add(job_run::Column::CreatedAt.lt(at)).add(
                Condition::all()
                    .add(job_run::Column::CreatedAt.eq(at))
                    .add(job_run::Column::Id.lt(id)),
            ),
        );
    }
    let rows = query.all(db).await?;
    with_attempts(db, rows).await
}

pub async fn get(db: &impl ConnectionTrait, id: i64) -> Result<Option<RunView>, DbErr> {
    let rows = job_run::Entity::find_by_id(id)
        .find_also_related(job::Entity)
        .all(db)
        .await?;
    Ok(with_attempts(db, rows).await?.into_iter().next())
}

fn attempt_view(a: job_attempt::Model) -> AttemptView {
    AttemptView {
        number: a.number,
        outcome: a.outcome,
        error_class: a.error_class,
        started_at: a.started_at,
        finished_at: a.finished_at,
        duration_ms: a.duration_ms,
        timeout_ms: a.timeout_ms,
        message: a.message,
        output_tail: a.output_tail,
        node: a.node,
        load_avg: a.load_avg,
        slow: a.slow,
        timeout_kind: a.timeout_kind,
        spent_retry: a.spent_retry,
    }
}

async fn with_attempts(
    db: &impl ConnectionTrait,
    rows: Vec<(job_run::Model, Option<job::Model>)>,
) -> Result<Vec<RunView>, DbErr> {
    let ids: Vec<i64> = rows.iter().map(|(r, _)| r.id).collect();
    let mut attempts: std::collections::HashMap<i64, Vec<AttemptView>> = Default::default();
    for chunk in ids.chunks(500) {
        for a in job_attempt::Entity::find()
            .filter(job_attempt::Column::RunId.is_in(chunk.to_vec()))
            .order_by_asc(job_attempt::Column::Number)
            .all(db)
            .await?
        {
            attempts.entry(a.run_id).or_default().push(attempt_view(a));
        }
    }
    let mut children: std::collections::HashMap<i64, Vec<i64>> = Default::default();
    for chunk in ids.chunks(500) {
        let found: Vec<(i64, Option<i64>)> = job_run::Entity::find()
            .select_only()
            .column(job_run::Column::Id)
            .column(job_run::Column::RetriggerOf)
            .filter(job_run::Column::RetriggerOf.is_in(chunk.to_vec()))
            .order_by_asc(job_run::Column::Id)
            .into_tuple()
            .all(db)
            .await?;
        for (child, parent) in found {
            if let Some(parent) = parent {
                children.entry(parent).or_default().push(child);
            }
        }
    }
    let parents: Vec<i64> = rows
        .iter()
        .filter(|(r, _)| super::children::is_parent(r))
        .map(|(r, _)| r.id)
        .collect();
    let mut family = super::children::family(db, &parents).await?;
    Ok(rows
        .into_iter()
        .map(|(r, j)| RunView {
            parent: r.parent_id,
            shard: r
                .parent_id
                .and(super::children::shard_of(r.shard_index, r.shard_total)),
            children: family.remove(&r.id).unwrap_or_default(),
            business_date: Some(business_date(&r, j.as_ref())),
            backfill_id: r.backfill_id,
            revision: r.revision,
            retriggered_as: children.remove(&r.id).unwrap_or_default(),
            resolution: r.resolution,
            resolved_by: r.resolved_by,
            resolved_at: r.resolved_at,
            resolution_reason: r.resolution_reason,
            retrigger_of: r.retrigger_of,
            policy: r.policy,
            override_timeout_ms: r.override_timeout_ms,
            override_retry: r.override_retry,
            params: r.params,
            cancel_requested_at: r.cancel_requested_at,
            id: r.id,
            job_id: r.job_id,
            runs_elsewhere: j
                .as_ref()
                .is_some_and(|j| j.kind == crate::domain::job::Kind::Watch),
            job: j.map(|j| j.name).unwrap_or_default(),
            trigger: r.trigger,
            status: r.status,
            scheduled_for: r.scheduled_for,
            created_at: r.created_at,
            finished_at: r.finished_at,
            next_attempt_at: r.next_attempt_at,
            idempotency_key: r.idempotency_key,
            last_error_class: r.last_error_class,
            last_error: r.last_error,
            attempts: attempts.remove(&r.id).unwrap_or_default(),
        })
        .collect())
}

/// Releases a blocked run by hand: it joins its job's lane as pending. False when it is not
/// blocked (any more).
pub async fn release(
    db: &DatabaseConnection,
    id: i64,
    who: &crate::services::audit::Actor<'_>,
    now: DateTime<Utc>,
) -> Result<bool, DbErr> {
    use sea_orm::sea_query::Expr;
    let Some(run) = job_run::Entity::find_by_id(id).one(db).await? else {
        return Ok(false);
    };
    let txn = db.begin().await?;
    super::lanes::lock(&txn, &[run.job_id]).await?;
    let released = job_run::Entity::update_many()
        .col_expr(job_run::Column::Status, Expr::value(RunStatus::Pending))
        .col_expr(job_run::Column::UpdatedAt, Expr::value(now))
        .filter(job_run::Column::Id.eq(id))
        .filter(job_run::Column::Status.eq(RunStatus::Blocked))
        .exec(&txn)
        .await?;
    if released.rows_affected == 0 {
        return Ok(false);
    }
    let mut wake = crate::wake::Wake::default();
    if super::lanes::promote(&txn, &[run.job_id], now).await? > 0 {
        wake = crate::wake::runs_changed_in(&txn).await;
    }
    crate::services::audit::record(
        &txn,
        who,
        "run.released",
        &format!("run {id}"),
        serde_json::json!({}),
        now,
    )
    .await?;
    txn.commit().await?;
    wake.after_commit();
    Ok(true)
}

/// Durations of the job's latest successful attempts, newest first (by run: a run succeeds
/// at most once, with its last attempt).
pub async fn recent_success_ms(
    db: &impl ConnectionTrait,
    job_id: i64,
    limit: u32,
) -> Result<Vec<u64>, DbErr> {
    let durations: Vec<Option<i64>> = recent_success_query(job_id, limit)
        .into_tuple()
        .all(db)
        .await?;
    Ok(durations
        .into_iter()
        .flatten()
        .map(|d| d.max(0) as u64)
        .collect())
}

/// The read behind [`recent_success_ms`]. Ordered by the run's id, not the attempt's end:
/// SQLite then walks the job's runs newest first along `idx_job_runs_job_id` and stops at
/// `limit`, where ordering by the attempts' end sorted every attempt the job ever had — a read
/// that grew with its history, and that the engine repeats for every job each minute
/// (`server/src/engine/cache.rs`; its plan is tested in `server/tests/api/busy_day.rs`).
pub fn recent_success_query(job_id: i64, limit: u32) -> sea_orm::Select<job_attempt::Entity> {
    job_attempt::Entity::find()
        .select_only()
        .column(job_attempt::Column::DurationMs)
        .inner_join(job_run::Entity)
        .filter(job_run::Column::JobId.eq(job_id))
        .filter(job_attempt::Column::Outcome.eq(Outcome::Succeeded))
        .order_by_desc(job_run::Column::Id)
        .limit(u64::from(limit))
}

/// Finished attempts a duration chart shows, at most.
pub const DURATION_POINTS: u64 = 300;

/// The job's latest attempts' durations, with the percentiles and limits its successes set
/// (`crate::domain::watch::Limits`).
pub async fn durations(
    db: &impl ConnectionTrait,
    job: &job::Model,
) -> Result<crate::views::jobs::Durations, DbErr> {
    use crate::domain::timeout::nearest_rank;
    use crate::domain::watch::{HISTORY, Limits, MIN_SUCCESSES};
    let rows: Vec<(DateTime<Utc>, i64, Option<Outcome>, i64)> = job_attempt::Entity::find()
        .select_only()
        .column(job_attempt::Column::FinishedAt)
        .column(job_attempt::Column::DurationMs)
        .column(job_attempt::Column::Outcome)
        .column(job_attempt::Column::RunId)
        .inner_join(job_run::Entity)
        .filter(job_run::Column::JobId.eq(job.id))
        .filter(job_attempt::Column::DurationMs.is_not_null())
        .filter(job_attempt::Column::FinishedAt.is_not_null())
        .order_by_desc(job_run::Column::Id)
        .order_by_desc(job_attempt::Column::Number)
        .limit(DURATION_POINTS)
        .into_tuple()
        .all(db)
        .await?;
    let points = rows
        .into_iter()
        .rev()
        .map(
            |(finished_at, ms, outcome, run_id)| crate::views::jobs::DurationPoint {
                finished_at,
                duration_ms: ms.max(0) as u64,
                succeeded: outcome == Some(Outcome::Succeeded),
                run_id,
            },
        )
        .collect();
    let history = recent_success_ms(db, job.id, HISTORY).await?;
    let learned = history.len() >= MIN_SUCCESSES;
    let at = |q: f64| learned.then(|| nearest_rank(&history, q));
    let watch = super::jobs::to_spec(job)
        .ok()
        .and_then(|spec| spec.kind.watch().copied());
    let limits = Limits::learn(
        watch.and_then(|w| w.min_duration_ms),
        watch.and_then(|w| w.max_duration_ms),
        &history,
    );
    Ok(crate::views::jobs::Durations {
        points,
        p05_ms: at(0.05),
        p95_ms: at(0.95),
        p99_ms: at(0.99),
        // Only a watched job dies of being too fast; every job can be too slow.
        fast_below_ms: limits.fast_below_ms.filter(|_| watch.is_some()),
        slow_above_ms: limits.slow_above_ms,
    })
}
