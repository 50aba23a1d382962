//! The failed queue through its server functions, on both databases.

use app::domain::job::{JobInput, JobSpec};
use app::domain::run::{ErrorClass, Resolution, RunStatus, Trigger};
use app::entities::{audit_log, job_run};
use chrono::{Duration, Utc};
use sea_orm::{ActiveModelTrait, ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter, Set};
use serde_json::{Value, json};

use crate::helpers::{
    ADMIN_PASSWORD, TestApp, VIEWER_PASSWORD, define, insert_run, noop_job, run_row,
};
use crate::on_both_backends;

async fn job(app: &TestApp, name: &str) -> i64 {
    define(&app.db, noop_job(name)).await.id
}

/// A run that died `age_min` minutes ago with `class` and `message`.
async fn dead_run(
    app: &TestApp,
    job_id: i64,
    age_min: i64,
    class: ErrorClass,
    message: &str,
) -> i64 {
    let mut row = run_row(
        job_id,
        RunStatus::Dead,
        Utc::now() - Duration::minutes(age_min),
    );
    row.trigger = Set(Trigger::Cron);
    row.attempts = Set(3);
    row.last_error_class = Set(Some(class));
    row.last_error = Set(Some(message.into()));
    insert_run(&app.db, row).await.id
}

async fn post(
    app: &TestApp,
    client: &reqwest::Client,
    endpoint: &str,
    body: Value,
) -> (u16, Value) {
    let res = client
        .post(app.url(&format!("/api/{endpoint}")))
        .json(&body)
        .send()
        .await
        .unwrap();
    (
        res.status().as_u16(),
        res.json().await.unwrap_or(Value::Null),
    )
}

async fn the_queue_lists_filters_counts_and_pages(app: TestApp) {
    let mailer = job(&app, "mailer").await;
    let report = job(&app, "report").await;
    for i in 0..110 {
        dead_run(
            &app,
            mailer,
            i,
            ErrorClass::Transient,
            &format!("SMTP 451 try later ({i})"),
        )
        .await;
    }
    for i in 0..10 {
        dead_run(
            &app,
            report,
            200 + i,
            ErrorClass::Permanent,
            "HTTP 404 Not Found",
        )
        .await;
    }
    let viewer = app.signed_in("viewer", VIEWER_PASSWORD).await;

    let mut seen = Vec::new();
    let mut cursor = Value::Null;
    loop {
        let (status, page) = post(
            &app,
            &viewer,
            "failed/list",
            json!({"filter": {}, "cursor": cursor}),
        )
        .await;
        assert_eq!(status, 200, "{page}");
        assert_eq!(page["matching"], 120);
        assert_eq!(page["per_job"], json!([["mailer", 110], ["report", 10]]));
        assert_eq!(
            page["per_class"],
            json!([["transient", 110], ["permanent", 10]])
        );
        seen.extend(
            page["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["id"].as_i64().unwrap()),
        );
        if page["next"].is_null() {
            break;
        }
        cursor = page["next"].clone();
    }
    assert_eq!(seen.len(), 120, "every dead run once");
    let mut unique = seen.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 120);

    let (_, page) = post(
        &app,
        &viewer,
        "failed/list",
        json!({"filter": {"text": "404 not"}, "cursor": null}),
    )
    .await;
    assert_eq!(page["matching"], 10);
    assert_eq!(page["rows"][0]["job"], "report");
    let (_, page) = post(
        &app,
        &viewer,
        "failed/list",
        json!({"filter": {"job": "mailer", "class": "transient"}, "cursor": null}),
    )
    .await;
    assert_eq!(page["matching"], 110);
    assert_eq!(page["rows"].as_array().unwrap().len(), 50);
    let (status, body) = post(
        &app,
        &viewer,
        "failed/list",
        json!({"filter": {"from": "2026-12-31", "to": "2026-01-01"}, "cursor": null}),
    )
    .await;
    assert_eq!(status, 422);
    assert_eq!(body["Invalid"]["field"], "from");
    let (status, _) = post(
        &app,
        &viewer,
        "failed/list",
        json!({"filter": {"from": "yesterday"}, "cursor": null}),
    )
    .await;
    assert_eq!(status, 422);
}
on_both_backends!(the_queue_lists_filters_counts_and_pages);

