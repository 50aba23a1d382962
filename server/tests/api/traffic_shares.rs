//! Share links, on both databases: `bulwark site share` prints the link alone; an anonymous
//! browser gets the site's people's figures — never the console's own traffic, bots only as a
//! count, no addresses — marked `noindex`; a password is asked for and remembered; a new link
//! ends the old one, an expired or revoked one answers 404; making and revoking are audited;
//! the console's own host is never shared; an address asking too often is held back.

use app::services::traffic::shares;
use chrono::{Duration, Utc};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use serde_json::Value;
use server::traffic::hit::Hit;
use server::traffic::store::{self, IpPrivacy};

use crate::helpers::TestApp;
use crate::on_both_backends;
use crate::process::{bulwark, output};

const ANN: &str = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0";
const BOT: &str = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
const SITE: &str = "shop.example";
/// A path only the console's own traffic has.
const CONSOLE_PAGE: &str = "/console-only-page";

fn run(
    app: &TestApp,
    dir: &std::path::Path,
    args: &[&str],
    stdin: Option<&str>,
) -> (i32, String, String) {
    let mut cmd = bulwark(app, dir, args, &[]);
    if let Some(text) = stdin {
        use std::io::Write;
        cmd.stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
        return (
            out.status.code().unwrap_or(-1),
            text(out.stdout),
            text(out.stderr),
        );
    }
    output(cmd)
}

/// Today's visits: a person and a crawler on the site, a person on the console.
async fn visits(app: &TestApp) {
    let console = server::config::Config::default().console_host();
    let now = Utc::now().timestamp();
    let hit = |site: &str, path: &str, ip: &str, agent: &str| {
        Hit::new(now, "GET", path, ip, agent, "", "en".into())
            .0
            .on(site)
    };
    for h in [
        hit(SITE, "/", "10.0.0.1", ANN),
        hit(SITE, "/pricing", "10.0.0.1", ANN),
        hit(SITE, "/", "66.249.66.1", BOT),
        hit(&console, CONSOLE_PAGE, "10.0.0.9", ANN),
    ] {
        app.recorder.buffer.record(h, 1, false);
    }
    store::flush(&app.db, &app.recorder.buffer, IpPrivacy::Raw)
        .await
        .unwrap();
}

/// The link `site share` printed, as this test server's path.
fn share(app: &TestApp, dir: &std::path::Path, more: &[&str], stdin: Option<&str>) -> String {
    let mut args = vec!["site", "share", SITE];
    args.extend_from_slice(more);
    let (code, out, err) = run(app, dir, &args, stdin);
    assert_eq!(code, 0, "{err}");
    let link = out.trim();
    assert_eq!(out.lines().count(), 1, "the link alone: {out}");
    let (_, token) = link.rsplit_once("/share/").expect("a share link");
    format!("/share/{token}")
}

