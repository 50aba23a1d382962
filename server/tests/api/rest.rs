//! The REST API with API tokens: every operation of the OpenAPI document called as nobody, with
//! a wrong, an expired and a revoked token, with a read, a trigger and an admin token, against what this
//! table expects (an operation without a row fails the test, and so does a row without an
//! operation); idempotent triggers under twenty parallel requests; jobs created, applied
//! (dry run first) and read back; errors as problem+json naming the field.

use std::collections::BTreeSet;

use app::domain::api_token::Scope;
use app::services::tokens;
use chrono::Utc;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use serde_json::{Value, json};

use crate::helpers::{TestApp, define, noop_job};
use crate::on_both_backends;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Access {
    Read,
    Change,
}

/// Every operation: method, path (with the fixture's names filled in), who may call it, and a
/// body that reaches its checks without harming the fixture.
fn operations() -> Vec<(&'static str, &'static str, Access, Option<Value>)> {
    use Access::*;
    vec![
        ("get", "/jobs", Read, None),
        ("post", "/jobs", Change, Some(json!({"name": ""}))),
        ("get", "/jobs/{name}", Read, None),
        ("put", "/jobs/{name}", Change, Some(json!({"name": ""}))),
        ("delete", "/jobs/{name}", Change, None),
        ("post", "/jobs/{name}/enable", Change, None),
        ("post", "/jobs/{name}/disable", Change, None),
        ("post", "/jobs/{name}/pause", Change, None),
        ("post", "/jobs/{name}/resume", Change, None),
        ("get", "/maintenance", Read, None),
        // An end already passed: refused after the role check, so nothing is paused.
        (
            "post",
            "/maintenance/pause",
            Change,
            Some(json!({"reason": "rest test", "until": "2000-01-01 00:00"})),
        ),
        ("post", "/maintenance/resume", Change, None),
        ("post", "/jobs/apply", Change, Some(json!({"jobs": []}))),
        ("get", "/jobs/{name}/revisions", Read, None),
        ("get", "/jobs/{name}/revisions/diff", Read, None),
        (
            "post",
            "/jobs/{name}/revisions/{revision}/restore",
            Change,
            Some(json!({})),
        ),
        (
            "post",
            "/jobs/{name}/runs",
            Change,
            Some(json!({"params": {"nope": 1}})),
        ),
        ("post", "/jobs/{name}/hook", Change, None),
        (
            "patch",
            "/jobs/{name}/hook",
            Change,
            Some(json!({"when_paused": "maybe"})),
        ),
        ("delete", "/jobs/{name}/hook", Change, None),
        ("post", "/jobs/{name}/ping-url", Change, None),
        ("get", "/calendars", Read, None),
        // A name the path does not give: refused after the role check, nothing kept.
        (
            "put",
            "/calendars/{name}",
            Change,
            Some(json!({"name": "other"})),
        ),
        ("delete", "/calendars/{name}", Change, None),
        (
            "post",
            "/jobs/{name}/backfills",
            Change,
            Some(json!({"from": "2026-01-02", "to": "2026-01-01", "dry_run": true})),
        ),
        ("get", "/jobs/{name}/backfills", Read, None),
        ("post", "/backfills/{id}/pause", Change, None),
        ("post", "/backfills/{id}/resume", Change, None),
        ("post", "/backfills/{id}/cancel", Change, None),
        ("get", "/runs", Read, None),
        ("get", "/runs/{id}", Read, None),
        ("get", "/runs/{id}/log", Read, None),
        ("get", "/runs/search", Read, None),
        ("post", "/runs/{id}/cancel", Change, None),
        ("get", "/failed", Read, None),
        ("post", "/failed/{id}/retrigger", Change, None),
        (
            "post",
            "/failed/retrigger",
            Change,
            Some(json!({"ids": [], "per_minute": 0})),
        ),
        (
            "post",
            "/failed/{id}/resolve",
            Change,
            Some(json!({"reason": ""})),
        ),
        (
            "post",
            "/failed/{id}/discard",
            Change,
            Some(json!({"reason": ""})),
        ),
        ("get", "/traffic", Read, None),
        ("get", "/sites/{host}/report", Read, None),
        // A site nobody registered: refused after the role check, nothing kept.
        (
            "put",
            "/sites/{host}/report",
            Change,
            Some(json!({"every": "week", "to": ["owner@example.com"]})),
        ),
        ("delete", "/sites/{host}/report", Change, None),
        ("post", "/channels/{name}/test", Change, None),
        ("get", "/nodes", Read, None),
    ]
}

