//! `bulwark bench …`: the benchmarks other tools run (`docs/PERFORMANCE.md` says what each
//! measures). This file is `bench queue` and what they all share: the throwaway databases they
//! work on (never the configured one), the `bulwark serve` instances they start, and lateness
//! figures. The engine's are `engine.rs`, `soak.rs` and `shapes.rs`; the rest, `traffic.rs`,
//! `dashboard.rs`, `bots.rs` and `logs.rs`.

pub mod bots;
pub mod dashboard;
pub mod engine;
pub mod logs;
pub mod shapes;
pub mod soak;
pub mod traffic;

use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::Context;
use app::domain::job::{JobInput, JobSpec};
use app::domain::retry::Jitter;
use app::domain::run::RunStatus;
use app::entities::job_run;
use app::services::jobs;
use chrono::Utc;
use sea_orm::{ConnectionTrait, DatabaseConnection};
use serde::Serialize;
use tokio::io::{AsyncBufReadExt, BufReader};

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

/// The database a benchmark round runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Backend {
    Sqlite,
    Postgres,
}

/// A fresh database for one round, dropped with it.
pub(crate) enum Fresh {
    Sqlite(ThrowawaySqlite),
    Postgres(ThrowawayPostgres),
}

impl Fresh {
    /// For benchmark `bench` (it names the files and databases), round `round`; `postgres`:
    /// the server a PostgreSQL round makes its database on.
    pub(crate) async fn create(
        backend: Backend,
        postgres: Option<&str>,
        bench: &str,
        round: &str,
    ) -> anyhow::Result<Self> {
        Ok(match backend {
            Backend::Sqlite => Fresh::Sqlite(throwaway_sqlite(&format!("{bench}-{round}"))),
            Backend::Postgres => {
                let base = postgres.context("no PostgreSQL URL")?;
                Fresh::Postgres(
                    ThrowawayPostgres::create_named(base, &format!("bulwark_bench_{bench}"))
                        .await?,
                )
            }
        })
    }

    pub(crate) fn url(&self) -> &str {
        match self {
            Fresh::Sqlite(db) => &db.url,
            Fresh::Postgres(db) => &db.url,
        }
    }

    pub(crate) async fn drop_database(self) -> anyhow::Result<()> {
        match self {
            Fresh::Sqlite(db) => drop(db),
            Fresh::Postgres(db) => db.drop_database().await?,
        }
        Ok(())
    }
}

/// A `bulwark serve` of this executable, on a free port, over `url`.
pub(crate) struct Instance {
    child: tokio::process::Child,
}

impl Instance {
    /// `env`: settings beyond the database and the address (`BULWARK_LEASE_SECONDS`, say).
    pub(crate) async fn start(
        url: &str,
        name: &str,
        logs: &std::path::Path,
        env: &[(&str, String)],
    ) -> anyhow::Result<Instance> {
        let exe = std::env::current_exe().context("cannot find the bulwark executable")?;
        let log = std::fs::File::create(logs.join(format!("{name}.log")))
            .context("cannot create the instance's log file")?;
        let mut child = tokio::process::Command::new(exe)
            .arg("serve")
            .current_dir(logs)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("DATABASE_URL", url)
            .env("BULWARK_ADDR", "127.0.0.1:0")
            .env("BULWARK_NODE_ID", name)
            .env("BULWARK_ADMIN_PASSWORD", "bench-only-password")
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .context("cannot start bulwark serve")?;
        let stdout = child.stdout.take().context("the instance's stdout")?;
        let mut lines = BufReader::new(stdout).lines();
        let ready = tokio::time::timeout(Duration::from_secs(60), async {
            while let Some(line) = lines.next_line().await? {
                if line.contains("serving on http://") {
                    return Ok(());
                }
            }
            anyhow::bail!(
                "bulwark serve exited before it served (see {})",
                logs.display()
            )
        })
        .await
        .context("bulwark serve did not start within a minute")?;
        ready?;
        // Keep reading so the instance never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Ok(Instance { child })
    }

    /// The process's id, while it runs.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    pub(crate) async fn stop(mut self) -> anyhow::Result<()> {
        if let Some(pid) = self.child.id() {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::Signal::SIGTERM,
            );
        }
        match tokio::time::timeout(Duration::from_secs(60), self.child.wait()).await {
            Ok(status) => {
                status.context("waiting for an instance")?;
            }
            Err(_) => self
                .child
                .kill()
                .await
                .context("killing a stuck instance")?,
        }
        Ok(())
    }
}

/// Milliseconds late: the median, the 99th percentile and the worst, over `n` samples.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Lateness {
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
    pub n: usize,
}

impl Lateness {
    pub(crate) fn of(mut samples: Vec<f64>) -> Lateness {
        samples.sort_by(f64::total_cmp);
        let at = |q: f64| {
            if samples.is_empty() {
                return f64::NAN;
            }
            let rank = ((q * samples.len() as f64).ceil() as usize).clamp(1, samples.len());
            (samples[rank - 1] * 10.0).round() / 10.0
        };
        Lateness {
            p50: at(0.5),
            p99: at(0.99),
            max: at(1.0),
            n: samples.len(),
        }
    }
}

impl std::fmt::Display for Lateness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms over {}",
            self.p50, self.p99, self.max, self.n
        )
    }
}

/// A duration in milliseconds, to the microsecond.
pub(crate) fn ms(d: chrono::Duration) -> f64 {
    d.num_microseconds().unwrap_or(0) as f64 / 1000.0
}

/// A directory for the instances' logs; the caller removes it when the round succeeded, so
/// a failed round's logs stay for reading.
pub(crate) fn logs_dir(round: &str) -> anyhow::Result<std::path::PathBuf> {
    let path = std::env::temp_dir().join(format!(
        "bulwark-bench-{round}-{}-{}",
        std::process::id(),
        Utc::now().timestamp_millis()
    ));
    std::fs::create_dir_all(&path).context("cannot create a log directory")?;
    Ok(path)
}
