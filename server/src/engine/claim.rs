//! Claiming due runs for this node.
//!
//! A run is due when it is `pending`, or `retry_wait` with `next_attempt_at` in the past, and no
//! older run of the same job is still active (runs of one job go one at a time, oldest first).
//! Claiming sets `running`, counts the attempt, and leases the run to this node until
//! `lease_expires_at`.
//!
//! Guarantee: a run is claimed by at most one node at a time. On PostgreSQL the candidate rows
//! are locked with `FOR UPDATE SKIP LOCKED`, so concurrent claimers skip each other's rows
//! instead of waiting or double-claiming; on SQLite the single `UPDATE … RETURNING` runs under
//! the database's write lock, which serialises claimers.

use std::time::Duration;

use app::domain::run::RunStatus;
use app::entities::{job, job_run};
use app::services::sql::{self, Binder};
use chrono::{DateTime, Utc};
use sea_orm::{ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder};

use super::EngineConfig;

/// A run this node holds a lease on, with its job.
#[derive(Debug, Clone)]
pub struct Claimed {
    pub run: job_run::Model,
    pub job: job::Model,
}

pub async fn claim_due(
    db: &impl ConnectionTrait,
    config: &EngineConfig,
    now: DateTime<Utc>,
    limit: usize,
) -> Result<Vec<Claimed>, DbErr> {
    let backend = db.get_database_backend();
    let lease_until =
        now + chrono::Duration::from_std(config.lease).unwrap_or(chrono::Duration::seconds(30));
    // `?` placeholders are positional: values are bound in the order they appear.
    let mut b = Binder::new(backend);
    let set = format!(
        "status = {}, attempts = attempts + 1, lease_owner = {}, lease_expires_at = {}, \
         updated_at = {}",
        b.bind(RunStatus::Running.as_str()),
        b.bind(config.node_id.clone()),
        b.bind(lease_until),
        b.bind(now),
    );
    // Due: pending, or waiting to retry and its time has come; and no older run of the same
    // job still active (runs of one job go one at a time, oldest first).
    let due = format!(
        "r.status IN ({}) AND (r.next_attempt_at IS NULL OR r.next_attempt_at <= {}) \
         AND NOT EXISTS (SELECT 1 FROM job_runs o WHERE o.job_id = r.job_id AND o.id <> r.id \
           AND (o.status = {} OR (o.status IN ({}) AND o.id < r.id)))",
        b.bind_list([RunStatus::Pending.as_str(), RunStatus::RetryWait.as_str()]),
        b.bind(now),
        b.bind(RunStatus::Running.as_str()),
        b.bind_list([RunStatus::Pending.as_str(), RunStatus::RetryWait.as_str()]),
    );
    let sql = format!(
        "UPDATE job_runs SET {set} WHERE id IN (SELECT r.id FROM job_runs r WHERE {due} \
           ORDER BY COALESCE(r.next_attempt_at, r.scheduled_for), r.id LIMIT {}{}) \
         RETURNING id",
        b.bind(limit as i64),
        sql::skip_locked(backend),
    );
    let ids: Vec<i64> = db
        .query_all_raw(b.statement(sql))
        .await?
        .iter()
        .map(|row| row.try_get::<i64>("", "id"))
        .collect::<Result<_, _>>()?;
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let runs = job_run::Entity::find()
        .filter(job_run::Column::Id.is_in(ids))
        .order_by_asc(job_run::Column::Id)
        .find_also_related(job::Entity)
        .all(db)
        .await?;
    Ok(runs
        .into_iter()
        .filter_map(|(run, job)| job.map(|job| Claimed { run, job }))
        .collect())
}

/// How long until the next waiting run is due (zero if one is due now), if any is waiting.
pub async fn next_due_in(
    db: &impl ConnectionTrait,
    now: DateTime<Utc>,
) -> Result<Option<Duration>, DbErr> {
    let next = job_run::Entity::find()
        .filter(job_run::Column::Status.eq(RunStatus::RetryWait))
        .order_by_asc(job_run::Column::NextAttemptAt)
        .one(db)
        .await?
        .and_then(|r| r.next_attempt_at);
    Ok(next.map(|at| (at - now).to_std().unwrap_or(Duration::ZERO)))
}
