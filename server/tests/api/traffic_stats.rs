//! `bulwark traffic stats` against an independent count of the same hits, on both databases,
//! and its answers to bad ranges.

use std::collections::{BTreeMap, BTreeSet};

use app::domain::goals::GoalTarget;
use app::services::audit::Actor;
use app::services::traffic::rebuild;
use app::services::traffic::rollup_write::{
    Delta, IdKind, KnownIds, RowFacts, apply, visitor_digest,
};
use chrono::{Duration, Utc};
use server::traffic::buffer::Buffer;
use server::traffic::hit::{Event, Hit};
use server::traffic::store::{self, IpPrivacy};

use crate::helpers::TestApp;
use crate::on_both_backends;
use crate::process::{bulwark, clock_at, output};

const PERSON: &str = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0";
const GOOGLE: &str = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
const BING: &str = "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)";
const GPTBOT: &str = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)";
const UNNAMED: &str = "Mozilla/5.0 (compatible; SomeNewCrawler/0.1; +https://example.net/crawler)";
const PHONE: &str = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1";
const TABLET: &str = "Mozilla/5.0 (Linux; Android 13; SM-X200) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";

struct Row {
    day_ago: i64,
    minute: i64,
    path: &'static str,
    ip: &'static str,
    ua: &'static str,
    count: u64,
}

fn rows() -> Vec<Row> {
    let r = |day_ago, minute, path, ip, ua, count| Row {
        day_ago,
        minute,
        path,
        ip,
        ua,
        count,
    };
    vec![
        r(0, 1, "/", "10.0.0.1", PERSON, 3),
        r(0, 2, "/a", "10.0.0.1", PERSON, 1),
        r(0, 3, "/a", "81.2.69.142", PERSON, 2),
        r(0, 4, "/a", "66.249.66.1", GOOGLE, 5),
        r(1, 10, "/b", "10.0.0.1", PERSON, 1),
        r(1, 11, "/b", "66.249.66.1", GOOGLE, 2),
        r(1, 12, "/", "40.77.167.1", BING, 4),
        r(3, 30, "/c", "114.114.114.114", PERSON, 7),
        r(20, 0, "/old", "10.0.0.9", PERSON, 100),
    ]
}

/// The country of each address above, as the bundled database has it (private ones have none).
fn country(ip: &str) -> &'static str {
    match ip {
        "81.2.69.142" => "GB",
        "114.114.114.114" => "CN",
        "66.249.66.1" | "40.77.167.1" => "US",
        _ => "",
    }
}

/// Expected figures for the rows `keep` selects, computed here rather than by SQL.
fn expected(keep: impl Fn(&Row) -> bool) -> serde_json::Value {
    let rows: Vec<Row> = rows().into_iter().filter(|r| keep(r)).collect();
    let is_bot = |r: &Row| r.ua != PERSON;
    let views: u64 = rows.iter().map(|r| r.count).sum();
    let bot: u64 = rows.iter().filter(|r| is_bot(r)).map(|r| r.count).sum();
    let visits: BTreeSet<(i64, &str, &str)> =
        rows.iter().map(|r| (r.day_ago, r.ip, r.ua)).collect();
    let ips: BTreeSet<&str> = rows.iter().map(|r| r.ip).collect();
    let mut pages: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    let mut sources: BTreeMap<&str, u64> = BTreeMap::new();
    for r in &rows {
        let page = pages.entry(r.path).or_default();
        if is_bot(r) {
            page.1 += r.count;
            *sources
                .entry(if r.ua == GOOGLE { "google" } else { "bing" })
                .or_default() += r.count;
        } else {
            page.0 += r.count;
        }
    }
    let mut top: Vec<(&str, u64, u64)> = pages.into_iter().map(|(p, (h, b))| (p, h, b)).collect();
    top.sort_by(|a, b| (b.1 + b.2).cmp(&(a.1 + a.2)).then(a.0.cmp(b.0)));
    // Every person here came with no referrer (each page view an arrival), on Firefox on a
    // Linux desktop.
    let human = views - bot;
    let mut landing: Vec<(&str, u64)> = top
        .iter()
        .filter(|(_, h, _)| *h > 0)
        .map(|(p, h, _)| (*p, *h))
        .collect();
    landing.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let mut countries: BTreeMap<&str, u64> = BTreeMap::new();
    for r in rows.iter().filter(|r| !is_bot(r)) {
        *countries.entry(country(r.ip)).or_default() += r.count;
    }
    let mut countries: Vec<(&str, u64)> = countries.into_iter().collect();
    countries.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let one = |name: &str| {
        if human > 0 {
            serde_json::json!([{"name": name, "views": human}])
        } else {
            serde_json::json!([])
        }
    };
    serde_json::json!({
        "visits": visits.len(),
        "page_views": views,
        "unique_ips": ips.len(),
        "unique_pages": top.len(),
        "human": views - bot,
        "bot": bot,
        "generated": 0,
        "by_source": sources,
        // Both named bots here are search engines.
        "by_category": if bot > 0 { serde_json::json!({"search": bot}) } else { serde_json::json!({}) },
        "top_pages": top.iter().map(|(path, h, b)| serde_json::json!({"site": "", "path": path, "count": h + b, "human": h, "bot": b})).collect::<Vec<_>>(),
        "people": {
            "referrers": one(""),
            "landing_pages": landing.iter().map(|(p, n)| serde_json::json!({"name": p, "views": n})).collect::<Vec<_>>(),
            "browsers": one("Firefox"),
            "systems": one("Linux"),
            "devices": one("desktop"),
        },
        "countries": countries.iter().map(|(c, n)| serde_json::json!({"name": c, "views": n})).collect::<Vec<_>>(),
        // Untagged, and every person's view an arrival typed in.
        "campaigns": [],
        "channels": one("direct"),
        // Recorded with no status (as the collect script records), so none are listed.
        "statuses": [],
        "not_found": [],
        // No page sent an event, and no goal is defined.
        "events": [],
        "goals": [],
        // No AI crawler came: every top page is one none of them fetched.
        "ai_crawlers": {
            "crawlers": [],
            "unvisited": top.iter().map(|(path, h, b)| serde_json::json!({"site": "", "path": path, "views": h + b})).collect::<Vec<_>>(),
        },
    })
}

