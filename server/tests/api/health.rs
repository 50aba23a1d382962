use crate::helpers::TestApp;
use crate::on_both_backends;

async fn health_and_readiness(app: TestApp) {
    let client = app.client();
    let res = client.get(app.url("/healthz")).send().await.unwrap();
    assert_eq!(
        (res.status().as_u16(), res.text().await.unwrap()),
        (200, "ok".to_string())
    );
    let res = client.get(app.url("/readyz")).send().await.unwrap();
    assert_eq!(
        (res.status().as_u16(), res.text().await.unwrap()),
        (200, format!("ready\nbulwark {}\n", built_as()))
    );
    // The CLI says the same.
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = crate::process::output(crate::process::bulwark(
        &app,
        dir.path(),
        &["--version"],
        &[],
    ));
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim(), format!("bulwark {}", built_as()));
}

/// `0.2.0 (commit abc1234)`, the commit asked of git here, independently of the build script.
fn built_as() -> String {
    let head = std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .expect("git is needed to check the version's commit");
    let head = String::from_utf8_lossy(&head.stdout).trim().to_string();
    assert!(!head.is_empty(), "not in a git checkout");
    format!("{} (commit {head})", env!("CARGO_PKG_VERSION"))
}
on_both_backends!(health_and_readiness);

async fn the_overview_counts_runs_per_hour(app: TestApp) {
    use crate::helpers::{define, insert_run, noop_job, run_row};
    use app::domain::run::RunStatus;
    use chrono::{Duration, Utc};

    let client = app
        .signed_in("viewer", crate::helpers::VIEWER_PASSWORD)
        .await;
    let empty: Vec<serde_json::Value> = app
        .call(&client, "dashboard/runs-per-hour", &[])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(empty.len(), 24);
    assert!(
        empty
            .iter()
            .all(|b| b["succeeded"] == 0 && b["failed"] == 0 && b["other"] == 0)
    );

    let now = Utc::now();
    let job = define(&app.db, noop_job("demo")).await;
    // Two runs this hour (one succeeded, one dead), one three hours ago still pending, and one
    // two days ago that the 24-hour window must leave out.
    for (age, status) in [
        (Duration::zero(), RunStatus::Succeeded),
        (Duration::zero(), RunStatus::Dead),
        (Duration::hours(3), RunStatus::Pending),
        (Duration::days(2), RunStatus::Succeeded),
    ] {
        insert_run(&app.db, run_row(job.id, status, now - age)).await;
    }

    let buckets: Vec<serde_json::Value> = app
        .call(&client, "dashboard/runs-per-hour", &[])
        .await
        .json()
        .await
        .unwrap();
    // Found by their hour rather than by position: the server's last bucket is the hour it
    // answers in, which is the next one if the test spans the turn of an hour.
    let bucket = |at: chrono::DateTime<Utc>| {
        let hour = at.format("%Y-%m-%dT%H:00:00").to_string();
        buckets
            .iter()
            .find(|b| b["hour"].as_str().is_some_and(|h| h.starts_with(&hour)))
            .unwrap_or_else(|| panic!("no bucket for {hour}: {buckets:?}"))
    };
    assert_eq!(
        (
            bucket(now)["succeeded"].as_u64(),
            bucket(now)["failed"].as_u64()
        ),
        (Some(1), Some(1))
    );
    assert_eq!(bucket(now - Duration::hours(3))["other"], 1);
    let total: u64 = buckets
        .iter()
        .map(|b| {
            ["succeeded", "failed", "other"]
                .iter()
                .map(|k| b[*k].as_u64().unwrap())
                .sum::<u64>()
        })
        .sum();
    assert_eq!(total, 3);
}
on_both_backends!(the_overview_counts_runs_per_hour);

