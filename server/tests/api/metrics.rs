//! `/metrics`: refused without a valid token, served to any role's token, parsed with a
//! Prometheus text parser, and moving as runs finish; open on `metrics_addr`.

use app::domain::api_token::Scope;
use std::time::Duration;

use prometheus_parse::{Scrape, Value};

use crate::engine::{base, run_to_end};
use crate::helpers::{TestApp, define};
use crate::on_both_backends;

async fn scrape(client: &reqwest::Client, url: &str, token: Option<&str>) -> Scrape {
    let mut request = client.get(url);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain; version=0.0.4")
    );
    let text = response.text().await.unwrap();
    Scrape::parse(text.lines().map(|l| Ok(l.to_string()))).unwrap()
}

/// The value of `metric` with the given labels (0 when the series does not exist yet).
fn value(scrape: &Scrape, metric: &str, labels: &[(&str, &str)]) -> f64 {
    scrape
        .samples
        .iter()
        .filter(|s| s.metric == metric)
        .filter(|s| labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v)))
        .map(|s| match &s.value {
            Value::Counter(v) | Value::Gauge(v) | Value::Untyped(v) => *v,
            Value::Histogram(buckets) => buckets.last().map_or(0.0, |b| b.count),
            Value::Summary(_) => 0.0,
        })
        .sum()
}

async fn metrics_need_a_token_parse_and_move_as_runs_finish(app: TestApp) {
    let client = reqwest::Client::new();
    let url = app.url("/metrics");
    let anonymous = client.get(&url).send().await.unwrap();
    assert_eq!(anonymous.status(), 401);
    assert_eq!(
        anonymous.headers()["content-type"],
        "application/problem+json"
    );
    let wrong = client
        .get(&url)
        .bearer_auth(format!("bwk_{}", "f".repeat(64)))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);
    let token = crate::helpers::api_token(&app.db, "prometheus", Scope::Read).await;

    let job_name = format!("metrics-probe-{}", fastrand::u32(..));
    let mut input = base(&job_name);
    input.kind = "builtin".into();
    input.builtin_task = "noop".into();
    let job = define(&app.db, input).await;
    let before = scrape(&client, &url, Some(&token)).await;
    let finished = |s: &Scrape| {
        value(
            s,
            "bulwark_runs_finished_total",
            &[("job", &job_name), ("status", "succeeded")],
        )
    };
    let attempts = |s: &Scrape| value(s, "bulwark_attempts_total", &[("outcome", "succeeded")]);
    let durations =
        |s: &Scrape| value(s, "bulwark_attempt_duration_seconds", &[("job", &job_name)]);
    for _ in 0..2 {
        run_to_end(&app.db, job.id, Duration::from_secs(20)).await;
    }
    let after = scrape(&client, &url, Some(&token)).await;
    assert_eq!(finished(&after) - finished(&before), 2.0);
    assert!(attempts(&after) - attempts(&before) >= 2.0);
    assert_eq!(
        durations(&after),
        2.0,
        "two observations in the job's histogram"
    );

    // Database-wide gauges are there and say the truth.
    assert_eq!(value(&after, "bulwark_runs", &[("status", "running")]), 0.0);
    assert_eq!(
        value(&after, "bulwark_failed_queue", &[("job", &job_name)]),
        0.0
    );
    assert!(
        after
            .samples
            .iter()
            .any(|s| s.metric == "bulwark_node_heartbeat_age_seconds"),
        "the node's heartbeat age"
    );
    assert!(
        after
            .samples
            .iter()
            .any(|s| s.metric == "bulwark_traffic_buffer_bytes")
    );
    assert_eq!(
        value(
            &after,
            "bulwark_outbox",
            &[("channel", "mail"), ("status", "failed")]
        ),
        0.0
    );
    // PostgreSQL's table health: the runs just written left dead rows, and the oldest open
    // transaction's age is there (zero or more). SQLite keeps no such statistics.
    let postgres = app.db.get_database_backend() == sea_orm::DatabaseBackend::Postgres;
    let has = |name: &str| after.samples.iter().any(|s| s.metric == name);
    assert_eq!(has("bulwark_db_oldest_transaction_age_seconds"), postgres);
    if postgres {
        assert!(value(&after, "bulwark_db_oldest_transaction_age_seconds", &[]) >= 0.0);
    }
    // Reading metrics leaves no audit trail.
    let audit = app::services::audit::recent(&app.db, None, 50)
        .await
        .unwrap();
    assert!(audit.iter().all(|e| e.actor != "token:prometheus"));
}
on_both_backends!(metrics_need_a_token_parse_and_move_as_runs_finish);

/// The address the next test gives its `metrics_addr` (a configure function cannot capture).
static METRICS_ADDR: std::sync::OnceLock<std::net::SocketAddr> = std::sync::OnceLock::new();

#[tokio::test(flavor = "multi_thread")]
async fn metrics_addr_serves_metrics_alone_without_a_token() {
    let app = TestApp::sqlite_with(|config, _| {
        let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = *METRICS_ADDR.get_or_init(|| free.local_addr().unwrap());
        config.metrics_addr = Some(addr);
    })
    .await;
    let addr = METRICS_ADDR.get().unwrap();
    let client = reqwest::Client::new();
    let open = scrape(&client, &format!("http://{addr}/metrics"), None).await;
    assert!(open.samples.iter().any(|s| s.metric == "bulwark_runs"));
    // Only metrics there; the main listener still asks for a token.
    let page = client.get(format!("http://{addr}/")).send().await.unwrap();
    assert_eq!(page.status(), 404);
    let main = client.get(app.url("/metrics")).send().await.unwrap();
    assert_eq!(main.status(), 401);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_grafana_board_reads_only_series_that_exist() {
    let app = TestApp::sqlite_with(|_, _| {}).await;
    let token = crate::helpers::api_token(&app.db, "grafana", Scope::Read).await;
    // A finished run gives the job-labelled families their first series.
    let mut input = base("grafana-probe");
    input.kind = "builtin".into();
    input.builtin_task = "noop".into();
    let job = define(&app.db, input).await;
    run_to_end(&app.db, job.id, Duration::from_secs(20)).await;
    // And a run that fails, retries once and lands in the failed queue.
    let mut failing = base("grafana-failing");
    failing.kind = "builtin".into();
    failing.builtin_task = "demo".into();
    failing.builtin_params = "failure_rate=1\nsleep=1ms".into();
    failing.retry.max_retries = "1".into();
    let job = define(&app.db, failing).await;
    run_to_end(&app.db, job.id, Duration::from_secs(20)).await;
    let text = reqwest::Client::new()
        .get(app.url("/metrics"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    // Every family the server declares (`# TYPE name kind`), with the names Prometheus gives
    // its series.
    let mut series = std::collections::BTreeSet::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let mut parts = rest.split_whitespace();
            let (name, kind) = (parts.next().unwrap(), parts.next().unwrap());
            match kind {
                "histogram" => {
                    for suffix in ["_bucket", "_sum", "_count"] {
                        series.insert(format!("{name}{suffix}"));
                    }
                }
                _ => {
                    series.insert(name.to_string());
                }
            }
        }
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let board: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("docs/grafana/bulwark.json")).unwrap(),
    )
    .unwrap();
    let mut used = 0;
    for panel in board["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().unwrap() {
            let expr = target["expr"].as_str().unwrap();
            for word in expr.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
                if word.starts_with("bulwark_") {
                    used += 1;
                    assert!(
                        series.contains(word),
                        "{word} in {expr:?} is not served: {series:?}"
                    );
                }
            }
        }
    }
    assert!(used >= 10, "the board reads the series");
}
