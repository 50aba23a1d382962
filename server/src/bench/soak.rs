//! `bulwark bench soak`: an ordinary busy day, for minutes on end, on real `bulwark serve`
//! processes over a fresh database — counting what a healthy node must never do.
//!
//! The load, started together and left to run: `--jobs-per-second` command jobs firing every
//! second (one in ten fails its first attempt and succeeds on the retry; one prints a NUL byte
//! and invalid UTF-8), and one job in ten of that number firing every minute that prints a
//! line a second for five seconds (live output, a slow attempt). Every job appends its run's
//! id to one file as the last thing it does when it succeeds: the side effect.
//!
//! Counted per database: runs `settled` (ended), of them `succeeded` and `dead`, ticks
//! `skipped`; attempts `interrupted` (a node stopping its own work); `duplicated` — side
//! effects beyond one per run — and `lost`, succeeded runs without theirs; the nodes' memory
//! (`rss_start_mb`, `rss_end_mb`, and its slope after the first minute; the same for the
//! anonymous part alone, because VmRSS also counts the SQLite file's pages mapped by
//! `mmap_size` in `server/src/db.rs`, which grow with the file and are not a leak) and the p99 lateness of
//! the every-second ticks per minute; whether the odd output was stored as promised. With
//! `--json`, one object with a key per database (`sqlite`, `postgres`).

use std::collections::HashMap;
use std::time::Duration;

use anyhow::Context;
use app::domain::job::{JobInput, JobSpec, Overlap};
use app::domain::retry::Jitter;
use app::domain::run::{Outcome, RunStatus, Trigger};
use app::entities::{job_attempt, job_run};
use app::services::jobs;
use chrono::{DateTime, Utc};
use sea_orm::{
    ColumnTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter, QuerySelect,
};
use serde::Serialize;

use super::{Backend, Fresh, Instance, Lateness, logs_dir, ms};

#[derive(Debug, clap::Args)]
pub struct SoakBenchArgs {
    /// How long the load runs, in minutes (fractions allowed).
    #[arg(long, default_value_t = 30.0)]
    minutes: f64,
    /// Instances sharing the database (PostgreSQL only; SQLite runs one).
    #[arg(long, default_value_t = 1)]
    nodes: usize,
    /// The lease each instance takes on a run (`lease_seconds`).
    #[arg(long, default_value_t = 3)]
    lease_seconds: u64,
    /// Command jobs firing every second.
    #[arg(long, default_value_t = 40)]
    jobs_per_second: usize,
    /// A PostgreSQL server URL (its database is used only to create a throwaway one).
    #[arg(long, env = "BULWARK_TEST_POSTGRES_URL")]
    postgres: Option<String>,
    /// Soak only this database (both when not given).
    #[arg(long, value_enum)]
    database: Option<Only>,
    /// Print one JSON object with every figure.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Only {
    Sqlite,
    Postgres,
}

/// What one database's soak counted.
#[derive(Debug, Serialize)]
pub struct Soak {
    pub settled: u64,
    pub succeeded: u64,
    pub dead: u64,
    pub skipped: u64,
    pub interrupted: u64,
    pub duplicated: u64,
    pub lost: u64,
    pub rss_start_mb: f64,
    pub rss_end_mb: f64,
    /// Megabytes per ten minutes, fitted over the samples after the first minute.
    pub rss_slope_mb_per_10min: Option<f64>,
    /// The heap and other private memory alone (`RssAnon`), and its slope.
    pub rss_anon_end_mb: f64,
    pub rss_anon_slope_mb_per_10min: Option<f64>,
    /// The p99 of each minute's every-second ticks, from tick to first attempt.
    pub tick_lateness_p99_ms: Vec<f64>,
    pub odd_output_kept: bool,
}

#[derive(Debug, Serialize)]
struct Report {
    #[serde(skip_serializing_if = "Option::is_none")]
    sqlite: Option<Soak>,
    #[serde(skip_serializing_if = "Option::is_none")]
    postgres: Option<Soak>,
}

/// What the odd job's output must be stored as (`engine/executor.rs`, `tail`).
const ODD_STORED: &str =
    "a\u{2400}b\u{FFFD}\n(Bulwark: NUL bytes are shown as \u{2400}, invalid UTF-8 as \u{FFFD})";

