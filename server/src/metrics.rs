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
//! The engine reports through [`settled`] and [`took_over`]; the traffic flusher through
//! [`flushed`]. A scrape needs any valid API token (Bearer), or no token at all on the separate
//! `metrics_addr` listener when one is configured (bind it where only Prometheus reaches).

use std::sync::{Arc, LazyLock, OnceLock};

use app::state::AppState;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use sea_orm::{DatabaseConnection, DbErr};

use crate::engine::settle::{Finished, Written};
use crate::traffic::Recorder;

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

/// Counts a settled batch: each attempt by outcome and class, its duration by job, how late it
/// started, and each run that ended by job and status.
pub fn settled(batch: &[Finished], written: &[Written]) {
    let node = node();
    for (f, w) in batch.iter().zip(written) {
        if !w.settled {
            continue;
        }
        let report = &f.execution.report;
        LOCAL
            .attempts
            .get_or_create(&AttemptLabels {
                node: node.clone(),
                outcome: report.outcome.as_str().into(),
                class: report.class.map_or("", |c| c.as_str()).into(),
            })
            .inc();
        let seconds = (f.finished_at - f.started_at).num_milliseconds().max(0) as f64 / 1000.0;
        LOCAL
            .attempt_seconds
            .get_or_create(&JobLabels {
                node: node.clone(),
                job: f.job_name.clone(),
            })
            .observe(seconds);
        // How late the attempt started after it was due: a cron tick's first attempt (due at
        // the tick), a retry (due after its planned wait), or another run's first attempt (due
        // when it was created or scheduled).
        let (kind, due) = if f.run.attempts > 1 {
            ("retry", f.run.next_attempt_at)
        } else if f.run.cron_tick.is_some() {
            ("tick", f.run.cron_tick)
        } else {
            ("start", Some(f.run.scheduled_for))
        };
        if let Some(due) = due {
            let late = (f.started_at - due).num_milliseconds().max(0) as f64 / 1000.0;
            LOCAL
                .lateness_seconds
                .get_or_create(&LatenessLabels {
                    node: node.clone(),
                    kind: kind.into(),
                })
                .observe(late);
        }
        if !w.status.is_active() {
            LOCAL
                .runs_finished
                .get_or_create(&RunLabels {
                    node: node.clone(),
                    job: f.job_name.clone(),
                    status: w.status.as_str().into(),
                })
                .inc();
        }
    }
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

/// What the handler needs.
#[derive(Clone)]
pub struct Scrape {
    pub app: AppState,
    pub recorder: Arc<Recorder>,
    /// On the separate `metrics_addr` listener: no token asked.
    pub open: bool,
}

/// Every series, as of now.
pub async fn render(db: &DatabaseConnection, recorder: &Recorder) -> Result<String, DbErr> {
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
    let stats = recorder.buffer.stats();
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

/// The database-wide gauges, read now (`app::services::gauges`); every node reports the same.
async fn database_gauges(db: &DatabaseConnection, registry: &mut Registry) -> Result<(), DbErr> {
    let now = crate::clock::now();
    let read = app::services::gauges::read(db, now).await?;
    let label = |k: &str, v: &str| (k.to_string(), v.to_string());
    gauge(
        registry,
        "runs",
        "Runs not ended, by status: pending (due or waiting in their job's lane), running, retry_wait (database-wide: take max across nodes)",
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
    Ok(())
}

/// `GET /metrics`.
pub async fn handler(State(scrape): State<Scrape>, parts: axum::http::request::Parts) -> Response {
    if !scrape.open {
        let token = match crate::rest::caller::bearer(&parts.headers) {
            Some(Ok(token)) => token,
            Some(Err(problem)) => return problem.into_response(),
            None => {
                return crate::rest::problem::Problem::unauthorized(
                    "send 'Authorization: Bearer <token>' (a read or admin token), or scrape the metrics_addr listener",
                )
                .into_response();
            }
        };
        let from = crate::rest::caller::address(&parts, &scrape.app);
        match crate::rest::caller::token_caller(&scrape.app, token, from).await {
            Err(problem) => return problem.into_response(),
            // A trigger token starts runs; the figures of every job are more than that.
            Ok(caller) if caller.scope == app::domain::api_token::Scope::Trigger => {
                return crate::rest::problem::Problem::new(
                    axum::http::StatusCode::FORBIDDEN,
                    format!(
                        "{} is a trigger token: /metrics needs a read or admin token",
                        caller.actor
                    ),
                )
                .into_response();
            }
            Ok(_) => {}
        }
    }
    match render(&scrape.app.db, &scrape.recorder).await {
        Ok(text) => (
            [(
                header::CONTENT_TYPE,
                "text/plain; version=0.0.4; charset=utf-8",
            )],
            text,
        )
            .into_response(),
        Err(e) => {
            tracing::error!(error = %e, "cannot read the metrics");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                "the database is unreachable",
            )
                .into_response()
        }
    }
}

/// The `/metrics` route, with its own state.
pub fn router(scrape: Scrape) -> axum::Router {
    axum::Router::new()
        .route("/metrics", axum::routing::get(handler))
        .with_state(scrape)
}
