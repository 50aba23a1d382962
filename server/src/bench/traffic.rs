//! `bulwark bench traffic`: what counting costs on the request path, and how long a flush of
//! many buffered hits takes on SQLite and PostgreSQL. `--write-log` writes the synthetic access
//! log that `make bench-traffic` feeds to `traffic import` and to GoAccess.

use std::io::Write;
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use chrono::Utc;
use http::HeaderMap;

use super::{ThrowawayPostgres, throwaway_sqlite};
use crate::traffic::store::{self, IpPrivacy};
use crate::traffic::synthetic::Synthetic;
use crate::traffic::{Recorder, TrafficSettings};

#[derive(Debug, clap::Args)]
pub struct TrafficBenchArgs {
    /// Hits buffered, then flushed, for the flush figure.
    #[arg(long, default_value_t = 1_000_000)]
    hits: usize,
    /// Calls timed for the recording figure.
    #[arg(long, default_value_t = 1_000_000)]
    calls: usize,
    /// A PostgreSQL server URL (its database is used only to create `bulwark_bench`).
    #[arg(long, env = "BULWARK_TEST_POSTGRES_URL")]
    postgres: Option<String>,
    /// Only write a synthetic combined access log to FILE and exit.
    #[arg(long, value_name = "FILE")]
    write_log: Option<PathBuf>,
    /// Lines of that log.
    #[arg(long, default_value_t = 1_000_000)]
    lines: usize,
}

pub async fn traffic(args: &TrafficBenchArgs) -> anyhow::Result<()> {
    if let Some(file) = &args.write_log {
        return write_log(file, args.lines);
    }
    layer_overhead(args.calls).await;
    recording(args.calls);
    let floor = throwaway_sqlite("traffic-floor");
    let sqlite = throwaway_sqlite("traffic");
    let result = flush_suite("SQLite", &floor.url, &sqlite.url, args.hits).await;
    drop((floor, sqlite));
    result?;
    match &args.postgres {
        Some(base) => {
            let floor = ThrowawayPostgres::create_named(base, "bulwark_bench_floor").await?;
            let db = ThrowawayPostgres::create(base).await?;
            flush_suite("PostgreSQL", &floor.url, &db.url, args.hits).await?;
            floor.drop_database().await?;
            db.drop_database().await
        }
        None => {
            println!("PostgreSQL: skipped (pass --postgres URL or set BULWARK_TEST_POSTGRES_URL)");
            Ok(())
        }
    }
}

fn write_log(file: &PathBuf, lines: usize) -> anyhow::Result<()> {
    let out =
        std::fs::File::create(file).with_context(|| format!("cannot create {}", file.display()))?;
    let mut out = std::io::BufWriter::new(out);
    let mut synthetic = Synthetic::new(7);
    let start = Utc::now() - chrono::Duration::days(1);
    for _ in 0..lines {
        let request = synthetic.request(start, 86_400);
        out.write_all(synthetic.log_line(&request).as_bytes())?;
    }
    out.flush()?;
    println!("wrote {lines} lines to {}", file.display());
    Ok(())
}

/// A few thousand distinct visitors, as a busy minute has.
fn sample_requests() -> Vec<(String, HeaderMap, IpAddr)> {
    let mut synthetic = Synthetic::new(1);
    let now = Utc::now();
    (0..4096)
        .map(|_| {
            let r = synthetic.request(now, 60);
            let mut headers = HeaderMap::new();
            if let Ok(ua) = r.user_agent.parse() {
                headers.insert(http::header::USER_AGENT, ua);
            }
            if let Ok(lang) = r.accept_language.parse() {
                headers.insert(http::header::ACCEPT_LANGUAGE, lang);
            }
            let ip = r.ip.parse().unwrap_or(IpAddr::from([127, 0, 0, 1]));
            (r.path, headers, ip)
        })
        .collect()
}

/// The layer's own work per request (rules, classification is deferred to the flush, one map
/// update), for a page view and for an excluded asset.
fn recording(calls: usize) {
    let recorder = Recorder::new(TrafficSettings {
        buffer_bytes: 1 << 30,
        ..TrafficSettings::default()
    });
    let requests = sample_requests();
    for (label, asset) in [("page view", false), ("excluded asset", true)] {
        let started = Instant::now();
        for i in 0..calls {
            let (path, headers, ip) = &requests[i % requests.len()];
            let path = if asset {
                "/static/app.css"
            } else {
                path.as_str()
            };
            let _ = recorder.observe("GET", path, headers, Some(*ip));
        }
        let per_call = started.elapsed().as_nanos() as f64 / calls as f64;
        println!("record, {label:<15} {per_call:>8.0} ns per request ({calls} calls)");
    }
}

