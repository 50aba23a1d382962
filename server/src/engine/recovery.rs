//! Runs whose node stopped renewing its lease (it died, or was cut off from the database):
//! found by their expired lease, their open attempt recorded as interrupted, and the run
//! retried by its policy like any transient failure. And the graceful hand-back, which gives a
//! shutting-down node's unfinished runs back without spending a retry.
//!
//! A takeover is one of [`super::settle::settle`]'s fenced writes, fenced also on the lease
//! having expired by the database's clock (`lease_expires_at < now()` on PostgreSQL): a live attempt whose
//! renewal merely came late is never interrupted. On PostgreSQL one node sweeps at a time (an
//! advisory lock held for the sweep's transaction only; another node skips its turn). A sweep
//! that fails — a busy SQLite, a lost race — leaves its runs for the next sweep and never stops
//! the engine.

use std::collections::HashMap;
use std::sync::Arc;

use app::domain::run::RunStatus;
use app::entities::{job_attempt, job_run};
use app::services::lanes;
use app::services::sql::{self, Binder};
use chrono::{DateTime, Utc};
use sea_orm::sea_query::OnConflict;
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseBackend, DatabaseConnection, DbErr, EntityTrait,
    QueryFilter, Set, Statement, TransactionTrait,
};

use super::cache::Specs;
use super::settle::{self, Ending, Finished};

/// The advisory lock that lets one PostgreSQL node sweep at a time.
const SWEEP_LOCK: i64 = 0x6275_6c77_6172_6b01;
/// Runs taken over per sweep.
const PER_SWEEP: u64 = 200;

/// Interrupts runs whose lease expired before `now`; returns how many it took over.
pub async fn recover_expired(
    db: &DatabaseConnection,
    specs: &Specs,
    now: DateTime<Utc>,
    default_locale: app::i18n::Locale,
) -> Result<usize, DbErr> {
    let backend = db.get_database_backend();
    let txn = db.begin().await?;
    if backend == DatabaseBackend::Postgres && !sweep_lock(&txn).await? {
        txn.rollback().await?;
        return Ok(0);
    }
    // The first write takes the locks (and SQLite's write lock): the jobs of the expired runs.
    let mut b = Binder::new(backend);
    let sql = format!(
        "UPDATE jobs SET lane_seq = lane_seq + 1 WHERE id IN \
           (SELECT id FROM jobs WHERE id IN \
              (SELECT job_id FROM job_runs WHERE lease_owner IS NOT NULL AND status = {} \
                 AND lease_expires_at < {}) \
            ORDER BY id{}) RETURNING id",
        b.bind(RunStatus::Running.as_str()),
        b.db_now(),
        sql::for_update(backend),
    );
    let locked = txn.query_all_raw(b.statement(sql)).await?;
    let mut recovered = 0;
    let mut wake = app::wake::Wake::default();
    if !locked.is_empty() {
        let mut b = Binder::new(backend);
        let sql = format!(
            "SELECT * FROM job_runs WHERE lease_owner IS NOT NULL AND status = {} \
               AND lease_expires_at < {} LIMIT {PER_SWEEP}",
            b.bind(RunStatus::Running.as_str()),
            b.db_now(),
        );
        let expired = job_run::Entity::find()
            .from_raw_sql(b.statement(sql))
            .all(&txn)
            .await?;
        let attempts = open_attempts(&txn, &expired).await?;
        let jobs = specs
            .get_many(&txn, &expired.iter().map(|r| r.job_id).collect::<Vec<_>>())
            .await?;
        let batch: Vec<Finished> = expired
            .into_iter()
            .filter_map(|run| {
                let job = jobs.get(&run.job_id)?;
                let (attempt_id, started_at, timeout_ms) = *attempts.get(&run.id)?;
                let owner = run.lease_owner.clone().unwrap_or_default();
                Some(Finished {
                    spec: job
                        .spec
                        .clone()
                        .map(|s| Arc::new(super::claim::with_overrides((*s).clone(), &run))),
                    job_name: job.name.clone(),
                    attempt_id,
                    started_at,
                    finished_at: now,
                    // The timeout it ran under, as its claim recorded it.
                    timeout_ms,
                    execution: settle::interrupted(
                        format!(
                            "interrupted: node {owner} stopped renewing its lease (it died or was cut off)"
                        ),
                        String::new(),
                    ),
                    slow: None,
                    ending: Ending::Expired,
                    run,
                })
            })
            .collect();
        let fallbacks = settle::fallback_jobs(&txn, &batch).await?;
        let fallback_ids: Vec<i64> = fallbacks.values().map(|j| j.id).collect();
        lanes::lock(&txn, &fallback_ids).await?;
        let (written, woke) =
            settle::settle_in(&txn, &batch, &fallbacks, now, default_locale).await?;
        wake = woke;
        for written in written {
            if !written.settled {
                continue;
            }
            recovered += 1;
            if let Some(f) = batch.iter().find(|f| f.run.id == written.run_id) {
                tracing::warn!(
                    job = %f.job_name,
                    run = f.run.id,
                    node = f.run.lease_owner.as_deref().unwrap_or_default(),
                    "recovered an interrupted run"
                );
            }
        }
    }
    txn.commit().await?;
    wake.after_commit();

    // Lanes left without a head (a lost race, an interrupted write) get one again.
    let headless = lanes::headless(db).await?;
    if !headless.is_empty() {
        let txn = db.begin().await?;
        lanes::lock(&txn, &headless).await?;
        let mut wake = app::wake::Wake::default();
        if lanes::promote(&txn, &headless, now).await? > 0 {
            wake = app::wake::runs_changed_in(&txn).await;
        }
        txn.commit().await?;
        wake.after_commit();
    }
    Ok(recovered)
}