/// The operations a trigger token may call (on the jobs it covers).
const TRIGGER_MAY: [(&str, &str); 6] = [
    ("get", "/jobs/{name}"),
    ("post", "/jobs/{name}/runs"),
    ("get", "/runs"),
    ("get", "/runs/{id}"),
    ("get", "/runs/{id}/log"),
    ("get", "/runs/search"),
];

async fn token(app: &TestApp, name: &str, scope: Scope, expires: &str) -> String {
    let new = tokens::NewToken {
        name,
        scope,
        tags: "",
        expires,
        owner: "admin",
        providers: &[],
    };
    tokens::create(&app.db, &new, &crate::helpers::TESTER, Utc::now())
        .await
        .unwrap()
        .0
}

fn url(app: &TestApp, path: &str) -> String {
    app.url(&format!("/api/v1{path}"))
}

async fn call(
    app: &TestApp,
    method: &str,
    path: &str,
    bearer: Option<&str>,
    body: Option<&Value>,
) -> reqwest::Response {
    let client = reqwest::Client::new();
    let method = reqwest::Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
    let mut request = client.request(method, url(app, path));
    if let Some(token) = bearer {
        request = request.bearer_auth(token);
    }
    if let Some(body) = body {
        request = request.json(body);
    }
    request.send().await.unwrap()
}

