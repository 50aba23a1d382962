//! Claiming due runs for this node.
//!
//! A run is due when it heads its job's lane and its `due_at` has come (`app::services::lanes`:
//! only lane heads carry a `due_at`, so a job's backlog never stands in front of another
//! job's next run). One statement takes up to `limit` of them, oldest due first: it sets them
//! `running`, counts the attempt, and leases them to this node; in the same transaction each
//! gets its attempt row, with the timeout it runs under.
//!
//! Guarantee: a run is claimed by at most one node at a time. On PostgreSQL the candidates are
//! locked with `FOR UPDATE SKIP LOCKED`, so concurrent claimers pass each other's rows by
//! instead of waiting or double-claiming; on SQLite the single `UPDATE … RETURNING` runs under
//! the database's write lock, which serialises claimers.

use std::sync::Arc;
use std::time::Duration;

use app::domain::job::JobSpec;
use app::domain::run::RunStatus;
use app::domain::timeout::{self, EffectiveTimeout};
use app::entities::job_run;
use app::services::sql::{self, Binder};
use chrono::{DateTime, Utc};
use sea_orm::{ConnectionTrait, DatabaseConnection, DbErr, EntityTrait, TransactionTrait};

use super::Shared;
use super::cache::CachedJob;

/// A run this node holds a lease on, ready to attempt.
#[derive(Debug, Clone)]
pub struct Claimed {
    pub run: job_run::Model,
    pub job: Arc<CachedJob>,
    /// The definition with the run's one-off overrides; `Err` when the stored job is
    /// unreadable (the attempt then fails permanently with that message).
    pub spec: Result<Arc<JobSpec>, String>,
    pub attempt_id: i64,
    pub timeout: EffectiveTimeout,
    /// The job's recent successful durations, newest first (the slow flag reads them).
    pub history: Vec<u64>,
    /// When the lease taken with the claim expires.
    pub lease_expires: DateTime<Utc>,
}

/// Claims up to `limit` due runs for this node.
pub async fn claim_due(
    shared: &Shared,
    now: DateTime<Utc>,
    limit: usize,
) -> Result<Vec<Claimed>, DbErr> {
    if limit == 0 {
        return Ok(Vec::new());
    }
    let db = &shared.db;
    let backend = db.get_database_backend();
    let expires = shared.leases.expiry_from(now);
    let txn = db.begin().await?;
    let mut b = Binder::new(backend);
    let sql = format!(
        "UPDATE job_runs SET status = {}, due_at = NULL, attempts = attempts + 1, \
           lease_owner = {}, lease_expires_at = {}, updated_at = {} \
         WHERE id IN (SELECT id FROM job_runs WHERE due_at <= {} \
           ORDER BY due_at, id LIMIT {}{}) \
         RETURNING *",
        b.bind(RunStatus::Running.as_str()),
        b.bind(shared.config.node_id.clone()),
        b.bind(expires),
        b.bind(now),
        b.bind(now),
        b.bind(limit as i64),
        sql::skip_locked(backend),
    );
    let mut runs = job_run::Entity::find()
        .from_raw_sql(b.statement(sql))
        .all(&txn)
        .await?;
    if runs.is_empty() {
        txn.commit().await?;
        return Ok(Vec::new());
    }
    runs.sort_by_key(|r| r.id);
    let job_ids: Vec<i64> = runs.iter().map(|r| r.job_id).collect();
    let jobs = shared.specs.get_many(&txn, &job_ids).await?;
    let load = super::executor::load_average();

    let mut prepared = Vec::with_capacity(runs.len());
    for run in runs {
        let Some(job) = jobs.get(&run.job_id).cloned() else {
            // The job was deleted with its runs in between: nothing to attempt.
            continue;
        };
        let spec = job
            .spec
            .clone()
            .map(|spec| Arc::new(super::attempt::with_overrides((*spec).clone(), &run)));
        let (timeout, history) = match &spec {
            Ok(spec) => {
                let history = shared
                    .histories
                    .recent(&txn, run.job_id, spec.timeout.window.max(20))
                    .await?;
                (timeout::effective(&spec.timeout, &history), history)
            }
            Err(_) => (
                EffectiveTimeout {
                    ms: 0,
                    source: timeout::TimeoutSource::Static,
                },
                Vec::new(),
            ),
        };
        prepared.push((run, job, spec, timeout, history));
    }

    let mut attempt_ids = std::collections::HashMap::with_capacity(prepared.len());
    for chunk in prepared.chunks(200) {
        let mut b = Binder::new(backend);
        let rows: Vec<String> = chunk
            .iter()
            .map(|(run, _, _, timeout, _)| {
                format!(
                    "({}, {}, {}, {}, {}, {}, {}, {})",
                    b.bind(run.id),
                    b.bind(run.attempts),
                    b.bind(now),
                    b.bind(timeout.ms as i64),
                    b.bind(shared.config.node_id.clone()),
                    b.bind(load),
                    b.bind(false),
                    b.bind(true),
                )
            })
            .collect();
        let sql = format!(
            "INSERT INTO job_attempts \
               (run_id, number, started_at, timeout_ms, node, load_avg, slow, spent_retry) \
             VALUES {} RETURNING id, run_id",
            rows.join(", ")
        );
        for row in txn.query_all_raw(b.statement(sql)).await? {
            attempt_ids.insert(
                row.try_get::<i64>("", "run_id")?,
                row.try_get::<i64>("", "id")?,
            );
        }
    }
    txn.commit().await?;

    Ok(prepared
        .into_iter()
        .filter_map(|(run, job, spec, timeout, history)| {
            Some(Claimed {
                attempt_id: *attempt_ids.get(&run.id)?,
                run,
                job,
                spec,
                timeout,
                history,
                lease_expires: expires,
            })
        })
        .collect())
}

/// How long until the next run is due (zero if one is due now), if any is.
pub async fn next_due_in(
    db: &DatabaseConnection,
    now: DateTime<Utc>,
) -> Result<Option<Duration>, DbErr> {
    use sea_orm::{ColumnTrait, QueryFilter, QueryOrder, QuerySelect};
    let next: Option<DateTime<Utc>> = job_run::Entity::find()
        .select_only()
        .column(job_run::Column::DueAt)
        .filter(job_run::Column::DueAt.is_not_null())
        .order_by_asc(job_run::Column::DueAt)
        .into_tuple::<Option<DateTime<Utc>>>()
        .one(db)
        .await?
        .flatten();
    Ok(next.map(|at| (at - now).to_std().unwrap_or(Duration::ZERO)))
}
