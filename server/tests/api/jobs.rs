use app::domain::job::JobInput;
use app::domain::run::RunStatus;
use app::entities::{audit_log, job, job_run};
use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter};
use serde_json::{Value, json};

use crate::helpers::{
    ADMIN_PASSWORD, TestApp, VIEWER_PASSWORD, insert_run, listed, own_jobs, run_row,
};
use crate::on_both_backends;

fn receipts() -> JobInput {
    JobInput {
        name: "store-receipt-mail".into(),
        description: "Mail each store its receiving details".into(),
        http_method: "POST".into(),
        http_url: "http://127.0.0.1:8080/mail/receipts".into(),
        cron: "0 30 7 * * *".into(),
        timezone: "Asia/Shanghai".into(),
        alert_to: "oncall@example.com".into(),
        ..JobInput::default()
    }
}

async fn save(
    app: &TestApp,
    client: &reqwest::Client,
    id: Option<i64>,
    input: &JobInput,
) -> (u16, Value) {
    let res = client
        .post(app.url("/api/jobs/save"))
        .json(&json!({ "id": id, "input": input }))
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    (status, res.json().await.unwrap())
}

async fn jobs_are_created_read_updated_and_validated(app: TestApp) {
    let admin = app.signed_in("admin", ADMIN_PASSWORD).await;
    let (status, id) = save(&app, &admin, None, &receipts()).await;
    assert_eq!(status, 200, "{id}");
    let id = id.as_i64().unwrap();

    let detail: Value = app
        .call(&admin, "jobs/get", &[("id", &id.to_string())])
        .await
        .json()
        .await
        .unwrap();
    let stored: JobInput = serde_json::from_value(detail["input"].clone()).unwrap();
    assert_eq!(
        stored.retry,
        receipts().retry,
        "the policy round-trips exactly"
    );
    assert_eq!(stored.timezone, "Asia/Shanghai");
    assert_eq!(stored.http_method, "POST");

    let mut changed = stored.clone();
    changed.retry.multiplier = "3.5".into();
    changed.retry.max_retries = "7".into();
    changed.timeout_stall = "5m".into();
    assert_eq!(save(&app, &admin, Some(id), &changed).await.0, 200);
    let row = job::Entity::find_by_id(id)
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((row.retry_multiplier_x10, row.retry_max), (35, 7));
    assert_eq!(row.stall_timeout_ms, Some(300_000));
    let detail: Value = app
        .call(&admin, "jobs/get", &[("id", &id.to_string())])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        detail["input"]["timeout_stall"], "5m",
        "the editor shows it back"
    );

    // Bad input: every field named, nothing written.
    let mut bad = receipts();
    bad.name = "second".into();
    bad.cron = "* * * * *".into();
    bad.retry.first = "0s".into();
    bad.retry.multiplier = "8.5".into();
    bad.timeout_stall = "soon".into();
    let (status, body) = save(&app, &admin, None, &bad).await;
    assert_eq!(status, 422);
    let fields: Vec<&str> = body["Fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["field"].as_str().unwrap())
        .collect();
    assert_eq!(
        fields,
        ["cron", "retry.first", "retry.multiplier", "timeout_stall"]
    );

    // A taken name and a fallback that does not exist need the database to check.
    let mut dup = receipts();
    dup.on_exhausted = "fallback".into();
    dup.fallback_job = "no-such-job".into();
    let (status, body) = save(&app, &admin, None, &dup).await;
    assert_eq!(status, 422);
    assert_eq!(
        body["Fields"],
        json!([
            {"field": "name", "message": "a job named 'store-receipt-mail' already exists"},
            {"field": "fallback_job", "message": "there is no job named 'no-such-job'"}
        ])
    );
    assert_eq!(own_jobs(&app.db).await, 1);

    let list: Value = app
        .call(&admin, "jobs/list", &[])
        .await
        .json()
        .await
        .unwrap();
    listed(&list, "store-receipt-mail");
    let actions: Vec<String> = audit_log::Entity::find()
        .filter(audit_log::Column::Action.starts_with("job."))
        .all(&app.db)
        .await
        .unwrap()
        .into_iter()
        .map(|a| a.action)
        .collect();
    assert_eq!(actions, ["job.created", "job.updated"]);
}
on_both_backends!(jobs_are_created_read_updated_and_validated);

async fn viewers_cannot_change_jobs(app: TestApp) {
    let admin = app.signed_in("admin", ADMIN_PASSWORD).await;
    let id = save(&app, &admin, None, &receipts())
        .await
        .1
        .as_i64()
        .unwrap();
    let viewer = app.signed_in("viewer", VIEWER_PASSWORD).await;

    assert_eq!(
        save(&app, &viewer, None, &receipts()).await,
        (403, json!({"Forbidden": "change jobs"}))
    );
    for (endpoint, form) in [
        (
            "jobs/enable",
            vec![("id", id.to_string()), ("enabled", "false".to_string())],
        ),
        ("jobs/delete", vec![("id", id.to_string())]),
    ] {
        let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
        assert_eq!(
            app.call(&viewer, endpoint, &form).await.status(),
            403,
            "{endpoint}"
        );
    }
    // Viewers read.
    assert_eq!(
        app.call(&viewer, "jobs/get", &[("id", &id.to_string())])
            .await
            .status(),
        200
    );
    let row = job::Entity::find_by_id(id)
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    assert!(row.enabled);
}
on_both_backends!(viewers_cannot_change_jobs);

