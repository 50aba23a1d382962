//! Job parameters: a run started through the API with values, checked against the job's
//! declarations (every problem named `params.NAME`), defaults filled in; a command reads them
//! as variables and JSON on stdin; an HTTP job as `${param:NAME}`, in the same single pass as
//! secrets, so a value cannot pull a secret out; a run without a required value fails, by name;
//! a re-trigger keeps the values.

use app::domain::api_token::Scope;
use std::time::Duration;

use app::domain::job::Kind;
use app::domain::run::RunStatus;
use chrono::Utc;
use sea_orm::EntityTrait;
use serde_json::{Value, json};

use crate::engine::{attempts_of, base, engine_config, run_to_end_on};
use crate::helpers::{TestApp, define, wait_for_status};
use crate::on_both_backends;
use crate::secrets::echo_server;

pub(crate) async fn trigger(
    app: &TestApp,
    token: &str,
    job: &str,
    body: Value,
) -> reqwest::Response {
    reqwest::Client::new()
        .post(app.url(&format!("/api/v1/jobs/{job}/runs")))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap()
}

/// Runs the run `id` to its end with an engine that can open secrets.
pub(crate) async fn finish(app: &TestApp, id: i64) -> app::entities::job_run::Model {
    let mut config = engine_config("node-a");
    config.secret_key = Some(app.secret_key.clone());
    let engine = crate::engine::start(&app.db, config);
    let finished = wait_for_status(
        &app.db,
        id,
        &[RunStatus::Succeeded, RunStatus::Dead],
        Duration::from_secs(20),
    )
    .await;
    engine.stop().await;
    finished
}

