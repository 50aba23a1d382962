//! `bulwark bench shapes`: the shapes installations really have, on real `bulwark serve`
//! processes over a fresh database per round (never the configured one).
//!
//! - **The top of the hour**: `--burst-jobs` jobs whose ticks all fall on one instant; each
//!   tick's lateness is its first attempt's start minus the tick. One instance on SQLite; one
//!   and three on PostgreSQL.
//! - **Idle at size**: `--idle-jobs` jobs that fire once a year; the CPU an idle instance
//!   spends and the memory it holds over `--idle-seconds`.
//! - **Capacity by labels** (PostgreSQL): `--spread-jobs` one-second runs split over three
//!   labels, drained by one instance carrying all three or by three carrying one each, with
//!   eight attempts at a time per instance: more instances buy execution capacity where the
//!   labels put it.
//!
//! Progress goes to stderr; with `--json` stdout gets one object:
//! `{"sqlite": {"burst": {"1": {p50, p99, max, n}}, "idle": {cpu_percent, rss_mb}}, "postgres":
//! {…, "capacity": {"1": runs_per_s, "3": runs_per_s}}}`.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::Context;
use app::domain::job::{JobInput, JobSpec};
use app::entities::{job, job_attempt, job_run};
use app::services::jobs;
use chrono::{DateTime, Timelike, Utc};
use sea_orm::{
    ActiveModelTrait, ActiveValue::NotSet, ColumnTrait, ConnectionTrait, DatabaseConnection,
    EntityTrait, IntoActiveModel, PaginatorTrait, QueryFilter, QuerySelect, Set,
};
use serde::Serialize;

use super::{Backend, Fresh, Instance, Lateness, logs_dir, ms};

#[derive(Debug, clap::Args)]
pub struct ShapesBenchArgs {
    /// Jobs whose ticks fall on one instant.
    #[arg(long, default_value_t = 10_000)]
    burst_jobs: usize,
    /// Jobs an idle instance holds.
    #[arg(long, default_value_t = 100_000)]
    idle_jobs: usize,
    /// How long the idle instance is watched.
    #[arg(long, default_value_t = 60)]
    idle_seconds: u64,
    /// One-second runs drained by one instance and by three (PostgreSQL).
    #[arg(long, default_value_t = 240)]
    spread_jobs: usize,
    /// A PostgreSQL server URL (its database is used only to create a throwaway one).
    #[arg(long, env = "BULWARK_TEST_POSTGRES_URL")]
    postgres: Option<String>,
    /// Print one JSON object with every figure.
    #[arg(long)]
    json: bool,
}

/// What an idle instance costs.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Idle {
    /// CPU time over wall time, in percent of one core.
    pub cpu_percent: f64,
    /// Resident memory at the end.
    pub rss_mb: f64,
}

#[derive(Debug, Serialize)]
struct Figures {
    /// Instances → lateness of the burst's ticks.
    burst: BTreeMap<String, Lateness>,
    idle: Idle,
    /// Instances → one-second runs completed per second.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    capacity: BTreeMap<String, f64>,
}

#[derive(Debug, Serialize)]
struct Report {
    sqlite: Figures,
    #[serde(skip_serializing_if = "Option::is_none")]
    postgres: Option<Figures>,
}

pub async fn shapes(args: &ShapesBenchArgs) -> anyhow::Result<()> {
    let sqlite = figures(Backend::Sqlite, args).await?;
    let postgres = match &args.postgres {
        Some(_) => Some(figures(Backend::Postgres, args).await?),
        None => {
            eprintln!("PostgreSQL: skipped (pass --postgres URL or set BULWARK_TEST_POSTGRES_URL)");
            None
        }
    };
    let report = Report { sqlite, postgres };
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
        return Ok(());
    }
    for (label, f) in [
        ("SQLite", Some(&report.sqlite)),
        ("PostgreSQL", report.postgres.as_ref()),
    ] {
        let Some(f) = f else { continue };
        println!("{label}");
        for (n, lateness) in &f.burst {
            println!(
                "  {} ticks at one instant, {n} instance(s): {lateness}",
                args.burst_jobs
            );
        }
        println!(
            "  idle with {} jobs: {:.1} % of a core, {:.0} MB resident",
            args.idle_jobs, f.idle.cpu_percent, f.idle.rss_mb
        );
        for (n, rate) in &f.capacity {
            println!("  one-second runs by labels, {n} instance(s): {rate:.1} runs/s");
        }
    }
    Ok(())
}

