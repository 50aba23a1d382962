//! `bulwark bench logs`: what keeping every attempt's whole output costs and how fast it is
//! read (`docs/PERFORMANCE.md`, "Run logs"), on SQLite and PostgreSQL:
//!
//! - storing a 15 MB log (2,000,000 numbered lines) through the engine's log writer, and —
//!   for the choice of where logs live — writing the same compressed chunks as files;
//! - the first screen of that log (its last 200 lines), a jump to line 1,500,000, and reading
//!   it whole;
//! - a search over `--runs` stored runs (2,000 lines each): a text one run holds, and one every
//!   run holds (stopping at 100 lines);
//! - resident memory while a job prints `--print-mb` (1 GB by default) into a log capped at
//!   10 MiB.

use std::time::{Duration, Instant};

use app::services::run_logs::{self, Owner, SearchFilter};
use app::views::run_logs::Anchor;
use sea_orm::{ActiveModelTrait, ActiveValue::Set, DatabaseConnection};
use serde::Serialize;
use tokio::io::AsyncReadExt;

use super::{ThrowawayPostgres, define, throwaway_sqlite};
use crate::engine::run_log;

#[derive(Debug, clap::Args)]
pub struct LogsBenchArgs {
    /// Stored runs the search goes over.
    #[arg(long, default_value_t = 1000)]
    runs: u32,
    /// What the job in the memory measure prints, in MB.
    #[arg(long, default_value_t = 1000)]
    print_mb: u64,
    /// Times each read this many times (fastest and slowest printed).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=100))]
    rounds: u32,
    #[arg(long)]
    skip_sqlite: bool,
    /// A PostgreSQL server URL (its database is used only to create `bulwark_bench_logs`).
    #[arg(long, env = "BULWARK_TEST_POSTGRES_URL")]
    postgres: Option<String>,
    #[arg(long)]
    json: bool,
}

/// One database's figures; times in milliseconds, `[fastest, slowest]` where timed in rounds.
#[derive(Debug, Default, Serialize)]
struct Figures {
    store_15mb_ms: f64,
    stored_mb: f64,
    files_15mb_ms: f64,
    first_screen_ms: [f64; 2],
    jump_ms: [f64; 2],
    read_all_ms: [f64; 2],
    search_runs: u32,
    search_one_run_ms: [f64; 2],
    search_every_run_ms: [f64; 2],
    print_mb: u64,
    print_ms: f64,
    rss_before_mb: f64,
    rss_peak_mb: f64,
}

pub async fn logs(args: &LogsBenchArgs) -> anyhow::Result<()> {
    let mut all = serde_json::Map::new();
    if !args.skip_sqlite {
        let sqlite = throwaway_sqlite("logs");
        let figures = suite(&sqlite.url, args).await?;
        report("SQLite", &figures, args.json);
        all.insert("sqlite".into(), serde_json::to_value(&figures)?);
    }
    match &args.postgres {
        Some(base) => {
            let db = ThrowawayPostgres::create_named(base, "bulwark_bench_logs").await?;
            let figures = suite(&db.url, args).await;
            db.drop_database().await?;
            let figures = figures?;
            report("PostgreSQL", &figures, args.json);
            all.insert("postgres".into(), serde_json::to_value(&figures)?);
        }
        None if !args.json => {
            println!("PostgreSQL: skipped (pass --postgres URL or set BULWARK_TEST_POSTGRES_URL)");
        }
        None => {}
    }
    if args.json {
        println!("{}", serde_json::Value::Object(all));
    }
    Ok(())
}

