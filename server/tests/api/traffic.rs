//! Traffic capture end to end: the layer on the real router, the collect endpoint from another
//! site, the flush's upsert on both databases (adding, never overwriting), retention in
//! batches, a failed flush that loses nothing, and through the real binary: `traffic import`,
//! and `traffic flush` reaching a running server.

use std::time::Duration;

use app::entities::traffic_statistic;
use chrono::{TimeZone, Utc};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder,
};
use server::traffic::store::{self, IpPrivacy};

use crate::helpers::TestApp;
use crate::on_both_backends;
use crate::process::{bulwark, output, serve_on};

const GOOGLEBOT: &str = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
const FIREFOX: &str = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0";

async fn rows(app: &TestApp) -> Vec<traffic_statistic::Model> {
    traffic_statistic::Entity::find()
        .order_by_asc(traffic_statistic::Column::Path)
        .order_by_asc(traffic_statistic::Column::UserAgent)
        .all(&app.db)
        .await
        .unwrap()
}

async fn the_layer_counts_pages_and_a_flush_adds_up(app: TestApp) {
    let client = app.client();
    for (path, ua) in [
        ("/login?next=/jobs", GOOGLEBOT),
        ("/login", GOOGLEBOT),
        ("/login", FIREFOX),
        ("/pkg/bulwark.css", FIREFOX),
        ("/healthz", FIREFOX),
        ("/api/whoami", FIREFOX),
    ] {
        client
            .get(app.url(path))
            .header("user-agent", ua)
            .header("accept-language", "de-DE,de;q=0.9")
            .send()
            .await
            .unwrap();
    }
    client
        .get(app.url("/login"))
        .header("user-agent", FIREFOX)
        .header("sec-purpose", "prefetch")
        .send()
        .await
        .unwrap();
    assert_eq!(app.recorder.buffer.stats().recorded, 3);

    let report = store::flush(&app.db, &app.recorder.buffer, IpPrivacy::Raw)
        .await
        .unwrap();
    assert_eq!((report.rows, report.hits), (2, 3));
    let stored = rows(&app).await;
    assert_eq!(stored.len(), 2);
    let bot = stored.iter().find(|r| r.user_agent == GOOGLEBOT).unwrap();
    assert_eq!((bot.path.as_str(), bot.count), ("/login", 2));
    assert!(bot.is_bot);
    assert_eq!(bot.spider_source.as_deref(), Some("google"));
    assert_eq!(bot.ip, "127.0.0.1");
    assert_eq!(bot.locale, "de-DE");
    assert_eq!(bot.method, "GET");
    assert_eq!(bot.stat_date.timestamp() % 60, 0);
    let person = stored.iter().find(|r| r.user_agent == FIREFOX).unwrap();
    assert!(!person.is_bot);
    assert_eq!(person.spider_source, None);

    // The same key flushed again (as another node would) adds to the count.
    app.recorder.buffer.record(
        server::traffic::hit::Hit {
            minute: bot.stat_date.timestamp(),
            site: bot.site.clone(),
            method: "GET".into(),
            path: "/login".into(),
            ip: "127.0.0.1".into(),
            user_agent: GOOGLEBOT.into(),
            referer: String::new(),
            locale: "de-DE".into(),
            campaign: Default::default(),
            status: u16::try_from(bot.status).unwrap(),
            event: None,
        },
        5,
        false,
    );
    store::flush(&app.db, &app.recorder.buffer, IpPrivacy::Raw)
        .await
        .unwrap();
    let bot = traffic_statistic::Entity::find_by_id(bot.id)
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(bot.count, 7);
    assert_eq!(rows(&app).await.len(), 2);
}
on_both_backends!(the_layer_counts_pages_and_a_flush_adds_up);

