//! What visitors were answered and what AI crawlers fetched, on both databases: statuses kept
//! from the console's own responses and from access logs (none from the collect script), the
//! pages not found with who linked to them, `--status` narrowing every figure, and per AI
//! crawler its pages and statuses beside the top pages none of them fetched.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use server::traffic::store::{self, IpPrivacy};

use crate::helpers::TestApp;
use crate::on_both_backends;
use crate::process::{bulwark, output};
use crate::traffic_stats::{by_name, charted, stored_rows};

const PERSON: &str = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0";
const GPTBOT: &str = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)";
const LINK: &str = "https://blog.example/post";

/// Requests to the console's own pages, answered as the console answers them.
async fn visit(app: &TestApp, visits: &[(&str, &str, &str)]) {
    let client = app.client();
    for (path, user_agent, referer) in visits {
        let mut request = client.get(app.url(path)).header("user-agent", *user_agent);
        if !referer.is_empty() {
            request = request.header("referer", *referer);
        }
        request.send().await.unwrap();
    }
}

/// An access log of `logs.example`: a page, a page gone, and GPTBot meeting a server error.
fn access_log() -> String {
    let at = chrono::Utc::now().format("%d/%b/%Y:%H:%M:%S +0000");
    [
        format!(r#"198.51.100.4 - - [{at}] "GET /a HTTP/1.1" 200 512 "-" "{PERSON}""#),
        format!(r#"198.51.100.4 - - [{at}] "GET /missing HTTP/1.1" 404 80 "https://x.example/" "{PERSON}""#),
        format!(r#"198.51.100.9 - - [{at}] "GET /a HTTP/1.1" 500 20 "-" "{GPTBOT}""#),
    ]
    .join("\n")
        + "\n"
}

async fn answered_traffic(app: &TestApp, dir: &std::path::Path) {
    visit(
        app,
        &[
            ("/login", PERSON, ""),
            ("/login", PERSON, "https://www.google.com/"),
            ("/auth/gone", PERSON, LINK),
            ("/auth/gone", PERSON, LINK),
            ("/auth/gone", PERSON, ""),
            ("/auth/gone/too", PERSON, LINK),
            ("/login", GPTBOT, ""),
            ("/auth/gone", GPTBOT, ""),
            // A console page sends an anonymous visitor to sign in.
            ("/jobs", PERSON, ""),
        ],
    )
    .await;
    // What collect.js reports carries no status: the script never sees the response.
    let collected = app
        .client()
        .post(app.url("/api/collect"))
        .header("user-agent", PERSON)
        .body(r#"{"url":"https://shop.example/spring","referrer":"","lang":"en"}"#)
        .send()
        .await
        .unwrap();
    assert!(collected.status().is_success(), "{}", collected.status());
    store::flush(&app.db, &app.recorder.buffer, IpPrivacy::Raw)
        .await
        .unwrap();
    let log = dir.join("access.log");
    std::fs::write(&log, access_log()).unwrap();
    let args = [
        "traffic",
        "import",
        log.to_str().unwrap(),
        "--site",
        "logs.example",
    ];
    let (code, _, err) = output(bulwark(app, dir, &args, &[]));
    assert_eq!(code, 0, "{err}");
}

fn stats(app: &TestApp, dir: &std::path::Path, more: &[&str]) -> Value {
    let mut args = vec!["traffic", "stats", "--json", "--range", "today"];
    args.extend_from_slice(more);
    let (code, out, err) = output(bulwark(app, dir, &args, &[]));
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

/// The console's 404 page and an imported log's statuses are kept; the collect script's hit
/// has none; the figures list statuses and the pages not found with their referrers, and
/// `--status`, `status=` and the dashboard narrow every figure to one code.
async fn statuses_come_from_responses_and_logs(app: TestApp) {
    let dir = tempfile::tempdir().unwrap();
    answered_traffic(&app, dir.path()).await;
    // Summed per page and status: hits of one key straddling a minute are two rows.
    let mut kept: BTreeMap<(String, i16), i64> = BTreeMap::new();
    for row in stored_rows(&app.db).await {
        *kept.entry((row.path, row.status)).or_default() += row.count;
    }
    assert_eq!(
        kept,
        [
            ("/a", 200, 1),
            ("/a", 500, 1),
            ("/auth/gone", 404, 4),
            ("/auth/gone/too", 404, 1),
            ("/jobs", 303, 1),
            ("/login", 200, 3),
            ("/missing", 404, 1),
            ("/spring", 0, 1),
        ]
        .map(|(p, s, n)| ((p.to_string(), s), n))
        .into_iter()
        .collect()
    );

    let all = stats(&app, dir.path(), &[]);
    assert_eq!(
        all["statuses"],
        json!([
            {"status": 404, "views": 5},
            {"status": 200, "views": 3},
            {"status": 303, "views": 1}
        ]),
        "people's answered views; the collected one has no status"
    );
    let gone = &all["not_found"][0];
    assert_eq!(
        (&gone["path"], &gone["count"]),
        (&json!("/auth/gone"), &json!(3))
    );
    assert_eq!(
        gone["referrers"],
        json!([{"name": LINK, "views": 2}, {"name": "", "views": 1}])
    );
    let listed = by_name(&all["not_found"], "path", "count");
    assert_eq!(
        listed,
        BTreeMap::from([
            ("/auth/gone".into(), 3),
            ("/auth/gone/too".into(), 1),
            ("/missing".into(), 1)
        ])
    );

    let missing = stats(&app, dir.path(), &["--status", "404"]);
    assert_eq!(missing["page_views"], 6, "five people and GPTBot's one");
    assert_eq!(missing["human"], 5);
    assert_eq!(missing["statuses"], json!([{"status": 404, "views": 5}]));
    let (code, _, err) = output(bulwark(
        &app,
        dir.path(),
        &["traffic", "stats", "--status", "4O4"],
        &[],
    ));
    assert_ne!(code, 0);
    assert!(err.contains("--status") && err.contains("4O4"), "{err}");

    narrowed_elsewhere(&app).await;
}
on_both_backends!(statuses_come_from_responses_and_logs);

/// The REST API and the dashboard narrow to a status as the command does, and refuse a word
/// that is not one.
async fn narrowed_elsewhere(app: &TestApp) {
    use app::domain::api_token::Scope;
    let token = crate::helpers::api_token(&app.db, "reader", Scope::Read).await;
    let rest = |query: &str| {
        reqwest::Client::new()
            .get(app.url(&format!("/api/v1/traffic?range=today&{query}")))
            .bearer_auth(token.clone())
            .send()
    };
    let server_errors: Value = rest("status=500").await.unwrap().json().await.unwrap();
    assert_eq!(server_errors["page_views"], 1);
    assert_eq!(server_errors["bot"], 1);
    for bad in ["status=99", "status=abc"] {
        let refused = rest(bad).await.unwrap();
        assert_eq!(refused.status(), 422, "{bad}");
        assert!(refused.text().await.unwrap().contains("HTTP status code"));
    }
    let admin = app.signed_in("admin", crate::helpers::ADMIN_PASSWORD).await;
    let dashboard: Value = app
        .call(
            &admin,
            "traffic/dashboard",
            &[("range", "today"), ("status", "200")],
        )
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        dashboard["current"]["page_views"], 4,
        "three people and GPTBot"
    );
    assert_eq!(charted(&dashboard), (3, 1), "the chart is narrowed too");
}

/// Per AI crawler its pages with their statuses, its statuses summed; the top pages no AI
/// crawler fetched; nothing of AI crawlers when the figures count people only.
async fn ai_crawlers_and_the_pages_they_missed(app: TestApp) {
    let dir = tempfile::tempdir().unwrap();
    answered_traffic(&app, dir.path()).await;
    let all = stats(&app, dir.path(), &[]);
    let crawlers = all["ai_crawlers"]["crawlers"].as_array().unwrap();
    assert_eq!(crawlers.len(), 1);
    let openai = &crawlers[0];
    assert_eq!(
        (&openai["source"], &openai["fetches"]),
        (&json!("openai"), &json!(3))
    );
    assert_eq!(
        openai["statuses"],
        json!([
            {"status": 200, "views": 1},
            {"status": 404, "views": 1},
            {"status": 500, "views": 1}
        ])
    );
    let pages: Vec<(String, i64)> = openai["pages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                format!(
                    "{}{}",
                    p["site"].as_str().unwrap(),
                    p["path"].as_str().unwrap()
                ),
                p["status"].as_i64().unwrap(),
            )
        })
        .collect();
    assert!(pages.contains(&("logs.example/a".into(), 500)), "{pages:?}");
    assert!(
        pages
            .iter()
            .any(|(page, status)| page.ends_with("/auth/gone") && *status == 404)
    );
    let unvisited: Vec<&str> = all["ai_crawlers"]["unvisited"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["path"].as_str().unwrap())
        .collect();
    let mut unvisited = unvisited.clone();
    unvisited.sort();
    assert_eq!(
        unvisited,
        ["/auth/gone/too", "/jobs", "/missing", "/spring"]
    );

    let people = stats(&app, dir.path(), &["--type", "human"]);
    assert_eq!(
        people["ai_crawlers"],
        json!({"crawlers": [], "unvisited": []})
    );
    let search = stats(&app, dir.path(), &["--category", "search"]);
    assert_eq!(search["ai_crawlers"]["crawlers"], json!([]));
}
on_both_backends!(ai_crawlers_and_the_pages_they_missed);
