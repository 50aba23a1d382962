//! Parameters as data (`app/src/domain/job/placement.rs`), end to end: hostile values sent
//! through the API reach an HTTP target encoded for their places, never as another host, a
//! JSON field or a header; a value that cannot fit its place is refused when the run is asked
//! for; a definition that puts a parameter in code is refused with its field, from the API and
//! from `jobs apply`; a command takes an allow-listed value as a whole argument; and a job saved
//! before the rules is held at start-up, listed by `bulwark jobs check`, and runs as written
//! only once confirmed, until its next edit.

use app::domain::api_token::Scope;
use app::domain::job::{JobSpec, Kind};
use app::domain::run::RunStatus;
use app::entities::{audit_log, job, job_run};
use chrono::Utc;
use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter};
use serde_json::{Value, json};

use crate::engine::{attempts_of, base};
use crate::helpers::{TestApp, define};
use crate::on_both_backends;
use crate::params::{finish, trigger};
use crate::process::bulwark;
use crate::secrets::echo_server;

async fn admin_token(app: &TestApp) -> String {
    crate::helpers::api_token(&app.db, "pipeline", Scope::Admin).await
}

async fn runs(app: &TestApp) -> u64 {
    job_run::Entity::find().count(&app.db).await.unwrap()
}

fn fields(problem: &Value) -> Vec<String> {
    problem["errors"]
        .as_array()
        .map(|errors| {
            errors
                .iter()
                .map(|e| e["field"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

async fn hostile_values_reach_the_target_as_data(app: TestApp) {
    let token = admin_token(&app).await;
    let (url, seen) = echo_server().await;
    let mut http = base("lookup");
    http.http_method = "POST".into();
    http.http_url = format!("{url}/v1/${{param:path}}?q=${{param:q}}");
    http.http_headers = "X-Api-Key: key-1\nX-Trace: ${param:trace}".into();
    http.http_body = r#"{"query": "${param:q}", "limit": ${param:limit}}"#.into();
    http.parameters = "path: string\nq: string\ntrace: string = t\nlimit: number = 5".into();
    define(&app.db, http).await;

    let injected = r#"x", "admin": true, "y": ""#;
    let answer = trigger(
        &app,
        &token,
        "lookup",
        json!({"params": {"path": "@attacker.invalid/", "q": injected}}),
    )
    .await;
    assert_eq!(answer.status(), 201);
    let run: Value = answer.json().await.unwrap();
    let finished = finish(&app, run["id"].as_i64().unwrap()).await;
    assert_eq!(finished.status, RunStatus::Succeeded);
    let sent = seen.lock().unwrap().clone();
    assert_eq!(sent.len(), 1, "{sent:?}");
    // `{uri} {x-api-key} {body}`: the path stayed one segment on the target's own host.
    let (uri, rest) = sent[0].split_once(' ').unwrap();
    assert!(
        uri.starts_with("/v1/%40attacker.invalid%2F?q=x%22"),
        "{uri}"
    );
    let body: serde_json::Map<String, Value> =
        serde_json::from_str(rest.strip_prefix("key-1 ").unwrap()).unwrap();
    assert_eq!(body.keys().collect::<Vec<_>>(), ["limit", "query"]);
    assert_eq!(body["query"], json!(injected));
    assert_eq!(body["limit"], json!(5));

    // A value that would end its header is refused when the run is asked for; nothing starts.
    let before = runs(&app).await;
    let refused = trigger(
        &app,
        &token,
        "lookup",
        json!({"params": {"path": "a", "q": "b", "trace": "t\r\nX-Admin: 1"}}),
    )
    .await;
    assert_eq!(refused.status(), 422);
    assert_eq!(fields(&refused.json().await.unwrap()), ["params.trace"]);
    let climbing = trigger(
        &app,
        &token,
        "lookup",
        json!({"params": {"path": "..", "q": "b"}}),
    )
    .await;
    assert_eq!(climbing.status(), 422);
    assert_eq!(fields(&climbing.json().await.unwrap()), ["params.path"]);
    assert_eq!(runs(&app).await, before);
}
on_both_backends!(hostile_values_reach_the_target_as_data);

async fn a_parameter_in_code_is_refused_with_its_field(app: TestApp) {
    let token = admin_token(&app).await;
    let mut origin = base("origin");
    origin.http_url = "https://api.example.com${param:path}".into();
    origin.parameters = "path: string".into();
    let mut script = base("script");
    script.kind = Kind::Command.as_str().into();
    script.command_program = "sh".into();
    script.command_args = "-c\ntar czf /b/${param:name}.tgz".into();
    script.parameters = "name: string".into();
    let mut open = script.clone();
    open.name = "open".into();
    open.command_program = "rm".into();
    open.command_args = "${param:name}".into();
    for (input, field) in [
        (origin, "http_url"),
        (script, "command_args"),
        (open, "command_args"),
    ] {
        let answer = reqwest::Client::new()
            .post(app.url("/api/v1/jobs"))
            .bearer_auth(&token)
            .json(&input)
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 422, "{}", input.name);
        assert_eq!(
            fields(&answer.json().await.unwrap()),
            [field],
            "{}",
            input.name
        );
    }
    assert_eq!(crate::helpers::own_jobs(&app.db).await, 0);

    // From a jobs file: non-zero, the job and the field named, nothing applied.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("jobs.toml");
    std::fs::write(
        &file,
        "[[job]]\nname = \"backup\"\ncron = \"0 0 3 * * *\"\nkind = \"command\"\ncommand = [\"sh\", \"-c\", \"tar czf /b/${param:name}.tgz\"]\n[[job.parameter]]\nname = \"name\"\ntype = \"string\"\n",
    )
    .unwrap();
    let out = bulwark(&app, dir.path(), &["jobs", "apply", "jobs.toml"], &[])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("job 1 'backup'") && stderr.contains("command_args"),
        "{stderr}"
    );
    assert_eq!(crate::helpers::own_jobs(&app.db).await, 0);
}
on_both_backends!(a_parameter_in_code_is_refused_with_its_field);

async fn a_command_takes_an_allow_listed_value_as_a_whole_argument(app: TestApp) {
    let token = admin_token(&app).await;
    let mut command = base("region-report");
    command.kind = Kind::Command.as_str().into();
    command.command_program = "printf".into();
    command.command_args = "[%s]\n${param:region}".into();
    command.parameters = "region: string = eu | choices: eu, us-east".into();
    define(&app.db, command).await;
    let refused = trigger(
        &app,
        &token,
        "region-report",
        json!({"params": {"region": "eu; id"}}),
    )
    .await;
    assert_eq!(refused.status(), 422);
    assert_eq!(fields(&refused.json().await.unwrap()), ["params.region"]);
    let run: Value = trigger(
        &app,
        &token,
        "region-report",
        json!({"params": {"region": "us-east"}}),
    )
    .await
    .json()
    .await
    .unwrap();
    let id = run["id"].as_i64().unwrap();
    assert_eq!(finish(&app, id).await.status, RunStatus::Succeeded);
    let output = attempts_of(&app.db, id).await[0].output_tail.clone();
    assert_eq!(output.as_deref(), Some("[us-east]"));
}
on_both_backends!(a_command_takes_an_allow_listed_value_as_a_whole_argument);

/// A job as an earlier version saved it: the definition goes in without today's placement
/// check (which only saving runs).
async fn saved_before_the_rules(app: &TestApp) -> job::Model {
    let mut input = base("legacy");
    input.kind = Kind::Command.as_str().into();
    input.command_program = "sh".into();
    input.command_args = "-c\necho safe".into();
    input.parameters = "name: string = world".into();
    let mut spec = JobSpec::parse(&input).unwrap();
    spec.kind = app::domain::job::JobKind::Command {
        program: "sh".into(),
        args: vec!["-c".into(), "echo hello-${param:name}".into()],
        transient_codes: vec![75],
    };
    app::services::jobs::create(&app.db, &spec, Utc::now())
        .await
        .unwrap()
}

async fn legacy_row(app: &TestApp) -> job::Model {
    job::Entity::find()
        .filter(job::Column::Name.eq("legacy"))
        .one(&app.db)
        .await
        .unwrap()
        .unwrap()
}

async fn a_job_saved_before_the_rules_is_held_until_confirmed(app: TestApp) {
    let token = admin_token(&app).await;
    saved_before_the_rules(&app).await;
    // The upgrade: the next start holds it, with the place named, instead of failing it.
    app.build_again().await;
    let held = legacy_row(&app).await;
    assert!(held.paused && !held.params_as_written);
    assert!(
        held.params_held
            .as_deref()
            .unwrap_or_default()
            .contains("command_args"),
        "{:?}",
        held.params_held
    );
    let dir = tempfile::tempdir().unwrap();
    let check = |args: &[&str]| bulwark(&app, dir.path(), args, &[]).output().unwrap();
    let listed: Value =
        serde_json::from_slice(&check(&["jobs", "check", "--json"]).stdout).unwrap();
    assert_eq!(listed[0]["name"], "legacy");
    assert_eq!(listed[0]["held"], true);
    assert_eq!(listed[0]["misplaced"][0]["field"], "command_args");
    assert_eq!(listed[0]["misplaced"][0]["place"], "part_of_argument");
    // Neither a resume nor a run by hand releases it.
    let resume = app::services::maintenance::set_job_paused(
        &app.db,
        held.id,
        false,
        &crate::helpers::TESTER,
        Utc::now(),
    )
    .await;
    assert!(resume.is_err());
    let refused = trigger(&app, &token, "legacy", json!({})).await;
    assert_eq!(refused.status(), 422);

    // Confirmed: it runs as written, audited, until its next edit.
    let confirmed = check(&["jobs", "check", "--confirm", "legacy"]);
    assert!(confirmed.status.success(), "{confirmed:?}");
    let row = legacy_row(&app).await;
    assert!(!row.paused && row.params_as_written && row.params_held.is_none());
    let audited = audit_log::Entity::find()
        .filter(audit_log::Column::Action.eq("job.params_as_written"))
        .count(&app.db)
        .await
        .unwrap();
    assert_eq!(audited, 1);
    let run: Value = trigger(&app, &token, "legacy", json!({"params": {"name": "x y"}}))
        .await
        .json()
        .await
        .unwrap();
    let id = run["id"].as_i64().unwrap();
    assert_eq!(finish(&app, id).await.status, RunStatus::Succeeded);
    let output = attempts_of(&app.db, id).await[0].output_tail.clone();
    assert_eq!(output.as_deref(), Some("hello-x y\n"));
    let listed: Value =
        serde_json::from_slice(&check(&["jobs", "check", "--json"]).stdout).unwrap();
    assert_eq!(listed[0]["held"], false);
}
on_both_backends!(a_job_saved_before_the_rules_is_held_until_confirmed);