/// [`expected`] for a filter that counts no AI crawler: nothing of them is listed.
fn without_ai(mut figures: serde_json::Value) -> serde_json::Value {
    figures["ai_crawlers"] = serde_json::json!({"crawlers": [], "unvisited": []});
    figures
}

async fn stats_match_an_independent_count(app: TestApp) {
    let buffer = Buffer::new(1 << 20);
    // The rows are placed relative to this moment, and every command below starts its clock
    // at it, so "today" is the same day for both even when the test spans midnight.
    let now = Utc::now();
    let midnight = now.date_naive().and_hms_opt(0, 0, 0).unwrap().and_utc();
    for r in rows() {
        let at = midnight - Duration::days(r.day_ago) + Duration::minutes(r.minute);
        let (hit, _) = Hit::new(at.timestamp(), "GET", r.path, r.ip, r.ua, "", String::new());
        buffer.record(hit, r.count, false);
    }
    store::flush(&app.db, &buffer, IpPrivacy::Raw)
        .await
        .unwrap();

    let dir = tempfile::tempdir().unwrap();
    let clock = clock_at(now);
    let at_now = |all: &[&str]| {
        let mut cmd = bulwark(&app, dir.path(), all, &[]);
        cmd.envs(clock.iter().map(|(k, v)| (*k, v.as_str())));
        output(cmd)
    };
    let stats = |args: &[&str]| {
        let mut all = vec!["traffic", "stats", "--json"];
        all.extend_from_slice(args);
        let (code, out, err) = at_now(&all);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str::<serde_json::Value>(&out).unwrap()
    };
    assert_eq!(stats(&[]), expected(|r| r.day_ago < 7), "7 days by default");
    assert_eq!(stats(&["--range", "today"]), expected(|r| r.day_ago == 0));
    assert_eq!(stats(&["--range", "30d"]), expected(|_| true));
    assert_eq!(
        stats(&["--range", "7d", "--type", "bot"]),
        expected(|r| r.day_ago < 7 && r.ua != PERSON)
    );
    assert_eq!(
        stats(&["--range", "7d", "--type", "human"]),
        without_ai(expected(|r| r.day_ago < 7 && r.ua == PERSON))
    );
    assert_eq!(
        stats(&["--range", "7d", "--type", "bot", "--source", "google"]),
        without_ai(expected(|r| r.day_ago < 7 && r.ua == GOOGLE))
    );
    assert_eq!(
        stats(&["--range", "7d", "--category", "search"]),
        without_ai(expected(|r| r.day_ago < 7 && r.ua != PERSON))
    );
    assert_eq!(
        stats(&["--range", "7d", "--category", "ai"]),
        expected(|_| false)
    );
    // A country narrows every figure to its visitors, bots included, from the minute rows.
    assert_eq!(
        stats(&["--range", "30d", "--country", "gb"]),
        expected(|r| country(r.ip) == "GB")
    );
    assert_eq!(
        stats(&["--range", "30d", "--country", "US"]),
        expected(|r| country(r.ip) == "US")
    );
    assert_eq!(
        stats(&["--range", "7d", "--type", "human", "--country", "unknown"]),
        without_ai(expected(|r| r.day_ago < 7
            && r.ua == PERSON
            && country(r.ip).is_empty()))
    );
    let (code, _, err) = at_now(&["traffic", "stats", "--country", "Germany"]);
    assert_ne!(code, 0);
    assert!(err.contains("two-letter country code"), "{err}");
    let (code, _, err) = at_now(&["traffic", "stats", "--category", "robots"]);
    assert_ne!(code, 0);
    assert!(err.contains("search, ai, social"), "{err}");
    let yesterday = (now - Duration::days(1)).format("%Y-%m-%d").to_string();
    assert_eq!(
        stats(&["--from", &yesterday, "--to", &yesterday]),
        expected(|r| r.day_ago == 1)
    );

    let refused = |args: &[&str], says: &str| {
        let mut all = vec!["traffic", "stats"];
        all.extend_from_slice(args);
        let (code, _, err) = at_now(&all);
        assert_eq!(code, 1, "{args:?}");
        assert!(err.contains(says), "{args:?}: {err}");
    };
    refused(
        &["--from", "2026-11-20", "--to", "2026-11-10"],
        "is after the to date",
    );
    refused(
        &["--from", "2026-02-30", "--to", "2026-03-01"],
        "'2026-02-30' is not a date",
    );
    refused(
        &["--from", "2020-01-01", "--to", "2020-01-31"],
        "traffic is kept 90 days",
    );
    refused(&["--range", "week"], "is not a range");
    refused(&["--type", "robots"], "is not a visitor type");
}
on_both_backends!(stats_match_an_independent_count);

