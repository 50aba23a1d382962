//! Which redirects an HTTP job follows: within its URL's origin by default, anywhere only when
//! the job says so (and never re-sending its body to another origin), none when it says none.
//! Two local servers on two ports are two origins.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use app::domain::run::RunStatus;

use crate::engine::{attempts_of, base, engine_config, run_to_end_on};
use crate::helpers::{TestApp, define};
use crate::on_both_backends;

/// A server answering `/moved` with `status` to `to`, `/here` and anything else with 200; it
/// keeps the paths and bodies it was sent.
async fn server(status: u16, to: String) -> (String, Arc<Mutex<Vec<String>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let app = {
        let seen = seen.clone();
        axum::Router::new().fallback(move |uri: axum::http::Uri, body: String| {
            let seen = seen.clone();
            let to = to.clone();
            async move {
                seen.lock().unwrap().push(format!("{} {body}", uri.path()));
                use axum::response::IntoResponse;
                if uri.path() == "/moved" {
                    let status = axum::http::StatusCode::from_u16(status).unwrap();
                    (status, [(axum::http::header::LOCATION, to)]).into_response()
                } else {
                    "ok".into_response()
                }
            }
        })
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}"), seen)
}

async fn run_job(
    app: &TestApp,
    name: &str,
    url: String,
    redirects: &str,
    body: &str,
) -> (RunStatus, String) {
    let mut http = base(name);
    http.http_method = "POST".into();
    http.http_url = url;
    http.http_body = body.into();
    http.http_follow_redirects = redirects.into();
    http.retry.max_retries = "1".into();
    let job = define(&app.db, http).await;
    let (run, finished) = run_to_end_on(
        &app.db,
        job.id,
        Duration::from_secs(20),
        engine_config("node-a"),
    )
    .await;
    let output = attempts_of(&app.db, run.id).await[0]
        .output_tail
        .clone()
        .unwrap_or_default();
    (finished.status, output)
}

async fn redirects_go_only_where_the_job_allows(app: TestApp) {
    let (elsewhere, seen_elsewhere) = server(200, String::new()).await;
    let (home, _) = server(302, format!("{elsewhere}/here")).await;
    let (same, _) = server(302, "/here".into()).await;
    let (resend, _) = server(307, format!("{elsewhere}/here")).await;

    // Within the origin: followed by default.
    let (status, output) = run_job(&app, "same", format!("{same}/moved"), "same-origin", "").await;
    assert_eq!(status, RunStatus::Succeeded, "{output}");
    // To another origin: not by default (the 302 is the answer, not an expected status)…
    let (status, output) =
        run_job(&app, "default", format!("{home}/moved"), "same-origin", "").await;
    assert_ne!(status, RunStatus::Succeeded);
    assert!(output.starts_with("HTTP 302"), "{output}");
    assert!(seen_elsewhere.lock().unwrap().is_empty());
    // …followed when the job allows any…
    let (status, _) = run_job(&app, "any", format!("{home}/moved"), "any", "").await;
    assert_eq!(status, RunStatus::Succeeded);
    assert_eq!(seen_elsewhere.lock().unwrap().len(), 1);
    // …but a 307 that would re-send the body to the other origin is not.
    let (status, output) = run_job(&app, "body", format!("{resend}/moved"), "any", "payload").await;
    assert!(output.starts_with("HTTP 307"), "{status:?} {output}");
    assert!(
        seen_elsewhere
            .lock()
            .unwrap()
            .iter()
            .all(|s| !s.contains("payload")),
        "{:?}",
        seen_elsewhere.lock().unwrap()
    );
    // None: even within the origin, the 3xx is the answer.
    let (_, output) = run_job(&app, "none", format!("{same}/moved"), "none", "").await;
    assert!(output.starts_with("HTTP 302"), "{output}");
}
on_both_backends!(redirects_go_only_where_the_job_allows);