pub async fn soak(args: &SoakBenchArgs) -> anyhow::Result<()> {
    anyhow::ensure!(args.minutes > 0.0, "--minutes must be more than 0");
    anyhow::ensure!(
        args.jobs_per_second > 0,
        "--jobs-per-second must be at least 1"
    );
    let sqlite = if args.database == Some(Only::Postgres) {
        None
    } else if args.nodes == 1 {
        Some(round(Backend::Sqlite, args).await?)
    } else {
        eprintln!("SQLite: skipped (several nodes need PostgreSQL)");
        None
    };
    let postgres = match &args.postgres {
        _ if args.database == Some(Only::Sqlite) => None,
        Some(_) => Some(round(Backend::Postgres, args).await?),
        None => {
            eprintln!("PostgreSQL: skipped (pass --postgres URL or set BULWARK_TEST_POSTGRES_URL)");
            None
        }
    };
    let report = Report { sqlite, postgres };
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        for (label, soak) in [("SQLite", &report.sqlite), ("PostgreSQL", &report.postgres)] {
            if let Some(soak) = soak {
                println!("{label}\n{}", serde_json::to_string_pretty(soak)?);
            }
        }
    }
    Ok(())
}

async fn round(backend: Backend, args: &SoakBenchArgs) -> anyhow::Result<Soak> {
    let fresh = Fresh::create(backend, args.postgres.as_deref(), "soak", "load").await?;
    let logs = logs_dir("soak")?;
    let effects = logs.join("effects");
    let db = crate::db::connect(fresh.url()).await?;
    crate::db::migrate(&db).await?;
    let load = Load::define(&db, args.jobs_per_second, &effects).await?;
    let env = [("BULWARK_LEASE_SECONDS", args.lease_seconds.to_string())];
    let mut nodes = Vec::new();
    for n in 0..args.nodes.max(1) {
        nodes.push(Instance::start(fresh.url(), &format!("soak-{n}"), &logs, &env).await?);
    }
    let started = crate::clock::now();
    load.set_enabled(&db, true).await?;
    let rss = sample_rss(&nodes, Duration::from_secs_f64(args.minutes * 60.0)).await;
    load.set_enabled(&db, false).await?;
    load.drain(&db)
        .await
        .with_context(|| format!("logs in {}", logs.display()))?;
    for node in nodes {
        node.stop().await?;
    }
    let soak = load.count(&db, &effects, started, rss).await?;
    db.close().await?;
    fresh.drop_database().await?;
    let _ = std::fs::remove_dir_all(&logs);
    eprintln!("{backend:?}: {soak:?}");
    Ok(soak)
}

/// The soak's jobs.
struct Load {
    every_second: Vec<i64>,
    all: Vec<i64>,
    odd: i64,
}

impl Load {
    async fn define(
        db: &DatabaseConnection,
        per_second: usize,
        effects: &std::path::Path,
    ) -> anyhow::Result<Load> {
        let effect = format!("echo $BULWARK_RUN_ID >> '{}'", effects.display());
        let mut every_second = Vec::new();
        for i in 0..per_second {
            let script = match i {
                0 => format!("printf 'a\\000b\\377'; {effect}"),
                _ if i % 10 == 1 => format!("[ \"$BULWARK_ATTEMPT\" -ge 2 ] || exit 75; {effect}"),
                _ => effect.clone(),
            };
            every_second.push(
                command_job(db, &format!("soak-second-{i:03}"), "* * * * * *", &script).await?,
            );
        }
        let mut all = every_second.clone();
        for i in 0..per_second.div_ceil(10) {
            let script = format!("for n in 1 2 3 4 5; do echo line $n; sleep 1; done; {effect}");
            all.push(
                command_job(db, &format!("soak-minute-{i:03}"), "0 * * * * *", &script).await?,
            );
        }
        Ok(Load {
            odd: every_second[0],
            every_second,
            all,
        })
    }

