//! `bulwark bench engine`: what the engine does under load, measured on real `bulwark serve`
//! processes over a fresh database per round (never the configured one).
//!
//! - **Throughput**: `--runs` pending no-op runs spread over `--jobs` jobs, drained by 1 … N
//!   instances (separate processes, each with its own pool; SQLite: one, its rule). Counted
//!   from the first attempt's start to the last run's end.
//! - **Tick lateness while draining**: every-second jobs ticking during the one-instance drain;
//!   a tick's lateness is its first attempt's start minus the tick.
//! - **Tick lateness idle**: every-second jobs on an otherwise idle instance, `--ticks` of them.
//! - **Retry lateness**: runs that always fail; each retry's start minus its planned time.
//!
//! Progress goes to stderr; with `--json` stdout gets one object other tools can read:
//! `{"sqlite": {"runs_per_s": {"1": n}, "tick_lateness_ms": {"p50", "p99", "max"},
//! "tick_lateness_draining_ms": {…}, "retry_lateness_ms": {…}}, "postgres": {…}}`.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::Context;
use app::domain::job::{JobInput, JobSpec, Overlap};
use app::domain::retry::Jitter;
use app::domain::run::{RunStatus, Trigger};
use app::entities::{job_attempt, job_run};
use app::services::{jobs, lanes};
use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait,
    PaginatorTrait, QueryFilter, QuerySelect, TransactionTrait,
};
use serde::Serialize;

use super::{Backend, Fresh, Instance, Lateness, logs_dir, ms};

#[derive(Debug, clap::Args)]
pub struct EngineBenchArgs {
    /// No-op runs drained in each throughput round.
    #[arg(long, default_value_t = 50_000)]
    runs: usize,
    /// Jobs those runs are spread over (a job's runs go one at a time).
    #[arg(long, default_value_t = 1_000)]
    jobs: usize,
    /// PostgreSQL rounds with 1 up to this many instances.
    #[arg(long, default_value_t = 3)]
    instances: usize,
    /// Cron ticks timed on an idle instance (every-second jobs × seconds).
    #[arg(long, default_value_t = 1_000)]
    ticks: usize,
    /// Every-second jobs on the idle instance: how many ticks fall on the same instant.
    #[arg(long, default_value_t = 10)]
    tick_burst: usize,
    /// Every-second jobs ticking while the one-instance backlog drains.
    #[arg(long, default_value_t = 20)]
    draining_tick_jobs: usize,
    /// Runs that always fail, whose four retries each are timed.
    #[arg(long, default_value_t = 100)]
    retry_runs: usize,
    /// A PostgreSQL server URL (its database is used only to create a throwaway one).
    #[arg(long, env = "BULWARK_TEST_POSTGRES_URL")]
    postgres: Option<String>,
    /// Print one JSON object with every figure.
    #[arg(long)]
    json: bool,
}

/// Every figure for one database.
#[derive(Debug, Serialize)]
pub struct Figures {
    /// Instances → no-op runs completed per second.
    pub runs_per_s: BTreeMap<String, f64>,
    pub tick_lateness_ms: Lateness,
    pub tick_lateness_draining_ms: Lateness,
    pub retry_lateness_ms: Lateness,
}

#[derive(Debug, Serialize)]
struct Report {
    sqlite: Figures,
    #[serde(skip_serializing_if = "Option::is_none")]
    postgres: Option<Figures>,
}

pub async fn engine(args: &EngineBenchArgs) -> anyhow::Result<()> {
    let sqlite = figures(Backend::Sqlite, args).await?;
    let postgres = match &args.postgres {
        Some(_) => Some(figures(Backend::Postgres, args).await?),
        None => {
            progress("PostgreSQL: skipped (pass --postgres URL or set BULWARK_TEST_POSTGRES_URL)");
            None
        }
    };
    let report = Report { sqlite, postgres };
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print_table(&report);
    }
    Ok(())
}

fn progress(line: &str) {
    eprintln!("{line}");
}

