//! The route × role matrix: every server function, every page and every plain route, called
//! as nobody, as a viewer and as an admin, from this site and from another, against the
//! answer this table expects. A server function or page that is not in the table fails the
//! test, so a new endpoint cannot ship without its row.

use std::collections::BTreeSet;

use serde_json::json;

use crate::helpers::{ADMIN_PASSWORD, TestApp, VIEWER_PASSWORD};
use crate::on_both_backends;

/// Who may call a server function.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Access {
    /// Anyone: signing in and out.
    Public,
    /// Signed-in users, viewers included (reading, and their own account).
    Read,
    /// Administrators only.
    Change,
}

/// How the arguments travel.
enum Args {
    Form(&'static [(&'static str, &'static str)]),
    Json(serde_json::Value),
}

/// Every server function, with arguments that reach its checks without harming the fixture
/// (ids that do not exist, names no one has, passwords that do not match).
fn server_functions() -> Vec<(&'static str, Access, Args)> {
    use Access::*;
    use Args::*;
    let filter = json!({"job": null, "class": null, "from": null, "to": null, "text": null});
    vec![
        (
            "login",
            Public,
            Form(&[("username", "nobody"), ("password", "wrong-password")]),
        ),
        ("logout", Public, Form(&[])),
        // A share link's token is its credential: an unknown one is a 404 to everyone.
        (
            "share/view",
            Public,
            Form(&[("token", "no-such-link"), ("range", "7d")]),
        ),
        (
            "share/unlock",
            Public,
            Form(&[("token", "no-such-link"), ("password", "wrong-password")]),
        ),
        ("sign_in_options", Public, Form(&[])),
        ("me", Read, Form(&[])),
        (
            "failed/list",
            Read,
            Json(json!({"filter": filter, "cursor": null})),
        ),
        ("failed/preview", Read, Json(json!({"filter": filter}))),
        (
            "failed/retrigger",
            Change,
            Json(json!({"id": 999999, "timeout": null, "retry": null})),
        ),
        (
            "failed/retrigger-many",
            Change,
            Json(json!({"ids": [999999], "filter": null, "per_minute": 60})),
        ),
        (
            "failed/resolve",
            Change,
            Form(&[("id", "999999"), ("reason", "test"), ("discard", "false")]),
        ),
        ("audit/list", Read, Form(&[])),
        ("jobs/list", Read, Form(&[])),
        ("jobs/get", Read, Form(&[("id", "999999")])),
        ("jobs/revisions", Read, Form(&[("id", "999999")])),
        (
            "jobs/revisions/diff",
            Read,
            Form(&[("id", "999999"), ("from", "1"), ("to", "2")]),
        ),
        (
            "jobs/revisions/restore",
            Change,
            Form(&[("id", "999999"), ("revision", "1")]),
        ),
        (
            "jobs/save",
            Change,
            Json(json!({"id": null, "input": app::domain::job::JobInput::default()})),
        ),
        (
            "jobs/enable",
            Change,
            Form(&[("id", "999999"), ("enabled", "true")]),
        ),
        ("jobs/delete", Change, Form(&[("id", "999999")])),
        (
            "jobs/bulk",
            Change,
            Json(json!({"ids": [999999], "action": "pause", "tag": null})),
        ),
        (
            "jobs/pause",
            Change,
            Form(&[("id", "999999"), ("paused", "true")]),
        ),
        ("maintenance/status", Read, Form(&[])),
        // An end already passed: refused after the role check, so nothing is paused.
        (
            "maintenance/pause",
            Change,
            Form(&[("reason", "route test"), ("until", "2000-01-01 00:00")]),
        ),
        ("maintenance/resume", Change, Form(&[])),
        ("maintenance/cancel", Change, Form(&[("id", "999999")])),
        ("jobs/timeout", Read, Form(&[("id", "999999")])),
        ("jobs/episodes", Read, Form(&[("id", "999999")])),
        (
            "jobs/placement",
            Read,
            Form(&[("run_on", "role=db"), ("kind", "command")]),
        ),
        ("jobs/zone", Read, Form(&[("name", "Europe/Berlin")])),
        ("jobs/zones", Read, Form(&[])),
        ("jobs/run-now", Change, Form(&[("id", "999999")])),
        ("nodes/list", Read, Form(&[])),
        ("mail/outbox", Read, Form(&[])),
        ("mail/preview", Read, Form(&[("id", "999999")])),
        ("mail/resend", Change, Form(&[("id", "999999")])),
        ("mail/settings", Read, Form(&[])),
        (
            "mail/settings/save",
            Change,
            Form(&[
                ("digest_to", "not an address"),
                ("digest_channels", ""),
                ("digest_time", "25:99"),
            ]),
        ),
        ("mail/test", Change, Form(&[("to", "not an address")])),
        ("runs/list", Read, Form(&[])),
        ("runs/get", Read, Form(&[("id", "999999")])),
        (
            "runs/log",
            Read,
            Form(&[("id", "999999"), ("anchor", "End")]),
        ),
        ("runs/search-output", Read, Form(&[("text", "fixture")])),
        ("runs/release", Change, Form(&[("id", "999999")])),
        ("dashboard/runs-per-hour", Read, Form(&[])),
        ("dashboard/overview", Read, Form(&[])),
        ("traffic/dashboard", Read, Form(&[])),
        ("traffic/live", Read, Form(&[])),
        ("traffic/hits", Read, Form(&[("filter[range]", "7d")])),
        ("traffic/sites", Read, Form(&[])),
        (
            "traffic/sites/add",
            Change,
            Form(&[("host", "not a host!")]),
        ),
        (
            "traffic/sites/remove",
            Change,
            Form(&[("host", "no-such-site.example")]),
        ),
        (
            "traffic/goals/add",
            Change,
            Form(&[
                ("site", "no-such-site.example"),
                ("name", "Signup"),
                ("kind", "page"),
                ("target", "/signup"),
            ]),
        ),
        (
            "traffic/goals/remove",
            Change,
            Form(&[("site", "no-such-site.example"), ("name", "Signup")]),
        ),
        (
            "traffic/reports/set",
            Change,
            Form(&[
                ("site", "no-such-site.example"),
                ("every", "week"),
                ("to", "owner@example.com"),
                ("channels", ""),
            ]),
        ),
        (
            "traffic/reports/off",
            Change,
            Form(&[("site", "no-such-site.example")]),
        ),
        (
            "traffic/shares/create",
            Change,
            Form(&[
                ("site", "no-such-site.example"),
                ("password", ""),
                ("expires", ""),
            ]),
        ),
        (
            "traffic/shares/revoke",
            Change,
            Form(&[("site", "no-such-site.example")]),
        ),
        (
            "traffic/sites/exclusions",
            Change,
            Form(&[
                ("host", "no-such-site.example"),
                ("excluded", "not an address"),
            ]),
        ),
        ("users/list", Read, Form(&[])),
        ("secrets/list", Read, Form(&[])),
        ("calendars/list", Read, Form(&[])),
        ("calendars/get", Read, Form(&[("name", "no-such-calendar")])),
        (
            "calendars/save",
            Change,
            Form(&[
                ("name", "bad name"),
                ("base", "mon-fri"),
                ("off", ""),
                ("on", ""),
            ]),
        ),
        (
            "calendars/remove",
            Change,
            Form(&[("name", "no-such-calendar")]),
        ),
        ("backfills/list", Read, Form(&[("job_id", "999999")])),
        (
            "backfills/start",
            Change,
            Json(
                json!({"job_id": 999999, "from": "2026-01-01", "to": "2026-01-02",
                "parallel": 1, "per_minute": null, "rerun": false, "dry_run": true}),
            ),
        ),
        (
            "backfills/change",
            Change,
            Json(json!({"id": 999999, "state_to": "paused"})),
        ),
        ("channels/list", Read, Form(&[])),
        (
            "channels/add",
            Change,
            Form(&[("name", "bad name"), ("kind", "slack")]),
        ),
        (
            "channels/test",
            Change,
            Form(&[("name", "no-such-channel")]),
        ),
        (
            "channels/remove",
            Change,
            Form(&[("name", "no-such-channel")]),
        ),
        (
            "channels/edit",
            Change,
            Form(&[("name", "no-such-channel")]),
        ),
        ("channels/deliveries", Read, Form(&[])),
        ("tokens/list", Read, Form(&[])),
        (
            "tokens/create",
            Change,
            Form(&[
                ("name", "bad name"),
                ("scope", "read"),
                ("tags", ""),
                ("expires", ""),
            ]),
        ),
        ("tokens/revoke", Change, Form(&[("name", "no-such-token")])),
        ("api-docs", Read, Form(&[])),
        ("jobs/hook", Change, Form(&[("id", "999999")])),
        ("jobs/ping-url", Change, Form(&[("id", "999999")])),
        ("jobs/durations", Read, Form(&[("id", "999999")])),
        ("jobs/hook/set", Change, Form(&[("id", "999999")])),
        (
            "jobs/hook/change",
            Change,
            Form(&[("id", "999999"), ("when_paused", "queue")]),
        ),
        ("jobs/params/confirm", Change, Form(&[("id", "999999")])),
        ("channels/deliveries/resend", Change, Form(&[("id", "0")])),
        (
            "secrets/set",
            Change,
            Form(&[("name", "bad name"), ("value", "matrix-value")]),
        ),
        (
            "secrets/remove",
            Change,
            Form(&[("name", "no-such-secret")]),
        ),
        (
            "users/create",
            Change,
            Form(&[
                ("username", "Bad Name"),
                ("password", "x"),
                ("role", "viewer"),
            ]),
        ),
        (
            "users/reset-password",
            Change,
            Form(&[("username", "nobody"), ("password", "long-enough-1")]),
        ),
        (
            "users/manage",
            Change,
            Form(&[("username", "nobody"), ("action", "disable")]),
        ),
        (
            "users/link",
            Change,
            Form(&[
                ("username", "nobody"),
                ("provider", "oidc"),
                ("subject", "x"),
            ]),
        ),
        ("account/second-factor", Read, Form(&[])),
        ("account/second-factor/begin", Read, Form(&[])),
        (
            "account/second-factor/confirm",
            Read,
            Form(&[("code", "000000")]),
        ),
        (
            "account/second-factor/off",
            Read,
            Form(&[("password", "wrong-password")]),
        ),
        (
            "account/password",
            Read,
            Form(&[("current", "wrong-password"), ("password", "long-enough-1")]),
        ),
        ("account/sessions", Read, Form(&[])),
        ("account/locale", Read, Form(&[("locale", "xx-no-such")])),
        (
            "account/sessions/end",
            Read,
            Form(&[("id", "no-such-session")]),
        ),
    ]
}

/// Plain routes: (method, path, anonymous, signed in). Pages are checked from the route list.
const PLAIN: &[(&str, &str, u16, u16)] = &[
    ("GET", "/healthz", 200, 200),
    ("GET", "/readyz", 200, 200),
    ("GET", "/login", 200, 303),
    // Company sign-in's redirects are public (tests/api/oidc.rs); with no provider
    // configured, as here, there are none.
    ("GET", "/auth/oidc/oidc", 404, 404),
    ("GET", "/auth/oidc/oidc/callback", 404, 404),
    ("GET", "/traffic/hits.csv", 303, 200),
    ("GET", "/api/collect.gif?p=/matrix", 200, 200),
    ("OPTIONS", "/api/collect", 204, 204),
    ("OPTIONS", "/api/collect/event", 204, 204),
    // The REST API's own callers and roles are tested in tests/api/rest.rs; its document is
    // public, and a session is a caller too.
    ("GET", "/api/v1/openapi.json", 200, 200),
    ("GET", "/api/v1/jobs", 401, 200),
    // `/metrics` takes an API token (tests/api/metrics.rs), never a session; a trigger URL's
    // id is its credential, and one no job has answers 404 to everyone.
    ("GET", "/metrics", 401, 401),
    ("POST", "/hooks/00000000000000000000000000000000", 404, 404),
    // A ping URL's token is its credential too, by GET or POST, for every kind of ping.
    ("GET", "/ping/00000000000000000000000000000000", 404, 404),
    (
        "POST",
        "/ping/00000000000000000000000000000000/start",
        404,
        404,
    ),
    (
        "POST",
        "/ping/00000000000000000000000000000000/fail",
        404,
        404,
    ),
    ("GET", "/ping/00000000000000000000000000000000/0", 404, 404),
    (
        "POST",
        "/ping/00000000000000000000000000000000/log",
        404,
        404,
    ),
    // The site's files are public; a hash this build does not have (and any, when the site
    // is read from disk, as here) is not found, never a sign-in page.
    ("GET", "/assets/0000000000000000/pkg/bulwark.css", 404, 404),
];

#[derive(Clone, Copy, Debug, PartialEq)]
enum Role {
    Anonymous,
    Viewer,
    Admin,
}

async fn client(app: &TestApp, role: Role) -> reqwest::Client {
    match role {
        Role::Anonymous => app.client(),
        Role::Viewer => app.signed_in("viewer", VIEWER_PASSWORD).await,
        Role::Admin => app.signed_in("admin", ADMIN_PASSWORD).await,
    }
}

async fn call(
    app: &TestApp,
    client: &reqwest::Client,
    endpoint: &str,
    args: &Args,
    cross_site: bool,
) -> u16 {
    let mut request = client.post(app.url(&format!("/api/{endpoint}")));
    request = match args {
        Args::Form(form) => request.form(form),
        Args::Json(value) => request.json(value),
    };
    if cross_site {
        request = request
            .header("origin", "https://evil.example")
            .header("sec-fetch-site", "cross-site");
    }
    request.send().await.expect("request").status().as_u16()
}

fn expected(access: Access, role: Role, status: u16) -> bool {
    match (access, role) {
        (Access::Public, _) => status < 500 && status != 401 && status != 403,
        (_, Role::Anonymous) => status == 401,
        (Access::Change, Role::Viewer) => status == 403,
        // Reached: whatever the answer, it is the function's own (not found, invalid, …).
        _ => status < 500 && status != 401 && status != 403,
    }
}

async fn every_endpoint_answers_each_role_as_the_table_says(app: TestApp) {
    // The table covers exactly what the server registered.
    let registered: BTreeSet<String> = leptos::server_fn::axum::server_fn_paths()
        .map(|(path, _)| path.trim_start_matches("/api/").to_string())
        .collect();
    let table = server_functions();
    let listed: BTreeSet<String> = table.iter().map(|(e, _, _)| e.to_string()).collect();
    assert_eq!(
        registered, listed,
        "every server function needs a row in server_functions()"
    );

    let mut wrong = Vec::new();
    for role in [Role::Anonymous, Role::Viewer, Role::Admin] {
        for (endpoint, access, args) in &table {
            // A fresh session per call: `logout` ends one, and a cross-site call must be
            // refused whoever sends it.
            let client = client(&app, role).await;
            let status = call(&app, &client, endpoint, args, false).await;
            if !expected(*access, role, status) {
                wrong.push(format!("{role:?} {endpoint}: {status} ({access:?})"));
            }
            let cross = call(&app, &client, endpoint, args, true).await;
            if cross != 403 {
                wrong.push(format!("{role:?} {endpoint} cross-site: {cross}, not 403"));
            }
            let get = client
                .get(app.url(&format!("/api/{endpoint}")))
                .send()
                .await
                .unwrap()
                .status()
                .as_u16();
            if get < 400 {
                wrong.push(format!("{role:?} GET {endpoint}: {get}"));
            }
        }

        // Every page of the route table: anonymous visitors are sent to sign in; everyone
        // signed in gets the page (parameters filled with an id).
        let client = client(&app, role).await;
        for listing in server::web::route_list() {
            let path = listing
                .path()
                .split('/')
                .map(|part| {
                    if part.starts_with(':') || part.starts_with('{') {
                        "1"
                    } else {
                        part
                    }
                })
                .collect::<Vec<_>>()
                .join("/");
            let path = if path.is_empty() {
                "/".to_string()
            } else {
                path
            };
            let status = client
                .get(app.url(&path))
                .send()
                .await
                .unwrap()
                .status()
                .as_u16();
            let want: &[u16] = match (role, path.as_str()) {
                // A share link's token is its credential; `1` is no link.
                (_, "/share/1") => &[404],
                (Role::Anonymous, "/login") => &[200],
                (Role::Anonymous, _) => &[303],
                (_, "/login") => &[303],
                _ => &[200, 404],
            };
            if !want.contains(&status) {
                wrong.push(format!("{role:?} page {path}: {status}, wanted {want:?}"));
            }
        }
        for (method, path, anonymous, signed_in) in PLAIN {
            let want = if role == Role::Anonymous {
                *anonymous
            } else {
                *signed_in
            };
            let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
            let status = client
                .request(method.clone(), app.url(path))
                .send()
                .await
                .unwrap()
                .status()
                .as_u16();
            if status != want {
                wrong.push(format!("{role:?} {method} {path}: {status}, wanted {want}"));
            }
        }
    }
    // Cross-site reports to the collect endpoint are its purpose.
    let res = app
        .client()
        .post(app.url("/api/collect"))
        .header("origin", "https://elsewhere.example")
        .body(r#"{"url": "/matrix"}"#)
        .send()
        .await
        .unwrap();
    if res.status() != 204 {
        wrong.push(format!("cross-site POST /api/collect: {}", res.status()));
    }
    let res = app
        .client()
        .post(app.url("/api/collect/event"))
        .header("origin", "https://elsewhere.example")
        .body(r#"{"name": "Signup", "url": "/matrix"}"#)
        .send()
        .await
        .unwrap();
    if res.status() != 204 {
        wrong.push(format!(
            "cross-site POST /api/collect/event: {}",
            res.status()
        ));
    }
    // Malformed arguments are the caller's mistake, answered 400 with the reason.
    let admin = client(&app, Role::Admin).await;
    for (endpoint, args) in [
        (
            "jobs/save",
            Args::Json(json!({"id": null, "input": {"name": ""}})),
        ),
        ("runs/list", Args::Form(&[("since_hours", "abc")])),
        ("runs/list", Args::Form(&[("since_hours", "4294967295")])),
        ("jobs/get", Args::Form(&[("id", "99999999999999999999999")])),
    ] {
        let status = call(&app, &admin, endpoint, &args, false).await;
        if status != 400 && status != 422 {
            wrong.push(format!("malformed {endpoint}: {status}, wanted 400 or 422"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
on_both_backends!(every_endpoint_answers_each_role_as_the_table_says);

/// What the test's database is doing besides waiting (PostgreSQL; nothing on SQLite): when a
/// page stalls, whether a query of its was waiting, and on what.
async fn busy_queries(db: &sea_orm::DatabaseConnection) -> Vec<String> {
    use sea_orm::ConnectionTrait;
    if db.get_database_backend() != sea_orm::DatabaseBackend::Postgres {
        return Vec::new();
    }
    let sql = "SELECT concat_ws(' ', state, wait_event_type, wait_event, \
               extract(epoch FROM now() - query_start)::int, left(query, 200)) AS what \
               FROM pg_stat_activity WHERE datname = current_database() AND state <> 'idle' \
               AND pid <> pg_backend_pid()";
    let statement = sea_orm::Statement::from_string(db.get_database_backend(), sql);
    match db.query_all_raw(statement).await {
        Ok(rows) => rows
            .iter()
            .filter_map(|r| r.try_get::<String>("", "what").ok())
            .collect(),
        Err(e) => vec![format!("(could not ask: {e})")],
    }
}

/// Every page, with the ids of a job and a run that exist, renders whole on the server: every
/// `<Suspense>` streams its content, none is left for the browser to fill. A resource the
/// server cannot resolve (a `LocalResource` read inside a `<Suspense>`, say) leaves its chunk
/// incomplete: the page then arrives as "Loading…" and is drawn by the browser alone.
/// A registered site with a share link; returns the link's token.
async fn shared_site(app: &TestApp) -> String {
    use app::services::traffic::{shares, sites};
    let (tester, now) = (&crate::helpers::TESTER, chrono::Utc::now());
    let console = "console.invalid";
    sites::add(&app.db, "shop.example", console, tester, now)
        .await
        .unwrap();
    let new = shares::NewShare {
        site: "shop.example",
        password: None,
        expires_at: None,
    };
    shares::create(&app.db, new, console, tester, now)
        .await
        .unwrap()
}

async fn every_page_renders_whole_on_the_server(app: TestApp) {
    use crate::helpers::{define, insert_run, noop_job, run_row};
    use app::domain::run::RunStatus;

    let job = define(&app.db, noop_job("rendered-whole")).await;
    let run = insert_run(
        &app.db,
        run_row(job.id, RunStatus::Succeeded, chrono::Utc::now()),
    )
    .await;
    let share = shared_site(&app).await;
    let mut wrong = Vec::new();
    for role in [Role::Viewer, Role::Admin] {
        let client = client(&app, role).await;
        for listing in server::web::route_list() {
            let path = listing.path();
            if path == "/login" {
                continue;
            }
            let id = if path.starts_with("/runs/") {
                run.id.to_string()
            } else if path.starts_with("/share/") {
                share.clone()
            } else {
                job.id.to_string()
            };
            let path = path
                .split('/')
                .map(|part| {
                    if part.starts_with(':') || part.starts_with('{') {
                        id.clone()
                    } else {
                        part.to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join("/");
            let path = if path.is_empty() { "/".into() } else { path };
            let started = std::time::Instant::now();
            let response = client.get(app.url(&path)).send().await.unwrap();
            let status = response.status().as_u16();
            let body = match response.text().await {
                Ok(body) => body,
                Err(e) => {
                    let took = started.elapsed().as_secs_f64();
                    let busy = busy_queries(&app.db).await;
                    wrong.push(format!(
                        "{role:?} {path}: the body broke off after {took:.1} s: {e}; \
                         the database was busy with: {busy:?}"
                    ));
                    continue;
                }
            };
            if status != 200 {
                wrong.push(format!("{role:?} {path}: {status}"));
            } else if !body.contains("__INCOMPLETE_CHUNKS=[]") {
                let left = body
                    .split("__INCOMPLETE_CHUNKS=")
                    .nth(1)
                    .and_then(|rest| rest.split(';').next())
                    .unwrap_or("(the page ended early)");
                wrong.push(format!(
                    "{role:?} {path}: chunks left to the browser {left}"
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
on_both_backends!(every_page_renders_whole_on_the_server);

/// Walking the route table — every router built in this process walks it — never stalls a
/// page another router is rendering at that moment. (Walking renders the app with resource
/// loading switched off process-wide; `server::web::route_list` walks once and keeps it.)
#[tokio::test(flavor = "multi_thread")]
async fn walking_the_routes_never_stalls_a_page_being_rendered() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    let app = TestApp::sqlite_with(|_, _| {}).await;
    let client = client(&app, Role::Admin).await;
    let walking = Arc::new(AtomicBool::new(true));
    let walker = tokio::task::spawn_blocking({
        let walking = walking.clone();
        move || {
            while walking.load(Ordering::Relaxed) {
                server::web::route_list();
            }
        }
    });
    let mut stalled = Vec::new();
    for round in 0..30 {
        for path in ["/settings", "/jobs", "/"] {
            let page = async { client.get(app.url(path)).send().await?.text().await };
            match tokio::time::timeout(std::time::Duration::from_secs(10), page).await {
                Ok(Ok(body)) if body.contains("__INCOMPLETE_CHUNKS=[]") => {}
                Ok(Ok(_)) => stalled.push(format!("{path} (round {round}): left chunks")),
                Ok(Err(e)) => stalled.push(format!("{path} (round {round}): {e}")),
                Err(_) => stalled.push(format!("{path} (round {round}): no end in 10 s")),
            }
        }
        if stalled.len() >= 3 {
            break;
        }
    }
    walking.store(false, Ordering::Relaxed);
    walker.await.expect("the walker ends");
    assert!(stalled.is_empty(), "{}", stalled.join("\n"));
}