    async fn set_enabled(&self, db: &DatabaseConnection, enabled: bool) -> anyhow::Result<()> {
        for id in &self.all {
            let bench = app::services::audit::Actor::named("bench");
            jobs::set_enabled(db, *id, enabled, &bench, crate::clock::now()).await?;
        }
        Ok(())
    }

    /// Waits until none of the load's runs is still to run (a minute at most).
    async fn drain(&self, db: &DatabaseConnection) -> anyhow::Result<()> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        loop {
            let open = job_run::Entity::find()
                .filter(job_run::Column::JobId.is_in(self.all.clone()))
                .filter(job_run::Column::Status.is_in(RunStatus::ACTIVE.iter().copied()))
                .count(db)
                .await?;
            if open == 0 {
                return Ok(());
            }
            anyhow::ensure!(
                tokio::time::Instant::now() < deadline,
                "{open} runs still open a minute after the load stopped"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    async fn count(
        &self,
        db: &DatabaseConnection,
        effects: &std::path::Path,
        started: DateTime<Utc>,
        rss: Vec<Rss>,
    ) -> anyhow::Result<Soak> {
        let runs: Vec<(i64, RunStatus)> = job_run::Entity::find()
            .select_only()
            .column(job_run::Column::Id)
            .column(job_run::Column::Status)
            .filter(job_run::Column::JobId.is_in(self.all.clone()))
            .into_tuple()
            .all(db)
            .await?;
        let with = |status: RunStatus| runs.iter().filter(|(_, s)| *s == status).count() as u64;
        let interrupted = job_attempt::Entity::find()
            .inner_join(job_run::Entity)
            .filter(job_run::Column::JobId.is_in(self.all.clone()))
            .filter(job_attempt::Column::Outcome.eq(Outcome::Interrupted))
            .count(db)
            .await?;
        let text = std::fs::read_to_string(effects).unwrap_or_default();
        let mut done: HashMap<i64, u64> = HashMap::new();
        for id in text.lines().filter_map(|l| l.trim().parse().ok()) {
            *done.entry(id).or_default() += 1;
        }
        let lost = runs
            .iter()
            .filter(|(id, s)| *s == RunStatus::Succeeded && !done.contains_key(id))
            .count() as u64;
        let odd: Vec<Option<String>> = job_attempt::Entity::find()
            .select_only()
            .column(job_attempt::Column::OutputTail)
            .inner_join(job_run::Entity)
            .filter(job_run::Column::JobId.eq(self.odd))
            .filter(job_attempt::Column::Outcome.eq(Outcome::Succeeded))
            .into_tuple()
            .all(db)
            .await?;
        Ok(Soak {
            settled: with(RunStatus::Succeeded) + with(RunStatus::Dead),
            succeeded: with(RunStatus::Succeeded),
            dead: with(RunStatus::Dead),
            skipped: with(RunStatus::Skipped),
            interrupted,
            duplicated: done.values().map(|n| n - 1).sum(),
            lost,
            rss_start_mb: rss.first().map_or(0.0, |s| s.total),
            rss_end_mb: rss.last().map_or(0.0, |s| s.total),
            rss_slope_mb_per_10min: slope(&rss.iter().map(|s| (s.at, s.total)).collect::<Vec<_>>()),
            rss_anon_end_mb: rss.last().map_or(0.0, |s| s.anon),
            rss_anon_slope_mb_per_10min: slope(
                &rss.iter().map(|s| (s.at, s.anon)).collect::<Vec<_>>(),
            ),
            tick_lateness_p99_ms: self.lateness_per_minute(db, started).await?,
            odd_output_kept: !odd.is_empty()
                && odd.iter().all(|o| o.as_deref() == Some(ODD_STORED)),
        })
    }

    /// Each minute's every-second ticks: first attempt's start minus the tick, the p99.
    async fn lateness_per_minute(
        &self,
        db: &DatabaseConnection,
        started: DateTime<Utc>,
    ) -> anyhow::Result<Vec<f64>> {
        let rows: Vec<(DateTime<Utc>, DateTime<Utc>)> = job_attempt::Entity::find()
            .select_only()
            .column(job_run::Column::ScheduledFor)
            .column(job_attempt::Column::StartedAt)
            .inner_join(job_run::Entity)
            .filter(job_run::Column::JobId.is_in(self.every_second.clone()))
            .filter(job_run::Column::Trigger.eq(Trigger::Cron))
            .filter(job_attempt::Column::Number.eq(1))
            .into_tuple()
            .all(db)
            .await?;
        let mut minutes: Vec<Vec<f64>> = Vec::new();
        for (tick, start) in rows {
            let minute = (tick - started).num_minutes().max(0) as usize;
            if minutes.len() <= minute {
                minutes.resize(minute + 1, Vec::new());
            }
            minutes[minute].push(ms(start - tick));
        }
        Ok(minutes.into_iter().map(|m| Lateness::of(m).p99).collect())
    }
}

async fn command_job(
    db: &DatabaseConnection,
    name: &str,
    cron: &str,
    script: &str,
) -> anyhow::Result<i64> {
    let mut input = JobInput {
        name: name.into(),
        kind: "command".into(),
        command_program: "sh".into(),
        command_args: format!("-c\n{script}"),
        cron: cron.into(),
        overlap: Overlap::Queue.as_str().into(),
        enabled: false,
        timeout_static: "1m".into(),
        ..JobInput::default()
    };
    input.retry.first = "200ms".into();
    input.retry.max_retries = "3".into();
    input.retry.jitter = Jitter::None.as_str().into();
    let spec = JobSpec::parse(&input).map_err(|e| anyhow::anyhow!("soak job invalid: {e:?}"))?;
    Ok(jobs::create(db, &spec, crate::clock::now()).await?.id)
}

/// One sample of the nodes' resident memory, summed: minutes since the start, megabytes in
/// all (`VmRSS`) and of it anonymous (`RssAnon`).
struct Rss {
    at: f64,
    total: f64,
    anon: f64,
}

/// The nodes' memory every ten seconds (and at both ends) for `span`.
async fn sample_rss(nodes: &[Instance], span: Duration) -> Vec<Rss> {
    let start = tokio::time::Instant::now();
    let mut samples = Vec::new();
    loop {
        let at = start.elapsed();
        let read = |field| -> f64 {
            nodes
                .iter()
                .filter_map(|n| n.pid())
                .filter_map(|pid| status_mb(pid, field))
                .sum()
        };
        samples.push(Rss {
            at: at.as_secs_f64() / 60.0,
            total: read("VmRSS:"),
            anon: read("RssAnon:"),
        });
        if at >= span {
            return samples;
        }
        tokio::time::sleep((span - at).min(Duration::from_secs(10))).await;
    }
}

/// One `kB` field of `/proc/PID/status`, in megabytes.
fn status_mb(pid: u32, field: &str) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix(field))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb / 1024.0)
}