async fn generated_traffic_is_marked_and_removable(app: TestApp) {
    // A real hit first: generating and removing must leave it alone.
    let buffer = Buffer::new(1 << 20);
    let (hit, _) = Hit::new(
        Utc::now().timestamp(),
        "GET",
        "/real",
        "10.0.0.1",
        PERSON,
        "",
        String::new(),
    );
    buffer.record(hit, 1, false);
    store::flush(&app.db, &buffer, IpPrivacy::Raw)
        .await
        .unwrap();

    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let (code, out, err) = output(bulwark(&app, dir.path(), args, &[]));
        assert_eq!(code, 0, "{err}");
        out
    };
    let out = run(&["traffic", "generate", "--days", "3", "--per-day", "200"]);
    assert!(out.contains("generated 600 hits over 3 days"), "{out}");
    assert!(out.contains("bulwark traffic generate --remove"), "{out}");
    let stats: serde_json::Value =
        serde_json::from_str(&run(&["traffic", "stats", "--range", "7d", "--json"])).unwrap();
    assert_eq!(stats["page_views"], 601);
    assert_eq!(stats["generated"], 600);
    assert!(
        stats["bot"].as_i64().unwrap() > 0 && stats["human"].as_i64().unwrap() > 300,
        "{stats}"
    );
    assert!(
        stats["by_source"]["google"].as_i64().unwrap() > 0,
        "{stats}"
    );
    let out = run(&["traffic", "generate", "--if-empty"]);
    assert!(out.contains("already has traffic"), "{out}");

    let out = run(&["traffic", "generate", "--remove"]);
    assert!(out.contains("removed"), "{out}");
    let stats: serde_json::Value =
        serde_json::from_str(&run(&["traffic", "stats", "--range", "7d", "--json"])).unwrap();
    assert_eq!(
        (stats["page_views"].as_i64(), stats["generated"].as_i64()),
        (Some(1), Some(0))
    );
}
on_both_backends!(generated_traffic_is_marked_and_removable);