async fn suite(url: &str, args: &LogsBenchArgs) -> anyhow::Result<Figures> {
    let db = crate::db::connect(url).await?;
    crate::db::migrate(&db).await?;
    let job = define(&db, "log-bench", |_| {}).await?;
    let mut f = Figures::default();
    let big = owner(&db, job).await?;
    let text: Vec<u8> = numbered(2_000_000);
    let started = Instant::now();
    write_log(&db, big, 50 << 20, &text).await;
    f.store_15mb_ms = ms(started.elapsed());
    f.stored_mb = stored_mb(&db, big).await?;
    f.files_15mb_ms = as_files(&text)?;
    let rounds = args.rounds;
    f.first_screen_ms = timed(rounds, || screen(&db, big.run_id, Anchor::End)).await?;
    f.jump_ms = timed(rounds, || screen(&db, big.run_id, Anchor::From(1_500_000))).await?;
    f.read_all_ms = timed(rounds, || read_all(&db, big.attempt_id)).await?;
    f.search_runs = args.runs;
    for i in 0..args.runs {
        let small = owner(&db, job).await?;
        let lines: Vec<u8> = (0..2_000)
            .flat_map(|n| format!("run {i} step {n} order-{} ok\n", i * 10_000 + n).into_bytes())
            .collect();
        write_log(&db, small, 10 << 20, &lines).await;
    }
    let rare = format!("order-{}", (args.runs * 7 / 10) * 10_000 + 1_234);
    f.search_one_run_ms = timed(rounds, || search(&db, &rare)).await?;
    f.search_every_run_ms = timed(rounds, || search(&db, "step 1999 order")).await?;
    (f.print_mb, f.print_ms, f.rss_before_mb, f.rss_peak_mb) =
        print_a_lot(&db, job, args.print_mb).await?;
    Ok(f)
}

/// A run with one attempt, whose log the bench writes.
async fn owner(db: &DatabaseConnection, job: i64) -> anyhow::Result<Owner> {
    let now = crate::clock::now();
    let run = app::services::runs::create_manual(db, job, now).await?;
    let attempt = app::entities::job_attempt::ActiveModel {
        run_id: Set(run.id),
        number: Set(1),
        started_at: Set(now),
        finished_at: Set(Some(now)),
        timeout_ms: Set(60_000),
        node: Set("bench".into()),
        slow: Set(false),
        spent_retry: Set(true),
        ..Default::default()
    }
    .insert(db)
    .await?;
    Ok(Owner {
        run_id: run.id,
        attempt_id: attempt.id,
    })
}

fn numbered(lines: u64) -> Vec<u8> {
    (1..=lines)
        .flat_map(|i| format!("{i}\n").into_bytes())
        .collect()
}

/// `bytes` through the engine's writer, in pieces as a pipe gives them.
async fn write_log(db: &DatabaseConnection, owner: Owner, max: u64, bytes: &[u8]) {
    let (writer, sink) = run_log::start(db.clone(), owner, max, &[]);
    for piece in bytes.chunks(64 * 1024) {
        sink.send(app::domain::run_log::Stream::Stdout, piece).await;
    }
    drop(sink);
    writer.finish().await;
}

async fn stored_mb(db: &DatabaseConnection, owner: Owner) -> anyhow::Result<f64> {
    use sea_orm::ConnectionTrait;
    let backend = db.get_database_backend();
    let sql = format!(
        "SELECT CAST(SUM(LENGTH(data) + LENGTH(lines)) AS BIGINT) AS n FROM run_log_chunks \
         WHERE attempt_id = {}",
        owner.attempt_id
    );
    let row = db
        .query_one_raw(sea_orm::Statement::from_string(backend, sql))
        .await?;
    let bytes: i64 = row.map(|r| r.try_get("", "n")).transpose()?.unwrap_or(0);
    Ok(bytes as f64 / 1e6)
}

