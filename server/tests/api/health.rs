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
    use app::entities::{job, job_run};
    use chrono::{Duration, Utc};
    use sea_orm::{ActiveModelTrait, Set};

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
    let job = job::ActiveModel {
        name: Set("demo".into()),
        description: Set(String::new()),
        kind: Set("builtin".into()),
        config: Set("{}".into()),
        cron: Set("0 * * * * *".into()),
        timezone: Set("UTC".into()),
        enabled: Set(true),
        retry_first_ms: Set(1000),
        retry_multiplier_x10: Set(20),
        retry_max: Set(3),
        retry_jitter: Set("none".into()),
        retry_cap_ms: Set(None),
        timeout_mode: Set("static".into()),
        timeout_static_ms: Set(60_000),
        timeout_window: Set(20),
        timeout_factor_x10: Set(15),
        timeout_floor_ms: Set(1000),
        timeout_hard_cap_ms: Set(600_000),
        overlap: Set("skip".into()),
        misfire: Set("run_once".into()),
        on_exhausted: Set("dead_letter".into()),
        alert_to: Set("[]".into()),
        escalate_after: Set(3),
        escalate_to: Set("[]".into()),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
    .insert(&app.db)
    .await
    .unwrap();
    // Two runs this hour (one succeeded, one dead), one three hours ago still pending, and one
    // two days ago that the 24-hour window must leave out.
    for (i, (age, status)) in [
        (Duration::zero(), "succeeded"),
        (Duration::zero(), "dead"),
        (Duration::hours(3), "pending"),
        (Duration::days(2), "succeeded"),
    ]
    .into_iter()
    .enumerate()
    {
        let at = now - age;
        job_run::ActiveModel {
            job_id: Set(job.id),
            trigger: Set("manual".into()),
            scheduled_for: Set(at),
            cron_tick: Set(None),
            status: Set(status.into()),
            attempts: Set(1),
            idempotency_key: Set(format!("demo-{i}")),
            created_at: Set(at),
            updated_at: Set(at),
            ..Default::default()
        }
        .insert(&app.db)
        .await
        .unwrap();
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