async fn the_hits_list_pages_by_keyset_and_exports_csv(app: TestApp) {
    use app::domain::filters::HitSort;
    use app::services::traffic::{HitsQuery, StatsQuery, hits};
    let buffer = Buffer::new(1 << 22);
    let now = Utc::now().timestamp();
    for i in 0..130 {
        let ua = if i % 2 == 0 { PERSON } else { GOOGLE };
        let path = format!("/p{}", i % 7);
        let (hit, _) = Hit::new(
            now - i * 60,
            "GET",
            &path,
            &format!("10.0.{}.{}", i / 200, i % 200),
            ua,
            "",
            String::new(),
        );
        // /p1 is gone: its hits were answered 404.
        let status = if i % 7 == 1 { 404 } else { 200 };
        buffer.record(hit.answered(status), (i % 5 + 1) as u64, false);
    }
    let (hit, _) = Hit::new(
        now,
        "GET",
        "/p0",
        "10.9.9.9",
        "=HYPERLINK(\"x\")",
        "",
        String::new(),
    );
    buffer.record(hit, 1, false);
    store::flush(&app.db, &buffer, IpPrivacy::Raw)
        .await
        .unwrap();

    // Keyset pages in both orders: every row once, in order.
    for sort in [HitSort::Newest, HitSort::MostHits] {
        let mut query = HitsQuery {
            stats: StatsQuery::everyone(
                (Utc::now() - Duration::days(1)).date_naive(),
                (Utc::now() + Duration::days(1)).date_naive(),
                app::domain::cron::parse_timezone("UTC").unwrap(),
            ),
            path: None,
            ip: None,
            sort,
            after: None,
            limit: 50,
        };
        let mut seen = Vec::new();
        loop {
            let (rows, next) = hits(&app.db, &query).await.unwrap();
            assert!(rows.len() <= 50);
            seen.extend(rows.iter().map(|r| (r.id, r.count, r.stat_date)));
            match next {
                Some(cursor) => query.after = Some(cursor),
                None => break,
            }
        }
        assert_eq!(seen.len(), 131, "{sort:?}");
        assert_eq!(
            seen.iter().map(|s| s.0).collect::<BTreeSet<_>>().len(),
            131,
            "no duplicates"
        );
        let ordered = match sort {
            HitSort::Newest => seen
                .windows(2)
                .all(|w| (w[0].2, w[0].0) >= (w[1].2, w[1].0)),
            HitSort::MostHits => seen
                .windows(2)
                .all(|w| (w[0].1, w[0].0) >= (w[1].1, w[1].0)),
        };
        assert!(ordered, "{sort:?}");
    }

    // The CSV: signed-in only, same filters, formulas defused.
    let anonymous = app
        .client()
        .get(app.url("/traffic/hits.csv"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        anonymous.status(),
        303,
        "anonymous visitors go to the sign-in page"
    );
    let viewer = app
        .signed_in("viewer", crate::helpers::VIEWER_PASSWORD)
        .await;
    // The rows' own days (the last 130 minutes), not `range=today`: right after midnight the
    // newest /p1 row is already yesterday's.
    let today = Utc::now();
    let days = format!(
        "from={}&to={}",
        (today - Duration::days(1)).format("%Y-%m-%d"),
        today.format("%Y-%m-%d")
    );
    let res = viewer
        .get(app.url(&format!("/traffic/hits.csv?{days}&type=bot&path=/p1")))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert!(
        res.headers()["content-disposition"]
            .to_str()
            .unwrap()
            .contains("attachment")
    );
    let text = res.text().await.unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "minute,path,method,ip,user_agent,referer,locale,is_bot,source,count,site,country,status"
    );
    // Private addresses have no country.
    assert!(
        lines.len() > 1
            && lines[1..].iter().all(|l| l.contains(",/p1,")
                && l.contains(",true,google,")
                && l.ends_with(",,404")),
        "{text}"
    );
    // Compressed on the way out (browsers ask), and still whole.
    let res = viewer
        .get(app.url(&format!("/traffic/hits.csv?{days}&type=bot&path=/p1")))
        .header("accept-encoding", "gzip")
        .send()
        .await
        .unwrap();
    assert_eq!(res.headers()["content-encoding"], "gzip");
    let compressed = res
        .bytes()
        .await
        .expect("the compressed export ends cleanly");
    assert!(!compressed.is_empty());
    let all = viewer
        .get(app.url("/traffic/hits.csv?range=7d"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(all.lines().count(), 132, "header and every row");
    assert!(all.contains("'=HYPERLINK"), "a formula is defused");
    let bad = viewer
        .get(app.url("/traffic/hits.csv?from=2026-11-20&to=2026-11-10"))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 422);
    assert!(bad.text().await.unwrap().contains("is after the to date"));
}
on_both_backends!(the_hits_list_pages_by_keyset_and_exports_csv);

/// Every figure, for every filter, site and several ranges, read from the rollups equals the
/// same figure counted from the minute rows — people's referrers, landing pages, browsers,
/// systems, devices, countries, campaigns, channels, statuses and pages not found, and AI
/// crawlers' fetches and the pages they missed, events and goals included — after flushes in
/// several batches (sets merged across flushes; a page goal added between them counts what
/// came before by its backfill and the rest by the flushes), after a rebuild in a zone half an
/// hour off UTC, and after retention.
async fn rollups_match_the_minute_rows(app: TestApp) {
    use app::domain::bots::BotCategory;
    use app::domain::traffic_range::VisitorType;
    use app::services::traffic::rebuild as rollup;
    use app::services::traffic::stats::series_from_rows;
    use app::services::traffic::{StatsQuery, series, stats, stats_from_rows};

    let now = Utc::now();
    server::traffic::generate::generate(&app.db, "shop.example.com", 12, 1_500, now, 5)
        .await
        .unwrap();
    let sites = ["a.example", "b.example"];
    for site in sites {
        app::services::traffic::sites::add(&app.db, site, "localhost", &Actor::named("test"), now)
            .await
            .unwrap();
    }
    add_goal(&app, "a.example", "Early", GoalTarget::Page("/p/1*".into())).await;
    add_goal(
        &app,
        "a.example",
        "Signed up",
        GoalTarget::Event("Signup".into()),
    )
    .await;
    // Real hits in three flushes; the last one is 150 pages seen once on each of the two
    // sites, so the top pages are all ties and the candidate lists must widen, and a landing
    // page's views are split between sites (a day's list of one site's rows bounds the rest).
    for batch in 0..3 {
        let buffer = Buffer::new(1 << 22);
        for i in 0..300 {
            let at = now - Duration::minutes(i * 7 + batch * 3);
            let path = if batch == 2 {
                format!("/once/{}", i / 2)
            } else {
                format!("/p/{}", i % 40)
            };
            // Visitors from Britain, China and a private network (no country).
            let ip = match i % 3 {
                0 => format!("81.2.69.{}", i % 50),
                1 => format!("114.114.{}.{}", batch, i % 50),
                _ => format!("10.1.{}.{}", batch, i % 50),
            };
            // Phones on even rows and tablets on odd ones: each site sees two kinds of device
            // whatever the hour (both on even rows left one site with one kind).
            let ua = match i % 10 {
                0 | 5 => GOOGLE,
                3 => GPTBOT,
                7 => UNNAMED,
                4 => PHONE,
                9 => TABLET,
                _ => PERSON,
            };
            let site = sites[(i % 2) as usize];
            // Arrivals from elsewhere (a search engine, an AI assistant, other sites) and typed
            // in, and steps within the site.
            let referer = match i % 4 {
                0 => String::new(),
                1 if i % 8 == 1 => "https://chatgpt.com/".to_string(),
                1 => "https://www.google.com/search?q=x".to_string(),
                2 => format!("https://{site}/p/1"),
                _ => format!("https://news{}.example/item", i % 3),
            };
            let (hit, _) = Hit::new(
                at.timestamp(),
                "GET",
                &path,
                &ip,
                ua,
                &referer,
                String::new(),
            );
            // Some landing URLs carry campaign tags.
            let campaign = server::traffic::hit::Campaign::of(match i % 6 {
                0 => "/?utm_source=news&utm_medium=email&utm_campaign=spring",
                3 => "/?utm_source=chatgpt.com",
                _ => "/",
            });
            // Answered as the layer or a log saw it; the collect script's hits have no status.
            let status = match i % 9 {
                0 => 0,
                4 | 7 => 404,
                5 => 301,
                _ => 200,
            };
            let hit = hit.on(site).tagged(campaign).answered(status);
            // Some visitors (a bot among them) send events, with properties.
            if i % 5 == 2 {
                let plan = BTreeMap::from([("plan".to_string(), format!("p{}", i % 3))]);
                let name = if i % 4 == 2 { "Signup" } else { "Download" };
                let event = Event::new(name.into(), &plan);
                buffer.record(hit.clone().sent(event), 1, false);
            }
            buffer.record(hit, 1 + (i as u64 % 3), false);
        }
        store::flush(&app.db, &buffer, IpPrivacy::Raw)
            .await
            .unwrap();
        if batch == 0 {
            add_goal(&app, "b.example", "Late", GoalTarget::Page("/p/**".into())).await;
        }
    }

    let check = |zone: &'static str| {
        let db = app.db.clone();
        async move {
            let zone = app::domain::cron::parse_timezone(zone).unwrap();
            let today = app::domain::traffic_range::today(now, zone);
            let mut checked = 0;
            let mut people = 0;
            let mut tagged = 0;
            let (mut answered, mut crawled, mut converted) = (0, 0, 0);
            for days_back in [0, 1, 6, 13] {
                for site in [
                    None,
                    Some("a.example"),
                    Some("b.example"),
                    Some("shop.example.com"),
                ] {
                    for (visitors, category, source) in [
                        (VisitorType::All, None, None),
                        (VisitorType::Human, None, None),
                        (VisitorType::Bot, None, None),
                        (VisitorType::Bot, None, Some("google")),
                        (VisitorType::All, None, Some("bing")),
                        (VisitorType::Human, None, Some("google")),
                        (VisitorType::Bot, Some(BotCategory::Search), None),
                        (VisitorType::All, Some(BotCategory::Ai), None),
                        (VisitorType::Bot, Some(BotCategory::Other), None),
                        (VisitorType::Bot, Some(BotCategory::Search), Some("google")),
                        (VisitorType::Bot, Some(BotCategory::Ai), Some("google")),
                        (VisitorType::Human, Some(BotCategory::Search), None),
                    ] {
                        let query = StatsQuery {
                            from: today - chrono::Days::new(days_back),
                            to: today,
                            zone,
                            visitors,
                            category,
                            source: source.map(str::to_string),
                            site: site.map(str::to_string),
                            country: None,
                            campaign: None,
                            status: None,
                        };
                        let fast = stats(&db, &query).await.unwrap();
                        assert_eq!(
                            fast,
                            stats_from_rows(&db, &query).await.unwrap(),
                            "{query:?}"
                        );
                        for bucket in [
                            app::domain::traffic_range::Bucket::Hour,
                            app::domain::traffic_range::Bucket::Day,
                        ] {
                            let points = series(&db, &query, bucket).await.unwrap();
                            let human: i64 = points.iter().map(|p| p.human).sum();
                            let bot: i64 = points.iter().map(|p| p.bot).sum();
                            assert_eq!(
                                (human, bot),
                                (fast.human, fast.bot),
                                "{query:?} {bucket:?}"
                            );
                            assert_eq!(
                                points,
                                series_from_rows(&db, &query, bucket).await.unwrap(),
                                "{query:?} {bucket:?}"
                            );
                        }
                        checked += usize::from(fast.page_views > 0);
                        people += usize::from(
                            !fast.people.referrers.is_empty()
                                && fast.people.devices.len() >= 2
                                && fast.countries.len() >= 3,
                        );
                        tagged +=
                            usize::from(!fast.campaigns.is_empty() && fast.channels.len() >= 3);
                        answered += usize::from(
                            fast.statuses.len() >= 3
                                && fast.not_found.iter().any(|p| !p.referrers.is_empty()),
                        );
                        converted += usize::from(
                            fast.events.iter().any(|e| !e.props.is_empty())
                                && fast.goals.iter().any(|g| g.conversions > 0 && g.rate < 1.0),
                        );
                        let ai = &fast.ai_crawlers;
                        crawled += usize::from(
                            ai.crawlers.iter().any(|c| c.statuses.len() >= 2)
                                && !ai.unvisited.is_empty(),
                        );
                    }
                }
            }
            assert!(checked >= 96, "most filters saw traffic ({checked})");
            assert!(people >= 24, "people's lists were compared ({people})");
            assert!(
                tagged >= 8,
                "campaigns and channels were compared ({tagged})"
            );
            assert!(
                answered >= 8,
                "statuses and pages not found were compared ({answered})"
            );
            assert!(crawled >= 8, "AI crawlers were compared ({crawled})");
            assert!(
                converted >= 8,
                "events and goals were compared ({converted})"
            );
        }
    };
    check("UTC").await;

    // The long ranges read blocks and the tails' lists; `warm` builds the rest of them, and
    // then has nothing to do.
    let rows = |db: sea_orm::DatabaseConnection, table: &'static str| async move {
        use sea_orm::ConnectionTrait;
        let row = db
            .query_one_raw(sea_orm::Statement::from_string(
                db.get_database_backend(),
                format!("SELECT COUNT(*) AS n FROM {table}"),
            ))
            .await
            .unwrap()
            .unwrap();
        row.try_get::<i64>("", "n").unwrap()
    };
    assert!(
        rows(app.db.clone(), "traffic_blocks").await > 0,
        "the 14-day ranges used blocks"
    );
    assert!(
        rows(app.db.clone(), "traffic_block_tails").await > 0,
        "the 14-day ranges used tails"
    );
    {
        use app::services::traffic::{blocks, tails};
        blocks::warm(&app.db, 91).await.unwrap();
        tails::warm(&app.db, 91).await.unwrap();
        assert_eq!(blocks::warm(&app.db, 91).await.unwrap(), 0);
        assert_eq!(tails::warm(&app.db, 91).await.unwrap(), 0);
    }
    // A late write into days those blocks hold (an import of old logs): they are stale, and
    // rebuilt before they are read; so are the tails.
    let buffer = Buffer::new(1 << 22);
    for i in 0..60 {
        let at = now - Duration::days(8) - Duration::minutes(i * 11);
        let (hit, _) = Hit::new(
            at.timestamp(),
            "GET",
            &format!("/late/{}", i % 3),
            &format!("10.9.0.{i}"),
            [GOOGLE, GPTBOT, PERSON, PERSON][i as usize % 4],
            "",
            String::new(),
        );
        // Some not found, to people and to an AI crawler: the tails' lists are stale too.
        let hit = hit.answered(if i % 3 == 0 { 404 } else { 200 });
        buffer.record(hit, 40, false);
    }
    store::flush(&app.db, &buffer, IpPrivacy::Raw)
        .await
        .unwrap();
    check("UTC").await;

    let kolkata = app::domain::cron::parse_timezone("Asia/Kolkata").unwrap();
    assert!(rollup::ensure(&app.db, kolkata).await.unwrap(), "rebuilt");
    assert!(!rollup::ensure(&app.db, kolkata).await.unwrap(), "once");
    check("Asia/Kolkata").await;
    // The first start after the migration that added the daily views fills them from the
    // hours, in the rollups' zone; once.
    let days = |db: sea_orm::DatabaseConnection| async move {
        use sea_orm::ConnectionTrait;
        db.query_one_raw(sea_orm::Statement::from_string(
            db.get_database_backend(),
            "SELECT COUNT(*) AS n, CAST(COALESCE(SUM(views), 0) AS BIGINT) AS views \
             FROM traffic_daily_views",
        ))
        .await
        .unwrap()
        .map(|row| {
            (
                row.try_get::<i64>("", "n").unwrap(),
                row.try_get::<i64>("", "views").unwrap(),
            )
        })
        .unwrap()
    };
    let kept = days(app.db.clone()).await;
    assert!(kept.0 > 0, "{kept:?}");
    sea_orm::ConnectionTrait::execute_unprepared(&app.db, "DELETE FROM traffic_daily_views")
        .await
        .unwrap();
    assert!(
        !rollup::ensure(&app.db, kolkata).await.unwrap(),
        "filled, not rebuilt"
    );
    assert_eq!(days(app.db.clone()).await, kept);
    assert_eq!(
        rollup::fill_daily_views(&app.db, kolkata).await.unwrap(),
        0,
        "once"
    );
    check("Asia/Kolkata").await;

    let cleaned = store::clean(&app.db, now, 5).await.unwrap();
    assert!(cleaned.rows > 0);
    check("Asia/Kolkata").await;
}
on_both_backends!(rollups_match_the_minute_rows);