async fn view(app: &TestApp, client: &reqwest::Client, path: &str) -> (u16, Value) {
    let token = path.trim_start_matches("/share/");
    let response = client
        .post(app.url("/api/share/view"))
        .form(&[("token", token), ("range", "today")])
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

async fn a_shared_page_shows_people_only_and_ends_when_revoked(app: TestApp) {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(run(&app, dir.path(), &["site", "add", SITE], None).0, 0);
    visits(&app).await;
    let link = share(&app, dir.path(), &[], None);

    // The page, to a browser that never signed in.
    let anonymous = app.client();
    let page = anonymous.get(app.url(&link)).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert_eq!(page.headers()["x-robots-tag"], "noindex, nofollow");
    let html = page.text().await.unwrap();
    assert!(html.contains(SITE) && html.contains("/pricing"), "{html}");
    assert!(html.contains(r#"name="robots" content="noindex, nofollow""#));
    for secret in [CONSOLE_PAGE, "10.0.0.1", "Googlebot", "google"] {
        assert!(!html.contains(secret), "{secret} shown");
    }

    // Its figures: the site's people, bots as a count.
    let (status, answer) = view(&app, &anonymous, &link).await;
    assert_eq!(status, 200, "{answer}");
    let open = &answer["Open"];
    assert_eq!(
        (open["people"].as_i64(), open["page_views"].as_i64()),
        (Some(1), Some(2))
    );
    assert_eq!(open["bots"], 1);
    let pages: Vec<&str> = open["pages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(pages, ["/", "/pricing"]);
    let text = answer.to_string();
    assert!(!text.contains(CONSOLE_PAGE) && !text.contains("10.0.0") && !text.contains("google"));

    // A new link ends the old one; revoking ends the new one.
    let again = share(&app, dir.path(), &["--expires", "30d"], None);
    assert_ne!(again, link);
    assert_eq!(
        anonymous.get(app.url(&link)).send().await.unwrap().status(),
        404
    );
    assert_eq!(
        anonymous
            .get(app.url(&again))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    let (code, out, err) = run(&app, dir.path(), &["site", "unshare", SITE], None);
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    assert_eq!(
        anonymous
            .get(app.url(&again))
            .send()
            .await
            .unwrap()
            .status(),
        404
    );
    assert_eq!(view(&app, &anonymous, &again).await.0, 404);
    let (code, _, err) = run(&app, dir.path(), &["site", "unshare", SITE], None);
    assert_eq!(code, 1);
    assert!(err.contains("shop.example has no share link"), "{err}");
    let audited = app::entities::audit_log::Entity::find()
        .filter(app::entities::audit_log::Column::Action.starts_with("share."))
        .all(&app.db)
        .await
        .unwrap();
    let actions: Vec<&str> = audited.iter().map(|a| a.action.as_str()).collect();
    assert_eq!(actions, ["share.created", "share.created", "share.revoked"]);
}
on_both_backends!(a_shared_page_shows_people_only_and_ends_when_revoked);

async fn a_password_is_asked_for_once_and_an_expired_link_is_gone(app: TestApp) {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(run(&app, dir.path(), &["site", "add", SITE], None).0, 0);
    let link = share(
        &app,
        dir.path(),
        &["--password-stdin"],
        Some("correct horse\n"),
    );
    let token = link.trim_start_matches("/share/").to_string();
    let browser = app.client();
    let (status, answer) = view(&app, &browser, &link).await;
    assert_eq!(
        (status, &answer["Locked"]["site"]),
        (200, &Value::from(SITE))
    );
    let unlock = |password: &'static str| {
        browser
            .post(app.url("/api/share/unlock"))
            .form(&[("token", token.as_str()), ("password", password)])
            .send()
    };
    assert_eq!(unlock("wrong horse").await.unwrap().status(), 422);
    assert!(view(&app, &browser, &link).await.1.get("Locked").is_some());
    assert_eq!(unlock("correct horse").await.unwrap().status(), 200);
    assert!(
        view(&app, &browser, &link).await.1.get("Open").is_some(),
        "remembered"
    );
    assert!(
        view(&app, &app.client(), &link)
            .await
            .1
            .get("Locked")
            .is_some(),
        "another browser is asked"
    );

    // Expired: gone, as if revoked.
    let stored = shares::find(&app.db, &token, Utc::now()).await.unwrap();
    assert!(stored.is_some());
    let later = Utc::now() + Duration::days(1);
    let expiring = shares::NewShare {
        site: SITE,
        password: None,
        expires_at: Some(Utc::now() + Duration::hours(1)),
    };
    let console = server::config::Config::default().console_host();
    let token = shares::create(
        &app.db,
        expiring,
        &console,
        &crate::helpers::TESTER,
        Utc::now(),
    )
    .await
    .unwrap();
    assert!(
        shares::find(&app.db, &token, Utc::now())
            .await
            .unwrap()
            .is_some()
    );
    assert!(
        shares::find(&app.db, &token, later)
            .await
            .unwrap()
            .is_none()
    );

    // Refused, and nothing changed.
    let refused: [(&[&str], Option<&str>, &str); 4] = [
        (&["site", "share", &console], None, "the console's own host"),
        (
            &["site", "share", "nowhere.example"],
            None,
            "nowhere.example is not a registered site",
        ),
        (
            &["site", "share", SITE, "--expires", "2000-01-01"],
            None,
            "2000-01-01 has passed",
        ),
        (
            &["site", "share", SITE, "--password-stdin"],
            Some("short\n"),
            "at least 8 characters",
        ),
    ];
    for (args, stdin, says) in refused {
        let (code, _, err) = run(&app, dir.path(), args, stdin);
        assert_eq!(code, 1, "{args:?}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    assert!(
        shares::find(&app.db, &token, Utc::now())
            .await
            .unwrap()
            .is_some()
    );

    // A site no longer counted is no longer shared.
    assert_eq!(run(&app, dir.path(), &["site", "remove", SITE], None).0, 0);
    let gone = shares::find(&app.db, &token, Utc::now()).await.unwrap();
    assert!(gone.is_none());
}
on_both_backends!(a_password_is_asked_for_once_and_an_expired_link_is_gone);

/// One address asking for shared pages more than 60 times a minute is held back (the
/// limit is per server and source: the other tests here count apart). The limit is the
/// server's, not the database's: SQLite alone.
#[tokio::test(flavor = "multi_thread")]
async fn an_address_asking_too_often_is_held_back() {
    let app = TestApp::sqlite_with(|_, _| {}).await;
    let client = app.client();
    let mut statuses = Vec::new();
    for _ in 0..(server::web::SHARE_PER_MINUTE + 5) {
        let status = client
            .get(app.url("/share/no-such-link"))
            .send()
            .await
            .unwrap()
            .status()
            .as_u16();
        statuses.push(status);
    }
    assert!(statuses.iter().take(50).all(|s| *s == 404), "{statuses:?}");
    assert_eq!(statuses.last(), Some(&429), "{statuses:?}");
}
