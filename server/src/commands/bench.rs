//! `bulwark bench engine`: how late runs and retries start, and how many no-op runs per second
//! one instance completes with full persistence — on SQLite and, when a URL is given, on
//! PostgreSQL. It works on throwaway databases, never on the configured one.

use std::time::{Duration, Instant};

use anyhow::Context;
use app::domain::job::{JobInput, JobSpec};
use app::domain::retry::Jitter;
use app::domain::run::RunStatus;
use app::entities::{job_attempt, job_run};
use app::services::{jobs, runs};
use chrono::Utc;
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter,
    QueryOrder,
};

use crate::engine::{Engine, EngineConfig};

#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// No-op runs for the throughput figure.
    #[arg(long, default_value_t = 2000)]
    runs: usize,
    /// Runs whose retries are timed (each makes 4 retries).
    #[arg(long, default_value_t = 40)]
    retry_runs: usize,
    /// Seconds of every-second cron ticks for the cron lateness figure.
    #[arg(long, default_value_t = 10)]
    cron_seconds: u64,
    /// A PostgreSQL server URL (its database is used only to create `bulwark_bench`).
    #[arg(long, env = "BULWARK_TEST_POSTGRES_URL")]
    postgres: Option<String>,
}

pub async fn engine(args: &BenchArgs) -> anyhow::Result<()> {
    let sqlite = throwaway_sqlite("engine");
    let result = suite("SQLite", &sqlite.url, args).await;
    drop(sqlite);
    result?;
    match &args.postgres {
        Some(base) => {
            let db = ThrowawayPostgres::create(base).await?;
            suite("PostgreSQL", &db.url, args).await?;
            db.drop_database().await
        }
        None => {
            println!("PostgreSQL: skipped (pass --postgres URL or set BULWARK_TEST_POSTGRES_URL)");
            Ok(())
        }
    }
}

/// A SQLite file in the temp directory, removed (with its WAL files) when dropped.
pub(crate) struct ThrowawaySqlite {
    path: std::path::PathBuf,
    pub(crate) url: String,
}

pub(crate) fn throwaway_sqlite(what: &str) -> ThrowawaySqlite {
    let path = std::env::temp_dir().join(format!("bulwark-bench-{what}-{}.db", std::process::id()));
    let url = format!("sqlite://{}?mode=rwc", path.display());
    ThrowawaySqlite { path, url }
}

impl Drop for ThrowawaySqlite {
    fn drop(&mut self) {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", self.path.display()));
        }
    }
}

/// A database on the server of `base`, created fresh and dropped at the end: `bulwark_bench`,
/// or `bulwark_bench_<suffix>` for benchmarks that may run at the same time as another.
pub(crate) struct ThrowawayPostgres {
    admin: DatabaseConnection,
    name: String,
    pub(crate) url: String,
}

impl ThrowawayPostgres {
    pub(crate) async fn create(base: &str) -> anyhow::Result<Self> {
        Self::create_named(base, "bulwark_bench").await
    }

    pub(crate) async fn create_named(base: &str, name: &str) -> anyhow::Result<Self> {
        let admin = crate::db::connect(base).await?;
        admin
            .execute_unprepared(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
            .await?;
        admin
            .execute_unprepared(&format!("CREATE DATABASE {name}"))
            .await?;
        let (prefix, _) = base
            .rsplit_once('/')
            .context("the PostgreSQL URL needs a database name")?;
        Ok(ThrowawayPostgres {
            admin,
            name: name.to_string(),
            url: format!("{prefix}/{name}"),
        })
    }

    pub(crate) async fn drop_database(self) -> anyhow::Result<()> {
        self.admin
            .execute_unprepared(&format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ))
            .await?;
        Ok(())
    }
}

fn percentile(samples: &mut [f64], q: f64) -> f64 {
    samples.sort_by(f64::total_cmp);
    if samples.is_empty() {
        return f64::NAN;
    }
    let rank = ((q * samples.len() as f64).ceil() as usize).clamp(1, samples.len());
    samples[rank - 1]
}

async fn define(
    db: &DatabaseConnection,
    name: &str,
    edit: impl FnOnce(&mut JobInput),
) -> anyhow::Result<i64> {
    let mut input = JobInput {
        name: name.into(),
        kind: "builtin".into(),
        builtin_task: "noop".into(),
        cron: "0 0 0 1 1 *".into(),
        ..JobInput::default()
    };
    input.retry.jitter = Jitter::None.as_str().into();
    edit(&mut input);
    let spec = JobSpec::parse(&input).map_err(|e| anyhow::anyhow!("bench job invalid: {e:?}"))?;
    Ok(jobs::create(db, &spec, Utc::now()).await?.id)
}