async fn figures(backend: Backend, args: &ShapesBenchArgs) -> anyhow::Result<Figures> {
    let label = format!("{backend:?}");
    let instances: &[usize] = match backend {
        Backend::Sqlite => &[1],
        Backend::Postgres => &[1, 3],
    };
    let mut burst = BTreeMap::new();
    for &n in instances {
        let fresh = Fresh::create(
            backend,
            args.postgres.as_deref(),
            "shapes",
            &format!("burst-{n}"),
        )
        .await?;
        let lateness = top_of_the_hour(fresh.url(), n, args.burst_jobs).await?;
        fresh.drop_database().await?;
        eprintln!(
            "{label}: {} ticks at one instant, {n} instance(s): {lateness}",
            args.burst_jobs
        );
        burst.insert(n.to_string(), lateness);
    }
    let fresh = Fresh::create(backend, args.postgres.as_deref(), "shapes", "idle").await?;
    let idle = idle_at_size(fresh.url(), args).await?;
    fresh.drop_database().await?;
    eprintln!(
        "{label}: idle with {} jobs: {:.1} % of a core, {:.0} MB",
        args.idle_jobs, idle.cpu_percent, idle.rss_mb
    );
    let mut capacity = BTreeMap::new();
    if backend == Backend::Postgres {
        for n in [1, 3] {
            let fresh = Fresh::create(
                backend,
                args.postgres.as_deref(),
                "shapes",
                &format!("labels-{n}"),
            )
            .await?;
            let rate = by_labels(fresh.url(), n, args.spread_jobs).await?;
            fresh.drop_database().await?;
            eprintln!("{label}: one-second runs by labels, {n} instance(s): {rate:.1} runs/s");
            capacity.insert(n.to_string(), rate);
        }
    }
    Ok(Figures {
        burst,
        idle,
        capacity,
    })
}

/// A fresh, migrated database with one job made from `input` and `count - 1` copies of its
/// row (names `PREFIX-N`), written in bulk: the editor's path, a thousand times faster.
async fn with_jobs(url: &str, input: JobInput, count: usize) -> anyhow::Result<DatabaseConnection> {
    let db = crate::db::connect(url).await?;
    crate::db::migrate(&db).await?;
    let spec = JobSpec::parse(&input).map_err(|e| anyhow::anyhow!("bench job invalid: {e:?}"))?;
    let first = jobs::create(&db, &spec, crate::clock::now()).await?;
    let row = job::Entity::find_by_id(first.id)
        .one(&db)
        .await?
        .context("the job just made")?;
    let numbers: Vec<usize> = (1..count).collect();
    for chunk in numbers.chunks(500) {
        let copies = chunk.iter().map(|i| {
            let mut copy = row.clone().into_active_model();
            copy.id = NotSet;
            copy.name = Set(format!("{}-{i:06}", input.name));
            // As if each had its first revision already: an instance's start gives one to
            // every job without (sealed, one transaction each), which is an upgrade's work,
            // not an idle instance's.
            copy.revision = Set(1);
            copy.reset_all()
        });
        job::Entity::insert_many(copies)
            .exec_without_returning(&db)
            .await?;
    }
    Ok(db)
}

fn builtin(name: &str, cron: &str, params: &str) -> JobInput {
    JobInput {
        name: name.into(),
        kind: "builtin".into(),
        builtin_task: "demo".into(),
        builtin_params: params.into(),
        cron: cron.into(),
        ..JobInput::default()
    }
}

