//! Scheduled traffic reports, on both databases: last week's visits to a site and the week
//! before, a weekly report set with `bulwark site report`, queued by the `traffic-reports`
//! task's service and delivered to a real SMTP server and a stand-in DingTalk robot — the
//! mail in the language of mails, an e-mail channel's in its own, the robot's in its own —
//! with the figures `bulwark traffic stats --json` gives for the same range; queued once per
//! period; bad settings refused with the reason and nothing changed; the REST API and `--off`.

use app::domain::chat::ChannelKind;
use app::domain::traffic_report::{Every, Period};
use app::i18n::Locale;
use app::services::notifications::channels::{self, ChannelChange, NewChannel};
use app::services::traffic::reports;
use chrono::{Datelike, Duration, NaiveDate, Utc};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use serde_json::{Value, json};
use server::traffic::hit::{Campaign, Hit};
use server::traffic::store::{self, IpPrivacy};

use crate::channels::{OK, platform, sender as chat_sender};
use crate::helpers::TestApp;
use crate::on_both_backends;
use crate::process::{bulwark, output};
use crate::smtp::SmtpSink;

const ANN: &str = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0";
const BOB: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
const BOT: &str = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
const SITE: &str = "shop.example";

fn run(app: &TestApp, dir: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    output(bulwark(app, dir, args, &[]))
}

/// A hit on the site at noon (UTC) of `day`.
fn hit(day: NaiveDate, path: &str, ip: &str, agent: &str, referer: &str) -> Hit {
    let at = day.and_hms_opt(12, 0, 0).unwrap().and_utc().timestamp();
    let (hit, _) = Hit::new(at, "GET", path, ip, agent, referer, "en".into());
    hit.on(SITE)
}

/// Last week: two people (one arriving from a campaign, one from a link), a 404 and a
/// crawler; the week before: one person.
async fn visits(app: &TestApp, week: Period) {
    let (monday, tuesday) = (week.from, week.from + Duration::days(1));
    let before = week.before().from + Duration::days(2);
    let spring = "/?utm_source=mail&utm_medium=news&utm_campaign=spring";
    let hits = [
        hit(monday, "/", "10.0.0.1", ANN, "https://news.example/item"),
        hit(monday, "/pricing", "10.0.0.1", ANN, "https://shop.example/"),
        hit(tuesday, "/", "10.0.0.2", BOB, "").tagged(Campaign::of(spring)),
        hit(tuesday, "/old", "10.0.0.2", BOB, "").answered(404),
        hit(tuesday, "/", "66.249.66.1", BOT, ""),
        hit(tuesday, "/pricing", "66.249.66.1", BOT, ""),
        hit(before, "/", "10.0.0.3", ANN, ""),
    ];
    for hit in hits {
        app.recorder.buffer.record(hit, 1, false);
    }
    store::flush(&app.db, &app.recorder.buffer, IpPrivacy::Raw)
        .await
        .unwrap();
}