fn print_table(report: &Report) {
    for (label, f) in [
        ("SQLite", Some(&report.sqlite)),
        ("PostgreSQL", report.postgres.as_ref()),
    ] {
        let Some(f) = f else { continue };
        println!("{label}");
        for (n, rate) in &f.runs_per_s {
            println!("  no-op runs/s with {n} instance(s): {rate:.0}");
        }
        println!("  cron tick to first attempt, idle: {}", f.tick_lateness_ms);
        println!(
            "  cron tick to first attempt, while draining: {}",
            f.tick_lateness_draining_ms
        );
        println!(
            "  retry start after its planned time: {}",
            f.retry_lateness_ms
        );
    }
}

async fn figures(backend: Backend, args: &EngineBenchArgs) -> anyhow::Result<Figures> {
    let label = match backend {
        Backend::Sqlite => "SQLite",
        Backend::Postgres => "PostgreSQL",
    };
    let instances = match backend {
        Backend::Sqlite => 1,
        Backend::Postgres => args.instances.max(1),
    };
    let mut runs_per_s = BTreeMap::new();
    let mut draining = None;
    for n in 1..=instances {
        let fresh = Fresh::create(
            backend,
            args.postgres.as_deref(),
            "engine",
            &format!("drain-{n}"),
        )
        .await?;
        let (rate, lateness) = drain(fresh.url(), n, args).await?;
        fresh.drop_database().await?;
        progress(&format!(
            "{label}: {} no-op runs over {} jobs, {n} instance(s): {rate:.0} runs/s",
            args.runs, args.jobs
        ));
        runs_per_s.insert(n.to_string(), rate);
        if n == 1 {
            progress(&format!("{label}: ticks while draining: {lateness}"));
            draining = Some(lateness);
        }
    }
    let fresh = Fresh::create(backend, args.postgres.as_deref(), "engine", "latency").await?;
    let (idle, retry) = latency(fresh.url(), args).await?;
    fresh.drop_database().await?;
    progress(&format!("{label}: ticks on an idle instance: {idle}"));
    progress(&format!("{label}: retries: {retry}"));
    Ok(Figures {
        runs_per_s,
        tick_lateness_ms: idle,
        tick_lateness_draining_ms: draining.context("the one-instance round ran")?,
        retry_lateness_ms: retry,
    })
}

async fn define(
    db: &DatabaseConnection,
    name: String,
    enabled: bool,
    edit: impl FnOnce(&mut JobInput),
) -> anyhow::Result<i64> {
    let mut input = JobInput {
        name,
        kind: "builtin".into(),
        builtin_task: "noop".into(),
        cron: "0 0 0 1 1 *".into(),
        overlap: Overlap::Queue.as_str().into(),
        enabled,
        ..JobInput::default()
    };
    input.retry.jitter = Jitter::None.as_str().into();
    edit(&mut input);
    let spec = JobSpec::parse(&input).map_err(|e| anyhow::anyhow!("bench job invalid: {e:?}"))?;
    Ok(jobs::create(db, &spec, crate::clock::now()).await?.id)
}

/// Every-second jobs, created disabled (enabled when the measurement starts).
async fn tick_jobs(db: &DatabaseConnection, prefix: &str, n: usize) -> anyhow::Result<Vec<i64>> {
    let mut ids = Vec::with_capacity(n);
    for i in 0..n {
        ids.push(
            define(db, format!("{prefix}-{i:04}"), false, |input| {
                input.cron = "* * * * * *".into();
            })
            .await?,
        );
    }
    Ok(ids)
}

async fn set_enabled(db: &DatabaseConnection, ids: &[i64], enabled: bool) -> anyhow::Result<()> {
    for id in ids {
        let bench = app::services::audit::Actor::named("bench");
        jobs::set_enabled(db, *id, enabled, &bench, crate::clock::now()).await?;
    }
    Ok(())
}

