//! Secrets: set by an admin, referred to by jobs as `${secret:NAME}`, filled in only for the
//! attempt, and never shown again — to viewers, in the audit log, in run output or messages.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use app::domain::job::Kind;
use app::domain::run::RunStatus;
use app::entities::{audit_log, job_attempt, job_run};
use sea_orm::EntityTrait;

use crate::engine::{attempts_of, base, engine_config, run_to_end_on};
use crate::helpers::{ADMIN_PASSWORD, TestApp, VIEWER_PASSWORD, define};
use crate::on_both_backends;

const CANARY: &str = "canary-5ecret-7d1f";

/// A server that records what it was sent (URL, key header, body) and echoes all of it back,
/// as a careless API might in an error page.
pub(crate) async fn echo_server() -> (String, Arc<Mutex<Vec<String>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let app = {
        let seen = seen.clone();
        axum::Router::new().fallback(
            move |uri: axum::http::Uri, headers: axum::http::HeaderMap, body: String| {
                let seen = seen.clone();
                async move {
                    let key = headers
                        .get("x-api-key")
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("")
                        .to_string();
                    let all = format!("{uri} {key} {body}");
                    seen.lock().unwrap().push(all.clone());
                    all
                }
            },
        )
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}"), seen)
}

async fn a_secret_reaches_only_the_attempt(app: TestApp) {
    let run_to_end = |db, job_id, within| {
        let mut config = engine_config("node-a");
        config.secret_key = Some(app.secret_key.clone());
        run_to_end_on(db, job_id, within, config)
    };
    let admin = app.signed_in("admin", ADMIN_PASSWORD).await;
    let viewer = app.signed_in("viewer", VIEWER_PASSWORD).await;
    let res = app
        .call(
            &admin,
            "secrets/set",
            &[("name", "API_KEY"), ("value", CANARY)],
        )
        .await;
    assert_eq!(res.status(), 200);
    // Viewers see the name only, and may not set one.
    let listed = app
        .call(&viewer, "secrets/list", &[])
        .await
        .text()
        .await
        .unwrap();
    assert!(
        listed.contains("API_KEY") && !listed.contains(CANARY),
        "{listed}"
    );
    let res = app
        .call(
            &viewer,
            "secrets/set",
            &[("name", "API_KEY"), ("value", "x")],
        )
        .await;
    assert_eq!(res.status(), 403);
    for (name, value, field) in [("bad name", "v", "name"), ("EMPTY", "", "value")] {
        let res = app
            .call(&admin, "secrets/set", &[("name", name), ("value", value)])
            .await;
        assert_eq!(res.status(), 422, "{name}");
        let body: serde_json::Value = res.json().await.unwrap();
        assert_eq!(body["Invalid"]["field"], field);
    }

    // An HTTP job refers to it in a header, the URL's query and the body.
    let (url, seen) = echo_server().await;
    let mut http = base("uses-secret");
    http.http_url = format!("{url}/hook?token=${{secret:API_KEY}}");
    http.http_headers = "X-Api-Key: ${secret:API_KEY}".into();
    http.http_body = r#"{"key": "${secret:API_KEY}"}"#.into();
    let job = define(&app.db, http).await;
    let (run, finished) = run_to_end(&app.db, job.id, Duration::from_secs(20)).await;
    assert_eq!(finished.status, RunStatus::Succeeded);
    let sent = seen.lock().unwrap().join("\n");
    assert_eq!(
        sent.matches(CANARY).count(),
        3,
        "filled in everywhere: {sent}"
    );
    let output = attempts_of(&app.db, run.id).await[0]
        .output_tail
        .clone()
        .unwrap_or_default();
    assert!(!output.contains(CANARY), "{output}");
    assert!(output.contains("${secret:API_KEY}"), "{output}");

    // A command gets it as an argument; what it prints comes back as the reference.
    let mut command = base("command-secret");
    command.kind = Kind::Command.as_str().into();
    command.command_program = "sh".into();
    command.command_args = "-c\necho \"got $1\"; exit 3\n_\n${secret:API_KEY}".into();
    command.retry.max_retries = "1".into();
    let job = define(&app.db, command).await;
    let (run, _) = run_to_end(&app.db, job.id, Duration::from_secs(20)).await;
    let attempt = &attempts_of(&app.db, run.id).await[0];
    let output = attempt.output_tail.clone().unwrap_or_default();
    assert!(output.contains("got ${secret:API_KEY}"), "{output}");

    // A reference to a secret that does not exist fails at once, by name.
    let mut missing = base("missing-secret");
    missing.http_headers = "X-Api-Key: ${secret:NOPE}".into();
    missing.http_url = format!("{url}/hook");
    let job = define(&app.db, missing).await;
    let (run, finished) = run_to_end(&app.db, job.id, Duration::from_secs(20)).await;
    assert_eq!(finished.status, RunStatus::Dead);
    let attempts = attempts_of(&app.db, run.id).await;
    assert_eq!(attempts.len(), 1, "permanent: not retried");
    assert_eq!(attempts[0].message.as_deref(), Some("no secret named NOPE"));

    // Nowhere a viewer can read, and nothing stored, holds the value.
    let mut readable = Vec::new();
    for endpoint in [
        "jobs/list",
        "runs/list",
        "audit/list",
        "secrets/list",
        "mail/outbox",
        "failed/list",
    ] {
        let res = if endpoint == "failed/list" {
            viewer
                .post(app.url("/api/failed/list"))
                .json(&serde_json::json!({"filter": {}, "cursor": null}))
                .send()
                .await
                .unwrap()
        } else {
            app.call(&viewer, endpoint, &[]).await
        };
        readable.push(res.text().await.unwrap());
    }
    for id in [run.id, job.id] {
        readable.push(
            app.call(&viewer, "runs/get", &[("id", &id.to_string())])
                .await
                .text()
                .await
                .unwrap(),
        );
        readable.push(
            app.call(&viewer, "jobs/get", &[("id", &id.to_string())])
                .await
                .text()
                .await
                .unwrap(),
        );
    }
    for page in ["/jobs", "/runs", "/settings", "/audit", "/failed"] {
        readable.push(
            viewer
                .get(app.url(page))
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap(),
        );
    }
    for text in &readable {
        assert!(!text.contains(CANARY), "a viewer read the secret: {text}");
    }
    let stored = format!(
        "{:?}{:?}{:?}",
        audit_log::Entity::find().all(&app.db).await.unwrap(),
        job_attempt::Entity::find().all(&app.db).await.unwrap(),
        job_run::Entity::find().all(&app.db).await.unwrap(),
    );
    assert!(!stored.contains(CANARY), "stored in the clear");
    let sealed = format!(
        "{:?}",
        app::entities::secret::Entity::find()
            .all(&app.db)
            .await
            .unwrap()
    );
    assert!(sealed.contains("API_KEY") && !sealed.contains(CANARY));
}
on_both_backends!(a_secret_reaches_only_the_attempt);