fn slope(samples: &[(f64, f64)]) -> Option<f64> {
    let warm: Vec<&(f64, f64)> = samples.iter().filter(|(t, _)| *t >= 1.0).collect();
    if warm.len() < 3 {
        return None;
    }
    let n = warm.len() as f64;
    let (mt, mm) = (
        warm.iter().map(|s| s.0).sum::<f64>() / n,
        warm.iter().map(|s| s.1).sum::<f64>() / n,
    );
    let cov: f64 = warm.iter().map(|(t, m)| (t - mt) * (m - mm)).sum();
    let var: f64 = warm.iter().map(|(t, _)| (t - mt).powi(2)).sum();
    (var > 0.0).then(|| cov / var * 10.0)
}

#[cfg(test)]
mod tests {
    use super::slope;

    #[test]
    fn memory_slope_ignores_the_first_minute() {
        let flat: Vec<(f64, f64)> = (0..20)
            .map(|i| (i as f64 / 6.0, if i < 6 { 50.0 + i as f64 } else { 80.0 }))
            .collect();
        assert_eq!(slope(&flat), Some(0.0));
        let growing: Vec<(f64, f64)> = (6..30).map(|i| (i as f64 / 6.0, i as f64 / 6.0)).collect();
        assert!((slope(&growing).unwrap() - 10.0).abs() < 1e-9);
        assert_eq!(slope(&[(0.0, 1.0), (0.5, 2.0)]), None);
    }
}