/// One throughput round: returns runs/s and, with one instance, the lateness of the ticks
/// that came while the backlog drained.
async fn drain(
    url: &str,
    instances: usize,
    args: &EngineBenchArgs,
) -> anyhow::Result<(f64, Lateness)> {
    let db = crate::db::connect(url).await?;
    crate::db::migrate(&db).await?;
    let mut noops = Vec::with_capacity(args.jobs);
    for i in 0..args.jobs {
        noops.push(define(&db, format!("noop-{i:04}"), true, |_| {}).await?);
    }
    let ticking = if instances == 1 {
        tick_jobs(&db, "draining-tick", args.draining_tick_jobs).await?
    } else {
        Vec::new()
    };
    // The backlog waits outside the lanes (no due time) until every instance is up.
    let now = crate::clock::now();
    for chunk in (0..args.runs).collect::<Vec<_>>().chunks(1000) {
        let rows: Vec<job_run::ActiveModel> = chunk
            .iter()
            .map(|i| job_run::ActiveModel {
                job_id: Set(noops[i % noops.len()]),
                trigger: Set(Trigger::Manual),
                scheduled_for: Set(now),
                status: Set(RunStatus::Pending),
                attempts: Set(0),
                idempotency_key: Set(format!("bench-{i}")),
                created_at: Set(now),
                updated_at: Set(now),
                due_at: Set(None),
                ..Default::default()
            })
            .collect();
        job_run::Entity::insert_many(rows)
            .exec_without_returning(&db)
            .await?;
    }
    if db.get_database_backend() == sea_orm::DatabaseBackend::Postgres {
        // What autovacuum would have done after a load this size, before anyone drains it.
        db.execute_unprepared("VACUUM ANALYZE job_runs, jobs, job_attempts")
            .await?;
    }
    let logs = logs_dir("drain")?;
    let mut running = Vec::new();
    for n in 0..instances {
        running.push(Instance::start(url, &format!("bench-{instances}-{n}"), &logs, &[]).await?);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;

    set_enabled(&db, &ticking, true).await?;
    let txn = db.begin().await?;
    lanes::lock(&txn, &noops).await?;
    lanes::promote(&txn, &noops, crate::clock::now()).await?;
    let wake = app::wake::runs_changed_in(&txn).await;
    txn.commit().await?;
    wake.after_commit();

    let deadline = tokio::time::Instant::now() + Duration::from_secs(1800);
    loop {
        let done = job_run::Entity::find()
            .filter(job_run::Column::Trigger.eq(Trigger::Manual))
            .filter(job_run::Column::Status.eq(RunStatus::Succeeded))
            .count(&db)
            .await?;
        if done >= args.runs as u64 {
            break;
        }
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "the backlog did not drain in 30 minutes ({done} of {} runs); logs in {}",
            args.runs,
            &logs.display()
        );
        // The window is measured from the rows, so polling seldom costs no precision.
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    set_enabled(&db, &ticking, false).await?;
    for instance in running {
        instance.stop().await?;
    }

    let first_start: Option<DateTime<Utc>> = job_attempt::Entity::find()
        .select_only()
        .column_as(job_attempt::Column::StartedAt.min(), "first")
        .inner_join(job_run::Entity)
        .filter(job_run::Column::Trigger.eq(Trigger::Manual))
        .into_tuple()
        .one(&db)
        .await?
        .flatten();
    let last_end: Option<DateTime<Utc>> = job_run::Entity::find()
        .select_only()
        .column_as(job_run::Column::FinishedAt.max(), "last")
        .filter(job_run::Column::Trigger.eq(Trigger::Manual))
        .into_tuple()
        .one(&db)
        .await?
        .flatten();
    let (Some(first), Some(last)) = (first_start, last_end) else {
        anyhow::bail!("the drained runs have no attempts");
    };
    let seconds = (last - first).num_microseconds().unwrap_or(0) as f64 / 1e6;
    let rate = args.runs as f64 / seconds.max(1e-3);
    let lateness = tick_lateness(&db, &ticking, first, last).await?;
    db.close().await?;
    let _ = std::fs::remove_dir_all(&logs);
    Ok((rate, lateness))
}

/// The idle-tick and retry figures, on one instance.
async fn latency(url: &str, args: &EngineBenchArgs) -> anyhow::Result<(Lateness, Lateness)> {
    let db = crate::db::connect(url).await?;
    crate::db::migrate(&db).await?;
    let per_second = args.tick_burst.clamp(1, args.ticks.max(1));
    let seconds = args.ticks.div_ceil(per_second) as u64;
    let ticking = tick_jobs(&db, "idle-tick", per_second).await?;
    let mut failing = Vec::with_capacity(args.retry_runs);
    for i in 0..args.retry_runs {
        failing.push(
            define(&db, format!("failing-{i:04}"), true, |input| {
                input.builtin_task = "demo".into();
                input.builtin_params = "failure_rate=1\nsleep=0ms".into();
                input.retry.first = "200ms".into();
                input.retry.multiplier = "1.5".into();
                input.retry.max_retries = "4".into();
            })
            .await?,
        );
    }
    let logs = logs_dir("latency")?;
    let instance = Instance::start(url, "bench-latency", &logs, &[]).await?;
    tokio::time::sleep(Duration::from_millis(500)).await;

    // Idle ticks: enabled now, so the first tick is the next whole second.
    let from = crate::clock::now();
    set_enabled(&db, &ticking, true).await?;
    tokio::time::sleep(Duration::from_secs(seconds) + Duration::from_millis(1100)).await;
    set_enabled(&db, &ticking, false).await?;
    let to = crate::clock::now();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let idle = tick_lateness(&db, &ticking, from, to).await?;

    // Retries: every attempt fails at once; four retries each.
    for id in &failing {
        app::services::runs::create_manual(&db, *id, crate::clock::now()).await?;
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(600);
    loop {
        let dead = job_run::Entity::find()
            .filter(job_run::Column::JobId.is_in(failing.clone()))
            .filter(job_run::Column::Status.eq(RunStatus::Dead))
            .count(&db)
            .await?;
        if dead >= args.retry_runs as u64 {
            break;
        }
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "the failing runs did not end in 10 minutes"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    instance.stop().await?;
    let retry = retry_lateness(&db, &failing).await?;
    db.close().await?;
    let _ = std::fs::remove_dir_all(&logs);
    Ok((idle, retry))
}

/// Each tick of `jobs` between `from` and `to`: its first attempt's start minus the tick.
async fn tick_lateness(
    db: &DatabaseConnection,
    jobs: &[i64],
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> anyhow::Result<Lateness> {
    let mut samples = Vec::new();
    for chunk in jobs.chunks(200) {
        let rows: Vec<(DateTime<Utc>, DateTime<Utc>)> = job_attempt::Entity::find()
            .select_only()
            .column(job_run::Column::ScheduledFor)
            .column(job_attempt::Column::StartedAt)
            .inner_join(job_run::Entity)
            .filter(job_run::Column::JobId.is_in(chunk.to_vec()))
            .filter(job_run::Column::Trigger.eq(Trigger::Cron))
            .filter(job_run::Column::ScheduledFor.gte(from))
            .filter(job_run::Column::ScheduledFor.lte(to))
            .filter(job_attempt::Column::Number.eq(1))
            .into_tuple()
            .all(db)
            .await?;
        samples.extend(rows.into_iter().map(|(tick, started)| ms(started - tick)));
    }
    Ok(Lateness::of(samples))
}

/// Each retry of the runs of `jobs`: its start minus the end of the attempt before it plus
/// the policy's delay.
async fn retry_lateness(db: &DatabaseConnection, jobs: &[i64]) -> anyhow::Result<Lateness> {
    let Some(first) = jobs.first() else {
        return Ok(Lateness::of(Vec::new()));
    };
    let policy = jobs::to_spec(&jobs::get(db, *first).await?)?.retry;
    let attempts = job_attempt::Entity::find()
        .inner_join(job_run::Entity)
        .filter(job_run::Column::JobId.is_in(jobs.to_vec()))
        .all(db)
        .await?;
    let mut by_run: BTreeMap<i64, Vec<job_attempt::Model>> = BTreeMap::new();
    for a in attempts {
        by_run.entry(a.run_id).or_default().push(a);
    }
    let mut samples = Vec::new();
    for list in by_run.values_mut() {
        list.sort_by_key(|a| a.number);
        for pair in list.windows(2) {
            let Some(finished) = pair[0].finished_at else {
                continue;
            };
            let delay = policy.delay_ms(pair[0].number as u8).round() as i64;
            let planned = finished + chrono::Duration::milliseconds(delay);
            samples.push(ms(pair[1].started_at - planned));
        }
    }
    Ok(Lateness::of(samples))
}