/// On PostgreSQL, whether this node may sweep now: an advisory lock held until the caller's
/// transaction ends, so a sweep that overlaps another simply skips its turn.
async fn sweep_lock(txn: &impl ConnectionTrait) -> Result<bool, DbErr> {
    let row = txn
        .query_one_raw(Statement::from_sql_and_values(
            DatabaseBackend::Postgres,
            "SELECT pg_try_advisory_xact_lock($1) AS got",
            [SWEEP_LOCK.into()],
        ))
        .await?;
    Ok(match row {
        Some(row) => row.try_get::<bool>("", "got")?,
        None => false,
    })
}

/// Each run's open attempt (id, start and timeout). A run whose claim left no attempt row (an
/// engine of an older version died between the two) gets one, once however many nodes try.
async fn open_attempts(
    db: &impl ConnectionTrait,
    runs: &[job_run::Model],
) -> Result<HashMap<i64, (i64, DateTime<Utc>, u64)>, DbErr> {
    if runs.is_empty() {
        return Ok(HashMap::new());
    }
    let rows: Vec<job_attempt::ActiveModel> = runs
        .iter()
        .map(|run| job_attempt::ActiveModel {
            run_id: Set(run.id),
            number: Set(run.attempts),
            started_at: Set(run.updated_at),
            timeout_ms: Set(0),
            node: Set(run.lease_owner.clone().unwrap_or_default()),
            slow: Set(false),
            spent_retry: Set(true),
            ..Default::default()
        })
        .collect();
    match job_attempt::Entity::insert_many(rows)
        .on_conflict(
            OnConflict::columns([job_attempt::Column::RunId, job_attempt::Column::Number])
                .do_nothing()
                .to_owned(),
        )
        .exec_without_returning(db)
        .await
    {
        Ok(_) | Err(DbErr::RecordNotInserted) => {}
        Err(e) => return Err(e),
    }
    let wanted: HashMap<i64, i32> = runs.iter().map(|r| (r.id, r.attempts)).collect();
    Ok(job_attempt::Entity::find()
        .filter(job_attempt::Column::RunId.is_in(wanted.keys().copied().collect::<Vec<_>>()))
        .filter(job_attempt::Column::Outcome.is_null())
        .all(db)
        .await?
        .into_iter()
        .filter(|a| wanted.get(&a.run_id) == Some(&a.number))
        .map(|a| (a.run_id, (a.id, a.started_at, a.timeout_ms.max(0) as u64)))
        .collect())
}