/// Waits until `expected` runs (of any job) are in one of `statuses`.
async fn until_all(
    db: &DatabaseConnection,
    statuses: &[RunStatus],
    expected: u64,
) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(600);
    loop {
        let done = job_run::Entity::find()
            .filter(job_run::Column::Status.is_in(statuses.iter().copied()))
            .count(db)
            .await?;
        if done >= expected {
            return Ok(());
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "bench timed out waiting for runs"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn start(
    db: &DatabaseConnection,
) -> (
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<()>,
) {
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let engine = Engine::new(
        db.clone(),
        EngineConfig::new(format!("bench-{}", std::process::id())),
    );
    let task = tokio::spawn(engine.run(async move {
        let _ = stopped.await;
    }));
    (stop, task)
}

async fn suite(label: &str, url: &str, args: &BenchArgs) -> anyhow::Result<()> {
    let db = crate::db::connect(url).await?;
    crate::db::migrate(&db).await?;
    println!("{label} (default engine settings: poll 500 ms, concurrency 16)");

    // 1. Throughput: no-op runs of 50 jobs queued up front, drained by one engine. (Runs of
    // one job go one at a time, so a single job would measure that rule, not the engine.)
    let mut noops = Vec::new();
    for i in 0..50 {
        noops.push(define(&db, &format!("bench-noop-{i}"), |_| {}).await?);
    }
    let now = Utc::now();
    for i in 0..args.runs {
        runs::create_manual(&db, noops[i % noops.len()], now).await?;
    }
    let (stop, task) = start(&db);
    let started = Instant::now();
    until_all(&db, &[RunStatus::Succeeded], args.runs as u64).await?;
    let elapsed = started.elapsed().as_secs_f64();
    let _ = stop.send(());
    task.await?;
    println!(
        "  no-op runs: {} in {elapsed:.2} s = {:.0} runs/s (claim, attempt row, write-back, all persisted)",
        args.runs,
        args.runs as f64 / elapsed
    );

    // 2. Retry lateness: every attempt fails; each retry's start against its planned time.
    let mut failing = Vec::new();
    for i in 0..args.retry_runs {
        let id = define(&db, &format!("bench-retry-{i}"), |input| {
            input.builtin_task = "demo".into();
            input.builtin_params = "failure_rate=1\nsleep=0ms".into();
            input.retry.first = "200ms".into();
            input.retry.multiplier = "1.5".into();
            input.retry.max_retries = "4".into();
        })
        .await?;
        runs::create_manual(&db, id, Utc::now()).await?;
        failing.push(id);
    }
    let (stop, task) = start(&db);
    until_all(&db, &[RunStatus::Dead], args.retry_runs as u64).await?;
    let _ = stop.send(());
    task.await?;
    let policy = jobs::to_spec(&jobs::get(&db, failing[0]).await?)?.retry;
    let mut late = Vec::new();
    for run in job_run::Entity::find()
        .filter(job_run::Column::JobId.is_in(failing))
        .all(&db)
        .await?
    {
        let attempts = job_attempt::Entity::find()
            .filter(job_attempt::Column::RunId.eq(run.id))
            .order_by_asc(job_attempt::Column::Number)
            .all(&db)
            .await?;
        for pair in attempts.windows(2) {
            let (Some(finished), retry) = (pair[0].finished_at, pair[0].number as u8) else {
                continue;
            };
            let planned =
                finished + chrono::Duration::milliseconds(policy.delay_ms(retry).round() as i64);
            late.push(
                (pair[1].started_at - planned)
                    .num_microseconds()
                    .unwrap_or(0) as f64
                    / 1000.0,
            );
        }
    }
    println!(
        "  retry start vs planned: p50 {:.1} ms, p99 {:.1} ms over {} retries",
        percentile(&mut late.clone(), 0.5),
        percentile(&mut late, 0.99),
        args.retry_runs * 4
    );

    // 3. Cron lateness: an every-second job; each run's first attempt against its tick.
    let ticking = define(&db, "bench-cron", |input| input.cron = "* * * * * *".into()).await?;
    let (stop, task) = start(&db);
    tokio::time::sleep(Duration::from_secs(args.cron_seconds)).await;
    let _ = stop.send(());
    task.await?;
    let mut late = Vec::new();
    for run in job_run::Entity::find()
        .filter(job_run::Column::JobId.eq(ticking))
        .all(&db)
        .await?
    {
        if let Some(first) = job_attempt::Entity::find()
            .filter(job_attempt::Column::RunId.eq(run.id))
            .filter(job_attempt::Column::Number.eq(1))
            .one(&db)
            .await?
        {
            late.push(
                (first.started_at - run.scheduled_for)
                    .num_microseconds()
                    .unwrap_or(0) as f64
                    / 1000.0,
            );
        }
    }
    let n = late.len();
    println!(
        "  cron tick to first attempt: p50 {:.1} ms, p99 {:.1} ms over {n} ticks",
        percentile(&mut late.clone(), 0.5),
        percentile(&mut late, 0.99),
    );
    db.close().await?;
    Ok(())
}

#[derive(Debug, clap::Args)]
pub struct QueueBenchArgs {
    /// Dead runs to fill the queue with.
    #[arg(long, default_value_t = 100_000)]
    dead: usize,
    #[arg(long, env = "BULWARK_TEST_POSTGRES_URL")]
    postgres: Option<String>,
}

/// The failed queue with many dead runs: first page, a deep page, a filtered page.
pub async fn queue(args: &QueueBenchArgs) -> anyhow::Result<()> {
    let sqlite = throwaway_sqlite("queue");
    let result = queue_suite("SQLite", &sqlite.url, args.dead).await;
    drop(sqlite);
    result?;
    if let Some(base) = &args.postgres {
        let db = ThrowawayPostgres::create(base).await?;
        queue_suite("PostgreSQL", &db.url, args.dead).await?;
        db.drop_database().await?;
    }
    Ok(())
}

async fn queue_suite(label: &str, url: &str, dead: usize) -> anyhow::Result<()> {
    use app::domain::filters::{QueueCursor, QueueQuery};
    use app::domain::run::{ErrorClass, Trigger};
    use sea_orm::{ActiveValue::Set, EntityTrait};

    let db = crate::db::connect(url).await?;
    crate::db::migrate(&db).await?;
    let mut jobs_ids = Vec::new();
    for i in 0..20 {
        jobs_ids.push(define(&db, &format!("queue-job-{i}"), |_| {}).await?);
    }
    let now = Utc::now();
    let classes = ErrorClass::ALL;
    let started = Instant::now();
    for chunk_start in (0..dead).step_by(1000) {
        let rows: Vec<job_run::ActiveModel> = (chunk_start..(chunk_start + 1000).min(dead))
            .map(|i| {
                let at = now - chrono::Duration::seconds(i as i64);
                job_run::ActiveModel {
                    job_id: Set(jobs_ids[i % jobs_ids.len()]),
                    trigger: Set(Trigger::Cron),
                    scheduled_for: Set(at),
                    status: Set(RunStatus::Dead),
                    attempts: Set(3),
                    idempotency_key: Set(format!("bench-{i}")),
                    last_error_class: Set(Some(classes[i % classes.len()])),
                    last_error: Set(Some(format!("failure number {i}"))),
                    created_at: Set(at),
                    updated_at: Set(at),
                    finished_at: Set(Some(at)),
                    ..Default::default()
                }
            })
            .collect();
        job_run::Entity::insert_many(rows)
            .exec_without_returning(&db)
            .await?;
    }
    println!(
        "{label}: {dead} dead runs written in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    // What autovacuum would have done by the time anyone pages through a queue this size:
    // fresh statistics and a visibility map, so PostgreSQL can use index-only scans.
    if db.get_database_backend() == sea_orm::DatabaseBackend::Postgres {
        db.execute_unprepared("VACUUM ANALYZE job_runs").await?;
    }
    let time = |t: Instant| t.elapsed().as_secs_f64() * 1000.0;

    let all = QueueQuery::default();
    let t = Instant::now();
    let first = app::services::failed::page(&db, &all, None, 50).await?;
    println!("  first page (50 rows + counts): {:.1} ms", time(t));
    anyhow::ensure!(first.rows.len() == 50, "the first page is full");
    // The cursor a reader would hold after paging to the middle of the queue.
    use sea_orm::{QueryOrder, QuerySelect};
    let middle = job_run::Entity::find()
        .order_by_desc(job_run::Column::FinishedAt)
        .order_by_desc(job_run::Column::Id)
        .offset((dead / 2) as u64)
        .one(&db)
        .await?
        .context("the queue has a middle")?;
    let cursor = QueueCursor {
        finished_at: middle
            .finished_at
            .context("a dead run has its finish time")?,
        id: middle.id,
    };
    let t = Instant::now();
    let deep = app::services::failed::page(&db, &all, Some(cursor), 50).await?;
    println!(
        "  page at row {} (keyset, {} rows): {:.1} ms",
        dead / 2,
        deep.rows.len(),
        time(t)
    );
    let filtered = QueueQuery {
        job: Some("queue-job-3".into()),
        class: Some(ErrorClass::Interrupted),
        text: Some("number 9".into()),
        ..Default::default()
    };
    let t = Instant::now();
    let page = app::services::failed::page(&db, &filtered, None, 50).await?;
    println!(
        "  filtered page (job + class + text, {} matching): {:.1} ms",
        page.matching,
        time(t)
    );
    db.close().await?;
    Ok(())
}