async fn every_operation_answers_each_caller_as_the_table_says(app: TestApp) {
    let fixture = define(&app.db, noop_job("fixture")).await;
    // Its first revision, as a start would record it.
    app::services::jobs::record_first_revisions(&app.db, &app.secret_key, Utc::now())
        .await
        .expect("the fixture's first revision");
    let run = app::services::runs::create_manual(&app.db, fixture.id, Utc::now())
        .await
        .unwrap();
    let admin = token(&app, "deploy", Scope::Admin, "30d").await;
    let viewer = token(&app, "grafana", Scope::Read, "").await;
    let trigger = token(&app, "ci", Scope::Trigger, "").await;
    let expired = token(&app, "old", Scope::Admin, "1h").await;
    app::entities::api_token::Entity::update_many()
        .col_expr(
            app::entities::api_token::Column::ExpiresAt,
            sea_orm::sea_query::Expr::value(Utc::now() - chrono::Duration::minutes(1)),
        )
        .filter(app::entities::api_token::Column::Name.eq("old"))
        .exec(&app.db)
        .await
        .unwrap();
    let revoked = token(&app, "leaked", Scope::Admin, "").await;
    tokens::revoke(&app.db, "leaked", &crate::helpers::TESTER, Utc::now())
        .await
        .unwrap();
    let wrong = format!("bwk_{}", "0".repeat(64));

    // The table and the document list the same operations.
    let served: Value = reqwest::get(url(&app, "/openapi.json"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        served["openapi"].as_str().unwrap().starts_with("3.1"),
        "OpenAPI 3.1: {}",
        served["openapi"]
    );
    let mut documented = BTreeSet::new();
    for (path, item) in served["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            documented.insert((method.clone(), path.clone()));
        }
    }
    let table: BTreeSet<(String, String)> = operations()
        .iter()
        .map(|(m, p, ..)| (m.to_string(), p.to_string()))
        .collect();
    assert_eq!(
        documented, table,
        "every operation has a row, every row an operation"
    );

    for (method, template, access, body) in operations() {
        // Reads find the fixture; changes aim at nothing, so they harm nothing.
        let path = match access {
            Access::Read => template
                .replace("{name}", "fixture")
                .replace("{id}", &run.id.to_string()),
            Access::Change => template
                .replace("{name}", "no-such-thing")
                .replace("{id}", "999999"),
        }
        .replace("{revision}", "1")
        .replace("{host}", "no-such-site.example");
        // A search needs its text, a diff its two revisions.
        let path = match template {
            "/runs/search" => format!("{path}?q=fixture"),
            "/jobs/{name}/revisions/diff" => format!("{path}?from=1&to=1"),
            _ => path,
        };
        let label = format!("{method} {template}");
        for (who, bearer) in [
            ("nobody", None),
            ("wrong token", Some(wrong.as_str())),
            ("expired token", Some(expired.as_str())),
            ("revoked token", Some(revoked.as_str())),
        ] {
            let response = call(&app, method, &path, bearer, body.as_ref()).await;
            assert_eq!(response.status(), 401, "{label} as {who}");
            assert_eq!(
                response.headers()["content-type"],
                "application/problem+json",
                "{label} as {who}"
            );
            let problem: Value = response.json().await.unwrap();
            assert_eq!(problem["status"], 401);
        }
        let as_viewer = call(&app, method, &path, Some(&viewer), body.as_ref()).await;
        let as_admin = call(&app, method, &path, Some(&admin), body.as_ref()).await;
        // A trigger token: only what starting runs and reading them needs.
        let as_trigger = call(&app, method, &path, Some(&trigger), body.as_ref()).await;
        let status = as_trigger.status().as_u16();
        if TRIGGER_MAY.contains(&(method, template)) {
            assert!(
                ![401, 403, 405, 500].contains(&status),
                "{label} as trigger: {status}"
            );
        } else {
            assert_eq!(status, 403, "{label} as trigger");
        }
        match access {
            Access::Read => {
                assert!(
                    as_viewer.status().is_success(),
                    "{label} as viewer: {}",
                    as_viewer.status()
                );
                assert!(as_admin.status().is_success(), "{label} as admin");
            }
            Access::Change => {
                assert_eq!(as_viewer.status(), 403, "{label} as viewer");
                let status = as_admin.status();
                assert!(
                    ![401, 403, 405, 500].contains(&status.as_u16()),
                    "{label} as admin reached its checks: {status}"
                );
            }
        }
    }
    // Reads only note the token's use; they leave no audit rows.
    let audit = app::services::audit::recent(&app.db, None, 100)
        .await
        .unwrap();
    assert!(
        audit.iter().all(|e| e.actor != "token:grafana"),
        "{audit:?}"
    );
    let listed = tokens::list(&app.db).await.unwrap();
    let grafana = listed.iter().find(|t| t.name == "grafana").unwrap();
    assert!(grafana.last_used_at.is_some());
}
on_both_backends!(every_operation_answers_each_caller_as_the_table_says);