fn stats(app: &TestApp, dir: &std::path::Path, period: Period, kind: &str) -> Value {
    let (from, to) = (period.from.to_string(), period.to.to_string());
    let args = [
        "traffic", "stats", "--json", "--site", SITE, "--from", &from, "--to", &to, "--type", kind,
    ];
    let (code, out, err) = run(app, dir, &args);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

/// `name count` of a list in the stats' JSON, the first five.
fn ranked(list: &Value, name: &str, count: &str) -> Vec<(String, i64)> {
    let list = list.as_array().unwrap();
    let pairs = list.iter().take(5).map(|v| {
        let name = v[name].as_str().unwrap().to_string();
        (name, v[count].as_i64().unwrap())
    });
    pairs.collect()
}

fn lines(lines: &[app::domain::traffic_report::Line]) -> Vec<(String, i64)> {
    lines.iter().map(|l| (l.name.clone(), l.count)).collect()
}

async fn channels_for_the_report(app: &TestApp) -> (String, crate::channels::Log) {
    let zh = Locale::parse("zh-CN").unwrap();
    let (ding, seen) = platform(|_| (200, OK), None).await;
    crate::channels::add(
        app,
        "ops-ding",
        ChannelKind::Dingtalk,
        &format!("{ding}/robot/send"),
        None,
    )
    .await;
    let mail = NewChannel {
        name: "team-mail".into(),
        kind: Some(ChannelKind::Email),
        to: vec!["team@example.com".into()],
        ..Default::default()
    };
    let now = Utc::now();
    channels::add(
        &app.db,
        &app.secret_key,
        &mail,
        &crate::helpers::TESTER,
        now,
    )
    .await
    .unwrap();
    for name in ["ops-ding", "team-mail"] {
        let change = ChannelChange {
            locale: Some(Some(zh)),
            ..Default::default()
        };
        channels::edit(
            &app.db,
            &app.secret_key,
            name,
            &change,
            &crate::helpers::TESTER,
            now,
        )
        .await
        .unwrap();
    }
    (ding, seen)
}

async fn a_weekly_report_reaches_mail_and_chat_with_the_figures_of_traffic_stats(app: TestApp) {
    let dir = tempfile::tempdir().unwrap();
    let now = Utc::now();
    let week = Period::last_before(Every::Week, now.date_naive());
    assert_eq!(week.from.weekday(), chrono::Weekday::Mon);
    let (code, _, err) = run(&app, dir.path(), &["site", "add", SITE]);
    assert_eq!(code, 0, "{err}");
    visits(&app, week).await;
    let (_, seen) = channels_for_the_report(&app).await;

    let args = [
        "site",
        "report",
        SITE,
        "--every",
        "week",
        "--to",
        "owner@example.com",
        "--channel",
        "ops-ding",
        "team-mail",
    ];
    let (code, out, err) = run(&app, dir.path(), &args);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.trim(),
        "shop.example: every week to owner@example.com, channel ops-ding, channel team-mail"
    );

    // The figures are those of `traffic stats` for the same range.
    let report = reports::gather(&app.db, SITE, Every::Week, week, chrono_tz::UTC)
        .await
        .unwrap();
    let people = stats(&app, dir.path(), week, "human");
    let bots = stats(&app, dir.path(), week, "bot");
    let before = stats(&app, dir.path(), week.before(), "human");
    assert_eq!((report.now.people, report.now.views), (2, 4), "{people}");
    assert_eq!(report.now.people, people["visits"].as_i64().unwrap());
    assert_eq!(report.now.views, people["page_views"].as_i64().unwrap());
    assert_eq!(report.before.people, before["visits"].as_i64().unwrap());
    assert_eq!(report.before.views, 1);
    assert_eq!(
        lines(&report.pages),
        ranked(&people["top_pages"], "path", "count")
    );
    assert_eq!(
        lines(&report.referrers),
        ranked(&people["people"]["referrers"], "name", "views")
    );
    assert_eq!(
        lines(&report.countries),
        ranked(&people["countries"], "name", "views")
    );
    assert_eq!(
        lines(&report.not_found),
        ranked(&people["not_found"], "path", "count")
    );
    assert_eq!(report.not_found[0].name, "/old");
    assert_eq!(report.campaigns[0].name, "spring (mail / news)");
    assert_eq!((report.bots, bots["bot"].as_i64().unwrap()), (2, 2));
    assert_eq!(bots["by_category"]["search"], 2);

    // Queued once per period, however often the task looks.
    let said = reports::queue_due(&app.db, now, chrono_tz::UTC, Locale::english())
        .await
        .unwrap();
    assert!(said.ends_with("queued"), "{said}");
    let again = reports::queue_due(&app.db, now, chrono_tz::UTC, Locale::english())
        .await
        .unwrap();
    assert!(again.ends_with("was queued already"), "{again}");

    delivered_by_mail(&app, dir.path(), week).await;
    assert_eq!(
        chat_sender(&app, "node-a")
            .deliver_due(Utc::now())
            .await
            .unwrap(),
        1
    );
    let body = seen.lock().unwrap()[0].json();
    let text = body["markdown"]["text"].as_str().unwrap();
    assert!(
        body["markdown"]["title"]
            .as_str()
            .unwrap()
            .contains("shop.example 流量报告")
    );
    for line in [
        "**访客:** 2（比上一周 +100%）",
        "**页面浏览:** 4（比上一周 +300%）",
        "**推广活动:** spring (mail / news) (1)",
        "**爬虫（2 次访问）:** 搜索引擎 (2)",
        "**未找到（404）:** /old (1)",
    ] {
        assert!(text.contains(line), "{line} in {text}");
    }
    let link = format!(
        "https://ops.example.com/traffic?from={}&to={}&site=shop.example",
        week.from, week.to
    );
    assert!(text.contains(&link), "{text}");
}
on_both_backends!(a_weekly_report_reaches_mail_and_chat_with_the_figures_of_traffic_stats);

