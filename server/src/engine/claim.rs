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
//!
//! While a job is paused (`app::domain::maintenance`) its planned runs — cron ticks and
//! retries — are not claimed; runs started by hand still are.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use app::domain::job::{JobSpec, Kind};
use app::domain::node::LOST_AFTER_SECONDS;
use app::domain::run::RunStatus;
use app::domain::timeout::{self, EffectiveTimeout};
use app::entities::job_run;
use app::services::maintenance::Paused;
use app::services::sql::{self, Binder, Values};
use chrono::{DateTime, Utc};
use sea_orm::{ConnectionTrait, DbErr, EntityTrait};

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
    /// The job's recent successful durations, newest first (the too-slow limit reads them).
    pub history: Vec<u64>,
    /// When the claim was sent: its lease's fence deadline counts from here
    /// ([`super::lease::Leases::hold`]).
    pub lease_sent: Instant,
}

/// The two kinds of due run (`docs/ARCHITECTURE.md` §3): runs due at a planned time — cron
/// ticks and retries — and runs due as soon as possible — manual runs, re-triggers,
/// fallbacks, a backlog's next run. Planned work comes first, so a cron tick never waits
/// behind a backlog of manual runs; but a quarter of each claim ([`shares`]) goes to the
/// second kind first, so a flood of ticks and retries cannot starve a run someone started by
/// hand. The predicates are written as literals: each has its own partial index, and a
/// planner can only match a partial index to constants.
const CLASSES: [&str; 2] = [
    "(status = 'retry_wait' OR \"trigger\" = 'cron')",
    "status <> 'retry_wait' AND \"trigger\" <> 'cron'",
];

/// What keeps the class at `CLASSES[class]` off paused jobs: a condition on `job_id` for
/// planned work (class 0), and `None` — skip the class — while every job is paused. Runs
/// started by hand (class 1) run through a pause, except those that wait for it (a trigger
/// URL's, `when_paused = queue`).
fn unpaused(paused: &Paused, class: usize, b: &mut Binder) -> Option<String> {
    let exclude = paused.exclude(b, "job_id");
    if class == 0 {
        return exclude.map(|condition| format!(" AND {condition}"));
    }
    let waits = b.bind(false);
    Some(match exclude {
        Some(condition) => format!(" AND (waits_for_pause = {waits} OR {condition})"),
        None => format!(" AND waits_for_pause = {waits}"),
    })
}

/// What keeps a claim to the jobs this node may run: those whose `run_on` asks only for labels
/// it carries — one of the subsets of its own (`app::domain::labels`) — and no command job
/// where commands are off; and to the jobs of `pool` (none: jobs in no pool, which a claim
/// takes before the pools have their turn). A run no node may take stays due; the placement
/// sweep (`app::services::placement`) marks it `waiting_for_node`.
///
/// A child of a spread job's tick (`super::fan_out`) meant for another node is left to that
/// node while it is live.
fn eligible(
    config: &super::EngineConfig,
    b: &mut Binder,
    pool: Option<&str>,
    now: DateTime<Utc>,
) -> String {
    let subsets = config.labels.subsets();
    let run_on: Vec<String> = subsets.into_iter().map(|s| b.bind(s)).collect();
    let commands = if config.allow_commands {
        String::new()
    } else {
        format!(" AND j.kind <> {}", b.bind(Kind::Command.as_str()))
    };
    let pool = b.bind(pool.unwrap_or_default().to_string());
    let me = b.bind(config.node_id.clone());
    let since = b.bind(now - chrono::Duration::seconds(LOST_AFTER_SECONDS));
    let engine = b.bind(true);
    format!(
        " AND EXISTS (SELECT 1 FROM jobs j WHERE j.id = job_runs.job_id AND j.run_on IN ({}) \
           AND j.pool = {pool}{commands}) \
         AND (job_runs.node_hint IS NULL OR job_runs.node_hint = {me} OR NOT EXISTS \
           (SELECT 1 FROM nodes n WHERE n.node_id = job_runs.node_hint AND n.stopped_at IS NULL \
             AND n.heartbeat_at >= {since} AND n.engine = {engine}))",
        run_on.join(", ")
    )
}

/// The order classes are claimed in, and how many each may take at most in its turn: the
/// runs started by hand (class 1) first, up to a quarter of the claim — or, for claims of
/// fewer than four, the whole claim every fourth time (`round` counts claims) — then planned
/// work (class 0) up to the rest, then class 1 again with whatever is left.
fn shares(limit: usize, round: u64) -> [(usize, usize); 3] {
    let first = if limit >= 4 {
        limit / 4
    } else if round.is_multiple_of(4) {
        limit
    } else {
        0
    };
    [(1, first), (0, limit), (1, limit)]
}

