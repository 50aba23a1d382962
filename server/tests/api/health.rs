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
        (200, "ready".to_string())
    );
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
    let last = &buckets[23];
    assert_eq!(
        (last["succeeded"].as_u64(), last["failed"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(buckets[20]["other"], 1);
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
