//! Custom events and goals, on both databases: events sent to `POST /api/collect/event` are
//! counted apart from page views, bad ones are refused and count nothing; goals added with
//! `bulwark site goal add` count page views (those before the goal too) and events as
//! conversions with their rate, and a campaign filter counts what its visits went on to do.

use serde_json::{Value, json};
use server::traffic::store::{self, IpPrivacy};

use crate::helpers::TestApp;
use crate::on_both_backends;
use crate::process::{bulwark, output};

/// Three people (one address, three browsers) and a bot.
const ANN: &str = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0";
const BOB: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
const CAT: &str = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1";
const BOT: &str = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
const SHOP: &str = "https://shop.example";

async fn post(app: &TestApp, endpoint: &str, agent: &str, body: Value) -> u16 {
    app.client()
        .post(app.url(endpoint))
        .header("user-agent", agent)
        .body(body.to_string())
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

async fn view(app: &TestApp, agent: &str, page: &str) {
    let url = format!("{SHOP}{page}");
    let status = post(app, "/api/collect", agent, json!({ "url": url })).await;
    assert_eq!(status, 204, "{page}");
}

async fn event(app: &TestApp, agent: &str, name: &str, props: Value) -> u16 {
    let body = json!({ "name": name, "url": format!("{SHOP}/pricing"), "props": props });
    post(app, "/api/collect/event", agent, body).await
}

async fn flush(app: &TestApp) {
    store::flush(&app.db, &app.recorder.buffer, IpPrivacy::Raw)
        .await
        .unwrap();
}

fn run(app: &TestApp, dir: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    output(bulwark(app, dir, args, &[]))
}

fn stats(app: &TestApp, dir: &std::path::Path, more: &[&str]) -> Value {
    let mut args = vec!["traffic", "stats", "--json", "--range", "today"];
    args.extend_from_slice(more);
    let (code, out, err) = run(app, dir, &args);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

/// `name: conversions/visits @ rate` per goal, rates to 3 places.
fn goals(figures: &Value) -> Vec<String> {
    figures["goals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            format!(
                "{}: {}/{} @ {:.3}",
                g["name"].as_str().unwrap(),
                g["conversions"],
                g["visits"],
                g["rate"].as_f64().unwrap()
            )
        })
        .collect()
}

/// `name count/visits [key=value count, …]` per event.
fn events(figures: &Value) -> Vec<String> {
    figures["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let props: Vec<String> = e["props"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| {
                    format!(
                        "{}={} {}",
                        p["key"].as_str().unwrap(),
                        p["value"].as_str().unwrap(),
                        p["count"]
                    )
                })
                .collect();
            format!(
                "{} {}/{} [{}]",
                e["name"].as_str().unwrap(),
                e["count"],
                e["visits"],
                props.join(", ")
            )
        })
        .collect()
}

/// Ann lands from the spring campaign and signs up on the pricing page; Bob signs up on the
/// free plan and downloads; Cat only looks; the bot's event counts nowhere.
async fn first_visits(app: &TestApp) {
    view(app, ANN, "/pricing?utm_source=news&utm_campaign=spring").await;
    view(app, ANN, "/signup/done").await;
    view(app, BOB, "/pricing").await;
    view(app, CAT, "/pricing").await;
    for (agent, name, props) in [
        (
            ANN,
            "Signup",
            json!({"plan": "pro", "seats": 3, "gone": null}),
        ),
        (BOB, "Signup", json!({"plan": "free"})),
        (BOB, "Download", json!({})),
        (BOT, "Signup", json!({"plan": "pro"})),
    ] {
        assert_eq!(event(app, agent, name, props).await, 204);
    }
    flush(app).await;
}