async fn twenty_parallel_triggers_with_one_key_make_one_run(app: TestApp) {
    define(&app.db, noop_job("nightly")).await;
    let admin = token(&app, "deploy", Scope::Admin, "").await;
    let client = reqwest::Client::new();
    let requests = (0..20).map(|_| {
        client
            .post(url(&app, "/jobs/nightly/runs"))
            .bearer_auth(&admin)
            .header("Idempotency-Key", "upload-2026-12-01-0042")
            .json(&json!({"params": {}}))
            .send()
    });
    let answers = futures_util::future::join_all(requests).await;
    let mut created = 0;
    let mut ids = BTreeSet::new();
    for answer in answers {
        let answer = answer.unwrap();
        let status = answer.status().as_u16();
        let run: Value = answer.json().await.unwrap();
        assert!(status == 201 || status == 200, "{status}: {run}");
        if status == 201 {
            created += 1;
        }
        ids.insert(run["id"].as_i64().unwrap());
    }
    assert_eq!(created, 1, "one request made the run");
    assert_eq!(ids.len(), 1, "every answer names it: {ids:?}");
    let runs = app::entities::job_run::Entity::find()
        .all(&app.db)
        .await
        .unwrap();
    assert_eq!(runs.len(), 1);

    // Another key, another run; no key, a run each time.
    let other = call(&app, "post", "/jobs/nightly/runs", Some(&admin), None).await;
    assert_eq!(other.status(), 201);
    let run: Value = other.json().await.unwrap();
    let got: Value = call(
        &app,
        "get",
        &format!("/runs/{}", run["id"]),
        Some(&admin),
        None,
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(got["job"], "nightly");
    assert_eq!(got["trigger"], "manual");

    // Cancelled before it ran; cancelling again is a conflict.
    let cancelled = call(
        &app,
        "post",
        &format!("/runs/{}/cancel", run["id"]),
        Some(&admin),
        None,
    )
    .await;
    assert_eq!(cancelled.status(), 200);
    let cancelled: Value = cancelled.json().await.unwrap();
    assert_eq!(cancelled["status"], "cancelled");
    let again = call(
        &app,
        "post",
        &format!("/runs/{}/cancel", run["id"]),
        Some(&admin),
        None,
    )
    .await;
    assert_eq!(again.status(), 409);

    let listed: Value = call(&app, "get", "/runs?job=nightly&limit=1", Some(&admin), None)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(listed["items"].as_array().unwrap().len(), 1);
    let next = listed["next"].as_str().unwrap();
    let second: Value = call(
        &app,
        "get",
        &format!("/runs?job=nightly&limit=1&cursor={next}"),
        Some(&admin),
        None,
    )
    .await
    .json()
    .await
    .unwrap();
    assert_ne!(second["items"][0]["id"], listed["items"][0]["id"]);
    assert!(second["next"].is_null());

    let audit = app::services::audit::recent(&app.db, Some("nightly"), 10)
        .await
        .unwrap();
    assert!(
        audit
            .iter()
            .any(|e| e.actor == "token:deploy" && e.action == "run.triggered"),
        "{audit:?}"
    );
}
on_both_backends!(twenty_parallel_triggers_with_one_key_make_one_run);

async fn jobs_are_created_applied_and_read_back_with_field_errors_named(app: TestApp) {
    let admin = token(&app, "pipeline", Scope::Admin, "").await;
    let mut input = noop_job("from-api");
    input.description = "made by a pipeline".into();
    let created = call(&app, "post", "/jobs", Some(&admin), Some(&json!(input))).await;
    assert_eq!(created.status(), 201);

    input.retry.multiplier = "9.5".into();
    let refused = call(
        &app,
        "put",
        "/jobs/from-api",
        Some(&admin),
        Some(&json!(input)),
    )
    .await;
    assert_eq!(refused.status(), 422);
    assert_eq!(
        refused.headers()["content-type"],
        "application/problem+json"
    );
    let problem: Value = refused.json().await.unwrap();
    assert_eq!(
        problem["errors"][0]["field"], "retry.multiplier",
        "{problem}"
    );

    let toml = "[[job]]\nname = \"from-file\"\ncron = \"0 0 3 * * *\"\nkind = \"builtin\"\ntask = \"noop\"\n";
    let client = reqwest::Client::new();
    let dry: Value = client
        .post(url(&app, "/jobs/apply?dry_run=true"))
        .bearer_auth(&admin)
        .header("content-type", "application/toml")
        .body(toml)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(dry["created"], json!(["from-file"]));
    assert_eq!(
        call(&app, "get", "/jobs/from-file", Some(&admin), None)
            .await
            .status(),
        404,
        "a dry run writes nothing"
    );
    let applied = client
        .post(url(&app, "/jobs/apply"))
        .bearer_auth(&admin)
        .header("content-type", "application/toml")
        .body(toml)
        .send()
        .await
        .unwrap();
    assert_eq!(applied.status(), 200);
    let got: Value = call(&app, "get", "/jobs/from-file", Some(&admin), None)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(got["input"]["cron"], "0 0 3 * * *");

    let disabled: Value = call(&app, "post", "/jobs/from-file/disable", Some(&admin), None)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(disabled["input"]["enabled"], false);
    let page: Value = call(&app, "get", "/jobs?limit=1", Some(&admin), None)
        .await
        .json()
        .await
        .unwrap();
    // Jobs by name, a page at a time (the system jobs are there too).
    let first = page["items"][0]["name"].as_str().unwrap().to_string();
    assert_eq!(page["next"], first.as_str());
    let mut names = vec![first];
    let mut cursor = page["next"].as_str().map(str::to_string);
    while let Some(after) = cursor {
        let page: Value = call(
            &app,
            "get",
            &format!("/jobs?limit=2&cursor={after}"),
            Some(&admin),
            None,
        )
        .await
        .json()
        .await
        .unwrap();
        for item in page["items"].as_array().unwrap() {
            names.push(item["name"].as_str().unwrap().to_string());
        }
        cursor = page["next"].as_str().map(str::to_string);
    }
    let mut sorted = names.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(names, sorted, "in order, none twice");
    assert!(names.contains(&"from-api".to_string()) && names.contains(&"from-file".to_string()));
    assert_eq!(
        call(&app, "delete", "/jobs/from-api", Some(&admin), None)
            .await
            .status(),
        204
    );
    let failed: Value = call(&app, "get", "/failed?class=transient", Some(&admin), None)
        .await
        .json()
        .await
        .unwrap();
    assert!(failed["items"].as_array().unwrap().is_empty(), "{failed}");
    assert!(failed["next"].is_null());
    assert_eq!(failed["matching"], 0);
    let bad: Value = call(&app, "get", "/failed?class=purple", Some(&admin), None)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(bad["status"], 422, "{bad}");
    let missing = reqwest::Client::new()
        .get(url(&app, "/runs/999999"))
        .bearer_auth(&admin)
        .header("accept-language", "zh-CN")
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    let missing: Value = missing.json().await.unwrap();
    assert_eq!(missing["status"], 404, "{missing}");
    assert_eq!(missing["detail"], "找不到运行 #999999", "{missing}");
    let unknown = call(&app, "get", "/nope", Some(&admin), None).await;
    assert_eq!(unknown.status(), 404);
    assert_eq!(
        unknown.headers()["content-type"],
        "application/problem+json"
    );
}
on_both_backends!(jobs_are_created_applied_and_read_back_with_field_errors_named);

async fn every_example_in_the_document_is_accepted(app: TestApp) {
    let mut job = noop_job("nightly-export");
    job.parameters = "upload_id: string\nlimit: number = 100".into();
    define(&app.db, job).await;
    let admin = token(&app, "examples", Scope::Admin, "").await;
    let doc: Value = reqwest::get(url(&app, "/openapi.json"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    // Examples live on the request bodies' schemas.
    let schemas = &doc["components"]["schemas"];
    let mut tried = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let Some(schema) = op["requestBody"]["content"]["application/json"]["schema"]["$ref"]
                .as_str()
                .and_then(|r| r.rsplit('/').next())
            else {
                continue;
            };
            let example = &schemas[schema]["example"];
            if example.is_null() {
                continue;
            }
            tried += 1;
            let path = path
                .replace("{name}", "nightly-export")
                .replace("{id}", "999999");
            let answer = call(&app, method, &path, Some(&admin), Some(example)).await;
            let status = answer.status().as_u16();
            let text = answer.text().await.unwrap();
            assert!(
                status < 400 || !text.contains(r#""field":"body""#),
                "{method} {path}: the example {example} was refused: {status} {text}"
            );
            assert!(
                ![400, 415, 500].contains(&status),
                "{method} {path}: {status} {text}"
            );
        }
    }
    assert!(tried >= 5, "the document has examples: {tried}");
}
on_both_backends!(every_example_in_the_document_is_accepted);

/// `/traffic` takes the dashboard's filters, a bot category among them, with bad values named.
async fn traffic_figures_filter_by_category(app: TestApp) {
    use server::traffic::buffer::Buffer;
    use server::traffic::hit::Hit;
    let buffer = Buffer::new(1 << 20);
    let now = Utc::now();
    // The hits' own day, not `range=today`, which moves on if the test spans midnight.
    let day = now.format("from=%Y-%m-%d&to=%Y-%m-%d").to_string();
    for (ip, ua) in [
        (
            "10.0.0.1",
            "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
        ),
        (
            "10.0.0.2",
            "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
        ),
        (
            "10.0.0.3",
            "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)",
        ),
    ] {
        let (hit, _) = Hit::new(now.timestamp(), "GET", "/", ip, ua, "", String::new());
        buffer.record(hit, 1, false);
    }
    server::traffic::store::flush(&app.db, &buffer, server::traffic::store::IpPrivacy::Raw)
        .await
        .unwrap();
    let viewer = token(&app, "ci", Scope::Read, "30d").await;
    let ai: Value = call(
        &app,
        "get",
        &format!("/traffic?{day}&category=ai"),
        Some(&viewer),
        None,
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(ai["page_views"], 1);
    assert_eq!(ai["by_source"]["anthropic"], 1);
    let all: Value = call(&app, "get", &format!("/traffic?{day}"), Some(&viewer), None)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        all["by_category"],
        serde_json::json!({"ai": 1, "search": 1})
    );
    let bad = call(&app, "get", "/traffic?category=robots", Some(&viewer), None).await;
    assert_eq!(bad.status(), 422);
    let text = bad.text().await.unwrap();
    assert!(
        text.contains("category") && text.contains("search, ai"),
        "{text}"
    );
}
on_both_backends!(traffic_figures_filter_by_category);

/// Runs created within one millisecond (a catch-up of missed ticks writes hundreds at once)
/// are each on exactly one page of `/runs`.
async fn run_pages_keep_runs_created_in_one_millisecond(app: TestApp) {
    use crate::helpers::{define, insert_run, noop_job, run_row};
    use app::domain::run::RunStatus;
    use sea_orm::Set;

    let job = define(&app.db, noop_job("burst")).await;
    let base = chrono::DateTime::parse_from_rfc3339("2026-12-01T10:00:00.123000Z")
        .unwrap()
        .to_utc();
    let mut ids = Vec::new();
    for micros in [900, 5, 500, 0, 999, 250] {
        let mut row = run_row(job.id, RunStatus::Succeeded, base);
        row.created_at = Set(base + chrono::Duration::microseconds(micros));
        ids.push(insert_run(&app.db, row).await.id);
    }
    let admin = token(&app, "pager", Scope::Read, "never").await;
    let mut seen = Vec::new();
    let mut cursor = String::new();
    loop {
        let page: Value = call(
            &app,
            "get",
            &format!("/runs?job=burst&limit=2&cursor={cursor}"),
            Some(&admin),
            None,
        )
        .await
        .json()
        .await
        .unwrap();
        seen.extend(
            page["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["id"].as_i64().unwrap()),
        );
        match page["next"].as_str() {
            Some(next) => cursor = next.to_string(),
            None => break,
        }
    }
    seen.sort_unstable();
    ids.sort_unstable();
    assert_eq!(seen, ids);
}
on_both_backends!(run_pages_keep_runs_created_in_one_millisecond);

async fn scoped(app: &TestApp, name: &str, scope: Scope, tags: &str, owner: &str) -> String {
    let new = tokens::NewToken {
        name,
        scope,
        tags,
        expires: "",
        owner,
        providers: &[],
    };
    tokens::create(&app.db, &new, &crate::helpers::TESTER, Utc::now())
        .await
        .unwrap()
        .0
}

async fn a_trigger_token_starts_and_reads_only_its_jobs(app: TestApp) {
    let mut tagged = noop_job("deploy-web");
    tagged.tags = "deploy".into();
    define(&app.db, tagged).await;
    let other = define(&app.db, noop_job("payroll")).await;
    let other_run = app::services::runs::create_manual(&app.db, other.id, Utc::now())
        .await
        .unwrap();
    let ci = scoped(&app, "ci", Scope::Trigger, "deploy", "admin").await;
    let status = |r: reqwest::Response| r.status().as_u16();

    let started = call(&app, "post", "/jobs/deploy-web/runs", Some(&ci), None).await;
    assert_eq!(started.status(), 201);
    let run: Value = started.json().await.unwrap();
    let path = format!("/runs/{}", run["id"]);
    assert_eq!(status(call(&app, "get", &path, Some(&ci), None).await), 200);
    assert_eq!(
        status(call(&app, "get", "/jobs/deploy-web", Some(&ci), None).await),
        200
    );
    // With one tag, a list of runs is that tag's.
    let listed: Value = call(&app, "get", "/runs", Some(&ci), None)
        .await
        .json()
        .await
        .unwrap();
    let jobs: BTreeSet<&str> = listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["job"].as_str().unwrap())
        .collect();
    assert_eq!(jobs, BTreeSet::from(["deploy-web"]));

    // Everything else is refused.
    let payroll_run = format!("/runs/{}", other_run.id);
    for (method, path) in [
        ("post", "/jobs/payroll/runs"),
        ("get", "/jobs/payroll"),
        ("get", payroll_run.as_str()),
        ("get", "/runs?job=payroll"),
        ("get", "/jobs"),
        ("get", "/failed"),
        ("post", "/jobs/deploy-web/disable"),
        ("post", &format!("{path}/cancel")),
    ] {
        assert_eq!(
            status(call(&app, method, path, Some(&ci), None).await),
            403,
            "{method} {path}"
        );
    }
    let metrics = reqwest::Client::new()
        .get(app.url("/metrics"))
        .bearer_auth(&ci)
        .send()
        .await
        .unwrap();
    assert_eq!(metrics.status(), 403);

    // The run it started is audited with the caller's address.
    let row = app::entities::audit_log::Entity::find()
        .filter(app::entities::audit_log::Column::Actor.eq("token:ci"))
        .one(&app.db)
        .await
        .unwrap()
        .expect("the trigger is audited");
    assert_eq!(row.ip.as_deref(), Some("127.0.0.1"));
}
on_both_backends!(a_trigger_token_starts_and_reads_only_its_jobs);

async fn a_token_works_only_while_its_owner_allows_it(app: TestApp) {
    use app::services::users::{self, Change};
    let username = app::domain::account::Username::parse("ops").unwrap();
    let password = app::domain::account::NewPassword::parse("ops-password-long").unwrap();
    users::create(
        &app.db,
        &username,
        app::domain::account::Role::Admin,
        &password,
    )
    .await
    .unwrap();
    let admin = scoped(&app, "deploy", Scope::Admin, "", "ops").await;
    let read = scoped(&app, "grafana", Scope::Read, "", "ops").await;
    let works = |token: String| {
        let app = &app;
        async move {
            call(app, "get", "/jobs", Some(&token), None)
                .await
                .status()
                .as_u16()
        }
    };
    assert_eq!(
        (works(admin.clone()).await, works(read.clone()).await),
        (200, 200)
    );

    let now = Utc::now();
    users::change(
        &app.db,
        "ops",
        Change::Role(app::domain::account::Role::Viewer),
        &crate::helpers::TESTER,
        now,
    )
    .await
    .unwrap();
    assert_eq!(
        (works(admin.clone()).await, works(read.clone()).await),
        (401, 200),
        "a viewer keeps a read token, not an admin one"
    );
    let listed = tokens::list(&app.db).await.unwrap();
    let deploy = listed.iter().find(|t| t.name == "deploy").unwrap();
    assert_eq!(deploy.state(Utc::now()), "stopped");
    assert_eq!(
        tokens::stopped_by(
            &app.db,
            deploy_owner(&app).await,
            tokens::OwnerChange::Disable,
            now
        )
        .await
        .unwrap(),
        ["grafana"]
    );

    users::change(
        &app.db,
        "ops",
        Change::Disabled(true),
        &crate::helpers::TESTER,
        now,
    )
    .await
    .unwrap();
    assert_eq!(
        works(read.clone()).await,
        401,
        "a disabled owner stops every token"
    );
    users::change(&app.db, "ops", Change::Delete, &crate::helpers::TESTER, now)
        .await
        .unwrap();
    users::create(
        &app.db,
        &username,
        app::domain::account::Role::Admin,
        &password,
    )
    .await
    .unwrap();
    assert_eq!(
        (works(admin).await, works(read).await),
        (401, 401),
        "an account of the same name is someone else"
    );
}
on_both_backends!(a_token_works_only_while_its_owner_allows_it);

async fn deploy_owner(app: &TestApp) -> i64 {
    app::services::users::find_by_username(&app.db, "ops")
        .await
        .unwrap()
        .unwrap()
        .id
}