async fn add_goal(app: &TestApp, site: &str, name: &str, target: GoalTarget) {
    let new = app::services::traffic::goals::NewGoal { site, name, target };
    app::services::traffic::goals::add(
        &app.db,
        new,
        "localhost",
        &Actor::named("test"),
        Utc::now(),
    )
    .await
    .unwrap();
}

/// Every stored minute row.
pub(crate) async fn stored_rows(
    db: &sea_orm::DatabaseConnection,
) -> Vec<app::entities::traffic_statistic::Model> {
    use sea_orm::EntityTrait;
    app::entities::traffic_statistic::Entity::find()
        .all(db)
        .await
        .unwrap()
}

/// A JSON list's entries as `key` → `count` (`name` → `views` of a ranked list).
pub(crate) fn by_name(list: &serde_json::Value, key: &str, count: &str) -> BTreeMap<String, i64> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e[key].as_str().unwrap().to_string(),
                e[count].as_i64().unwrap(),
            )
        })
        .collect()
}

/// People's and bots' page views summed over a dashboard's chart.
pub(crate) fn charted(dashboard: &serde_json::Value) -> (i64, i64) {
    dashboard["series"]
        .as_array()
        .unwrap()
        .iter()
        .fold((0, 0), |(h, b), p| {
            (
                h + p["human"].as_i64().unwrap(),
                b + p["bot"].as_i64().unwrap(),
            )
        })
}