/// The Overview's tiles and lists against a known mix of runs: succeeded, dead (in the queue
/// and resolved), retrying, running, a late cron tick, an open and escalated alert episode, and
/// runs from two days ago that only the "24 h before" figures count.
async fn the_overview_tiles_match_the_runs(app: TestApp) {
    use crate::helpers::{define, insert_run, noop_job, run_row};
    use app::domain::run::{Outcome, Resolution, RunStatus, Trigger};
    use app::entities::{job_alert, job_attempt};
    use chrono::{Duration, Utc};
    use sea_orm::{ActiveModelTrait, Set};

    let client = app
        .signed_in("viewer", crate::helpers::VIEWER_PASSWORD)
        .await;
    let now = Utc::now();
    let a = define(&app.db, noop_job("overview-a")).await;
    let b = define(&app.db, noop_job("overview-b")).await;
    let c = define(&app.db, noop_job("overview-c")).await;

    // Inserted oldest first, as runs are created. Two days ago: one succeeded, one dead
    // (still in the queue: the oldest there, but no longer b's latest run).
    insert_run(
        &app.db,
        run_row(b.id, RunStatus::Dead, now - Duration::hours(40)),
    )
    .await;
    insert_run(
        &app.db,
        run_row(c.id, RunStatus::Succeeded, now - Duration::hours(30)),
    )
    .await;
    // a: succeeded two hours ago, then dead an hour ago (waits in the failed queue).
    insert_run(
        &app.db,
        run_row(a.id, RunStatus::Succeeded, now - Duration::hours(2)),
    )
    .await;
    let a_dead = {
        let mut row = run_row(a.id, RunStatus::Dead, now - Duration::hours(1));
        row.last_error = Set(Some("connection refused".into()));
        insert_run(&app.db, row).await
    };
    // b: waiting to retry.
    insert_run(
        &app.db,
        run_row(b.id, RunStatus::RetryWait, now - Duration::minutes(10)),
    )
    .await;
    // c: a cron run whose first attempt started 3 s after its tick, and a dead run that was
    // resolved by hand (not in the queue), then one running now.
    let tick = now - Duration::minutes(30);
    let cron_run = {
        let mut row = run_row(c.id, RunStatus::Succeeded, tick);
        row.trigger = Set(Trigger::Cron);
        insert_run(&app.db, row).await
    };
    job_attempt::ActiveModel {
        run_id: Set(cron_run.id),
        number: Set(1),
        started_at: Set(tick + Duration::seconds(3)),
        finished_at: Set(Some(tick + Duration::seconds(4))),
        duration_ms: Set(Some(1000)),
        timeout_ms: Set(60_000),
        outcome: Set(Some(Outcome::Succeeded)),
        node: Set("test".into()),
        slow: Set(false),
        ..Default::default()
    }
    .insert(&app.db)
    .await
    .unwrap();
    {
        let mut row = run_row(c.id, RunStatus::Dead, now - Duration::minutes(20));
        row.resolution = Set(Some(Resolution::Resolved));
        row.resolved_by = Set(Some("admin".into()));
        row.resolved_at = Set(Some(now - Duration::minutes(19)));
        insert_run(&app.db, row).await;
    }
    insert_run(
        &app.db,
        run_row(c.id, RunStatus::Running, now - Duration::minutes(1)),
    )
    .await;
    // a is failing: its alert episode is open and escalated.
    job_alert::ActiveModel {
        job_id: Set(a.id),
        episode: Set(1),
        open: Set(true),
        opened_at: Set(Some(now - Duration::hours(1) - Duration::minutes(5))),
        first_run_id: Set(Some(a_dead.id)),
        failed_runs: Set(1),
        escalated: Set(true),
        updated_at: Set(now),
    }
    .insert(&app.db)
    .await
    .unwrap();

    let o: serde_json::Value = app
        .call(&client, "dashboard/overview", &[])
        .await
        .json()
        .await
        .unwrap();
    let t = &o["tiles"];
    // Last 24 h: a ×2, b, c's cron run, c's resolved dead and c's running run.
    assert_eq!(t["runs"], serde_json::json!({"now": 6, "before": 2}), "{o}");
    assert_eq!(t["succeeded"], serde_json::json!({"now": 2, "before": 1}));
    assert_eq!(t["dead"], serde_json::json!({"now": 2, "before": 1}));
    assert_eq!(
        (t["running"].as_u64(), t["retry_wait"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(
        (t["failed_queue"].as_u64(), t["failed_joined"].as_u64()),
        (Some(2), Some(1))
    );
    let oldest: chrono::DateTime<Utc> = serde_json::from_value(t["failed_oldest"].clone()).unwrap();
    assert!((oldest - (now - Duration::hours(40))).num_seconds().abs() <= 1);
    assert_eq!(
        (t["failing_jobs"].as_u64(), t["escalated_jobs"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(t["late_p95_ms"], 3000);
    assert!(t["late_p95_before_ms"].is_null());

    // Needs attention: a (dead, failing since its episode opened) before b (retrying).
    let attention = o["attention"].as_array().unwrap();
    let names: Vec<&str> = attention
        .iter()
        .map(|r| r["job"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["overview-a", "overview-b"], "{o}");
    assert_eq!(attention[0]["run_id"], a_dead.id);
    assert_eq!(attention[0]["in_failed_queue"], true);
    assert_eq!(attention[1]["status"], "retry_wait");
    let since: chrono::DateTime<Utc> =
        serde_json::from_value(attention[0]["since"].clone()).unwrap();
    assert!((since - (now - Duration::minutes(65))).num_seconds().abs() <= 1);

    // The last failures, newest first: a's dead run, c's resolved one, then b's old one.
    let failures: Vec<i64> = o["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["run_id"].as_i64().unwrap())
        .collect();
    assert_eq!(failures.len(), 3);
    assert_eq!(failures[1], a_dead.id);
    // The next ticks: enabled jobs' next fire times, soonest first, at most ten.
    let fires: Vec<chrono::DateTime<Utc>> = o["next_fires"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| serde_json::from_value(f["at"].clone()).unwrap())
        .collect();
    assert!(!fires.is_empty() && fires.len() <= 10);
    assert!(fires.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(o["per_hour"].as_array().unwrap().len(), 24);

    // The "jobs failing now" tile's list: the Jobs page marks the same jobs.
    let jobs: serde_json::Value = app
        .call(&client, "jobs/list", &[])
        .await
        .json()
        .await
        .unwrap();
    let failing: Vec<&str> = jobs
        .as_array()
        .unwrap()
        .iter()
        .filter(|j| j["failing"] == true)
        .map(|j| j["name"].as_str().unwrap())
        .collect();
    assert_eq!(failing, ["overview-a"]);
}
on_both_backends!(the_overview_tiles_match_the_runs);
