//! Which redirects an HTTP job follows: within its URL's origin by default, anywhere only when
//! the job says so (and never re-sending its body to another origin), none when it says none.
//! Two local servers on two ports are two origins. And where nothing goes: `outbound_deny`,
//! for a job's address, a redirect there and a chat channel, with a server on 127.0.0.2
//! standing in for a metadata service.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use app::domain::run::RunStatus;

use app::domain::client_addr::Networks;
use server::outbound::Deny;

use crate::engine::{attempts_of, base, engine_config, run_to_end_on};
use crate::helpers::{TestApp, define};
use crate::on_both_backends;

/// A server answering `/moved` with `status` to `to`, `/here` and anything else with 200; it
/// keeps the paths and bodies it was sent.
async fn server(status: u16, to: String) -> (String, Arc<Mutex<Vec<String>>>) {
    server_on("127.0.0.1", status, to).await
}

async fn server_on(ip: &str, status: u16, to: String) -> (String, Arc<Mutex<Vec<String>>>) {
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
    let listener = tokio::net::TcpListener::bind((ip, 0)).await.unwrap();
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
    let (status, output, _) = run_job_denying(app, name, url, redirects, body, None).await;
    (status, output)
}

/// A run of an HTTP job on an engine with `deny` as its `outbound_deny` (the default list when
/// `None`): its status, its output and its error.
async fn run_job_denying(
    app: &TestApp,
    name: &str,
    url: String,
    redirects: &str,
    body: &str,
    deny: Option<&[&str]>,
) -> (RunStatus, String, String) {
    let mut http = base(name);
    http.http_method = "POST".into();
    http.http_url = url;
    http.http_body = body.into();
    http.http_follow_redirects = redirects.into();
    http.retry.max_retries = "1".into();
    let job = define(&app.db, http).await;
    let mut config = engine_config("node-a");
    if let Some(deny) = deny {
        config.outbound_deny = Deny::new(Networks::parse(deny).unwrap());
    }
    let (run, finished) = run_to_end_on(&app.db, job.id, Duration::from_secs(20), config).await;
    let first = &attempts_of(&app.db, run.id).await[0];
    (
        finished.status,
        first.output_tail.clone().unwrap_or_default(),
        first.message.clone().unwrap_or_default(),
    )
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

async fn nothing_goes_to_a_denied_network(app: TestApp) {
    let (metadata, seen) = server_on("127.0.0.2", 200, String::new()).await;
    let (home, _) = server(302, format!("{metadata}/latest")).await;
    let deny: &[&str] = &["127.0.0.2/32"];

    for (name, url) in [
        ("direct", format!("{metadata}/latest")),
        ("redirected", format!("{home}/moved")),
    ] {
        let (status, _, error) = run_job_denying(&app, name, url, "any", "", Some(deny)).await;
        assert_eq!(
            status,
            RunStatus::Dead,
            "{name}: refused for good, not retried"
        );
        assert!(error.contains("outbound_deny"), "{name}: {error}");
    }
    // A chat channel pointing there is refused without a request, for good.
    let key = &app.secret_key;
    app::services::notifications::channels::add(
        &app.db,
        key,
        &app::services::notifications::channels::NewChannel {
            name: "metadata".into(),
            kind: Some(app::domain::chat::ChannelKind::Webhook),
            url: Some(format!("{metadata}/hook")),
            secret: None,
            to: Vec::new(),
        },
        &crate::helpers::TESTER,
        chrono::Utc::now(),
    )
    .await
    .unwrap();
    let config = server::config::Config {
        outbound_deny: deny.iter().map(|d| d.to_string()).collect(),
        ..server::config::Config::default()
    };
    let (accepted, answer) =
        server::channels::deliver::deliver_test(&app.db, key, &config, "metadata")
            .await
            .unwrap();
    assert!(!accepted && answer.contains("outbound_deny"), "{answer}");
    assert!(
        seen.lock().unwrap().is_empty(),
        "{:?}",
        seen.lock().unwrap()
    );

    // Without that entry the same job reaches it: the server above is there.
    let (status, ..) = run_job_denying(
        &app,
        "allowed",
        format!("{metadata}/latest"),
        "any",
        "",
        None,
    )
    .await;
    assert_eq!(status, RunStatus::Succeeded);
    assert_eq!(seen.lock().unwrap().len(), 1);
}
on_both_backends!(nothing_goes_to_a_denied_network);