/// Claims up to `limit` due runs for this node.
pub async fn claim_due(
    shared: &Arc<Shared>,
    now: DateTime<Utc>,
    limit: usize,
) -> Result<Vec<Claimed>, DbErr> {
    if limit == 0 {
        return Ok(Vec::new());
    }
    let db = &shared.db;
    let paused = shared.pauses.get(db, now).await?;
    let round = shared
        .claim_rounds
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    // Before the transaction begins: the lease the database writes starts later than this.
    let sent = Instant::now();
    // Pools are read before anything is written: on SQLite the write lock comes first.
    let txn = sql::begin_write(db).await?;
    let mut runs = take_due(shared, &txn, &paused, now, (limit, round)).await?;
    if runs.is_empty() {
        txn.commit().await?;
        return Ok(Vec::new());
    }
    runs.sort_by_key(|r| r.id);
    let job_ids: Vec<i64> = runs.iter().map(|r| r.job_id).collect();
    let (parents, prepared) = parents_apart(prepare(shared, &txn, runs).await?);
    let mut wake = app::wake::Wake::default();
    if super::fan_out::expand(shared, &txn, &parents, now).await? > 0 {
        wake = app::wake::runs_changed_in(&txn).await;
    }
    let attempt_ids = insert_attempts(shared, &txn, &prepared, now).await?;
    txn.commit().await?;
    wake.after_commit();
    reread_stale(shared, &job_ids);
    Ok(prepared
        .into_iter()
        .filter_map(|p| {
            Some(Claimed {
                attempt_id: *attempt_ids.get(&p.run.id)?,
                run: p.run,
                job: p.job,
                spec: p.spec,
                timeout: p.timeout,
                history: p.history,
                lease_sent: sent,
            })
        })
        .collect())
}

/// Marks up to `limit` due runs running under this node's lease — runs of pool jobs as their
/// pools have room, then the rest class by class as [`shares`] says for this `round` — and
/// returns them.
async fn take_due(
    shared: &Shared,
    txn: &sea_orm::DatabaseTransaction,
    paused: &Paused,
    now: DateTime<Utc>,
    (limit, round): (usize, u64),
) -> Result<Vec<job_run::Model>, DbErr> {
    let backend = txn.get_database_backend();
    // Pools first: their room bounds what they take, and a backlog of other work must not
    // keep them waiting.
    let mut runs = take_pooled(shared, txn, paused, now, limit).await?;
    for (i, most) in shares(limit - runs.len(), round) {
        let left = (limit - runs.len()).min(most);
        if left == 0 {
            continue;
        }
        let mut b = Binder::new(backend);
        let Some(unpaused) = unpaused(paused, i, &mut b) else {
            continue;
        };
        let eligible = eligible(&shared.config, &mut b, None, now);
        let filter = format!("{}{unpaused}{eligible}", CLASSES[i]);
        let sql = claim_statement(shared, &mut b, now, &filter, left);
        runs.extend(
            job_run::Entity::find()
                .from_raw_sql(b.statement(sql))
                .all(txn)
                .await?,
        );
    }
    Ok(runs)
}

/// The claim itself: up to `limit` runs due at `now` that meet `filter`, oldest due first,
/// set running under this node's lease, each with the revision of its job it runs.
fn claim_statement(
    shared: &Shared,
    b: &mut Binder,
    now: DateTime<Utc>,
    filter: &str,
    limit: usize,
) -> String {
    let backend = b.backend();
    format!(
        "UPDATE job_runs SET status = {}, due_at = NULL, attempts = attempts + 1, \
           lease_owner = {}, lease_expires_at = {}, updated_at = {}, \
           revision = NULLIF((SELECT revision FROM jobs WHERE jobs.id = job_runs.job_id), 0) \
         WHERE id IN (SELECT id FROM job_runs WHERE due_at IS NOT NULL AND due_at <= {} \
           AND {filter} ORDER BY due_at, id LIMIT {}{}) \
         RETURNING *",
        b.bind(RunStatus::Running.as_str()),
        b.bind(shared.config.node_id.clone()),
        b.db_now_plus(shared.config.lease),
        b.bind(now),
        b.bind(now),
        b.bind(limit as i64),
        sql::skip_locked(backend),
    )
}

