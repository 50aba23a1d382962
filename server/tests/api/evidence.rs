//! Retry evidence end to end: a job whose endpoint stays down for a known time after each
//! first failure, run through the engine; its runs read back as failure episodes and replayed
//! against other policies, by the service and by `bulwark policy preview --job`.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use app::domain::job::JobInput;
use app::domain::recovery::replay;
use app::domain::retry::RetryInput;
use app::domain::retry::RetryPolicy;
use app::domain::run::RunStatus;

use crate::engine::{base, run_to_end};
use crate::helpers::{TestApp, define};
use crate::on_both_backends;

/// How long each outage lasts after the first request that finds it.
const OUTAGE: Duration = Duration::from_millis(500);

/// A local HTTP server that is "down" (503) for [`OUTAGE`] from the first request after it was
/// last up, then answers 200 once and starts the next outage with the next request.
async fn outage_server() -> String {
    let down_since: Arc<Mutex<Option<Instant>>> = Arc::new(Mutex::new(None));
    let app = axum::Router::new().route(
        "/outage",
        axum::routing::any(move || {
            let down_since = down_since.clone();
            async move {
                let mut down = down_since.lock().unwrap();
                let since = *down.get_or_insert_with(Instant::now);
                if since.elapsed() < OUTAGE {
                    axum::http::StatusCode::SERVICE_UNAVAILABLE
                } else {
                    *down = None;
                    axum::http::StatusCode::OK
                }
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}/outage")
}

fn policy(first: &str, multiplier: &str, retries: &str) -> RetryPolicy {
    RetryPolicy::parse(&RetryInput {
        first: first.into(),
        multiplier: multiplier.into(),
        max_retries: retries.into(),
        jitter: "none".into(),
        cap: String::new(),
    })
    .unwrap()
}

async fn a_jobs_outages_are_replayed_against_a_policy(app: TestApp) {
    let url = outage_server().await;
    // Retries 100 ms, 200 ms, 400 ms, 800 ms after each failure: the third or fourth finds the
    // endpoint up again.
    let mut input = JobInput {
        http_url: url,
        ..base("outage-http")
    };
    input.retry.max_retries = "4".into();
    let job = define(&app.db, input.clone()).await;
    for _ in 0..10 {
        let (_, finished) = run_to_end(&app.db, job.id, Duration::from_secs(20)).await;
        assert_eq!(finished.status, RunStatus::Succeeded);
    }

    let episodes = app::services::evidence::episodes(&app.db, job.id)
        .await
        .unwrap();
    assert_eq!(episodes.len(), 10);
    for e in &episodes {
        // From the first failure to the attempt that found the endpoint up: at least the
        // outage, at most the retry after it (plus the attempts' own time).
        assert!(e.recovered, "{e:?}");
        assert!((400..2_000).contains(&e.duration_ms), "{e:?}");
    }

    // A policy whose first retry waits 3 s would have recovered every one at once.
    let patient = replay(&policy("3s", "2", "3"), &episodes);
    assert_eq!(patient.recovered_by_retry, vec![1.0, 1.0, 1.0]);
    assert_eq!(patient.idle_retries, vec![2, 3]);
    assert!((patient.expected_wait_ms - 3_000.0).abs() < 1e-6);
    // Four retries 100 ms apart end before any outage does: nothing recovered, all waited.
    let hasty = replay(&policy("100ms", "1", "4"), &episodes);
    assert_eq!(hasty.recovered_by_retry, vec![0.0; 4]);
    assert_eq!(hasty.idle_retries, vec![1, 2, 3, 4]);
    assert!((hasty.expected_wait_ms - 400.0).abs() < 1e-6);
    // The job's own policy recovers all by its last retry (1.5 s after the first failure).
    let own = replay(&policy("100ms", "2", "4"), &episodes);
    assert_eq!(own.recovered_by_retry[..2], [0.0, 0.0]);
    assert_eq!(own.recovered, 1.0);
    assert!(own.is_enough());

    // The daily digest leaves a policy that recovers them all alone; one that gives up after
    // a single retry (100 ms) recovers none and is named.
    let digest = app::services::notifications::digest::gather(&app.db, chrono::Utc::now())
        .await
        .unwrap();
    assert!(digest.policies.is_empty(), "{:?}", digest.policies);
    input.retry.max_retries = "1".into();
    let spec = app::domain::job::JobSpec::parse(&input).unwrap();
    app::services::jobs::save(
        &app.db,
        Some(job.id),
        &spec,
        &crate::helpers::TESTER,
        &app.secret_key,
        chrono::Utc::now(),
    )
    .await
    .unwrap();
    let digest = app::services::notifications::digest::gather(&app.db, chrono::Utc::now())
        .await
        .unwrap();
    assert_eq!(digest.policies.len(), 1, "{:?}", digest.policies);
    assert_eq!(digest.policies[0].job, "outage-http");
    assert_eq!(
        digest.policies[0].concern,
        app::domain::recovery::PolicyConcern::RecoversTooFew
    );
    assert_eq!(digest.policies[0].recovered, 0.0);

    // The command line says the same (--first and --max-retries given; the job's own
    // retries are one now, its multiplier ×2 stays).
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_bulwark"))
        .args([
            "policy",
            "preview",
            "--job",
            "outage-http",
            "--first",
            "3s",
            "--max-retries",
            "4",
            "--json",
        ])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("DATABASE_URL", &app.database_url)
        .output()
        .expect("run bulwark");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(json["delays_s"], serde_json::json!([3.0, 6.0, 12.0, 24.0]));
    let replayed = &json["replay"];
    assert_eq!(replayed["episodes"], 10);
    assert_eq!(replayed["censored"], 0);
    assert_eq!(
        replayed["recovered_by_retry"],
        serde_json::json!([1.0, 1.0, 1.0, 1.0])
    );
    assert_eq!(replayed["recovered"], 1.0);
    assert_eq!(replayed["expected_wait_s"], 3.0);

    let missing = std::process::Command::new(env!("CARGO_BIN_EXE_bulwark"))
        .args(["policy", "preview", "--job", "no-such-job"])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("DATABASE_URL", &app.database_url)
        .output()
        .expect("run bulwark");
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&missing.stderr).contains("there is no job named 'no-such-job'")
    );
}
on_both_backends!(a_jobs_outages_are_replayed_against_a_policy);