async fn runs_take_the_values_they_were_started_with(app: TestApp) {
    let token = crate::helpers::api_token(&app.db, "uploader", Scope::Admin).await;
    let mut command = base("ingest");
    command.kind = Kind::Command.as_str().into();
    command.command_program = "sh".into();
    command.command_args =
        "-c\necho \"id=$BULWARK_PARAM_UPLOAD_ID limit=$BULWARK_PARAM_LIMIT\"; cat".into();
    command.retry.max_retries = "1".into();
    command.parameters = "upload_id: string required\nlimit: number = 100".into();
    let job = define(&app.db, command).await;

    // Problems are named by field, and nothing starts.
    let refused = trigger(
        &app,
        &token,
        "ingest",
        json!({"params": {"limit": "ten", "colour": 1}}),
    )
    .await;
    assert_eq!(refused.status(), 422);
    let problem: Value = refused.json().await.unwrap();
    let fields: Vec<&str> = problem["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["field"].as_str().unwrap())
        .collect();
    assert_eq!(
        fields,
        ["params.colour", "params.upload_id", "params.limit"],
        "{problem}"
    );
    assert_eq!(
        app::entities::job_run::Entity::find()
            .all(&app.db)
            .await
            .unwrap()
            .len(),
        0
    );

    let started = trigger(
        &app,
        &token,
        "ingest",
        json!({"params": {"upload_id": "u-42"}}),
    )
    .await;
    assert_eq!(started.status(), 201);
    let run: Value = started.json().await.unwrap();
    assert_eq!(run["params"], json!({"limit": 100, "upload_id": "u-42"}));
    let id = run["id"].as_i64().unwrap();
    let finished = finish(&app, id).await;
    assert_eq!(finished.status, RunStatus::Succeeded);
    let output = attempts_of(&app.db, id).await[0]
        .output_tail
        .clone()
        .unwrap_or_default();
    assert!(output.contains("id=u-42 limit=100"), "{output}");
    assert!(
        output.contains(r#"{"limit":100,"upload_id":"u-42"}"#),
        "stdin: {output}"
    );
    let shown: Value = reqwest::Client::new()
        .get(app.url(&format!("/api/v1/runs/{id}")))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(shown["params"], r#"{"limit":100,"upload_id":"u-42"}"#);

    // A run without the required value (as a cron tick would be) fails at once, saying which.
    let (bare, ended) = run_to_end_on(&app.db, job.id, Duration::from_secs(20), {
        let mut config = engine_config("node-a");
        config.secret_key = Some(app.secret_key.clone());
        config
    })
    .await;
    assert_eq!(ended.status, RunStatus::Dead);
    let attempts = attempts_of(&app.db, bare.id).await;
    assert_eq!(attempts.len(), 1, "permanent: not retried");
    assert_eq!(
        attempts[0].message.as_deref(),
        Some("upload_id is required")
    );
}
on_both_backends!(runs_take_the_values_they_were_started_with);

async fn a_parameter_cannot_pull_a_secret_out(app: TestApp) {
    const CANARY: &str = "canary-7f3e9a";
    let token = crate::helpers::api_token(&app.db, "caller", Scope::Admin).await;
    app.set_secret("API_KEY", CANARY).await;
    let (url, seen) = echo_server().await;
    let mut http = base("lookup");
    http.http_url = format!("{url}/lookup?q=${{param:q}}");
    http.http_headers = "X-Api-Key: ${secret:API_KEY}".into();
    http.http_body = r#"{"query": "${param:q}"}"#.into();
    http.http_method = "POST".into();
    http.parameters = "q: string".into();
    define(&app.db, http).await;

    let run: Value = trigger(
        &app,
        &token,
        "lookup",
        json!({"params": {"q": "${secret:API_KEY}"}}),
    )
    .await
    .json()
    .await
    .unwrap();
    let finished = finish(&app, run["id"].as_i64().unwrap()).await;
    assert_eq!(finished.status, RunStatus::Succeeded);
    let sent = seen.lock().unwrap().join("\n");
    assert_eq!(
        sent.matches(CANARY).count(),
        1,
        "only the job's own reference (the header) is filled in: {sent}"
    );
    assert!(sent.contains(r#"{"query": "${secret:API_KEY}"}"#), "{sent}");

    // A re-trigger of a dead run keeps its values.
    let dead = app::services::runs::trigger(
        &app.db,
        app::services::jobs::list_models(&app.db)
            .await
            .unwrap()
            .iter()
            .find(|j| j.name == "lookup")
            .unwrap()
            .id,
        app::services::runs::Request {
            params: Some(r#"{"q":"again"}"#.into()),
            ..Default::default()
        },
        Utc::now(),
    )
    .await
    .unwrap();
    let app::services::runs::Triggered::Created(dead) = dead else {
        panic!("a new run")
    };
    app::entities::job_run::Entity::update(app::entities::job_run::ActiveModel {
        id: sea_orm::Set(dead.id),
        status: sea_orm::Set(RunStatus::Dead),
        due_at: sea_orm::Set(None),
        finished_at: sea_orm::Set(Some(Utc::now())),
        ..Default::default()
    })
    .exec(&app.db)
    .await
    .unwrap();
    let again = app::services::failed::retrigger(
        &app.db,
        dead.id,
        &Default::default(),
        &app::services::audit::Actor {
            id: None,
            name: "test",
            ip: None,
        },
        Utc::now(),
        Utc::now(),
    )
    .await
    .unwrap();
    let again = app::entities::job_run::Entity::find_by_id(again)
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(again.params.as_deref(), Some(r#"{"q":"again"}"#));
}
on_both_backends!(a_parameter_cannot_pull_a_secret_out);

async fn a_trigger_url_starts_runs_for_callers_without_a_token(app: TestApp) {
    let token = crate::helpers::api_token(&app.db, "admin-api", Scope::Admin).await;
    let mut job = crate::helpers::noop_job("on-upload");
    job.parameters = "upload_id: string required".into();
    define(&app.db, job).await;
    let client = reqwest::Client::new();
    let hook: Value = client
        .post(app.url("/api/v1/jobs/on-upload/hook"))
        .bearer_auth(&token)
        .json(&json!({"secret": "shared-secret"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(hook["signed"], true);
    let path = hook["path"].as_str().unwrap().to_string();
    let body = r#"{"params": {"upload_id": "h-1"}}"#;
    let sign = |body: &str, secret: &str| {
        use hmac::Mac;
        let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).unwrap();
        mac.update(body.as_bytes());
        format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
    };
    let post = |signature: Option<String>, key: &str| {
        let mut request = client
            .post(app.url(&path))
            .header("content-type", "application/json")
            .header("Idempotency-Key", key)
            .body(body);
        if let Some(signature) = signature {
            request = request.header("X-Bulwark-Signature", signature);
        }
        request.send()
    };
    assert_eq!(post(None, "k1").await.unwrap().status(), 401, "unsigned");
    assert_eq!(
        post(Some(sign(body, "wrong")), "k1")
            .await
            .unwrap()
            .status(),
        401,
        "signed with another secret"
    );
    let first = post(Some(sign(body, "shared-secret")), "k1").await.unwrap();
    assert_eq!(first.status(), 201);
    let first: Value = first.json().await.unwrap();
    assert_eq!(first["params"], json!({"upload_id": "h-1"}));
    let again = post(Some(sign(body, "shared-secret")), "k1").await.unwrap();
    assert_eq!(again.status(), 200, "the same key, the same run");
    let again: Value = again.json().await.unwrap();
    assert_eq!(again["id"], first["id"]);
    let audit = app::services::audit::recent(&app.db, Some("on-upload"), 10)
        .await
        .unwrap();
    assert!(
        audit.iter().any(|e| e.actor == "hook:on-upload"),
        "{audit:?}"
    );

    // A new URL: the old one is gone.
    let rotated: Value = client
        .post(app.url("/api/v1/jobs/on-upload/hook"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(rotated["signed"], false);
    assert_eq!(post(None, "k2").await.unwrap().status(), 404);
    let path = rotated["path"].as_str().unwrap().to_string();
    // Sixty a minute, then 429 (the same key, so one run however many arrive). The bucket
    // refills one a second, so on a slow machine a few more may pass before the first 429:
    // at most one per second the burst took.
    let started = std::time::Instant::now();
    let mut statuses = Vec::new();
    loop {
        let status = client
            .post(app.url(&path))
            .header("Idempotency-Key", "burst")
            .body(body)
            .send()
            .await
            .unwrap()
            .status()
            .as_u16();
        statuses.push(status);
        if status == 429 || statuses.len() > 200 {
            break;
        }
    }
    let accepted = statuses.iter().filter(|s| matches!(**s, 200 | 201)).count() as u64;
    let refilled = started.elapsed().as_secs() + 1;
    assert_eq!(statuses.last(), Some(&429), "{statuses:?}");
    assert!(
        (60..=60 + refilled).contains(&accepted),
        "{accepted} accepted in {refilled} s before the first 429: {statuses:?}"
    );
    assert_eq!(statuses[0], 201);
    assert_eq!(
        client
            .delete(app.url("/api/v1/jobs/on-upload/hook"))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap()
            .status(),
        204
    );
    assert_eq!(
        client
            .post(app.url(&path))
            .body(body)
            .send()
            .await
            .unwrap()
            .status(),
        404
    );
}
on_both_backends!(a_trigger_url_starts_runs_for_callers_without_a_token);