async fn credentials_typed_into_jobs_move_into_secrets_once(app: TestApp) {
    use sea_orm::{ColumnTrait, QueryFilter};
    // What an installation from before secrets holds: a key header and a URL password typed in.
    let (url, seen) = echo_server().await;
    let mut legacy = base("legacy-export");
    legacy.http_url = url.replace("http://", "http://robot:url-pass-9f2c@") + "/hook";
    legacy.http_headers = "X-Api-Key: literal-key-4411\nAccept: text/plain".into();
    let job = define(&app.db, legacy).await;
    // The flag the first start set (there were no jobs then) is cleared to run the move again.
    app::entities::setting::Entity::delete_many()
        .filter(app::entities::setting::Column::Key.eq("secrets.literal_credentials_moved"))
        .exec(&app.db)
        .await
        .unwrap();

    let moved = app::services::secrets::move_literal_credentials(
        &app.db,
        &app.secret_key,
        chrono::Utc::now(),
    )
    .await
    .unwrap();
    let names: Vec<&str> = moved.iter().map(|(_, s)| s.as_str()).collect();
    assert_eq!(
        names,
        ["legacy-export.x-api-key", "legacy-export.url-password"]
    );
    let stored = app::entities::job::Entity::find_by_id(job.id)
        .one(&app.db)
        .await
        .unwrap()
        .unwrap()
        .config;
    assert!(
        !stored.contains("literal-key-4411") && !stored.contains("url-pass-9f2c"),
        "{stored}"
    );
    assert!(
        stored.contains("${secret:legacy-export.x-api-key}"),
        "{stored}"
    );
    assert!(stored.contains("Accept"), "other headers stay: {stored}");
    // Once only.
    let again = app::services::secrets::move_literal_credentials(
        &app.db,
        &app.secret_key,
        chrono::Utc::now(),
    )
    .await
    .unwrap();
    assert!(again.is_empty());

    // The job still sends what it sent before.
    let mut config = engine_config("node-a");
    config.secret_key = Some(app.secret_key.clone());
    let (_, finished) = run_to_end_on(&app.db, job.id, Duration::from_secs(20), config).await;
    assert_eq!(finished.status, RunStatus::Succeeded);
    let sent = seen.lock().unwrap().join("\n");
    assert!(sent.contains("literal-key-4411"), "{sent}");
}
on_both_backends!(credentials_typed_into_jobs_move_into_secrets_once);