/// The editor's cron preview draws fire times in the job's zone from the
/// table this endpoint sends, so the table must agree with the tz database on
/// both sides of a daylight-saving change.
async fn the_editor_reads_a_zone_as_a_table(app: TestApp) {
    use chrono::{Offset, TimeZone, Utc};

    let viewer = app.signed_in("viewer", VIEWER_PASSWORD).await;
    let res = app
        .call(&viewer, "jobs/zone", &[("name", "America/New_York")])
        .await;
    assert_eq!(res.status(), 200);
    let zone: app::views::jobs::JobZone = res.json().await.unwrap();
    assert_eq!(zone.name, "America/New_York");
    let table = zone.table().expect("the spans decode");
    for (utc, hours) in [
        (Utc.with_ymd_and_hms(2026, 1, 15, 12, 0, 0).unwrap(), -5),
        (Utc.with_ymd_and_hms(2026, 7, 15, 12, 0, 0).unwrap(), -4),
        // The minute either side of the spring change (07:00 UTC).
        (Utc.with_ymd_and_hms(2026, 3, 8, 6, 59, 0).unwrap(), -5),
        (Utc.with_ymd_and_hms(2026, 3, 8, 7, 0, 0).unwrap(), -4),
    ] {
        let offset = table.offset_from_utc_datetime(&utc.naive_utc());
        assert_eq!(offset.fix().local_minus_utc(), hours * 3600, "{utc}");
    }

    let res = app
        .call(&viewer, "jobs/zone", &[("name", "Mars/Olympus_Mons")])
        .await;
    assert_eq!(res.status(), 422);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["Invalid"]["field"], "timezone");

    let res = app.call(&viewer, "jobs/zones", &[]).await;
    assert_eq!(res.status(), 200);
    let names: String = res.json().await.unwrap();
    assert!(names.lines().any(|n| n == "Europe/Berlin"));
    assert!(names.lines().any(|n| n == "UTC"));
}
on_both_backends!(the_editor_reads_a_zone_as_a_table);

async fn deleting_a_job_takes_its_runs_and_keeps_the_definition_in_the_audit(app: TestApp) {
    let admin = app.signed_in("admin", ADMIN_PASSWORD).await;
    let id = save(&app, &admin, None, &receipts())
        .await
        .1
        .as_i64()
        .unwrap();
    let now = chrono::Utc::now();
    for _ in 0..3 {
        insert_run(&app.db, run_row(id, RunStatus::Succeeded, now)).await;
    }
    let list: Value = app
        .call(&admin, "jobs/list", &[])
        .await
        .json()
        .await
        .unwrap();
    let receipts = listed(&list, "store-receipt-mail");
    assert_eq!(receipts["runs"], 3);
    assert_eq!(receipts["last_status"], "succeeded");
    let off = app
        .call(
            &admin,
            "jobs/enable",
            &[("id", &id.to_string()), ("enabled", "false")],
        )
        .await;
    assert_eq!(off.status(), 200);
    assert!(
        !job::Entity::find_by_id(id)
            .one(&app.db)
            .await
            .unwrap()
            .unwrap()
            .enabled
    );

    let res = app
        .call(&admin, "jobs/delete", &[("id", &id.to_string())])
        .await;
    assert_eq!(res.status(), 200);
    assert_eq!(own_jobs(&app.db).await, 0);
    assert_eq!(job_run::Entity::find().count(&app.db).await.unwrap(), 0);
    let audit = audit_log::Entity::find()
        .filter(audit_log::Column::Action.eq("job.deleted"))
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    let detail: Value = serde_json::from_str(&audit.detail).unwrap();
    assert_eq!(detail["runs_deleted"], 3);
    assert_eq!(detail["definition"]["name"], "store-receipt-mail");

    let missing = app
        .call(&admin, "jobs/delete", &[("id", &id.to_string())])
        .await;
    assert_eq!(missing.status(), 404);
}
on_both_backends!(deleting_a_job_takes_its_runs_and_keeps_the_definition_in_the_audit);

async fn credentials_are_never_shown_back_and_survive_an_edit(app: TestApp) {
    let admin = app.signed_in("admin", ADMIN_PASSWORD).await;
    let mut input = receipts();
    input.http_url = "https://bot:s3cret@api.example.com/hook?access_token=qtok77".into();
    input.http_headers = "Authorization: Bearer abc123".into();
    input.http_body = r#"{"user": "ops", "password": "bodypw88"}"#.into();
    let id = save(&app, &admin, None, &input).await.1.as_i64().unwrap();
    let literals = ["s3cret", "abc123", "qtok77", "bodypw88"];

    let detail: Value = app
        .call(&admin, "jobs/get", &[("id", &id.to_string())])
        .await
        .json()
        .await
        .unwrap();
    let text = detail.to_string();
    assert!(literals.iter().all(|l| !text.contains(l)), "{text}");
    let mut shown: JobInput = serde_json::from_value(detail["input"].clone()).unwrap();
    assert_eq!(shown.http_headers, "Authorization: (hidden)");

    shown.description = "edited".into();
    assert_eq!(save(&app, &admin, Some(id), &shown).await.0, 200);
    let row = job::Entity::find_by_id(id)
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    assert!(
        literals.iter().all(|l| row.config.contains(l)),
        "{}",
        row.config
    );
    let audits: Vec<String> = audit_log::Entity::find()
        .all(&app.db)
        .await
        .unwrap()
        .into_iter()
        .map(|a| a.detail)
        .collect();
    assert!(
        audits
            .iter()
            .all(|d| literals.iter().all(|l| !d.contains(l)))
    );
}
on_both_backends!(credentials_are_never_shown_back_and_survive_an_edit);