/// Every job's next tick moved to one instant, 15 s after the instances are up; the lateness
/// of each tick's first attempt.
async fn top_of_the_hour(url: &str, instances: usize, count: usize) -> anyhow::Result<Lateness> {
    let db = with_jobs(
        url,
        builtin("burst", "0 0 0 1 1 *", "failure_rate=0\nsleep=0ms"),
        count,
    )
    .await?;
    let logs = logs_dir("shapes-burst")?;
    let mut running = Vec::new();
    for n in 0..instances {
        running.push(Instance::start(url, &format!("burst-{instances}-{n}"), &logs, &[]).await?);
    }
    let now = crate::clock::now();
    let tick = (now + chrono::Duration::seconds(15))
        .with_nanosecond(0)
        .context("a whole second")?;
    let cron = tick.format("%S %M %H %d %m *").to_string();
    // One statement: the definition and the next tick of every job at once (the engine reads
    // a job again when its `updated_at` moves).
    db.execute_raw(sea_orm::Statement::from_sql_and_values(
        db.get_database_backend(),
        match db.get_database_backend() {
            sea_orm::DatabaseBackend::Postgres => {
                "UPDATE jobs SET cron = $1, timezone = 'UTC', next_fire_at = $2, updated_at = $3 \
                 WHERE name LIKE 'burst%'"
            }
            _ => {
                "UPDATE jobs SET cron = ?, timezone = 'UTC', next_fire_at = ?, updated_at = ? \
                 WHERE name LIKE 'burst%'"
            }
        },
        [cron.into(), tick.into(), now.into()],
    ))
    .await?;
    tokio::time::sleep((tick - crate::clock::now()).to_std().unwrap_or_default()).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(600);
    loop {
        let started = job_attempt::Entity::find()
            .inner_join(job_run::Entity)
            .filter(job_run::Column::CronTick.eq(tick))
            .count(&db)
            .await?;
        if started >= count as u64 {
            break;
        }
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "{started} of {count} ticks started in 10 minutes (logs in {})",
            logs.display()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    for instance in running {
        instance.stop().await?;
    }
    let rows: Vec<(DateTime<Utc>, DateTime<Utc>)> = job_attempt::Entity::find()
        .select_only()
        .column(job_run::Column::CronTick)
        .column(job_attempt::Column::StartedAt)
        .inner_join(job_run::Entity)
        .filter(job_run::Column::CronTick.eq(tick))
        .filter(job_attempt::Column::Number.eq(1))
        .into_tuple()
        .all(&db)
        .await?;
    db.close().await?;
    let _ = std::fs::remove_dir_all(&logs);
    Ok(Lateness::of(
        rows.into_iter().map(|(t, s)| ms(s - t)).collect(),
    ))
}

/// One instance over `--idle-jobs` yearly jobs: after 10 s to settle, its CPU time over
/// `--idle-seconds` and its resident memory (`/proc`).
async fn idle_at_size(url: &str, args: &ShapesBenchArgs) -> anyhow::Result<Idle> {
    let db = with_jobs(
        url,
        builtin("idle", "0 0 0 1 1 *", "sleep=0ms"),
        args.idle_jobs,
    )
    .await?;
    db.close().await?;
    let logs = logs_dir("shapes-idle")?;
    let instance = Instance::start(url, "idle", &logs, &[]).await?;
    let pid = instance.pid().context("the idle instance runs")?;
    tokio::time::sleep(Duration::from_secs(10)).await;
    let before = cpu_seconds(pid)?;
    tokio::time::sleep(Duration::from_secs(args.idle_seconds)).await;
    let spent = cpu_seconds(pid)? - before;
    let rss_mb = rss_kb(pid)? as f64 / 1024.0;
    instance.stop().await?;
    let _ = std::fs::remove_dir_all(&logs);
    Ok(Idle {
        cpu_percent: spent / args.idle_seconds as f64 * 100.0,
        rss_mb,
    })
}

/// User and system CPU time of `pid` so far, in seconds (`/proc/PID/stat`, clock ticks of
/// 1/100 s on Linux).
fn cpu_seconds(pid: u32) -> anyhow::Result<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).context("reading /proc")?;
    // The fields after the command's closing parenthesis, from the state (field 3) on.
    let rest = stat.rsplit_once(')').context("a stat line")?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| -> anyhow::Result<f64> {
        Ok(fields.get(i).context("a stat field")?.parse::<f64>()?)
    };
    // utime and stime are fields 14 and 15: 11 and 12 after the state.
    Ok((ticks(11)? + ticks(12)?) / 100.0)
}