const CANARY_JOBS: &str = r#"
[[job]]
name = "canary-call"
cron = "0 0 0 1 1 *"
kind = "http"
method = "POST"
url = "ECHO/hook?token=${secret:CANARY_KEY}"
headers = { X-Api-Key = "${secret:CANARY_KEY}" }
body = "key=${secret:CANARY_KEY}"
[job.retry]
first = "100ms"
multiplier = 2.0
max_retries = 1

[[job]]
name = "canary-command"
cron = "0 0 0 1 1 *"
kind = "command"
command = ["sh", "-c", "echo \"arg $1\"; env; exit 3", "_", "${secret:CANARY_KEY}"]
[job.retry]
first = "100ms"
multiplier = 2.0
max_retries = 1
"#;

/// The canary, end to end through the real binary: set with `secret set`, referred to by jobs
/// from a `jobs apply` file in a URL query, a header, a body and an argument, and also in the
/// server's own environment (its admin password and SMTP URL); the server logs at debug. Then
/// the logs, `runs list --json`, the stored attempts and the audit log never hold it, and the
/// command saw none of the server's environment.
async fn the_canary_never_leaves_the_attempt(app: TestApp) {
    use crate::process::{bulwark, output};
    use sea_orm::{ColumnTrait, QueryFilter};

    let dir = tempfile::tempdir().unwrap();
    let key_file = dir.path().join("secret.key");
    app.secret_key.write(&key_file).unwrap();
    let key_file = key_file.to_str().unwrap().to_string();
    let env = [("BULWARK_SECRET_KEY_FILE", key_file.as_str())];

    let mut set = bulwark(&app, dir.path(), &["secret", "set", "CANARY_KEY"], &env);
    set.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = set.spawn().unwrap();
    {
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(format!("{CANARY}\n").as_bytes())
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let (echo, seen) = echo_server().await;
    let file = dir.path().join("jobs.toml");
    std::fs::write(&file, CANARY_JOBS.replace("ECHO", &echo)).unwrap();
    let (code, _, err) = output(bulwark(
        &app,
        dir.path(),
        &["jobs", "apply", file.to_str().unwrap()],
        &env,
    ));
    assert_eq!(code, 0, "{err}");

    let log = std::fs::File::create(dir.path().join("serve.log")).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
        .to_string();
    let smtp = format!("smtp://robot:{CANARY}@127.0.0.1:9");
    let mut serve = bulwark(
        &app,
        dir.path(),
        &["serve"],
        &[
            ("BULWARK_SECRET_KEY_FILE", key_file.as_str()),
            ("BULWARK_ADDR", &format!("127.0.0.1:{port}")),
            ("BULWARK_ADMIN_PASSWORD", CANARY),
            ("BULWARK_SMTP_URL", &smtp),
            ("RUST_LOG", "debug"),
        ],
    )
    .stdout(log.try_clone().unwrap())
    .stderr(log)
    .spawn()
    .unwrap();

    let mut runs = Vec::new();
    for name in ["canary-call", "canary-command"] {
        let (code, _, err) = output(bulwark(&app, dir.path(), &["jobs", "run", name], &env));
        assert_eq!(code, 0, "{err}");
        let job = app::entities::job::Entity::find()
            .filter(app::entities::job::Column::Name.eq(name))
            .one(&app.db)
            .await
            .unwrap()
            .unwrap();
        let run = job_run::Entity::find()
            .filter(job_run::Column::JobId.eq(job.id))
            .one(&app.db)
            .await
            .unwrap()
            .unwrap();
        runs.push(run.id);
    }
    for run in &runs {
        crate::helpers::wait_for_status(
            &app.db,
            *run,
            &[RunStatus::Succeeded, RunStatus::Dead],
            Duration::from_secs(30),
        )
        .await;
    }
    let _ = serve.kill();
    let _ = serve.wait();

    assert_eq!(
        seen.lock().unwrap().join("\n").matches(CANARY).count(),
        3,
        "the call carried it"
    );
    let logs = std::fs::read_to_string(dir.path().join("serve.log")).unwrap();
    assert!(
        logs.contains("attempt recorded"),
        "the server ran the jobs: {logs}"
    );
    assert!(!logs.contains(CANARY), "the logs hold the canary");
    let (_, listed, _) = output(bulwark(&app, dir.path(), &["runs", "list", "--json"], &env));
    assert!(!listed.contains(CANARY), "{listed}");
    let command_output = attempts_of(&app.db, runs[1]).await[0]
        .output_tail
        .clone()
        .unwrap_or_default();
    assert!(
        command_output.contains("arg ${secret:CANARY_KEY}"),
        "{command_output}"
    );
    assert!(
        !command_output.contains("BULWARK_ADMIN_PASSWORD") && !command_output.contains("SMTP"),
        "the command saw the server's environment: {command_output}"
    );
    let stored = format!(
        "{:?}{:?}{:?}",
        audit_log::Entity::find().all(&app.db).await.unwrap(),
        job_attempt::Entity::find().all(&app.db).await.unwrap(),
        job_run::Entity::find().all(&app.db).await.unwrap(),
    );
    assert!(!stored.contains(CANARY));
}
on_both_backends!(the_canary_never_leaves_the_attempt);

/// A command that traces itself (`set -x`), prints its token base64-encoded and URL-encoded,
/// then enough for the kept tail to be cut inside what it printed: none of those forms is kept.
async fn a_secret_is_taken_out_in_its_printed_forms(app: TestApp) {
    app.set_secret("TOKEN", "tok/3nc0ded value").await;
    let mut command = base("traced");
    command.kind = Kind::Command.as_str().into();
    command.command_program = "sh".into();
    command.command_args = [
        "-c",
        "set -x; t='${secret:TOKEN}'; printf '%s\\n' \"$t\" | base64; printf '%s\\n' \"$t\" | sed 's|/|%2F|; s| |%20|'; head -c 4000 /dev/zero | tr '\\0' '-'",
    ]
    .join("\n");
    let job = define(&app.db, command).await;
    let mut config = engine_config("node-a");
    config.secret_key = Some(app.secret_key.clone());
    let (run, finished) = run_to_end_on(&app.db, job.id, Duration::from_secs(20), config).await;
    assert_eq!(finished.status, RunStatus::Succeeded);
    let output = attempts_of(&app.db, run.id).await[0]
        .output_tail
        .clone()
        .unwrap_or_default();
    assert!(output.len() <= 4096);
    for form in ["3nc0ded", "dG9rLzNuYzBkZWQgdmFsdWU", "tok%2F3nc0ded"] {
        assert!(!output.contains(form), "{form} in {output}");
    }
    assert!(output.contains("${secret:TOKEN}"), "{output}");
}
on_both_backends!(a_secret_is_taken_out_in_its_printed_forms);

/// `secret rekey` seals every sealed column again, not only the named secrets: a channel's
/// credentials and a trigger URL's signing secret open with the new key and not the old, and
/// the start-up check refuses the old key on their account alone.
async fn a_rekey_reseals_every_sealed_column(app: TestApp) {
    use app::services::notifications::channels;
    use app::services::{hooks, sealed, secrets::SecretKey};
    let old = app.secret_key.clone();
    channels::add(
        &app.db,
        &old,
        &channels::NewChannel {
            name: "ops".into(),
            kind: Some(app::domain::chat::ChannelKind::Webhook),
            url: Some("https://hooks.example.com/robot?token=t-123".into()),
            secret: Some("whsec_c2lnbi00NTYtc2lnbi00NTY=".into()),
            to: Vec::new(),
        },
        &crate::helpers::TESTER,
        chrono::Utc::now(),
    )
    .await
    .unwrap();
    let job = define(&app.db, crate::helpers::noop_job("signed-hook")).await;
    let new_hook = hooks::NewHook {
        secret: Some("hook-789"),
        when_paused: app::domain::job::WhenPaused::Refuse,
    };
    let who = crate::helpers::TESTER;
    let hook = hooks::create(&app.db, &old, &job, new_hook, &who, chrono::Utc::now())
        .await
        .unwrap();
    let hook_id = hook.path.unwrap().trim_start_matches("/hooks/").to_string();

    let new = SecretKey::generate();
    let who = crate::helpers::TESTER;
    let counts = sealed::rekey(&app.db, &old, &new, &who, chrono::Utc::now())
        .await
        .unwrap();
    let count = |column| counts.iter().find(|(c, _)| *c == column).unwrap().1;
    assert_eq!(count(sealed::Column::ChannelCredentials), 1);
    assert_eq!(count(sealed::Column::HookSecrets), 1);

    let opened = channels::open(&app.db, &new, "ops").await.unwrap();
    assert_eq!(
        opened.secret.as_deref(),
        Some("whsec_c2lnbi00NTYtc2lnbi00NTY=")
    );
    let (_, secret) = hooks::find(&app.db, &new, &hook_id).await.unwrap().unwrap();
    assert_eq!(secret, Ok(Some("hook-789".to_string())));
    let (_, stale) = hooks::find(&app.db, &old, &hook_id).await.unwrap().unwrap();
    assert_eq!(stale, Err(()));
    // No named secret exists here: the old key is refused for the channel and the hook.
    assert!(sealed::check_key(&app.db, &old).await.is_err());
    assert!(sealed::check_key(&app.db, &new).await.is_ok());
}
on_both_backends!(a_rekey_reseals_every_sealed_column);
