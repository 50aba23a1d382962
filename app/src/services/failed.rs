//! The failed queue: dead runs that no one has handled yet (status [`RunStatus::Dead`] and no
//! resolution). Leaving the queue is one fenced UPDATE on that condition, so two
//! administrators acting on the same run at once cannot both succeed: the second is told it
//! was handled.

use crate::problem;
use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, ExprTrait, Func};
use sea_orm::{
    ColumnTrait, Condition, DatabaseConnection, DbErr, EntityTrait, PaginatorTrait, QueryFilter,
    QueryOrder, QuerySelect, Select, Set, TransactionTrait,
};

use super::audit::{self, Actor};
use crate::domain::duration;
use crate::domain::filters::{QueueCursor, QueueQuery};
use crate::domain::retry::{RetryInput, RetryPolicy};
use crate::domain::run::{ErrorClass, Resolution, RunStatus, Trigger};
use crate::entities::{job, job_attempt, job_run};
use crate::views::failed::{DeadRun, QueuePage};

#[derive(Debug, thiserror::Error)]
pub enum FailedError {
    #[error("{1}")]
    Invalid(&'static str, crate::domain::Problem),
    /// The retry policy to re-trigger with, refused field by field.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Retry(Vec<crate::domain::retry::RetryError>),
    #[error("run {0} is not in the failed queue")]
    NotInQueue(i64),
    /// A watched job's run: it runs elsewhere, so it can only be resolved or discarded.
    #[error("run {0} is a watched job's: it runs elsewhere, so resolve or discard it")]
    RunsElsewhere(i64),
    #[error("could not encode the re-trigger's retry policy: {0}")]
    Encode(serde_json::Error),
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// Bulk re-triggers touch at most this many runs per request.
pub const MAX_BULK: u64 = 10_000;

fn in_queue() -> Condition {
    // A dead run always has its finish time; saying so lets PostgreSQL read the partial index
    // of finished runs.
    Condition::all()
        .add(job_run::Column::Status.eq(RunStatus::Dead))
        .add(job_run::Column::Resolution.is_null())
        .add(job_run::Column::FinishedAt.is_not_null())
        // A spread job's parent ran nothing itself: its failed children are in the queue,
        // each re-triggered alone (`crate::domain::job::spread`).
        .add(
            Condition::any()
                .add(job_run::Column::ShardTotal.is_null())
                .add(job_run::Column::ParentId.is_not_null()),
        )
}

fn filtered(query: &QueueQuery) -> Select<job_run::Entity> {
    let mut select = job_run::Entity::find().filter(in_queue());
    if let Some(name) = &query.job {
        select = select.filter(
            job_run::Column::JobId.in_subquery(
                sea_orm::sea_query::Query::select()
                    .column(job::Column::Id)
                    .from(job::Entity)
                    .and_where(job::Column::Name.eq(name.as_str()))
                    .to_owned(),
            ),
        );
    }
    if let Some(tag) = &query.tag {
        select = select.filter(job_run::Column::JobId.in_subquery(super::jobs::tagged(tag)));
    }
    if let Some(class) = query.class {
        select = select.filter(job_run::Column::LastErrorClass.eq(class));
    }
    if let Some(from) = query.from.and_then(|d| d.and_hms_opt(0, 0, 0)) {
        select = select.filter(job_run::Column::FinishedAt.gte(from.and_utc()));
    }
    if let Some(to) = query
        .to
        .and_then(|d| d.succ_opt())
        .and_then(|d| d.and_hms_opt(0, 0, 0))
    {
        select = select.filter(job_run::Column::FinishedAt.lt(to.and_utc()));
    }
    if let Some(text) = &query.text {
        let escaped = text
            .to_lowercase()
            .replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_");
        select = select.filter(
            Expr::expr(Func::lower(Expr::col(job_run::Column::LastError)))
                .like(sea_orm::sea_query::LikeExpr::new(format!("%{escaped}%")).escape('\\')),
        );
    }
    select
}

fn cursor_of(run: &job_run::Model) -> Option<String> {
    QueueCursor {
        finished_at: run.finished_at?,
        id: run.id,
    }
    .encode()
}

/// One page of the queue, newest failure first. Keyset paging on (finished_at, id) keeps deep
/// pages as fast as the first.
pub async fn page(
    db: &DatabaseConnection,
    filter: &QueueQuery,
    cursor: Option<QueueCursor>,
    limit: u64,
) -> Result<QueuePage, FailedError> {
    let mut query = filtered(filter);
    if let Some(QueueCursor { finished_at: t, id }) = cursor {
        query = query.filter(
            Condition::any().add(job_run::Column::FinishedAt.lt(t)).add(
                Condition::all()
                    .add(job_run::Column::FinishedAt.eq(t))
                    .add(job_run::Column::Id.lt(id)),
            ),
        );
    }
    let mut runs = query
        .order_by_desc(job_run::Column::FinishedAt)
        .order_by_desc(job_run::Column::Id)
        .limit(limit + 1)
        .find_also_related(job::Entity)
        .all(db)
        .await?;
    let next = if runs.len() as u64 > limit {
        runs.truncate(limit as usize);
        runs.last().and_then(|(r, _)| cursor_of(r))
    } else {
        None
    };
    Ok(QueuePage {
        rows: dead_runs(db, runs).await?,
        next,
        matching: count(db, filter).await?,
        per_job: per_job(db).await?,
        per_class: per_class(db).await?,
    })
}

/// The page's runs with when each first failed.
async fn dead_runs(
    db: &DatabaseConnection,
    runs: Vec<(job_run::Model, Option<job::Model>)>,
) -> Result<Vec<DeadRun>, DbErr> {
    let ids: Vec<i64> = runs.iter().map(|(r, _)| r.id).collect();
    let first_failures: HashMap<i64, Option<DateTime<Utc>>> = job_attempt::Entity::find()
        .select_only()
        .column(job_attempt::Column::RunId)
        .column_as(job_attempt::Column::FinishedAt.min(), "first")
        .filter(job_attempt::Column::RunId.is_in(ids))
        .group_by(job_attempt::Column::RunId)
        .into_tuple::<(i64, Option<DateTime<Utc>>)>()
        .all(db)
        .await?
        .into_iter()
        .collect();
    Ok(runs
        .into_iter()
        .map(|(r, j)| DeadRun {
            id: r.id,
            runs_elsewhere: j
                .as_ref()
                .is_some_and(|j| j.kind == crate::domain::job::Kind::Watch),
            job: j.map(|j| j.name).unwrap_or_default(),
            trigger: r.trigger,
            first_failure: first_failures.get(&r.id).copied().flatten(),
            last_failure: r.finished_at,
            attempts: r.attempts,
            error_class: r.last_error_class,
            message: r.last_error,
        })
        .collect())
}

/// How many runs of each job the whole queue holds, most first.
async fn per_job(db: &DatabaseConnection) -> Result<Vec<(String, u64)>, DbErr> {
    let per_job_ids: Vec<(i64, i64)> = job_run::Entity::find()
        .select_only()
        .column(job_run::Column::JobId)
        .column_as(job_run::Column::Id.count(), "n")
        .filter(in_queue())
        .group_by(job_run::Column::JobId)
        .into_tuple()
        .all(db)
        .await?;
    let names: HashMap<i64, String> = job::Entity::find()
        .select_only()
        .column(job::Column::Id)
        .column(job::Column::Name)
        .into_tuple::<(i64, String)>()
        .all(db)
        .await?
        .into_iter()
        .collect();
    let mut per_job: Vec<(String, u64)> = per_job_ids
        .into_iter()
        .map(|(id, n)| {
            let name = names.get(&id).cloned();
            (name.unwrap_or_else(|| format!("job {id}")), n as u64)
        })
        .collect();
    per_job.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    Ok(per_job)
}

/// How many runs of each error class the whole queue holds, most first.
async fn per_class(db: &DatabaseConnection) -> Result<Vec<(Option<ErrorClass>, u64)>, DbErr> {
    let mut per_class: Vec<(Option<ErrorClass>, u64)> = job_run::Entity::find()
        .select_only()
        .column(job_run::Column::LastErrorClass)
        .column_as(job_run::Column::Id.count(), "n")
        .filter(in_queue())
        .group_by(job_run::Column::LastErrorClass)
        .into_tuple::<(Option<ErrorClass>, i64)>()
        .all(db)
        .await?
        .into_iter()
        .map(|(c, n)| (c, u64::try_from(n).unwrap_or(0)))
        .collect();
    per_class.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    Ok(per_class)
}

pub async fn count(db: &DatabaseConnection, filter: &QueueQuery) -> Result<u64, FailedError> {
    Ok(filtered(filter).count(db).await?)
}

/// How many runs a bulk re-trigger by `filter` would start again: those in the queue it
/// matches, a watched job's left out (they run elsewhere).
pub async fn count_retriggerable(
    db: &DatabaseConnection,
    filter: &QueueQuery,
) -> Result<u64, FailedError> {
    Ok(retriggerable(filtered(filter)).count(db).await?)
}

/// `select` without the runs of watched jobs, which cannot be re-triggered.
fn retriggerable(select: Select<job_run::Entity>) -> Select<job_run::Entity> {
    select.filter(
        job_run::Column::JobId.not_in_subquery(
            sea_orm::sea_query::Query::select()
                .column(job::Column::Id)
                .from(job::Entity)
                .and_where(job::Column::Kind.eq(crate::domain::job::Kind::Watch))
                .to_owned(),
        ),
    )
}

/// What a re-trigger may change, once.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overrides {
    pub timeout_ms: Option<u64>,
    pub retry: Option<RetryInput>,
}

impl Overrides {
    pub fn parse(timeout: Option<&str>, retry: Option<&RetryInput>) -> Result<Self, FailedError> {
        let timeout_ms = match timeout.map(str::trim).filter(|t| !t.is_empty()) {
            None => None,
            Some(text) => match duration::parse_ms(text) {
                Ok(0) => {
                    return Err(FailedError::Invalid(
                        "timeout",
                        problem!("job-error-positive", label = problem!("job-label-timeout")),
                    ));
                }
                Ok(ms) => Some(ms),
                Err(e) => {
                    return Err(FailedError::Invalid(
                        "timeout",
                        problem!(
                            "job-error-duration",
                            label = problem!("job-label-timeout"),
                            error = e.problem()
                        ),
                    ));
                }
            },
        };
        if let Some(retry) = retry
            && let Err(errors) = RetryPolicy::parse(retry)
        {
            return Err(FailedError::Retry(errors));
        }
        Ok(Overrides {
            timeout_ms,
            retry: retry.cloned(),
        })
    }
}

/// Re-triggers one dead run: it leaves the queue (keeping its history) and a new run of the
/// same job, with the same idempotency key, is queued for `start_at`. Returns the new run's id.
#[allow(clippy::too_many_arguments)]
pub async fn retrigger(
    db: &DatabaseConnection,
    id: i64,
    overrides: &Overrides,
    who: &Actor<'_>,
    start_at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<i64, FailedError> {
    // Read before the transaction: a SQLite transaction must write first (services::lanes).
    let dead = job_run::Entity::find_by_id(id)
        .one(db)
        .await?
        .ok_or(FailedError::NotInQueue(id))?;
    let job_row = job::Entity::find_by_id(dead.job_id).one(db).await?;
    if job_row
        .as_ref()
        .is_some_and(|j| j.kind == crate::domain::job::Kind::Watch)
    {
        return Err(FailedError::RunsElsewhere(id));
    }
    let txn = db.begin().await?;
    super::lanes::lock(&txn, &[dead.job_id]).await?;
    let taken = job_run::Entity::update_many()
        .col_expr(
            job_run::Column::Resolution,
            Expr::value(Resolution::Retriggered),
        )
        .col_expr(
            job_run::Column::ResolvedBy,
            Expr::value(who.name.to_string()),
        )
        .col_expr(job_run::Column::ResolvedAt, Expr::value(now))
        .filter(job_run::Column::Id.eq(id))
        .filter(in_queue())
        .exec(&txn)
        .await?;
    if taken.rows_affected == 0 {
        return Err(FailedError::NotInQueue(id));
    }
    let policy = job_row.as_ref().and_then(super::runs::policy_snapshot);
    let mut new_run = vec![repeat_of(&dead, overrides, policy, start_at, now)?];
    // A shard runs outside its job's lane, as its siblings did: placed in the lane behind a
    // parent still running (its other shards going), it would wait for a head that waits for it.
    let due = if dead.parent_id.is_some() {
        new_run[0].due_at = Set(Some(start_at));
        1
    } else {
        super::lanes::place(&txn, &mut new_run).await?
    };
    let new_id = job_run::Entity::insert(new_run.remove(0))
        .exec(&txn)
        .await?
        .last_insert_id;
    let detail = serde_json::json!({
        "new_run": new_id,
        "timeout_override": overrides.timeout_ms,
        "retry_override": overrides.retry,
        "start_at": start_at,
    });
    audit::record(
        &txn,
        who,
        "run.retriggered",
        &format!("run {id}"),
        detail,
        now,
    )
    .await?;
    let mut wake = crate::wake::Wake::default();
    if due > 0 {
        wake = crate::wake::runs_changed_in(&txn).await;
    }
    txn.commit().await?;
    wake.after_commit();
    Ok(new_id)
}

/// The run that repeats `dead`: pending from `start_at`, with its overrides.
fn repeat_of(
    dead: &job_run::Model,
    overrides: &Overrides,
    policy: Option<String>,
    start_at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<job_run::ActiveModel, FailedError> {
    let override_retry = overrides
        .retry
        .as_ref()
        .map(serde_json::to_string)
        .transpose()
        .map_err(FailedError::Encode)?;
    Ok(job_run::ActiveModel {
        job_id: Set(dead.job_id),
        trigger: Set(Trigger::Retrigger),
        scheduled_for: Set(start_at),
        status: Set(RunStatus::Pending),
        attempts: Set(0),
        // The job may have done its work before failing to report it: the same key lets it
        // refuse to do it twice.
        idempotency_key: Set(dead.idempotency_key.clone()),
        retrigger_of: Set(Some(dead.id)),
        // The same parameters as the run it repeats.
        params: Set(dead.params.clone()),
        // A shard repeats as the same shard of the same parent, which it settles when it ends.
        parent_id: Set(dead.parent_id),
        shard_index: Set(dead.shard_index),
        shard_total: Set(dead.shard_total),
        override_timeout_ms: Set(overrides.timeout_ms.map(|ms| ms as i64)),
        override_retry: Set(override_retry),
        policy: Set(policy),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    })
}

/// Re-triggers the runs in `ids`, or every run matching `filter`, spaced so that at most
/// `per_minute` start each minute. Runs someone else handled meanwhile are skipped. Returns how
/// many were re-triggered.
pub async fn retrigger_many(
    db: &DatabaseConnection,
    ids: &[i64],
    filter: Option<&QueueQuery>,
    per_minute: u32,
    who: &Actor<'_>,
    now: DateTime<Utc>,
) -> Result<u64, FailedError> {
    if !(1..=6_000).contains(&per_minute) {
        return Err(FailedError::Invalid(
            "per_minute",
            problem!("error-release-rate"),
        ));
    }
    let targets: Vec<i64> = match filter {
        Some(filter) => {
            retriggerable(filtered(filter))
                .select_only()
                .column(job_run::Column::Id)
                .order_by_asc(job_run::Column::FinishedAt)
                .limit(MAX_BULK)
                .into_tuple()
                .all(db)
                .await?
        }
        None if ids.is_empty() => {
            return Err(FailedError::Invalid("ids", problem!("error-select-run")));
        }
        None => ids.iter().copied().take(MAX_BULK as usize).collect(),
    };
    let spacing_ms = 60_000 / i64::from(per_minute);
    let mut done = 0u64;
    for id in targets {
        let start_at = now + chrono::Duration::milliseconds(spacing_ms * done as i64);
        match retrigger(db, id, &Overrides::default(), who, start_at, now).await {
            Ok(_) => done += 1,
            Err(FailedError::NotInQueue(_) | FailedError::RunsElsewhere(_)) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

/// Takes a dead run out of the queue without running it, with a reason.
pub async fn resolve(
    db: &DatabaseConnection,
    id: i64,
    reason: &str,
    discard: bool,
    who: &Actor<'_>,
    now: DateTime<Utc>,
) -> Result<(), FailedError> {
    let reason = reason.trim();
    if reason.is_empty() {
        return Err(FailedError::Invalid("reason", problem!("error-say-why")));
    }
    let resolution = if discard {
        Resolution::Discarded
    } else {
        Resolution::Resolved
    };
    let txn = db.begin().await?;
    let taken = job_run::Entity::update_many()
        .col_expr(job_run::Column::Resolution, Expr::value(resolution))
        .col_expr(
            job_run::Column::ResolvedBy,
            Expr::value(who.name.to_string()),
        )
        .col_expr(job_run::Column::ResolvedAt, Expr::value(now))
        .col_expr(job_run::Column::ResolutionReason, Expr::value(reason))
        .filter(job_run::Column::Id.eq(id))
        .filter(in_queue())
        .exec(&txn)
        .await?;
    if taken.rows_affected == 0 {
        return Err(FailedError::NotInQueue(id));
    }
    audit::record(
        &txn,
        who,
        &format!("run.{resolution}"),
        &format!("run {id}"),
        serde_json::json!({ "reason": reason }),
        now,
    )
    .await?;
    txn.commit().await?;
    Ok(())
}
