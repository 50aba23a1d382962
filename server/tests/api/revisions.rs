//! Job revisions: made by the console, the API's apply and a restore, never by a save that
//! changes nothing; listed, compared with credentials hidden, restored with them; each run
//! records the revision it ran.

use app::domain::api_token::Scope;
use app::domain::job::JobInput;
use sea_orm::EntityTrait;
use serde_json::{Value, json};

use crate::helpers::{ADMIN_PASSWORD, TestApp};
use crate::on_both_backends;
use crate::process::{cli, text};

const SECRET: &str = "Bearer s3cret-value";

async fn save(app: &TestApp, client: &reqwest::Client, id: Option<i64>, input: &JobInput) -> i64 {
    let res = client
        .post(app.url("/api/jobs/save"))
        .json(&json!({ "id": id, "input": input }))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
    res.json().await.unwrap()
}

async fn apply(app: &TestApp, token: &str, input: &JobInput) -> Value {
    let res = reqwest::Client::new()
        .post(app.url("/api/v1/jobs/apply"))
        .bearer_auth(token)
        .json(&json!({ "jobs": [input] }))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
    res.json().await.unwrap()
}

fn history(app: &TestApp) -> Vec<Value> {
    let out = cli(app, &["jobs", "history", "nightly", "--json"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

async fn every_change_is_a_revision_and_one_can_be_restored(app: TestApp) {
    let (url, _) = crate::engine::flaky_server(0, 200).await;
    let admin = app.signed_in("admin", ADMIN_PASSWORD).await;
    let mut input = crate::engine::base("nightly");
    input.kind = "http".into();
    input.http_url = url.clone();
    input.http_headers = format!("Authorization: {SECRET}");
    // 1: made in the console; 2: its timeout changed there; 3: its URL, by a token's apply.
    let id = save(&app, &admin, None, &input).await;
    let mut edited = input.clone();
    edited.timeout_static = "9s".into();
    edited.http_headers = format!("Authorization: {}", app::domain::job::redact::HIDDEN);
    save(&app, &admin, Some(id), &edited).await;
    let token = crate::helpers::api_token(&app.db, "ci", Scope::Admin).await;
    let mut applied = input.clone();
    applied.timeout_static = "9s".into();
    applied.http_url = format!("{url}?v=3");
    assert_eq!(
        apply(&app, &token, &applied).await["updated"],
        json!(["nightly"])
    );
    assert_eq!(
        apply(&app, &token, &applied).await["unchanged"],
        json!(["nightly"])
    );

    let listed = history(&app);
    let actors: Vec<&str> = listed
        .iter()
        .map(|r| r["actor"].as_str().unwrap())
        .collect();
    assert_eq!(
        actors,
        ["token:ci", "admin", "admin"],
        "newest first; the same file twice made one"
    );
    assert_eq!(listed[0]["revision"], 3);
    assert!(listed[0].get("at").is_some() && listed[0].get("note").is_some());

    // The two changed fields, and no credential printed.
    let out = cli(&app, &["jobs", "diff", "nightly", "1", "3"], "");
    let diff = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let fields: Vec<&str> = diff.lines().map(|l| l.split(':').next().unwrap()).collect();
    assert_eq!(fields, ["http_url", "timeout_static"], "{diff}");
    assert!(!diff.contains("s3cret"), "{diff}");

    // Restored: revision 4 is revision 1, the credential included; the run records it.
    let out = cli(&app, &["jobs", "restore", "nightly", "1"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listed = history(&app);
    assert_eq!(listed[0]["revision"], 4);
    assert_eq!(listed[0]["note"], "restored from revision 1");
    let job = app::services::jobs::get(&app.db, id).await.unwrap();
    let now = app::services::jobs::to_spec(&job).unwrap().to_input();
    assert_eq!(now.http_headers, format!("Authorization: {SECRET}"));
    assert_eq!(
        (now.http_url.as_str(), now.timeout_static.as_str()),
        (url.as_str(), "5s")
    );

    // The API says the same; a run records the revision it ran.
    let revisions: Value = reqwest::Client::new()
        .get(app.url("/api/v1/jobs/nightly/revisions"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(revisions.as_array().unwrap().len(), 4);
    let (_, finished) =
        crate::engine::run_to_end(&app.db, id, std::time::Duration::from_secs(30)).await;
    assert_eq!(finished.revision, Some(4));
    let out = cli(&app, &["runs", "list", "--job", "nightly", "--json"], "");
    let runs: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(runs[0]["revision"], 4);
}
on_both_backends!(every_change_is_a_revision_and_one_can_be_restored);

/// A rekey seals every revision again: a restore after it brings back the credential.
#[tokio::test(flavor = "multi_thread")]
async fn revisions_are_sealed_and_a_rekey_covers_them() {
    let app = TestApp::sqlite_with(|_, _| {}).await;
    let admin = app.signed_in("admin", ADMIN_PASSWORD).await;
    let mut input = crate::engine::base("nightly");
    input.kind = "http".into();
    input.http_url = "http://127.0.0.1:9/".into();
    input.http_headers = format!("Authorization: {SECRET}");
    let id = save(&app, &admin, None, &input).await;
    let row = app::entities::job_revision::Entity::find()
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    assert!(!row.sealed.contains("s3cret") && !row.shown.contains("s3cret"));
    let new_key = app::services::secrets::SecretKey::generate();
    app::services::sealed::rekey(
        &app.db,
        &app.secret_key,
        &new_key,
        &crate::helpers::TESTER,
        chrono::Utc::now(),
    )
    .await
    .unwrap();
    let job = app::services::jobs::get(&app.db, id).await.unwrap();
    let (stored, shown) = app::services::revisions::get(&app.db, &new_key, &job, 1)
        .await
        .unwrap();
    assert_eq!(stored.http_headers, format!("Authorization: {SECRET}"));
    assert!(!shown.http_headers.contains("s3cret"));
}

/// Runs of a revision, finished just now, each after a transient failure: a failure episode
/// each, recovered at the retry for those that succeeded.
async fn runs_of(app: &TestApp, job_id: i64, revision: i32, status: app::domain::run::RunStatus) {
    use app::domain::run::{ErrorClass, Outcome, RunStatus};
    use app::entities::job_attempt;
    use sea_orm::{ActiveModelTrait, Set};
    let now = chrono::Utc::now();
    let outcomes: &[Outcome] = match status {
        RunStatus::Succeeded => &[Outcome::Failed, Outcome::Succeeded],
        _ => &[Outcome::Failed],
    };
    for _ in 0..10 {
        let mut row = crate::helpers::run_row(job_id, status, now);
        row.revision = Set(Some(revision));
        row.attempts = Set(outcomes.len() as i32);
        let run = crate::helpers::insert_run(&app.db, row).await;
        for (number, outcome) in (1..).zip(outcomes) {
            job_attempt::ActiveModel {
                run_id: Set(run.id),
                number: Set(number),
                started_at: Set(now),
                finished_at: Set(Some(now)),
                duration_ms: Set(Some(100)),
                timeout_ms: Set(1000),
                outcome: Set(Some(*outcome)),
                error_class: Set((*outcome == Outcome::Failed).then_some(ErrorClass::Transient)),
                node: Set("test".into()),
                slow: Set(false),
                ..Default::default()
            }
            .insert(&app.db)
            .await
            .unwrap();
        }
    }
}

/// A change that broke the job: the job page marks the revision worse than the one before,
/// with both rates, and the next digest names the job, who changed it and what.
async fn a_change_that_breaks_a_job_is_named(app: TestApp) {
    use app::domain::run::RunStatus;
    let admin = app.signed_in("admin", ADMIN_PASSWORD).await;
    let mut input = crate::engine::base("nightly");
    input.kind = "http".into();
    input.http_url = "http://127.0.0.1:9/ok".into();
    let id = save(&app, &admin, None, &input).await;
    runs_of(&app, id, 1, RunStatus::Succeeded).await;
    input.http_url = "http://127.0.0.1:9/broken".into();
    save(&app, &admin, Some(id), &input).await;
    runs_of(&app, id, 2, RunStatus::Dead).await;

    let res = app
        .call(&admin, "jobs/revisions", &[("id", &id.to_string())])
        .await;
    let listed: Value = serde_json::from_str(&res.text().await.unwrap()).unwrap();
    assert_eq!(listed[0]["row"]["revision"], 2);
    assert_eq!(listed[0]["outcome"]["runs"], 10);
    assert_eq!(listed[0]["worse"]["rate"], json!([1.0, 0.0]));
    assert_eq!(listed[1]["worse"], Value::Null);
    let res = app
        .call(
            &admin,
            "jobs/revisions/diff",
            &[("id", &id.to_string()), ("from", "1"), ("to", "2")],
        )
        .await;
    let diff: Value = serde_json::from_str(&res.text().await.unwrap()).unwrap();
    assert_eq!(diff[0]["field"], "http_url");
    // The retry evidence knows which revision each failure episode ran, and which is current.
    let res = app
        .call(&admin, "jobs/episodes", &[("id", &id.to_string())])
        .await;
    let evidence: Value = serde_json::from_str(&res.text().await.unwrap()).unwrap();
    assert_eq!(evidence["current"], 2);
    let of = |revision: i64| {
        evidence["episodes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e[0] == revision)
            .count()
    };
    assert_eq!((of(1), of(2)), (10, 10), "{evidence}");

    let end = chrono::Utc::now() + chrono::Duration::minutes(1);
    let digest = app::services::notifications::digest::gather(&app.db, end)
        .await
        .unwrap();
    let [finding] = digest.worse_after_change.as_slice() else {
        panic!("{:?}", digest.worse_after_change);
    };
    assert_eq!(
        (
            finding.job.as_str(),
            finding.revision,
            finding.actor.as_str()
        ),
        ("nightly", 2, "admin")
    );
    assert_eq!(finding.fields, ["http_url"]);
}
on_both_backends!(a_change_that_breaks_a_job_is_named);

/// A command given another key file refuses to seal anything (the server could not open it).
#[tokio::test(flavor = "multi_thread")]
async fn a_command_with_another_key_changes_nothing() {
    let app = TestApp::sqlite_with(|_, _| {}).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("jobs.toml");
    std::fs::write(&file, "[[job]]\nname = \"elsewhere\"\nkind = \"builtin\"\nbuiltin_task = \"noop\"\ncron = \"0 0 0 1 1 *\"\n").unwrap();
    let other = dir.path().join("other.key");
    let other = other.to_str().unwrap();
    let out = crate::process::cli_with_env(
        &app,
        &["jobs", "apply", file.to_str().unwrap()],
        "",
        &[("BULWARK_SECRET_KEY_FILE", other)],
    );
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("is not the key this database's values are sealed with"),
        "{}",
        text(&out.stderr)
    );
    let jobs = app::services::jobs::list_models(&app.db).await.unwrap();
    assert!(jobs.iter().all(|j| j.name != "elsewhere"));
}