/// Runs of pool jobs (`app::domain::pool`), up to `left`: pool by pool under the pool's row
/// lock — on PostgreSQL `FOR UPDATE SKIP LOCKED`, so while one node claims for a pool the
/// others pass it by until it commits; on SQLite the claim's write lock — each taking at most
/// its size less its runs running now, oldest due first.
async fn take_pooled(
    shared: &Shared,
    txn: &sea_orm::DatabaseTransaction,
    paused: &Paused,
    now: DateTime<Utc>,
    mut left: usize,
) -> Result<Vec<job_run::Model>, DbErr> {
    let mut runs = Vec::new();
    if left == 0 {
        return Ok(runs);
    }
    for (pool, free) in pools_with_room(txn, now).await? {
        let take = left.min(free);
        if take == 0 {
            continue;
        }
        let mut b = Binder::new(txn.get_database_backend());
        // Planned work and runs started by hand, each kept off paused jobs as on its own.
        let classes: Vec<String> = (0..CLASSES.len())
            .filter_map(|i| {
                unpaused(paused, i, &mut b).map(|unpaused| format!("({}{unpaused})", CLASSES[i]))
            })
            .collect();
        if classes.is_empty() {
            break;
        }
        let eligible = eligible(&shared.config, &mut b, Some(&pool), now);
        let filter = format!("({}){eligible}", classes.join(" OR "));
        let sql = claim_statement(shared, &mut b, now, &filter, take);
        let taken = job_run::Entity::find()
            .from_raw_sql(b.statement(sql))
            .all(txn)
            .await?;
        left -= taken.len();
        runs.extend(taken);
        if left == 0 {
            break;
        }
    }
    Ok(runs)
}

/// The pools with runs due at `now`, locked for this claim, each with its room: its size less
/// its jobs' runs running now — counted by a statement of its own once the locks are held, so
/// it sees every run the last claimer of the pool committed. A spread job's parent runs nothing
/// itself and takes no place; its children each take one.
async fn pools_with_room(
    txn: &sea_orm::DatabaseTransaction,
    now: DateTime<Utc>,
) -> Result<Vec<(String, usize)>, DbErr> {
    let backend = txn.get_database_backend();
    let mut b = Binder::new(backend);
    // Driven by the pools: with none defined (most installations), nothing else is read.
    let sql = format!(
        "SELECT p.name, p.size FROM pools p WHERE EXISTS \
           (SELECT 1 FROM job_runs d JOIN jobs j ON j.id = d.job_id \
             WHERE j.pool = p.name AND d.due_at IS NOT NULL AND d.due_at <= {}) \
         ORDER BY p.name{}",
        b.bind(now),
        sql::skip_locked(backend),
    );
    let mut pools = Vec::new();
    for row in txn.query_all_raw(b.statement(sql)).await? {
        let name: String = row.try_get("", "name")?;
        let size: i32 = row.try_get("", "size")?;
        pools.push((name, size));
    }
    if pools.is_empty() {
        return Ok(Vec::new());
    }
    let mut b = Binder::new(backend);
    let names = b.bind_list(pools.iter().map(|(name, _)| name.clone()));
    let sql = format!(
        "SELECT j.pool AS pool, COUNT(*) AS running FROM job_runs r JOIN jobs j ON j.id = r.job_id \
         WHERE r.status = {} AND j.pool IN ({names}) \
           AND (r.parent_id IS NOT NULL OR r.shard_total IS NULL) GROUP BY j.pool",
        b.bind(RunStatus::Running.as_str()),
    );
    let mut running = std::collections::HashMap::new();
    for row in txn.query_all_raw(b.statement(sql)).await? {
        let pool: String = row.try_get("", "pool")?;
        let n: i64 = row.try_get("", "running")?;
        running.insert(pool, n);
    }
    Ok(pools
        .into_iter()
        .map(|(name, size)| {
            let busy = running.get(&name).copied().unwrap_or(0);
            let room = (i64::from(size) - busy).max(0) as usize;
            (name, room)
        })
        .collect())
}

/// A claimed run with what its attempt needs, before the attempt's row exists.
struct Prepared {
    run: job_run::Model,
    job: Arc<CachedJob>,
    spec: Result<Arc<JobSpec>, String>,
    timeout: EffectiveTimeout,
    history: Vec<u64>,
}