/// A visitor's country is looked up before the address is hashed, so hashed-IP mode keeps it;
/// the REST API and the dashboard narrow to a country, refuse a word that is not one, and a
/// `geoip_database` that is not a country database stops a command with a message naming it.
async fn countries_survive_hashing_and_narrow_every_edge(app: TestApp) {
    use app::domain::api_token::Scope;
    let buffer = Buffer::new(1 << 20);
    let now = Utc::now();
    for (ip, count) in [("81.2.69.142", 3), ("114.114.114.114", 2), ("10.0.0.7", 1)] {
        let (hit, _) = Hit::new(now.timestamp(), "GET", "/", ip, PERSON, "", String::new());
        buffer.record(hit, count, false);
    }
    store::flush(&app.db, &buffer, IpPrivacy::Hash)
        .await
        .unwrap();
    let rows = stored_rows(&app.db).await;
    let mut kept: Vec<(bool, String, i64)> = rows
        .iter()
        .map(|r| (r.ip.starts_with("h:"), r.country.clone(), r.count))
        .collect();
    kept.sort();
    assert_eq!(
        kept,
        [
            (true, String::new(), 1),
            (true, "CN".to_string(), 2),
            (true, "GB".to_string(), 3)
        ]
    );

    let token = crate::helpers::api_token(&app.db, "reader", Scope::Read).await;
    let rest = |query: &'static str| {
        let (url, token) = (app.url(&format!("/api/v1/traffic?{query}")), token.clone());
        async move {
            reqwest::Client::new()
                .get(url)
                .bearer_auth(token)
                .send()
                .await
                .unwrap()
        }
    };
    let all: serde_json::Value = rest("range=today").await.json().await.unwrap();
    assert_eq!(
        all["countries"],
        serde_json::json!([{"name": "GB", "views": 3}, {"name": "CN", "views": 2}, {"name": "", "views": 1}])
    );
    let china: serde_json::Value = rest("range=today&country=cn").await.json().await.unwrap();
    assert_eq!(china["page_views"], 2);
    assert_eq!(
        china["countries"],
        serde_json::json!([{"name": "CN", "views": 2}])
    );
    let bad = rest("range=today&country=China").await;
    assert_eq!(bad.status(), 422);
    assert!(
        bad.text()
            .await
            .unwrap()
            .contains("two-letter country code")
    );

    let admin = app.signed_in("admin", crate::helpers::ADMIN_PASSWORD).await;
    let dashboard: serde_json::Value = app
        .call(
            &admin,
            "traffic/dashboard",
            &[("range", "today"), ("country", "unknown")],
        )
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(dashboard["current"]["page_views"], 1);
    assert_eq!(charted(&dashboard), (1, 0), "the chart is narrowed too");

    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("countries.mmdb");
    std::fs::write(&junk, "not a database").unwrap();
    let mut cmd = bulwark(&app, dir.path(), &["traffic", "stats"], &[]);
    cmd.env("BULWARK_GEOIP_DATABASE", &junk);
    let (code, _, err) = output(cmd);
    assert_ne!(code, 0);
    assert!(
        err.contains("geoip_database") && err.contains("not a MaxMind DB file"),
        "{err}"
    );
}
on_both_backends!(countries_survive_hashing_and_narrow_every_edge);