/// The layer's added latency: the same trivial service called with and without it, in turns,
/// so both see the same machine.
async fn layer_overhead(calls: usize) {
    use tower::{Layer, Service};
    let requests = sample_requests();
    let recorder = std::sync::Arc::new(Recorder::new(TrafficSettings {
        buffer_bytes: 1 << 30,
        ..TrafficSettings::default()
    }));
    let handler = tower::service_fn(|_request: http::Request<()>| async {
        Ok::<_, std::convert::Infallible>(http::Response::new(()))
    });
    let mut plain = handler;
    let mut layered = crate::traffic::layer::TrafficLayer::new(recorder).layer(handler);
    let build = |i: usize| {
        let (path, headers, ip) = &requests[i % requests.len()];
        let mut request = http::Request::get(path.as_str())
            .body(())
            .unwrap_or_default();
        *request.headers_mut() = headers.clone();
        request
            .extensions_mut()
            .insert(axum::extract::ConnectInfo(std::net::SocketAddr::new(
                *ip, 50_000,
            )));
        request
    };
    let (mut without, mut with) = (std::time::Duration::ZERO, std::time::Duration::ZERO);
    {
        for round in 0..10 {
            let requests: Vec<_> = (0..calls / 10).map(|i| build(i + round)).collect();
            let started = Instant::now();
            for request in requests.clone() {
                let _ = plain.call(request).await;
            }
            without += started.elapsed();
            let started = Instant::now();
            for request in requests {
                let _ = layered.call(request).await;
            }
            with += started.elapsed();
        }
    }
    let per = |d: std::time::Duration| d.as_nanos() as f64 / calls as f64;
    println!(
        "layer: a trivial service takes {:.0} ns per request without the layer, {:.0} ns with it: {:.0} ns added",
        per(without),
        per(with),
        per(with) - per(without)
    );
}

/// Buffers `hits` synthetic page views spread over the hour from `start` (the same ones for the
/// same arguments: the generator is seeded).
fn fill(recorder: &Recorder, hits: usize, start: chrono::DateTime<Utc>) {
    let mut synthetic = Synthetic::new(2);
    for _ in 0..hits {
        let r = synthetic.request(start, 3600);
        let (hit, cut) = crate::traffic::hit::Hit::new(
            r.at.timestamp(),
            "GET",
            &r.path,
            &r.ip,
            r.user_agent,
            r.referer,
            String::new(),
        );
        recorder.buffer.record(hit, 1, cut);
    }
}

/// The floor a flush is measured against: the same rows, built as a flush builds them, put
/// into the same empty, indexed `traffic_statistics` by plain multi-row INSERTs (as many rows
/// per statement and per transaction as a flush), with no conflict handling and no rollups.
/// Only the inserting is timed.
async fn floor(url: &str, recorder: &Recorder) -> anyhow::Result<std::time::Duration> {
    use app::entities::traffic_statistic::Entity;
    use sea_orm::{EntityTrait, TransactionTrait};
    let db = crate::db::connect(url).await?;
    crate::db::migrate(&db).await?;
    let mut entries: Vec<_> = recorder.buffer.take().into_iter().collect();
    entries.sort_unstable_by_key(|(hit, _)| hit.minute);
    let mut agents = store::Agents::default();
    let rows: Vec<_> = entries
        .iter()
        .filter_map(|(hit, n)| store::to_row(hit, *n, &store::IpHasher::Raw, &mut agents))
        .collect();
    let started = Instant::now();
    let mut rows = rows.into_iter().peekable();
    while rows.peek().is_some() {
        let txn = db.begin().await?;
        for _ in 0..store::STATEMENTS_PER_TRANSACTION {
            let statement: Vec<_> = rows.by_ref().take(store::ROWS_PER_STATEMENT).collect();
            if statement.is_empty() {
                break;
            }
            Entity::insert_many(statement)
                .exec_without_returning(&txn)
                .await?;
        }
        txn.commit().await?;
    }
    let took = started.elapsed();
    db.close().await.ok();
    Ok(took)
}

async fn flush_suite(label: &str, floor_url: &str, url: &str, hits: usize) -> anyhow::Result<()> {
    let recorder = Recorder::new(TrafficSettings {
        buffer_bytes: 2 << 30,
        ..TrafficSettings::default()
    });
    let start = Utc::now() - chrono::Duration::hours(1);
    fill(&recorder, hits, start);
    let keys = recorder.buffer.stats().keys;
    let bare = floor(floor_url, &recorder).await?;
    println!(
        "{label}: floor, a bare multi-row INSERT of the same {keys} rows into the same empty indexed table: {:.2} s ({:.0} rows/s)",
        bare.as_secs_f64(),
        keys as f64 / bare.as_secs_f64().max(1e-3)
    );
    let db = crate::db::connect(url).await?;
    crate::db::migrate(&db).await?;
    fill(&recorder, hits, start);
    let report = store::flush(&db, &recorder.buffer, IpPrivacy::Raw).await?;
    let seconds = report.millis as f64 / 1000.0;
    println!(
        "{label}: flush of {hits} buffered hits ({keys} distinct keys) into an empty table: {seconds:.2} s ({:.0} rows/s), {:.2}× the floor",
        report.rows as f64 / seconds.max(1e-3),
        seconds / bare.as_secs_f64().max(1e-3)
    );
    // The same keys again: every row is a conflict that adds to its count.
    fill(&recorder, hits, start);
    let report = store::flush(&db, &recorder.buffer, IpPrivacy::Raw).await?;
    println!(
        "{label}: flush of the same {hits} hits again (every row adds to an existing one): {:.2} s",
        report.millis as f64 / 1000.0
    );
    db.close().await.ok();
    Ok(())
}