fn rss_kb(pid: u32) -> anyhow::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).context("reading /proc")?;
    let line = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .context("VmRSS in /proc")?;
    Ok(line
        .split_whitespace()
        .nth(1)
        .context("a VmRSS value")?
        .parse()?)
}

/// `count` one-second runs, a third asking for each of three labels, drained by one instance
/// carrying all three or by three carrying one each (eight attempts at a time per
/// instance); runs completed per second, first start to last end.
async fn by_labels(url: &str, instances: usize, count: usize) -> anyhow::Result<f64> {
    const LABELS: [&str; 3] = ["a", "b", "c"];
    let db = crate::db::connect(url).await?;
    crate::db::migrate(&db).await?;
    let mut ids = Vec::new();
    for (i, label) in LABELS.iter().enumerate() {
        let mut input = builtin(
            &format!("on-{label}"),
            "0 0 0 1 1 *",
            "failure_rate=0\nsleep=1s",
        );
        input.run_on = format!("{label}=1");
        input.overlap = app::domain::job::Overlap::Queue.as_str().into();
        let spec =
            JobSpec::parse(&input).map_err(|e| anyhow::anyhow!("bench job invalid: {e:?}"))?;
        let per_label = count / LABELS.len() + usize::from(i < count % LABELS.len());
        // A job's runs go one at a time: one job per run.
        for n in 0..per_label {
            let mut spec = spec.clone();
            spec.name = format!("on-{label}-{n:04}");
            ids.push(jobs::create(&db, &spec, crate::clock::now()).await?.id);
        }
    }
    let logs = logs_dir("shapes-labels")?;
    let mut running = Vec::new();
    for n in 0..instances {
        let labels = if instances == 1 {
            "a=1,b=1,c=1".to_string()
        } else {
            format!("{}=1", LABELS[n % LABELS.len()])
        };
        let env = [
            ("BULWARK_NODE_LABELS", labels),
            ("BULWARK_CONCURRENCY", "8".to_string()),
        ];
        running.push(Instance::start(url, &format!("labels-{instances}-{n}"), &logs, &env).await?);
    }
    for id in &ids {
        app::services::runs::create_manual(&db, *id, crate::clock::now()).await?;
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(600);
    loop {
        let done = job_run::Entity::find()
            .filter(job_run::Column::Status.eq(app::domain::run::RunStatus::Succeeded))
            .filter(job_run::Column::JobId.is_in(ids.clone()))
            .count(&db)
            .await?;
        if done >= ids.len() as u64 {
            break;
        }
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "{done} of {} runs done in 10 minutes",
            ids.len()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    for instance in running {
        instance.stop().await?;
    }
    let (first, last): (Option<DateTime<Utc>>, Option<DateTime<Utc>>) = job_attempt::Entity::find()
        .select_only()
        .column_as(job_attempt::Column::StartedAt.min(), "first")
        .column_as(job_attempt::Column::FinishedAt.max(), "last")
        .into_tuple()
        .one(&db)
        .await?
        .context("attempts")?;
    db.close().await?;
    let _ = std::fs::remove_dir_all(&logs);
    let (Some(first), Some(last)) = (first, last) else {
        anyhow::bail!("the runs have no attempts");
    };
    Ok(ids.len() as f64 / (ms(last - first) / 1000.0).max(1e-3))
}