/// Each run's job (with the run's overrides), recent durations and effective timeout; a run
/// whose job was deleted in between is dropped.
async fn prepare(
    shared: &Shared,
    txn: &sea_orm::DatabaseTransaction,
    runs: Vec<job_run::Model>,
) -> Result<Vec<Prepared>, DbErr> {
    let job_ids: Vec<i64> = runs.iter().map(|r| r.job_id).collect();
    let jobs = shared.specs.get_many(txn, &job_ids).await?;
    let mut prepared = Vec::with_capacity(runs.len());
    for run in runs {
        let Some(job) = jobs.get(&run.job_id).cloned() else {
            // The job was deleted with its runs in between: nothing to attempt.
            continue;
        };
        let spec = job
            .spec
            .clone()
            .map(|spec| Arc::new(with_overrides((*spec).clone(), &run)));
        let (timeout, history) = match &spec {
            Ok(spec) => {
                let history = shared
                    .histories
                    .recent(
                        txn,
                        run.job_id,
                        spec.timeout.window.max(app::domain::watch::HISTORY),
                    )
                    .await?;
                // The learned timeout takes its own window of it; the too-slow limit all.
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
        prepared.push(Prepared {
            run,
            job,
            spec,
            timeout,
            history,
        });
    }
    Ok(prepared)
}

/// The ticks of spread jobs among the claimed runs, to be given children instead of an
/// attempt (`super::fan_out`), and the runs to attempt.
fn parents_apart(prepared: Vec<Prepared>) -> (Vec<super::fan_out::Parent>, Vec<Prepared>) {
    let mut parents = Vec::new();
    let mut runs = Vec::with_capacity(prepared.len());
    for p in prepared {
        match &p.spec {
            Ok(spec) if spec.spread.fans_out() && p.run.parent_id.is_none() => {
                parents.push(super::fan_out::Parent {
                    spread: spec.spread,
                    run_on: spec.run_on.clone(),
                    kind: spec.kind.kind(),
                    run: p.run,
                });
            }
            _ => runs.push(p),
        }
    }
    (parents, runs)
}

/// One attempt row per prepared run, 500 to a statement; the attempts' ids by run id.
async fn insert_attempts(
    shared: &Shared,
    txn: &sea_orm::DatabaseTransaction,
    prepared: &[Prepared],
    now: DateTime<Utc>,
) -> Result<std::collections::HashMap<i64, i64>, DbErr> {
    const COLUMNS: &[(&str, &str)] = &[
        ("run", "bigint"),
        ("number", "integer"),
        ("started", "timestamptz"),
        ("timeout", "bigint"),
        ("node", "text"),
        ("load", "double precision"),
    ];
    let load = super::executor::load_average();
    let mut attempt_ids = std::collections::HashMap::with_capacity(prepared.len());
    for chunk in prepared.chunks(500) {
        let mut b = Binder::new(txn.get_database_backend());
        let values = Values {
            columns: COLUMNS,
            rows: chunk
                .iter()
                .map(|p| {
                    vec![
                        p.run.id.into(),
                        p.run.attempts.into(),
                        now.into(),
                        (p.timeout.ms as i64).into(),
                        shared.config.node_id.clone().into(),
                        load.into(),
                    ]
                })
                .collect(),
        };
        let falsy = b.bind(false);
        let truthy = b.bind(true);
        let sql = sql::insert_from(
            &mut b,
            "job_attempts",
            "run_id, number, started_at, timeout_ms, node, load_avg, slow, spent_retry",
            &values,
            &format!(
                "v.v_run, v.v_number, v.v_started, v.v_timeout, v.v_node, v.v_load, {falsy}, {truthy}"
            ),
            "",
            "id, run_id",
        );
        for row in txn.query_all_raw(b.statement(sql)).await? {
            attempt_ids.insert(
                row.try_get::<i64>("", "run_id")?,
                row.try_get::<i64>("", "id")?,
            );
        }
    }
    Ok(attempt_ids)
}

/// Starts reading again, on a connection of its own, the histories of `job_ids` that have
/// grown old: the claims that follow use them once read.
fn reread_stale(shared: &Arc<Shared>, job_ids: &[i64]) {
    let stale = shared.histories.take_stale(job_ids);
    if stale.is_empty() {
        return;
    }
    let shared = shared.clone();
    tokio::spawn(async move { shared.histories.reread(&shared.db, stale).await });
}

/// How long until the next run is due (zero if one is due now), if any is.
pub async fn next_due_in(shared: &Shared, now: DateTime<Utc>) -> Result<Option<Duration>, DbErr> {
    let db = &shared.db;
    let mut next: Option<DateTime<Utc>> = None;
    let paused = shared.pauses.get(db, now).await?;
    for (i, class) in CLASSES.iter().enumerate() {
        let mut b = Binder::new(db.get_database_backend());
        let Some(unpaused) = unpaused(&paused, i, &mut b) else {
            continue;
        };
        // One probe of each class's index.
        let sql = format!(
            "SELECT due_at FROM job_runs WHERE due_at IS NOT NULL AND {class}{unpaused} \
             ORDER BY due_at LIMIT 1"
        );
        let row = db.query_one_raw(b.statement(sql)).await?;
        if let Some(row) = row {
            let at: DateTime<Utc> = row.try_get("", "due_at")?;
            next = Some(next.map_or(at, |n| n.min(at)));
        }
    }
    Ok(next.map(|at| (at - now).to_std().unwrap_or(Duration::ZERO)))
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

#[cfg(test)]
mod tests {
    use super::shares;

    #[test]
    fn runs_started_by_hand_get_a_share_of_every_claim() {
        assert_eq!(shares(16, 7), [(1, 4), (0, 16), (1, 16)]);
        // Claims of one (long attempts): every fourth one looks at them first.
        let first: Vec<usize> = (0..8).map(|round| shares(1, round)[0].1).collect();
        assert_eq!(first, [1, 0, 0, 0, 1, 0, 0, 0]);
    }
}
