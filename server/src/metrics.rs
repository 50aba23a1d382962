//! `GET /metrics` in the Prometheus text format (the `prometheus-client` crate), names prefixed
//! `bulwark_`.
//!
//! Two kinds of series:
//! - node-local ones (runs finished, attempts, durations, lateness, lease takeovers, the
//!   traffic buffer), counted by this process since it started and labelled `node`: sum them
//!   across nodes;
//! - database-wide gauges (runs due and running, the failed queue, the outboxes, nodes'
//!   heartbeat age), read from the database at each scrape and the same on every node: take
//!   `max`, not `sum`, across nodes (the Grafana board in `docs/grafana/` does).
//!
//! The engine reports through [`attempt_settled`] and [`took_over`]; the traffic flusher
//! through [`flushed`]. This module only counts and renders; `GET /metrics` itself, and who
//! may scrape it, is the web's (`server/src/web/metrics.rs`).

use std::sync::{LazyLock, OnceLock};

use app::domain::run::{ErrorClass, Outcome, RunStatus};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use sea_orm::{DatabaseConnection, DbErr};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct NodeLabels {
    node: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RunLabels {
    node: String,
    job: String,
    status: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct AttemptLabels {
    node: String,
    outcome: String,
    class: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct JobLabels {
    node: String,
    job: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LatenessLabels {
    node: String,
    /// `tick` (a cron tick's first attempt) or `retry`.
    kind: String,
}

fn duration_buckets() -> Histogram {
    // 10 ms to about 45 min.
    Histogram::new(exponential_buckets(0.01, 2.5, 14))
}

fn lateness_buckets() -> Histogram {
    // 1 ms to about 65 s.
    Histogram::new(exponential_buckets(0.001, 2.0, 17))
}

/// What this process has counted since it started.
struct Local {
    runs_finished: Family<RunLabels, Counter>,
    attempts: Family<AttemptLabels, Counter>,
    attempt_seconds: Family<JobLabels, Histogram, fn() -> Histogram>,
    lateness_seconds: Family<LatenessLabels, Histogram, fn() -> Histogram>,
    lease_takeovers: Family<NodeLabels, Counter>,
    flush_seconds: Family<NodeLabels, Histogram, fn() -> Histogram>,
}

static LOCAL: LazyLock<Local> = LazyLock::new(|| Local {
    runs_finished: Family::default(),
    attempts: Family::default(),
    attempt_seconds: Family::new_with_constructor(duration_buckets),
    lateness_seconds: Family::new_with_constructor(lateness_buckets),
    lease_takeovers: Family::default(),
    flush_seconds: Family::new_with_constructor(lateness_buckets),
});

static NODE: OnceLock<String> = OnceLock::new();

/// Names this process's series (`node` label); called once at start.
pub fn set_node(node_id: &str) {
    let _ = NODE.set(node_id.to_string());
    // Series without a job label exist from the start, at zero, so a board shows 0, not "no
    // data", on a node that has not taken over or flushed anything yet.
    let node = NodeLabels { node: node() };
    let _ = LOCAL.lease_takeovers.get_or_create(&node);
    let _ = LOCAL.flush_seconds.get_or_create(&node);
}

fn node() -> String {
    NODE.get().cloned().unwrap_or_else(|| "unnamed".into())
}

/// This process's node id, as its series name it.
pub fn node_id() -> String {
    node()
}

/// One attempt the engine settled, as the series count it.
pub struct AttemptSettled<'a> {
    pub job: &'a str,
    pub outcome: Outcome,
    pub class: Option<ErrorClass>,
    pub seconds: f64,
    /// How late it started after it was due, and why it was due (`tick`, `retry`, `start`).
    pub lateness: Option<(&'static str, f64)>,
    /// The run's state when the attempt ended it.
    pub run_ended: Option<RunStatus>,
}

/// Counts a settled attempt: by outcome and class, its duration by job, how late it started,
/// and the run it ended by job and status.
pub fn attempt_settled(a: &AttemptSettled<'_>) {
    let node = node();
    LOCAL
        .attempts
        .get_or_create(&AttemptLabels {
            node: node.clone(),
            outcome: a.outcome.as_str().into(),
            class: a.class.map_or("", |c| c.as_str()).into(),
        })
        .inc();
    LOCAL
        .attempt_seconds
        .get_or_create(&JobLabels {
            node: node.clone(),
            job: a.job.to_string(),
        })
        .observe(a.seconds);
    if let Some((kind, late)) = a.lateness {
        LOCAL
            .lateness_seconds
            .get_or_create(&LatenessLabels {
                node: node.clone(),
                kind: kind.into(),
            })
            .observe(late);
    }
    if let Some(status) = a.run_ended {
        LOCAL
            .runs_finished
            .get_or_create(&RunLabels {
                node,
                job: a.job.to_string(),
                status: status.as_str().into(),
            })
            .inc();
    }
}

/// Counts a watched run a ping or the sweep ended, as any settled attempt is counted.
pub fn watched_ended(e: &app::services::watch::Ended) {
    attempt_settled(&AttemptSettled {
        job: &e.job,
        outcome: e.outcome,
        class: e.class,
        seconds: e.duration_ms.unwrap_or(0) as f64 / 1000.0,
        lateness: None,
        run_ended: Some(e.status),
    });
}

/// Counts runs this node took over from nodes whose lease expired.
pub fn took_over(runs: usize) {
    if runs > 0 {
        LOCAL
            .lease_takeovers
            .get_or_create(&NodeLabels { node: node() })
            .inc_by(runs as u64);
    }
}

/// Records a traffic flush's duration.
pub fn flushed(millis: u64) {
    LOCAL
        .flush_seconds
        .get_or_create(&NodeLabels { node: node() })
        .observe(millis as f64 / 1000.0);
}

/// The traffic buffer's figures since this process started (`crate::traffic::BufferStats`).
pub struct BufferFigures {
    pub bytes: usize,
    pub dropped: u64,
    pub limited: u64,
}

/// Every series, as of now.
pub async fn render(db: &DatabaseConnection, buffer: &BufferFigures) -> Result<String, DbErr> {
    let mut registry = Registry::with_prefix("bulwark");
    registry.register(
        "runs_finished",
        "Runs that ended, by job and status (node-local)",
        LOCAL.runs_finished.clone(),
    );
    registry.register(
        "attempts",
        "Attempts by outcome and error class (node-local)",
        LOCAL.attempts.clone(),
    );
    registry.register(
        "attempt_duration_seconds",
        "Attempt durations by job (node-local)",
        LOCAL.attempt_seconds.clone(),
    );
    registry.register(
        "start_lateness_seconds",
        "How long after it was due an attempt started: kind=tick (a cron tick's first attempt), retry, or start (another run's first attempt) (node-local)",
        LOCAL.lateness_seconds.clone(),
    );
    registry.register(
        "lease_takeovers",
        "Runs this node took over from a node whose lease expired (node-local)",
        LOCAL.lease_takeovers.clone(),
    );
    registry.register(
        "traffic_flush_duration_seconds",
        "Traffic buffer flushes (node-local)",
        LOCAL.flush_seconds.clone(),
    );

    // The buffer's totals since this process started, as this node's series.
    let stats = buffer;
    let this_node = || NodeLabels { node: node() };
    let buffer_bytes = Family::<NodeLabels, Gauge>::default();
    buffer_bytes
        .get_or_create(&this_node())
        .set(stats.bytes as i64);
    registry.register(
        "traffic_buffer_bytes",
        "Approximate bytes of traffic hits waiting for the next flush (node-local)",
        buffer_bytes,
    );
    for (name, help, total) in [
        (
            "traffic_dropped_hits",
            "Hits lost because the traffic buffer was full (node-local)",
            stats.dropped,
        ),
        (
            "traffic_limited_hits",
            "Hits not counted because their client was over its rate (node-local)",
            stats.limited,
        ),
    ] {
        let family = Family::<NodeLabels, Counter>::default();
        family.get_or_create(&this_node()).inc_by(total);
        registry.register(name, help, family);
    }

    database_gauges(db, &mut registry).await?;
    let mut text = String::new();
    prometheus_client::encoding::prometheus_text::encode(&mut text, &registry)
        .map_err(|e| DbErr::Custom(format!("could not encode the metrics: {e}")))?;
    Ok(text)
}

/// A database-wide gauge family: its name, help and series (labels → value).
fn gauge(
    registry: &mut Registry,
    name: &str,
    help: &str,
    series: impl IntoIterator<Item = (Vec<(String, String)>, i64)>,
) {
    let family = Family::<Vec<(String, String)>, Gauge>::default();
    for (labels, value) in series {
        family.get_or_create(&labels).set(value);
    }
    registry.register(name, help, family);
}

/// Each concurrency pool's size, runs running and runs waiting for a place.
async fn pool_gauges(
    db: &DatabaseConnection,
    now: chrono::DateTime<chrono::Utc>,
    registry: &mut Registry,
) -> Result<(), DbErr> {
    let pools = app::services::pools::usage(db, now).await?;
    let by_pool = |value: fn(&app::views::overview::PoolUsage) -> i64| {
        pools
            .iter()
            .map(move |p| (vec![("pool".to_string(), p.name.clone())], value(p)))
            .collect::<Vec<_>>()
    };
    gauge(
        registry,
        "pool_size",
        "Runs each concurrency pool allows at once",
        by_pool(|p| i64::from(p.size)),
    );
    gauge(
        registry,
        "pool_running",
        "Runs of each pool's jobs running now (database-wide: take max across nodes)",
        by_pool(|p| p.running as i64),
    );
    gauge(
        registry,
        "pool_waiting",
        "Runs of each pool's jobs due and waiting for a place (database-wide: take max across nodes)",
        by_pool(|p| p.waiting as i64),
    );
    Ok(())
}

/// The database-wide gauges, read now (`app::services::gauges`); every node reports the same.
async fn database_gauges(db: &DatabaseConnection, registry: &mut Registry) -> Result<(), DbErr> {
    let now = crate::clock::now();
    let read = app::services::gauges::read(db, now).await?;
    let label = |k: &str, v: &str| (k.to_string(), v.to_string());
    gauge(
        registry,
        "runs",
        "Runs not ended, by status: pending (due or waiting in their job's lane), running, retry_wait, waiting_for_node (database-wide: take max across nodes)",
        read.runs
            .iter()
            .map(|(status, n)| (vec![label("status", status.as_str())], *n)),
    );
    gauge(
        registry,
        "runs_due",
        "Runs due now and not yet started (database-wide: take max across nodes)",
        [(Vec::new(), read.due)],
    );
    gauge(
        registry,
        "failed_queue",
        "Dead runs waiting in the failed queue, by job (database-wide: take max across nodes)",
        read.failed_queue
            .iter()
            .map(|(job, n)| (vec![label("job", job)], *n)),
    );
    gauge(
        registry,
        "outbox",
        "Messages waiting or refused, by channel (mail: the mail outbox) and status (database-wide: take max across nodes)",
        read.outbox.iter().map(|(channel, status, n)| {
            (vec![label("channel", channel), label("status", status)], *n)
        }),
    );
    pool_gauges(db, now, registry).await?;
    let mut heartbeat = Vec::new();
    for summary in app::services::nodes::list(db, now).await? {
        if summary.row.stopped_at.is_none() {
            heartbeat.push((
                vec![label("node", &summary.row.node_id)],
                (now - summary.row.heartbeat_at).num_seconds().max(0),
            ));
        }
    }
    gauge(
        registry,
        "node_heartbeat_age_seconds",
        "Seconds since each running node's last heartbeat (database-wide: take max across nodes)",
        heartbeat,
    );
    table_health(db, registry).await
}

/// PostgreSQL's dead rows by table and its oldest open transaction: what keeps a vacuum
/// from keeping the queue lean (`app::services::upkeep::health`). Nothing on SQLite.
async fn table_health(db: &DatabaseConnection, registry: &mut Registry) -> Result<(), DbErr> {
    let Some(health) = app::services::upkeep::health(db).await? else {
        return Ok(());
    };
    gauge(
        registry,
        "db_dead_tuples",
        "Dead rows in each of Bulwark's tables that has any, waiting for a vacuum (PostgreSQL; database-wide: take max across nodes)",
        health
            .dead_rows
            .iter()
            .map(|(table, n)| (vec![("table".to_string(), table.clone())], *n)),
    );
    let family =
        Family::<Vec<(String, String)>, Gauge<f64, std::sync::atomic::AtomicU64>>::default();
    family
        .get_or_create(&Vec::new())
        .set(health.oldest_transaction_seconds);
    registry.register(
        "db_oldest_transaction_age_seconds",
        "How long the oldest transaction open on the database has been: no vacuum removes rows that died after it began (PostgreSQL; database-wide: take max across nodes)",
        family,
    );
    Ok(())
}