/// The two mails: the report's own address in English (the language of mails), the e-mail
/// channel's in Chinese (its own).
async fn delivered_by_mail(app: &TestApp, dir: &std::path::Path, week: Period) {
    let sink = SmtpSink::start(None).await;
    let config = server::config::Config {
        smtp_url: Some(sink.url(None)),
        public_url: Some("https://ops.example.com".into()),
        mail_outbox_dir: dir.to_path_buf(),
        ..Default::default()
    };
    let sender = server::mail::sender::Sender {
        db: app.db.clone(),
        settings: config.mail_settings().unwrap(),
        name: "node-a".into(),
    };
    assert_eq!(sender.deliver_due(Utc::now()).await.unwrap(), 2);
    let mails = sink.mails();
    let to = |who: &str| {
        mails
            .iter()
            .find(|m| m.to == [who])
            .unwrap_or_else(|| panic!("no mail to {who}"))
    };
    let owner = to("owner@example.com");
    let subject = owner.header("Subject").unwrap();
    let period = format!("{} to {}", week.from, week.to);
    assert!(
        subject.contains(&period) && subject.contains("2 people, 4 page views"),
        "{subject}"
    );
    let body = owner.body();
    assert!(
        body.contains("People: 2 (+100 % against the week before)"),
        "{body}"
    );
    assert!(body.contains("Bots (2 hits)"), "{body}");
    assert!(body.contains("/old"), "{body}");
    assert!(body.contains("spring (mail / news)"), "{body}");
    assert!(
        body.contains(&format!(
            "https://ops.example.com/traffic?from={}&to={}&site=shop.example",
            week.from, week.to
        )),
        "{body}"
    );
    // The sink saw it (its subject travels encoded); the outbox keeps the subject as written.
    to("team@example.com");
    let team = app::entities::mail_outbox::Entity::find()
        .filter(app::entities::mail_outbox::Column::Recipients.eq("team@example.com"))
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    let period = format!("{} 至 {}", week.from, week.to);
    assert_eq!(
        team.subject,
        format!("[Bulwark] shop.example，{period}：2 位访客，4 次页面浏览")
    );
}

async fn bad_report_settings_are_refused_and_change_nothing(app: TestApp) {
    let dir = tempfile::tempdir().unwrap();
    let (code, _, err) = run(&app, dir.path(), &["site", "add", SITE]);
    assert_eq!(code, 0, "{err}");
    let set = [
        "site",
        "report",
        SITE,
        "--every",
        "day",
        "--to",
        "owner@example.com",
    ];
    assert_eq!(run(&app, dir.path(), &set).0, 0);
    let refused: [(&[&str], i32, &str); 5] = [
        (
            &[
                "site",
                "report",
                "nowhere.example",
                "--every",
                "week",
                "--to",
                "a@example.com",
            ],
            1,
            "nowhere.example is not a registered site",
        ),
        (
            &[
                "site",
                "report",
                SITE,
                "--every",
                "week",
                "--to",
                "not-an-address",
            ],
            1,
            "\"not-an-address\" is not an e-mail address",
        ),
        (
            &[
                "site",
                "report",
                SITE,
                "--every",
                "week",
                "--channel",
                "missing",
            ],
            1,
            "no channel named 'missing'",
        ),
        (
            &["site", "report", SITE, "--every", "week"],
            1,
            "a report needs at least one address (--to) or channel (--channel)",
        ),
        (&["site", "report", SITE, "--every", "month"], 2, "month"),
    ];
    for (args, expected, says) in refused {
        let (code, _, err) = run(&app, dir.path(), args);
        assert_eq!(code, expected, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    let (code, out, _) = run(&app, dir.path(), &["site", "report", SITE, "--json"]);
    assert_eq!(code, 0);
    let kept: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        kept,
        json!({"site": SITE, "every": "day", "to": ["owner@example.com"], "channels": []}),
        "unchanged"
    );

    // The REST API: the same rules, the same row.
    let admin = app.signed_in("admin", crate::helpers::ADMIN_PASSWORD).await;
    let url = app.url(&format!("/api/v1/sites/{SITE}/report"));
    let put = |body: Value| admin.put(&url).json(&body).send();
    let bad = put(json!({"every": "week", "to": ["nobody"]}))
        .await
        .unwrap();
    assert_eq!(bad.status(), 422);
    let good = put(json!({"every": "week", "to": ["ops@example.com"]}))
        .await
        .unwrap();
    assert_eq!(good.status(), 200);
    let got: Value = admin.get(&url).send().await.unwrap().json().await.unwrap();
    assert_eq!(got["every"], "week");
    assert_eq!(got["to"], json!(["ops@example.com"]));
    let (code, out, err) = run(&app, dir.path(), &["site", "report", SITE, "--off"]);
    assert_eq!(
        (code, out.trim()),
        (0, "the report of shop.example is off"),
        "{err}"
    );
    assert_eq!(admin.delete(&url).send().await.unwrap().status(), 404);

    let (code, out, _) = run(&app, dir.path(), &["site", "report", SITE]);
    assert_eq!((code, out.trim()), (0, "shop.example has no report"));
    let said = reports::queue_due(&app.db, Utc::now(), chrono_tz::UTC, Locale::english())
        .await
        .unwrap();
    assert!(said.starts_with("no site has a report"), "{said}");
}
on_both_backends!(bad_report_settings_are_refused_and_change_nothing);