/// Campaign tags come from the landing URL through the capture layer (never the rest of its
/// query), the channel from the tags and the referrer; `--campaign` narrows every figure.
async fn campaigns_and_channels_come_from_the_landing_url(app: TestApp) {
    let client = app.client();
    for (target, referer) in [
        (
            "/login?utm_source=newsletter&utm_medium=email&utm_campaign=spring&token=s3cret",
            "https://mail.google.com/",
        ),
        (
            "/login?utm_campaign=spring&utm_source=newsletter&utm_medium=email",
            "",
        ),
        ("/login?utm_source=chatgpt.com", ""),
        ("/login", "https://www.perplexity.ai/search"),
        ("/login", "https://www.bing.com/search?q=bulwark"),
        ("/login", ""),
    ] {
        let mut request = client.get(app.url(target)).header("user-agent", PERSON);
        if !referer.is_empty() {
            request = request.header("referer", referer);
        }
        request.send().await.unwrap();
    }
    // A site's landing page as collect.js reports it: its address with the tags alone.
    let collected = client
        .post(app.url("/api/collect"))
        .header("user-agent", PERSON)
        .body(r#"{"url":"https://shop.example/spring?utm_source=newsletter&utm_medium=email&utm_campaign=spring","referrer":"","lang":"en"}"#)
        .send()
        .await
        .unwrap();
    assert!(collected.status().is_success(), "{}", collected.status());
    store::flush(&app.db, &app.recorder.buffer, IpPrivacy::Raw)
        .await
        .unwrap();
    let rows = stored_rows(&app.db).await;
    assert!(
        rows.iter()
            .all(|r| r.path == "/login" || r.path == "/spring"),
        "no query is kept"
    );
    assert!(!rows.iter().any(|r| format!("{r:?}").contains("s3cret")));

    let dir = tempfile::tempdir().unwrap();
    let stats = |args: &[&str]| {
        let mut all = vec!["traffic", "stats", "--json", "--range", "today"];
        all.extend_from_slice(args);
        let (code, out, err) = output(bulwark(&app, dir.path(), &all, &[]));
        assert_eq!(code, 0, "{err}");
        serde_json::from_str::<serde_json::Value>(&out).unwrap()
    };
    let all = stats(&[]);
    assert_eq!(
        all["campaigns"],
        serde_json::json!([
            {"source": "newsletter", "medium": "email", "campaign": "spring", "views": 3},
            {"source": "chatgpt.com", "medium": "", "campaign": "", "views": 1},
        ])
    );
    let channels = by_name(&all["channels"], "name", "views");
    assert_eq!(
        channels,
        [
            ("ai_assistant", 2),
            ("direct", 1),
            ("email", 3),
            ("search", 1)
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    );
    let spring = stats(&["--campaign", "spring"]);
    assert_eq!(spring["page_views"], 3);
    assert_eq!(
        spring["channels"],
        serde_json::json!([{"name": "email", "views": 3}])
    );
}
on_both_backends!(campaigns_and_channels_come_from_the_landing_url);

/// One person's page view on `path` at `minute`, as a flush hands it to the rollups.
fn person_view<'a>(minute: chrono::DateTime<Utc>, path: &'a str) -> RowFacts<'a> {
    RowFacts {
        minute,
        site: "ids.example",
        path,
        ip: "203.0.113.9",
        user_agent: PERSON,
        is_bot: false,
        source: None,
        count: 1,
        generated: false,
        ref_domain: None,
        browser: "Firefox",
        os: "Linux",
        device: "desktop",
        country: "",
        campaign: ["", "", ""],
        channel: "",
        referer: "",
        status: 200,
    }
}