async fn retrigger_once_reuses_the_key_and_refuses_doubles(app: TestApp) {
    let mailer = job(&app, "mailer").await;
    let dead = dead_run(&app, mailer, 5, ErrorClass::Transient, "SMTP down").await;
    let viewer = app.signed_in("viewer", VIEWER_PASSWORD).await;
    let (status, body) = post(&app, &viewer, "failed/retrigger", json!({"id": dead})).await;
    assert_eq!(
        (status, body),
        (403, json!({"Forbidden": "re-trigger runs"}))
    );

    let admin = app.signed_in("admin", ADMIN_PASSWORD).await;
    let (status, body) = post(
        &app,
        &admin,
        "failed/retrigger",
        json!({"id": dead, "timeout": "0s"}),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    let (status, new_id) = post(
        &app,
        &admin,
        "failed/retrigger",
        json!({"id": dead, "timeout": "2s"}),
    )
    .await;
    assert_eq!(status, 200, "{new_id}");
    let new_run = job_run::Entity::find_by_id(new_id.as_i64().unwrap())
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    let old_run = job_run::Entity::find_by_id(dead)
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(new_run.trigger, Trigger::Retrigger);
    assert_eq!(new_run.status, RunStatus::Pending);
    assert_eq!(new_run.retrigger_of, Some(dead));
    assert_eq!(new_run.idempotency_key, old_run.idempotency_key);
    assert_eq!(new_run.override_timeout_ms, Some(2_000));
    assert_eq!(
        old_run.status,
        RunStatus::Dead,
        "the dead run keeps its history"
    );
    assert_eq!(old_run.resolution, Some(Resolution::Retriggered));

    // A second administrator a moment later: refused, no second run.
    let (status, body) = post(&app, &admin, "failed/retrigger", json!({"id": dead})).await;
    assert_eq!(status, 422);
    assert!(
        body["Invalid"]["message"]
            .as_str()
            .unwrap()
            .contains("not in the failed queue")
    );
    assert_eq!(job_run::Entity::find().count(&app.db).await.unwrap(), 2);
    // A run that is not dead cannot be re-triggered either.
    let (status, _) = post(&app, &admin, "failed/retrigger", json!({"id": new_run.id})).await;
    assert_eq!(status, 422);

    let audit = audit_log::Entity::find()
        .filter(audit_log::Column::Action.eq("run.retriggered"))
        .all(&app.db)
        .await
        .unwrap();
    assert_eq!(audit.len(), 1);
    assert_eq!(audit[0].subject, format!("run {dead}"));
    assert!(audit[0].detail.contains("\"timeout_override\":2000"));
}
on_both_backends!(retrigger_once_reuses_the_key_and_refuses_doubles);

async fn bulk_retrigger_by_filter_is_previewed_and_paced(app: TestApp) {
    let mailer = job(&app, "mailer").await;
    let report = job(&app, "report").await;
    for i in 0..6 {
        dead_run(&app, mailer, i, ErrorClass::Transient, "SMTP down").await;
    }
    dead_run(&app, report, 1, ErrorClass::Permanent, "404").await;
    let admin = app.signed_in("admin", ADMIN_PASSWORD).await;
    let filter = json!({"job": "mailer"});
    let (_, preview) = post(&app, &admin, "failed/preview", json!({"filter": filter})).await;
    assert_eq!(preview, 6);
    let (status, body) = post(
        &app,
        &admin,
        "failed/retrigger-many",
        json!({"ids": [], "filter": filter, "per_minute": 0}),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    let (status, done) = post(
        &app,
        &admin,
        "failed/retrigger-many",
        json!({"ids": [], "filter": filter, "per_minute": 60}),
    )
    .await;
    assert_eq!((status, done), (200, json!(6)));

    let mut starts: Vec<_> = job_run::Entity::find()
        .filter(job_run::Column::Trigger.eq(Trigger::Retrigger))
        .all(&app.db)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.scheduled_for)
        .collect();
    starts.sort();
    assert_eq!(starts.len(), 6);
    for pair in starts.windows(2) {
        assert_eq!(
            (pair[1] - pair[0]).num_milliseconds(),
            1_000,
            "60 per minute: one a second"
        );
    }
    let (_, preview) = post(&app, &admin, "failed/preview", json!({"filter": filter})).await;
    assert_eq!(preview, 0, "they left the queue");
}
on_both_backends!(bulk_retrigger_by_filter_is_previewed_and_paced);

async fn resolve_and_discard_need_a_reason(app: TestApp) {
    let mailer = job(&app, "mailer").await;
    let a = dead_run(&app, mailer, 1, ErrorClass::Transient, "x").await;
    let b = dead_run(&app, mailer, 2, ErrorClass::Transient, "y").await;
    let admin = app.signed_in("admin", ADMIN_PASSWORD).await;
    let call = |id: i64, reason: &'static str, discard: &'static str| {
        let admin = admin.clone();
        let app = &app;
        async move {
            app.call(
                &admin,
                "failed/resolve",
                &[
                    ("id", &id.to_string()),
                    ("reason", reason),
                    ("discard", discard),
                ],
            )
            .await
            .status()
            .as_u16()
        }
    };
    assert_eq!(call(a, "  ", "false").await, 422);
    assert_eq!(call(a, "sent the mails by hand", "false").await, 200);
    assert_eq!(
        call(a, "again", "true").await,
        422,
        "already out of the queue"
    );
    assert_eq!(call(b, "duplicate of a", "true").await, 200);
    let resolved = job_run::Entity::find_by_id(a)
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(resolved.resolution, Some(Resolution::Resolved));
    assert_eq!(
        resolved.resolution_reason.as_deref(),
        Some("sent the mails by hand")
    );
    assert_eq!(resolved.resolved_by.as_deref(), Some("admin"));

    let entries: Value = app
        .call(&admin, "audit/list", &[("subject", &format!("run {b}"))])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(entries[0]["action"], "run.discarded");
    assert!(
        entries[0]["detail"]
            .as_str()
            .unwrap()
            .contains("duplicate of a")
    );
}
on_both_backends!(resolve_and_discard_need_a_reason);

async fn dependants_are_held_while_their_upstream_is_dead(app: TestApp) {
    use app::services::jobs;
    use server::engine::trigger::enqueue_due_ticks;
    let now = chrono::DateTime::parse_from_rfc3339("2026-11-30T12:00:30Z")
        .unwrap()
        .to_utc();
    let report = {
        let input = JobInput {
            cron: "0 * * * * *".into(),
            ..noop_job("report")
        };
        jobs::create(
            &app.db,
            &JobSpec::parse(&input).unwrap(),
            now - Duration::seconds(45),
        )
        .await
        .unwrap()
        .id
    };
    let input = JobInput {
        dependants: "report".into(),
        ..noop_job("import")
    };
    let import = jobs::create(&app.db, &JobSpec::parse(&input).unwrap(), now)
        .await
        .unwrap()
        .id;
    dead_run(&app, import, 0, ErrorClass::Permanent, "feed missing").await;

    let pass = enqueue_due_ticks(&app.db, now, std::time::Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(pass.inserted, 1);
    let held = job_run::Entity::find()
        .filter(job_run::Column::JobId.eq(report))
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(held.status, RunStatus::Blocked);
    assert!(
        held.last_error
            .as_deref()
            .unwrap()
            .contains("job import is failing"),
        "{:?}",
        held.last_error
    );

    // A viewer cannot release it; an admin can.
    let viewer = app.signed_in("viewer", VIEWER_PASSWORD).await;
    assert_eq!(
        app.call(&viewer, "runs/release", &[("id", &held.id.to_string())])
            .await
            .status(),
        403
    );
    let admin = app.signed_in("admin", ADMIN_PASSWORD).await;
    assert_eq!(
        app.call(&admin, "runs/release", &[("id", &held.id.to_string())])
            .await
            .status(),
        200
    );
    let released = job_run::Entity::find_by_id(held.id)
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(released.status, RunStatus::Pending);
    assert_eq!(
        app.call(&admin, "runs/release", &[("id", &held.id.to_string())])
            .await
            .status(),
        422
    );

    // The upstream recovers: a later success releases what was still held.
    job_run::ActiveModel {
        status: Set(RunStatus::Blocked),
        ..released.into()
    }
    .update(&app.db)
    .await
    .unwrap();
    insert_run(
        &app.db,
        run_row(
            import,
            RunStatus::Succeeded,
            Utc::now() + Duration::seconds(1),
        ),
    )
    .await;
    enqueue_due_ticks(&app.db, now, std::time::Duration::from_secs(60))
        .await
        .unwrap();
    let after = job_run::Entity::find_by_id(held.id)
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        after.status,
        RunStatus::Pending,
        "released once the upstream succeeded"
    );
}
on_both_backends!(dependants_are_held_while_their_upstream_is_dead);