/// The same log as compressed chunk files in a temporary directory (what storing logs
/// beside the database would cost).
fn as_files(text: &[u8]) -> anyhow::Result<f64> {
    let dir = std::env::temp_dir().join(format!("bulwark-bench-logs-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let started = Instant::now();
    for (i, piece) in text.chunks(run_logs::CHUNK_BYTES).enumerate() {
        let chunk = run_logs::NewChunk {
            bytes: piece.to_vec(),
            ..Default::default()
        };
        std::fs::write(dir.join(format!("{i}.zst")), run_logs::pack(&chunk)?.data)?;
    }
    let took = ms(started.elapsed());
    std::fs::remove_dir_all(&dir)?;
    Ok(took)
}

async fn screen(db: &DatabaseConnection, run: i64, anchor: Anchor) -> anyhow::Result<()> {
    let page = run_logs::page(db, run, None, anchor, 200, None).await?;
    anyhow::ensure!(
        page.is_some_and(|p| p.lines.len() == 200),
        "a screen of 200 lines"
    );
    Ok(())
}

async fn read_all(db: &DatabaseConnection, attempt_id: i64) -> anyhow::Result<()> {
    let mut bytes = 0;
    for placed in run_logs::placed(db, attempt_id, -1).await? {
        bytes += run_logs::chunk(db, placed.id)
            .await?
            .map_or(0, |c| c.bytes.len());
    }
    anyhow::ensure!(bytes > 10_000_000, "the whole log read");
    Ok(())
}

async fn search(db: &DatabaseConnection, text: &str) -> anyhow::Result<()> {
    let filter = SearchFilter {
        text: text.into(),
        limit: 100,
        ..SearchFilter::default()
    };
    let found = run_logs::search(db, &filter).await?;
    anyhow::ensure!(!found.is_empty(), "{text} is found");
    Ok(())
}

/// A job printing `mb` megabytes into a log capped at 10 MiB: its time, and this process's
/// resident memory before and at its peak (`VmHWM`, reset first).
async fn print_a_lot(
    db: &DatabaseConnection,
    job: i64,
    mb: u64,
) -> anyhow::Result<(u64, f64, f64, f64)> {
    let owner = owner(db, job).await?;
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let before = own_mb("VmRSS:");
    let started = Instant::now();
    let script =
        format!("yes 'a line of output from a chatty job 0123456789' | head -c {mb}000000");
    let mut child = tokio::process::Command::new("sh")
        .args(["-c", &script])
        .stdout(std::process::Stdio::piped())
        .spawn()?;
    let mut out = child
        .stdout
        .take()
        .ok_or_else(|| anyhow::anyhow!("no stdout"))?;
    let (writer, sink) = run_log::start(db.clone(), owner, 10 << 20, &[]);
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = out.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        sink.send(app::domain::run_log::Stream::Stdout, &buf[..n])
            .await;
    }
    drop(sink);
    writer.finish().await;
    child.wait().await?;
    Ok((mb, ms(started.elapsed()), before, own_mb("VmHWM:")))
}

fn own_mb(field: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix(field))
                .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 10_000.0).round() / 10.0
}

async fn timed<F, Fut>(rounds: u32, mut f: F) -> anyhow::Result<[f64; 2]>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<()>>,
{
    let (mut fastest, mut slowest) = (f64::MAX, 0.0f64);
    for _ in 0..rounds {
        let started = Instant::now();
        f().await?;
        let took = ms(started.elapsed());
        fastest = fastest.min(took);
        slowest = slowest.max(took);
    }
    Ok([fastest, slowest])
}

fn report(label: &str, f: &Figures, json: bool) {
    if json {
        return;
    }
    println!("{label}");
    println!(
        "  store a 15 MB log (2,000,000 lines): {} ms, {:.1} MB stored; as chunk files: {} ms",
        f.store_15mb_ms, f.stored_mb, f.files_15mb_ms
    );
    let range = |r: [f64; 2]| format!("{}–{} ms", r[0], r[1]);
    println!("  first screen: {}", range(f.first_screen_ms));
    println!("  jump to line 1,500,000: {}", range(f.jump_ms));
    println!("  read it whole: {}", range(f.read_all_ms));
    println!(
        "  search over {} runs: one run's text {}, every run's {}",
        f.search_runs,
        range(f.search_one_run_ms),
        range(f.search_every_run_ms)
    );
    println!(
        "  a job printing {} MB (cap 10 MiB): {} ms; resident memory {:.0} MB before, {:.0} MB at the peak",
        f.print_mb, f.print_ms, f.rss_before_mb, f.rss_peak_mb
    );
}
