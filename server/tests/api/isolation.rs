//! What a job can reach and leak: a command sees none of the server's environment, a job's own
//! headers never follow a redirect to another origin, an error keeps no URL secrets, and a
//! response body that does not end cannot hold an attempt or the node's memory.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use app::domain::job::Kind;
use app::domain::run::RunStatus;

use crate::engine::{attempts_of, base, run_to_end};
use crate::helpers::{TestApp, define};
use crate::on_both_backends;

/// The names a command's environment may hold: the four inherited ones, Bulwark's run
/// context, and what `sh` itself sets.
const ALLOWED: &[&str] = &[
    "PATH",
    "HOME",
    "LANG",
    "TZ",
    "BULWARK_IDEMPOTENCY_KEY",
    "BULWARK_RUN_ID",
    "BULWARK_ATTEMPT",
    "BULWARK_JOB",
    "BULWARK_SCHEDULED_AT",
    "BULWARK_BUSINESS_DATE",
    "PWD",
    "SHLVL",
    "_",
];

async fn a_command_sees_none_of_the_servers_environment(app: TestApp) {
    let mut input = base("print-env");
    input.kind = Kind::Command.as_str().into();
    input.command_program = "sh".into();
    input.command_args = "-c\nenv | cut -d= -f1".into();
    let job = define(&app.db, input).await;
    let (run, finished) = run_to_end(&app.db, job.id, Duration::from_secs(20)).await;
    assert_eq!(finished.status, RunStatus::Succeeded);
    let attempts = attempts_of(&app.db, run.id).await;
    let output = attempts[0].output_tail.clone().unwrap_or_default();
    let names: Vec<&str> = output.lines().filter(|l| !l.is_empty()).collect();
    assert!(names.contains(&"BULWARK_RUN_ID"), "{output}");
    let leaked: Vec<&&str> = names.iter().filter(|n| !ALLOWED.contains(n)).collect();
    assert!(leaked.is_empty(), "the command saw {leaked:?}");
}
on_both_backends!(a_command_sees_none_of_the_servers_environment);

/// A server that answers every request with `answer` and records the `x-api-key` it saw.
async fn server(
    answer: impl Fn() -> axum::response::Response + Clone + Send + Sync + 'static,
) -> (String, Arc<Mutex<Vec<Option<String>>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let app = {
        let seen = seen.clone();
        axum::Router::new().fallback(move |headers: axum::http::HeaderMap| {
            let seen = seen.clone();
            let answer = answer.clone();
            async move {
                seen.lock().unwrap().push(
                    headers
                        .get("x-api-key")
                        .map(|v| v.to_str().unwrap_or("").to_string()),
                );
                answer()
            }
        })
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}"), seen)
}

async fn a_jobs_headers_never_follow_a_redirect_to_another_origin(app: TestApp) {
    use axum::response::IntoResponse;
    let (elsewhere, seen_elsewhere) = server(|| "got it".into_response()).await;
    let target = format!("{elsewhere}/collect");
    let (origin, seen_origin) =
        server(move || axum::response::Redirect::temporary(&target).into_response()).await;

    let mut with_key = base("keyed");
    with_key.http_url = format!("{origin}/start");
    with_key.http_headers = "X-Api-Key: canary-key-1234".into();
    with_key.retry.max_retries = "1".into();
    let job = define(&app.db, with_key).await;
    let (run, finished) = run_to_end(&app.db, job.id, Duration::from_secs(20)).await;
    assert_eq!(finished.status, RunStatus::Dead, "a 307 is not a success");
    assert!(
        seen_origin
            .lock()
            .unwrap()
            .iter()
            .all(|k| k.as_deref() == Some("canary-key-1234")),
        "the named host got the key"
    );
    assert!(
        seen_elsewhere.lock().unwrap().is_empty(),
        "the other origin was never called: {:?}",
        seen_elsewhere.lock().unwrap()
    );
    let attempts = attempts_of(&app.db, run.id).await;
    assert!(
        attempts[0]
            .output_tail
            .as_deref()
            .unwrap_or("")
            .starts_with("HTTP 307"),
        "{:?}",
        attempts[0].output_tail
    );

    // A job told to follow any redirect goes there, without its headers.
    let mut plain = base("plain");
    plain.http_url = format!("{origin}/start");
    plain.http_follow_redirects = "any".into();
    let job = define(&app.db, plain).await;
    let (_, finished) = run_to_end(&app.db, job.id, Duration::from_secs(20)).await;
    assert_eq!(finished.status, RunStatus::Succeeded);
    assert_eq!(seen_elsewhere.lock().unwrap().as_slice(), &[None]);
}
on_both_backends!(a_jobs_headers_never_follow_a_redirect_to_another_origin);

async fn a_transport_error_keeps_no_url_secret(app: TestApp) {
    // A port nothing listens on: the connection is refused.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let mut input = base("refused");
    input.http_url = format!(
        "http://robot:canary-password@127.0.0.1:{port}/hook?token=canary-token#canary-frag"
    );
    input.retry.max_retries = "1".into();
    let job = define(&app.db, input).await;
    let (run, finished) = run_to_end(&app.db, job.id, Duration::from_secs(20)).await;
    assert_eq!(finished.status, RunStatus::Dead);
    for attempt in attempts_of(&app.db, run.id).await {
        let message = attempt.message.unwrap_or_default();
        assert!(
            message.contains(&format!("127.0.0.1:{port}/hook")),
            "{message}"
        );
        assert!(!message.contains("canary"), "{message}");
    }
    let stored = app::entities::job_run::Entity::find_by_id(run.id)
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    assert!(!stored.last_error.unwrap_or_default().contains("canary"));
}
on_both_backends!(a_transport_error_keeps_no_url_secret);

async fn an_endless_body_is_read_only_so_far(app: TestApp) {
    use axum::response::IntoResponse;
    // 32 MiB of 'x', then the tail the output should keep.
    let (url, _) = server(|| {
        let mut body = vec![b'x'; 32 << 20];
        body.extend_from_slice(b"the end");
        body.into_response()
    })
    .await;
    let mut input = base("endless");
    input.http_url = format!("{url}/big");
    let job = define(&app.db, input).await;
    let (run, finished) = run_to_end(&app.db, job.id, Duration::from_secs(30)).await;
    assert_eq!(finished.status, RunStatus::Succeeded);
    let output = attempts_of(&app.db, run.id).await[0]
        .output_tail
        .clone()
        .unwrap_or_default();
    assert!(
        output.contains("body longer than 8 MiB"),
        "{}",
        &output[output.len().saturating_sub(200)..]
    );
    assert!(output.len() < 16 * 1024, "only the tail is kept");
}
on_both_backends!(an_endless_body_is_read_only_so_far);

use sea_orm::EntityTrait;