/// The id `traffic_ids` holds for a digest.
async fn stored_id(db: &sea_orm::DatabaseConnection, kind: IdKind, digest: i64) -> Option<u64> {
    use sea_orm::ConnectionTrait;
    let sql = format!(
        "SELECT id FROM traffic_ids WHERE kind = {} AND digest = {digest}",
        kind as i16
    );
    let row = db
        .query_one_raw(sea_orm::Statement::from_string(
            db.get_database_backend(),
            sql,
        ))
        .await
        .unwrap()?;
    Some(row.try_get::<i64>("", "id").unwrap() as u64)
}

/// The people who visited `site` on `day`, from its stored set.
async fn day_visits(db: &sea_orm::DatabaseConnection, day: i32, site: &str) -> i64 {
    use sea_orm::ConnectionTrait;
    let sql = format!(
        "SELECT visits FROM traffic_daily_sets WHERE day = {day} AND site = '{site}' AND part = 'h'"
    );
    let row = db
        .query_one_raw(sea_orm::Statement::from_string(
            db.get_database_backend(),
            sql,
        ))
        .await
        .unwrap()
        .expect("the day's set");
    row.try_get::<i64>("", "visits").unwrap()
}

/// The ids one transaction of a flush assigned are used by the next without a statement while
/// they stand, and forgotten once a rebuild replaced them: every id the rollups are given is
/// the one `traffic_ids` holds, and a visitor seen in two transactions is one visitor.
async fn known_ids_carry_over_until_a_rebuild(app: TestApp) {
    use sea_orm::TransactionTrait;
    let zone = chrono_tz::Tz::UTC;
    let now = Utc::now();
    let day = app::services::traffic::rollup_write::place(now, zone).1;
    let visitor = (IdKind::Visitor, visitor_digest("203.0.113.9", PERSON));
    let mut known = KnownIds::default();
    let mut ids_used = Vec::new();
    for (round, path) in ["/a", "/b", "/c"].into_iter().enumerate() {
        if round == 2 {
            // What `traffic generate --remove` or a zone change does between two flushes.
            rebuild::rebuild(&app.db, zone).await.unwrap();
        }
        let mut delta = Delta::default();
        delta.add(&person_view(now, path), zone);
        let txn = app.db.begin().await.unwrap();
        let ids = apply(&txn, &delta, &mut known).await.unwrap();
        txn.commit().await.unwrap();
        let used = ids[&visitor];
        assert_eq!(
            Some(used),
            stored_id(&app.db, visitor.0, visitor.1).await,
            "round {round}: the visitor's id is the stored one"
        );
        assert_eq!(
            day_visits(&app.db, day, "ids.example").await,
            1,
            "round {round}: one visitor"
        );
        ids_used.push(used);
    }
    assert_eq!(
        ids_used[0], ids_used[1],
        "the second transaction reused the id"
    );
    assert_ne!(
        ids_used[1], ids_used[2],
        "the rebuild (of no minute rows) dropped every id; the third transaction was given a new one"
    );
}
on_both_backends!(known_ids_carry_over_until_a_rebuild);