async fn events_and_goals_convert_visits(app: TestApp) {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let (code, _, err) = run(&app, dir, &["site", "add", "shop.example"]);
    assert_eq!(code, 0, "{err}");
    first_visits(&app).await;

    // Events are not page views: four views of people, none of the events.
    let before = stats(&app, dir, &["--site", "shop.example"]);
    assert_eq!(before["page_views"], 4);
    assert_eq!(
        events(&before),
        [
            "Signup 2/2 [plan=free 1, plan=pro 1, seats=3 1]",
            "Download 1/1 []"
        ]
    );
    assert_eq!(before["goals"], json!([]));

    // A page goal counts the page views before it; an event goal its events.
    for args in [
        [
            "site",
            "goal",
            "add",
            "shop.example",
            "Signed up",
            "--page",
            "/signup/*",
        ],
        [
            "site",
            "goal",
            "add",
            "shop.example",
            "Signup event",
            "--event",
            "Signup",
        ],
    ] {
        let (code, out, err) = run(&app, dir, &args);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("goal"), "{out}");
    }
    // Bob finishes signing up after the goal exists: the flush counts it.
    view(&app, BOB, "/signup/done").await;
    flush(&app).await;
    let after = stats(&app, dir, &["--site", "shop.example"]);
    assert_eq!(
        goals(&after),
        ["Signed up: 2/2 @ 0.667", "Signup event: 2/2 @ 0.667"]
    );
    // The campaign's one visit (Ann's) converted both ways, though /signup/done has no tags.
    let spring = stats(
        &app,
        dir,
        &["--site", "shop.example", "--campaign", "spring"],
    );
    assert_eq!(
        goals(&spring),
        ["Signed up: 1/1 @ 1.000", "Signup event: 1/1 @ 1.000"]
    );
    assert_eq!(events(&spring), ["Signup 1/1 [plan=pro 1, seats=3 1]"]);
    // Bots have no events or goals.
    let bots = stats(&app, dir, &["--site", "shop.example", "--type", "bot"]);
    assert_eq!(
        (bots["events"].clone(), bots["goals"].clone()),
        (json!([]), json!([]))
    );

    // The dashboard and the REST API carry the same figures.
    let admin = app.signed_in("admin", crate::helpers::ADMIN_PASSWORD).await;
    let dashboard: Value = app
        .call(
            &admin,
            "traffic/dashboard",
            &[("site", "shop.example"), ("range", "today")],
        )
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(goals(&dashboard["current"]), goals(&after));

    let (code, out, _) = run(&app, dir, &["site", "goal", "list", "--json"]);
    assert_eq!(code, 0);
    let listed: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(listed[0]["target"], "/signup/*");
    let (code, _, err) = run(
        &app,
        dir,
        &["site", "goal", "remove", "shop.example", "Signed up"],
    );
    assert_eq!(code, 0, "{err}");
    let removed = stats(&app, dir, &["--site", "shop.example"]);
    assert_eq!(goals(&removed), ["Signup event: 2/2 @ 0.667"]);
}
on_both_backends!(events_and_goals_convert_visits);

/// Bad events are refused with the reason and count nothing; bad goals change nothing.
async fn bad_events_and_goals_are_refused(app: TestApp) {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let recorded = || app.recorder.buffer.stats().recorded;
    let start = recorded();
    for (name, props, reason) in [
        ("", json!({}), "needs a name"),
        ("Signup", json!({"plan": ["a"]}), "not a list"),
        ("Signup", json!("pro"), "properties are an object"),
        ("Sign\nup", json!({}), "control characters"),
    ] {
        let body = json!({ "name": name, "url": format!("{SHOP}/x"), "props": props });
        let res = app
            .client()
            .post(app.url("/api/collect/event"))
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 400);
        assert!(res.text().await.unwrap().contains(reason), "{name}");
    }
    assert_eq!(recorded(), start, "nothing was counted");

    let (code, _, _) = run(&app, dir, &["site", "add", "shop.example"]);
    assert_eq!(code, 0);
    for (args, code, message) in [
        (
            vec!["shop.example", "G", "--page", "signup"],
            1,
            "starts with /",
        ),
        (
            vec!["shop.example", "G", "--page", "/a", "--event", "e"],
            2,
            "cannot be used",
        ),
        (vec!["shop.example", "G"], 2, "required"),
        (
            vec!["nowhere.example", "G", "--event", "e"],
            1,
            "not a registered site",
        ),
        (vec!["shop.example", " ", "--event", "e"], 1, "needs a name"),
    ] {
        let mut all = vec!["site", "goal", "add"];
        all.extend(args.iter());
        let (got, _, err) = run(&app, dir, &all);
        assert_eq!(got, code, "{args:?}: {err}");
        assert!(err.contains(message), "{args:?}: {err}");
    }
    let (code, _, _) = run(
        &app,
        dir,
        &["site", "goal", "add", "shop.example", "G", "--event", "e"],
    );
    assert_eq!(code, 0);
    let (code, _, err) = run(
        &app,
        dir,
        &["site", "goal", "add", "shop.example", "G", "--event", "f"],
    );
    assert_eq!(code, 1);
    assert!(err.contains("already has a goal named G"), "{err}");
    let (code, out, _) = run(&app, dir, &["site", "goal", "list", "--json"]);
    assert_eq!(code, 0);
    let listed: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert_eq!(listed[0]["target"], "e");
    let (code, _, err) = run(&app, dir, &["site", "goal", "remove", "shop.example", "H"]);
    assert_eq!(code, 1);
    assert!(err.contains("has no goal named H"), "{err}");
}
on_both_backends!(bad_events_and_goals_are_refused);