async fn another_site_reports_through_collect(app: TestApp) {
    let client = reqwest::Client::new();
    let res = client
        .post(app.url("/api/collect"))
        .header("origin", "https://shop.example")
        .header("sec-fetch-site", "cross-site")
        .header("content-type", "text/plain;charset=UTF-8")
        .header("user-agent", FIREFOX)
        .body(r#"{"url":"https://shop.example/fr/panier?x=1","referrer":"https://www.bing.com/","lang":"en-GB"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 204);
    assert_eq!(res.headers()["access-control-allow-origin"], "*");

    let res = client
        .post(app.url("/api/collect"))
        .header("origin", "https://shop.example")
        .body("not json")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 400);
    assert!(res.text().await.unwrap().contains("expected JSON"));
    let res = client
        .post(app.url("/api/collect"))
        .body(format!(r#"{{"url":"/{}"}}"#, "a".repeat(10_000)))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 413);

    let res = client
        .get(app.url("/api/collect.gif?p=%2Fno-js%2Fpage&r=&l=%ZZ"))
        .header(
            "user-agent",
            "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
        )
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-type"], "image/gif");
    assert_eq!(res.bytes().await.unwrap().len(), 43);
    // An asset reported by a careless script is not a page view.
    client
        .post(app.url("/api/collect"))
        .body(r#"{"path":"/static/app.js"}"#)
        .send()
        .await
        .unwrap();

    store::flush(&app.db, &app.recorder.buffer, IpPrivacy::Raw)
        .await
        .unwrap();
    let stored = rows(&app).await;
    assert_eq!(stored.len(), 2, "{stored:?}");
    assert_eq!(stored[0].path, "/fr/panier");
    assert_eq!(
        stored[0].site, "shop.example",
        "the page's host names the site"
    );
    assert_eq!(stored[0].ref_domain.as_deref(), Some("bing.com"));
    assert_eq!(
        (
            stored[0].browser.as_str(),
            stored[0].os.as_str(),
            stored[0].device.as_str()
        ),
        ("Firefox", "Linux", "desktop")
    );
    // No page address, Origin or Referer: no site, which only an open console accepts.
    assert_eq!(stored[1].site, "");
    assert_eq!(stored[1].device, "bot");
    assert_eq!(stored[0].locale, "fr");
    assert_eq!(stored[0].referer, "https://www.bing.com/");
    assert!(!stored[0].is_bot);
    assert_eq!(stored[1].path, "/no-js/page");
    assert_eq!(stored[1].spider_source.as_deref(), Some("bing"));
}
on_both_backends!(another_site_reports_through_collect);

/// Visitors come through a proxy on 127.0.0.1 (so each test request can name its own client)
/// while the administrator signs in from 127.0.0.1 itself.
fn behind_a_local_proxy(config: &mut server::config::Config, _: &mut crate::helpers::Workers) {
    config.trusted_proxies = vec!["127.0.0.1".into()];
}

/// Registered sites: until one is registered any host may report; after, others get 403, a
/// page address and an Origin that disagree are refused, excluded addresses and people signed
/// in to the console are not counted, and the CLI lists, imports for and removes sites.
async fn registered_sites_keep_reports_apart(app: TestApp) {
    let visitor = reqwest::Client::new();
    let report = |host: &'static str, origin: Option<&'static str>, from: &'static str| {
        let mut request = visitor
            .post(app.url("/api/collect"))
            .header("x-forwarded-for", from)
            .header("user-agent", FIREFOX)
            .body(format!(r#"{{"url":"https://{host}/page","referrer":""}}"#));
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        async move { request.send().await.unwrap() }
    };
    let buffered = || app.recorder.buffer.stats().recorded;

    // Open: any host reports.
    assert_eq!(
        report("a.example", None, "198.51.100.1").await.status(),
        204
    );
    assert_eq!(buffered(), 1);

    let admin = app.signed_in("admin", crate::helpers::ADMIN_PASSWORD).await;
    let res = app
        .call(
            &admin,
            "traffic/sites/add",
            &[("host", "https://B.example:8443/x")],
        )
        .await;
    assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
    let res = app
        .call(&admin, "traffic/sites/add", &[("host", "b.example")])
        .await;
    assert_eq!(res.status(), 422, "registered twice");
    assert!(res.text().await.unwrap().contains("registered already"));
    let res = app
        .call(&admin, "traffic/sites/add", &[("host", "exa mple")])
        .await;
    assert_eq!(res.status(), 422);
    // The change applies on this node at once (the reloader is woken).
    // Reports that arrive before the reload lands are still counted: the sum below adds them.
    let mut refused = false;
    let mut a_reports = 1;
    for _ in 0..50 {
        let res = report("a.example", None, "198.51.100.1").await;
        if res.status() == 204 {
            a_reports += 1;
        }
        if res.status() == 403 {
            assert!(
                res.text()
                    .await
                    .unwrap()
                    .contains("a.example is not a registered site")
            );
            refused = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        refused,
        "an unregistered host is refused once a site is registered"
    );
    let before = buffered();
    assert_eq!(
        report("b.example", Some("https://b.example"), "198.51.100.2")
            .await
            .status(),
        204
    );
    assert_eq!(
        report("b.example", Some("https://a.example"), "198.51.100.2")
            .await
            .status(),
        403,
        "a page address and an Origin that disagree"
    );
    // The console's own host needs no registering.
    assert_eq!(
        report("127.0.0.1", None, "198.51.100.3").await.status(),
        204
    );
    // A pixel on a registered site's page, named by its Referer.
    let res = visitor
        .get(app.url("/api/collect.gif"))
        .header("referer", "https://b.example/no-js")
        .header("x-forwarded-for", "198.51.100.4")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let res = visitor
        .get(app.url("/api/collect.gif?p=/x"))
        .header("x-forwarded-for", "198.51.100.4")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403, "a pixel that names no site");
    assert_eq!(buffered(), before + 3);

    // Excluded addresses report (204) but are not counted.
    let res = app
        .call(
            &admin,
            "traffic/sites/exclusions",
            &[
                ("host", "b.example"),
                ("excluded", "203.0.113.0/24\nnot-an-address"),
            ],
        )
        .await;
    assert_eq!(res.status(), 422, "a bad entry changes nothing");
    let res = app
        .call(
            &admin,
            "traffic/sites/exclusions",
            &[("host", "b.example"), ("excluded", "203.0.113.0/24")],
        )
        .await;
    assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
    server::traffic::load_sites(&app.db, &app.recorder).await;
    let before = buffered();
    assert_eq!(report("b.example", None, "203.0.113.9").await.status(), 204);
    assert_eq!(buffered(), before, "an excluded address is not counted");
    assert_eq!(
        report("b.example", None, "198.51.100.5").await.status(),
        204
    );
    assert_eq!(buffered(), before + 1);

    store::flush(&app.db, &app.recorder.buffer, IpPrivacy::Raw)
        .await
        .unwrap();
    let sites: std::collections::BTreeMap<String, i64> =
        rows(&app)
            .await
            .into_iter()
            .fold(Default::default(), |mut m, r| {
                *m.entry(r.site).or_default() += r.count;
                m
            });
    assert_eq!(
        sites,
        [
            ("127.0.0.1".to_string(), 1),
            ("a.example".to_string(), a_reports),
            ("b.example".to_string(), 3)
        ]
        .into_iter()
        .collect()
    );
    let dashboard: serde_json::Value = app
        .call(&admin, "traffic/dashboard", &[("site", "b.example")])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(dashboard["current"]["page_views"], 3);
    assert_eq!(
        dashboard["sites"],
        serde_json::json!(["127.0.0.1", "b.example"])
    );
    assert_eq!(dashboard["open"], false);

    // Someone signed in to the console is not counted: not on its pages (the session cookie),
    // and not from their address on a site.
    let before = buffered();
    admin.get(app.url("/jobs")).send().await.unwrap();
    assert_eq!(buffered(), before, "the console's own pages, signed in");
    server::traffic::load_sites(&app.db, &app.recorder).await;
    // The administrator's client sends no User-Agent; a colleague at the same address does.
    let res = visitor
        .post(app.url("/api/collect"))
        .header("x-forwarded-for", "127.0.0.1")
        .body(r#"{"url":"https://b.example/page"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 204);
    assert_eq!(
        buffered(),
        before,
        "a console user's address and browser on a site"
    );
    assert_eq!(report("b.example", None, "127.0.0.1").await.status(), 204);
    assert_eq!(
        buffered(),
        before + 1,
        "a colleague behind the same address"
    );

    // The command line.
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = output(bulwark(&app, dir.path(), &["site", "list", "--json"], &[]));
    assert_eq!(code, 0, "{err}");
    let listed: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(listed[1]["host"], "b.example");
    assert_eq!(listed[1]["excluded"], "203.0.113.0/24");
    let log = dir.path().join("access.log");
    std::fs::write(
        &log,
        concat!(
            r#"198.51.100.9 - - [30/Nov/2026:08:15:02 +0000] "GET /imported HTTP/1.1" 200 10 "https://www.google.com/" "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0""#,
            "\n",
            r#"203.0.113.5 - - [30/Nov/2026:08:16:02 +0000] "GET /office HTTP/1.1" 200 10 "-" "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0""#,
            "\n"
        ),
    )
    .unwrap();
    let path = log.to_str().unwrap();
    let (code, _, err) = output(bulwark(
        &app,
        dir.path(),
        &["traffic", "import", path, "--site", "c.example"],
        &[],
    ));
    assert_ne!(code, 0);
    assert!(err.contains("site add c.example"), "{err}");
    let (code, out, err) = output(bulwark(
        &app,
        dir.path(),
        &["traffic", "import", path, "--site", "b.example"],
        &[],
    ));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("excluded address1"), "{out}");
    let imported = rows(&app).await;
    let row = imported.iter().find(|r| r.path == "/imported").unwrap();
    assert_eq!(
        (row.site.as_str(), row.ref_domain.as_deref()),
        ("b.example", Some("google.com"))
    );
    assert!(imported.iter().all(|r| r.path != "/office"));
    let (code, out, err) = output(bulwark(
        &app,
        dir.path(),
        &["site", "remove", "b.example"],
        &[],
    ));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("removed"), "{out}");
    let (code, _, err) = output(bulwark(
        &app,
        dir.path(),
        &["site", "remove", "b.example"],
        &[],
    ));
    assert_ne!(code, 0);
    assert!(err.contains("not a registered site"), "{err}");
    let (code, _, err) = output(bulwark(
        &app,
        dir.path(),
        &["site", "remove", "127.0.0.1"],
        &[],
    ));
    assert_ne!(code, 0);
    assert!(err.contains("console's own host"), "{err}");
    // Its page views stay.
    assert_eq!(
        rows(&app)
            .await
            .iter()
            .filter(|r| r.site == "b.example")
            .count(),
        4
    );
}
on_both_backends!(
    registered_sites_keep_reports_apart,
    super::behind_a_local_proxy
);

async fn hashed_ips_are_stable_and_never_stored_raw(app: TestApp) {
    let client = app.client();
    for _ in 0..2 {
        client.get(app.url("/login")).send().await.unwrap();
        store::flush(&app.db, &app.recorder.buffer, IpPrivacy::Hash)
            .await
            .unwrap();
    }
    let stored = rows(&app).await;
    // One row per visitor and minute: the two requests may straddle a minute's end.
    let minutes: std::collections::BTreeSet<_> = stored.iter().map(|r| r.stat_date).collect();
    assert_eq!(
        stored.len(),
        minutes.len(),
        "the same visitor and minute is one row: {stored:?}"
    );
    assert_eq!(stored.iter().map(|r| r.count).sum::<i64>(), 2);
    let ips: std::collections::BTreeSet<_> = stored.iter().map(|r| r.ip.clone()).collect();
    assert_eq!(ips.len(), 1, "the same hash each time: {ips:?}");
    assert!(stored[0].ip.starts_with("h:"), "{}", stored[0].ip);
    assert!(!stored[0].ip.contains("127.0.0.1"));
}
on_both_backends!(hashed_ips_are_stable_and_never_stored_raw);

async fn a_failed_flush_keeps_the_hits_for_the_next(app: TestApp) {
    let client = app.client();
    for path in ["/login", "/", "/login"] {
        client.get(app.url(path)).send().await.unwrap();
    }
    app.db
        .execute_unprepared("ALTER TABLE traffic_statistics RENAME TO traffic_away")
        .await
        .unwrap();
    let err = store::flush(&app.db, &app.recorder.buffer, IpPrivacy::Raw)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("3 hits kept in memory"), "{err}");
    app.db
        .execute_unprepared("ALTER TABLE traffic_away RENAME TO traffic_statistics")
        .await
        .unwrap();
    let report = store::flush(&app.db, &app.recorder.buffer, IpPrivacy::Raw)
        .await
        .unwrap();
    assert_eq!(report.hits, 3);
    let total: i64 = rows(&app).await.iter().map(|r| r.count).sum();
    assert_eq!(total, 3);
}
on_both_backends!(a_failed_flush_keeps_the_hits_for_the_next);

/// A flush asked for while another is still writing answers only once those rows are in:
/// `bulwark traffic flush` promises that what was counted before it is stored when it
/// returns, even if the scheduled flush (or the early one of a filling buffer) took the hits
/// first. The first flush is held inside its write by a lock on the table.
async fn a_flush_returns_only_when_the_one_before_it_has_written(app: TestApp) {
    use sea_orm::{DatabaseBackend, TransactionTrait};
    use server::traffic::buffer::Buffer;
    use server::traffic::hit::Hit;
    use std::sync::Arc;

    let buffer = Arc::new(Buffer::new(1 << 20));
    for path in ["/a", "/b"] {
        let (hit, _) = Hit::new(
            Utc::now().timestamp(),
            "GET",
            path,
            "10.0.0.1",
            FIREFOX,
            "",
            String::new(),
        );
        buffer.record(hit, 1, false);
    }
    let blocker = app.db.begin().await.unwrap();
    let hold = match app.db.get_database_backend() {
        DatabaseBackend::Postgres => "LOCK TABLE traffic_statistics IN EXCLUSIVE MODE",
        // Any write takes SQLite's one write lock until the transaction ends.
        _ => "DELETE FROM traffic_statistics WHERE 1 = 0",
    };
    blocker.execute_unprepared(hold).await.unwrap();
    let flush = |db: sea_orm::DatabaseConnection, buffer: Arc<Buffer>| {
        tokio::spawn(async move { store::flush(&db, &buffer, IpPrivacy::Raw).await })
    };
    let first = flush(app.db.clone(), buffer.clone());
    while buffer.stats().keys > 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // The first flush has taken both hits and waits for the lock; the buffer is empty.
    let second = flush(app.db.clone(), buffer.clone());
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !second.is_finished(),
        "the second flush answered while the first one's rows were not written"
    );
    blocker.rollback().await.unwrap();
    let second = second.await.unwrap().unwrap();
    assert_eq!(second.hits, 0, "the first flush wrote them");
    assert_eq!(
        rows(&app).await.iter().map(|r| r.count).sum::<i64>(),
        2,
        "stored by the time the second flush answers"
    );
    assert_eq!(first.await.unwrap().unwrap().hits, 2);
}
on_both_backends!(a_flush_returns_only_when_the_one_before_it_has_written);

async fn retention_deletes_only_old_rows_in_batches(app: TestApp) {
    let old = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
    let recent = Utc::now();
    let row = |i: usize, at| traffic_statistic::ActiveModel {
        key_hash: Set(format!("{i:032}")),
        stat_date: Set(at),
        path: Set(format!("/p{i}")),
        method: Set("GET".into()),
        ip: Set("192.0.2.1".into()),
        user_agent: Set(FIREFOX.into()),
        referer: Set(String::new()),
        locale: Set(String::new()),
        is_bot: Set(false),
        spider_source: Set(None),
        count: Set(1),
        generated: Set(false),
        ..Default::default()
    };
    let models: Vec<_> = (0..2_500)
        .map(|i| row(i, old))
        .chain((2_500..2_510).map(|i| row(i, recent)))
        .collect();
    for chunk in models.chunks(500) {
        traffic_statistic::Entity::insert_many(chunk.to_vec())
            .exec_without_returning(&app.db)
            .await
            .unwrap();
    }
    let cleaned = store::clean(&app.db, recent, 90).await.unwrap();
    assert_eq!(cleaned.rows, 2_500);
    // Whole local days: the cut is a midnight 90 or 91 days back.
    let age = recent - cleaned.before;
    assert!(age >= chrono::Duration::days(90) && age <= chrono::Duration::days(91));
    let left = rows(&app).await;
    assert_eq!(left.len(), 10);
    assert!(left.iter().all(|r| r.stat_date >= cleaned.before));
    assert_eq!(store::clean(&app.db, recent, 90).await.unwrap().rows, 0);
}
on_both_backends!(retention_deletes_only_old_rows_in_batches);

/// A log with page views, assets, an admin path, a POST, a broken line, a 64 KB user agent and
/// binary bytes.
fn sample_log() -> Vec<u8> {
    let mut log = Vec::new();
    let line = |ip: &str, time: &str, request: &str, ua: &str| {
        format!(r#"{ip} - - [{time}] "{request}" 200 512 "-" "{ua}""#) + "\n"
    };
    log.extend(
        line(
            "66.249.66.1",
            "30/Nov/2026:08:15:02 +0000",
            "GET /products/1 HTTP/1.1",
            GOOGLEBOT,
        )
        .bytes(),
    );
    log.extend(
        line(
            "66.249.66.1",
            "30/Nov/2026:08:15:40 +0000",
            "GET /products/1?x=2 HTTP/1.1",
            GOOGLEBOT,
        )
        .bytes(),
    );
    log.extend(
        line(
            "203.0.113.5",
            "30/Nov/2026:08:16:00 +0100",
            "GET /de/start HTTP/2.0",
            FIREFOX,
        )
        .bytes(),
    );
    log.extend(
        line(
            "203.0.113.5",
            "30/Nov/2026:08:16:01 +0000",
            "GET /app.css HTTP/2.0",
            FIREFOX,
        )
        .bytes(),
    );
    log.extend(
        line(
            "203.0.113.5",
            "30/Nov/2026:08:16:02 +0000",
            "GET /manager/login HTTP/2.0",
            FIREFOX,
        )
        .bytes(),
    );
    log.extend(
        line(
            "203.0.113.5",
            "30/Nov/2026:08:16:03 +0000",
            "POST /cart HTTP/2.0",
            FIREFOX,
        )
        .bytes(),
    );
    log.extend(b"this is not a log line\n");
    log.extend(
        line(
            "198.51.100.7",
            "30/Nov/2026:08:17:00 +0000",
            "GET /long HTTP/1.1",
            &"x".repeat(65_536),
        )
        .bytes(),
    );
    log.extend(b"198.51.100.8 - - [30/Nov/2026:08:17:00 +0000] \"GET /bin HTTP/1.1\" 200 1 \"-\" \"\xff\xfe\x00curl\"\n");
    log.extend(
        b"198.51.100.9 - - [30/Nov/2026:08:17:00 +0000] \"\x16\x03\x01\" 400 0 \"-\" \"-\"\n",
    );
    log
}

async fn traffic_import_counts_a_log_like_the_layer(app: TestApp) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("access.log");
    std::fs::write(&file, sample_log()).unwrap();
    let path = file.to_str().unwrap();
    let (code, out, err) = output(bulwark(&app, dir.path(), &["traffic", "import", path], &[]));
    assert_eq!(code, 0, "{err}");
    for expected in [
        "lines read      10",
        "hits recorded   5",
        "rows written    4",
        "excluded        3",
        "not a GET     1",
        "excluded prefix1",
        "static asset  1",
        "unparsable      2",
        "line 7: no [timestamp]",
        "line 10: no quoted request",
        "truncated       1",
    ] {
        assert!(out.contains(expected), "missing '{expected}' in:\n{out}");
    }
    let stored = rows(&app).await;
    let bot = stored.iter().find(|r| r.path == "/products/1").unwrap();
    assert_eq!(bot.count, 2, "two hits in one minute are one row");
    assert_eq!(
        bot.stat_date,
        Utc.with_ymd_and_hms(2026, 11, 30, 8, 15, 0).unwrap()
    );
    assert_eq!(bot.spider_source.as_deref(), Some("google"));
    let de = stored.iter().find(|r| r.path == "/de/start").unwrap();
    assert_eq!(
        de.stat_date,
        Utc.with_ymd_and_hms(2026, 11, 30, 7, 16, 0).unwrap()
    );
    assert_eq!(de.locale, "de");
    let long = stored.iter().find(|r| r.path == "/long").unwrap();
    assert_eq!(long.user_agent.len(), 512);

    // Importing the same log again adds the same counts again: an import is not idempotent,
    // and says so by its numbers.
    let (_, out, _) = output(bulwark(
        &app,
        dir.path(),
        &["traffic", "import", path, "--json"],
        &[],
    ));
    let summary: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(summary["hits"], 5);
    assert_eq!(summary["excluded"]["method"], 1);
    let bot = traffic_statistic::Entity::find_by_id(bot.id)
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(bot.count, 4);

    let (code, _, err) = output(bulwark(
        &app,
        dir.path(),
        &["traffic", "import", "/nonexistent.log"],
        &[],
    ));
    assert_eq!(code, 1);
    assert!(
        err.contains("cannot open the log file /nonexistent.log"),
        "{err}"
    );
}
on_both_backends!(traffic_import_counts_a_log_like_the_layer);

async fn traffic_flush_reaches_the_running_server(mut app: TestApp) {
    // The command reaches servers through the database: stop the in-process one, so the
    // `bulwark serve` started below is the only node.
    app.stop().await;
    // Its own `traffic-flush` job (every fifth minute, server/src/system_jobs.toml) would
    // write the hits below whenever the test happened to span such a minute, and leave the
    // command nothing to report. Disabled before the server starts, it never runs.
    crate::helpers::disable_system_jobs(&app.db).await;
    let dir = tempfile::tempdir().unwrap();
    let (code, out, _) = output(bulwark(&app, dir.path(), &["traffic", "flush"], &[]));
    assert_eq!(code, 0);
    assert!(out.contains("no server is running"), "{out}");

    let (mut child, addr) = serve_on(&app, dir.path(), "web-1");
    let client = app.client();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(res) = client.get(format!("http://{addr}/healthz")).send().await
            && res.status() == 200
        {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "server did not start"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for path in ["/login", "/login", "/jobs"] {
        client
            .get(format!("http://{addr}{path}"))
            .header("user-agent", GOOGLEBOT)
            .send()
            .await
            .unwrap();
    }
    assert!(
        rows(&app).await.is_empty(),
        "nothing is written before a flush"
    );
    let (code, out, err) = output(bulwark(&app, dir.path(), &["traffic", "flush"], &[]));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("web-1: 2 rows (3 hits)"), "{out}");
    assert!(
        out.contains("total: 2 rows (3 hits) from 1 of 1 nodes"),
        "{out}"
    );
    assert_eq!(rows(&app).await.iter().map(|r| r.count).sum::<i64>(), 3);

    // The system jobs exist once the server has started.
    let names: Vec<String> = app::entities::job::Entity::find()
        .filter(app::entities::job::Column::Kind.eq(app::domain::job::Kind::Builtin))
        .all(&app.db)
        .await
        .unwrap()
        .into_iter()
        .map(|j| j.name)
        .collect();
    assert!(
        names.contains(&"traffic-flush".to_string())
            && names.contains(&"traffic-clean".to_string()),
        "{names:?}"
    );

    // Hits after the last flush are written on a graceful stop.
    client
        .get(format!("http://{addr}/login"))
        .header("user-agent", FIREFOX)
        .send()
        .await
        .unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(rows(&app).await.iter().map(|r| r.count).sum::<i64>(), 4);
    let (_, out, _) = output(bulwark(&app, dir.path(), &["traffic", "flush"], &[]));
    assert!(
        out.contains("no server is running"),
        "a stopped node is not asked: {out}"
    );
}
on_both_backends!(traffic_flush_reaches_the_running_server);

/// Rows written before sites (no site, not described) are placed under the console's host and
/// described at the next start, and the rollups rebuilt from them split them by site.
async fn rows_from_before_sites_are_described(app: TestApp) {
    let now = Utc::now();
    let at = now - chrono::Duration::hours(1);
    let old = |i: usize, ua: &str, referer: &str| traffic_statistic::ActiveModel {
        key_hash: Set(format!("old{i:029}")),
        stat_date: Set(at),
        path: Set(format!("/old/{i}")),
        method: Set("GET".into()),
        ip: Set(format!("192.0.2.{i}")),
        user_agent: Set(ua.into()),
        referer: Set(referer.into()),
        locale: Set(String::new()),
        is_bot: Set(ua == GOOGLEBOT),
        spider_source: Set((ua == GOOGLEBOT).then(|| "google".to_string())),
        count: Set(2),
        generated: Set(false),
        ..Default::default()
    };
    traffic_statistic::Entity::insert_many([
        old(1, FIREFOX, "https://www.example.org/x"),
        old(2, FIREFOX, "http://console.example/jobs"),
        old(3, GOOGLEBOT, ""),
    ])
    .exec_without_returning(&app.db)
    .await
    .unwrap();
    let described = store::describe_old_rows(&app.db, "console.example")
        .await
        .unwrap();
    assert_eq!(described, 3);
    assert_eq!(
        store::describe_old_rows(&app.db, "console.example")
            .await
            .unwrap(),
        0,
        "once"
    );
    let stored = rows(&app).await;
    let by_path = |p: &str| stored.iter().find(|r| r.path == p).unwrap();
    let arrival = by_path("/old/1");
    assert_eq!(arrival.site, "console.example");
    assert_eq!(arrival.ref_domain.as_deref(), Some("example.org"));
    assert_eq!(
        (arrival.browser.as_str(), arrival.device.as_str()),
        ("Firefox", "desktop")
    );
    assert_eq!(
        by_path("/old/2").ref_domain,
        None,
        "a step within the console"
    );
    assert_eq!(by_path("/old/3").device, "bot");

    app::services::traffic::rebuild::rebuild(&app.db, chrono_tz::UTC)
        .await
        .unwrap();
    let today = app::domain::traffic_range::today(now, chrono_tz::UTC);
    let mut query = app::services::traffic::StatsQuery::everyone(
        today - chrono::Days::new(1),
        today,
        chrono_tz::UTC,
    );
    query.site = Some("console.example".into());
    let figures = app::services::traffic::stats(&app.db, &query)
        .await
        .unwrap();
    assert_eq!(figures.page_views, 6);
    assert_eq!(
        figures.people.referrers,
        [app::views::traffic::Ranked {
            name: "example.org".into(),
            views: 2
        }]
    );
    assert_eq!(
        figures,
        app::services::traffic::stats_from_rows(&app.db, &query)
            .await
            .unwrap()
    );
}
on_both_backends!(rows_from_before_sites_are_described);
