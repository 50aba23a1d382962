//! Traffic spike alerts, on both databases: two weeks of generated traffic, every hour of the
//! last week checked with the default rules raises nothing; four times an hour's usual people
//! raises one alert (none while every job is paused for maintenance, none again on a second
//! look) and the next, ordinary hour one recovery — by mail and to a chat channel.

use app::domain::traffic_alerts::Rules;
use app::entities::{channel_delivery, mail_outbox};
use app::i18n::Locale;
use app::services::traffic::alerts;
use chrono::Utc;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use server::traffic::hit::Hit;
use server::traffic::store::{self, IpPrivacy};

use crate::channels::{OK, platform};
use crate::helpers::TestApp;
use crate::on_both_backends;
use crate::process::{bulwark, output};

const SITE: &str = "shop.example";
const UTC: chrono_tz::Tz = chrono_tz::UTC;
const PERSON: &str = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0";

/// A check of the hour starting at `hour`, made now.
async fn check_after(app: &TestApp, hour: i64) -> String {
    let now = Utc::now();
    alerts::check_hour(&app.db, Rules::default(), hour, now, UTC, Locale::english())
        .await
        .unwrap()
}

async fn sent(app: &TestApp, kind: &str) -> (usize, usize) {
    let mails = mail_outbox::Entity::find()
        .filter(mail_outbox::Column::Kind.eq(kind))
        .all(&app.db)
        .await
        .unwrap()
        .len();
    let event = kind.replace("traffic-", "traffic.");
    let chats = channel_delivery::Entity::find()
        .filter(channel_delivery::Column::Kind.eq(event))
        .all(&app.db)
        .await
        .unwrap()
        .len();
    (mails, chats)
}

/// People's page views of `site` in the hour starting at `hour`, from the rollups.
async fn people_in(app: &TestApp, hour: i64) -> u64 {
    let hours = alerts::hours(&app.db, hour, &[]).await.unwrap();
    hours.iter().find(|h| h.site == SITE).map_or(0, |h| h.views)
}

async fn a_spike_alerts_once_and_recovers_once_and_an_ordinary_week_never(app: TestApp) {
    let (ding, _) = platform(|_| (200, OK), None).await;
    let kind = app::domain::chat::ChannelKind::Dingtalk;
    crate::channels::add(&app, "ops-ding", kind, &format!("{ding}/robot/send"), None).await;
    app::services::notifications::save_digest_settings(
        &app.db,
        "sre@example.com",
        "ops-ding",
        "08:00",
    )
    .await
    .unwrap();
    // Through the end of today (UTC): generating up to now would pack a whole day's hits into
    // the hours gone by, and early in the day those hours would be many times their usual.
    let now = Utc::now();
    let tomorrow = now.date_naive() + chrono::Days::new(1);
    let end_of_today =
        tomorrow.and_time(chrono::NaiveTime::MIN).and_utc() - chrono::Duration::seconds(1);
    server::traffic::generate::generate(&app.db, SITE, 15, 2_400, end_of_today, 7)
        .await
        .unwrap();

    // An ordinary week: every hour of it checked, nothing raised.
    let last = alerts::last_hour(now, UTC);
    for back in (0..7 * 24).rev() {
        check_after(&app, last - back * 3600).await;
    }
    assert_eq!(sent(&app, "traffic-alert").await, (0, 0));

    // Four times the hour's usual people (the hour after it stays ordinary).
    let hour = last - 2 * 3600;
    let usual = people_in(&app, hour).await;
    assert!(usual >= 50, "the generated hour has {usual} people's views");
    for n in 0..usual * 3 {
        let ip = format!("10.9.{}.{}", n / 250, n % 250);
        let (hit, _) = Hit::new(
            hour + 60 + (n as i64 % 3000),
            "GET",
            "/sale",
            &ip,
            PERSON,
            "",
            "en".into(),
        );
        app.recorder.buffer.record(hit.on(SITE), 1, false);
    }
    store::flush(&app.db, &app.recorder.buffer, IpPrivacy::Raw)
        .await
        .unwrap();

    // Paused for maintenance: muted.
    let dir = tempfile::tempdir().unwrap();
    let (code, _, err) = output(bulwark(
        &app,
        dir.path(),
        &["pause", "--reason", "upgrade"],
        &[],
    ));
    assert_eq!(code, 0, "{err}");
    let said = check_after(&app, hour).await;
    assert!(said.contains("paused for maintenance"), "{said}");
    assert_eq!(sent(&app, "traffic-alert").await, (0, 0));
    let (code, _, err) = output(bulwark(&app, dir.path(), &["resume"], &[]));
    assert_eq!(code, 0, "{err}");

    let said = check_after(&app, hour).await;
    assert!(
        said.contains("started: traffic:shop.example:views"),
        "{said}"
    );
    check_after(&app, hour).await;
    assert_eq!(sent(&app, "traffic-alert").await, (1, 1), "once");
    let mail = mail_outbox::Entity::find()
        .filter(mail_outbox::Column::Kind.eq("traffic-alert"))
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    let views = people_in(&app, hour).await;
    assert_eq!(views, usual * 4);
    assert_eq!(
        mail.subject,
        format!("[Bulwark] Traffic spike on shop.example: {views} page views in an hour")
    );

    let said = check_after(&app, hour + 3600).await;
    assert!(said.contains("ended: traffic:shop.example:views"), "{said}");
    check_after(&app, hour + 3600).await;
    assert_eq!(sent(&app, "traffic-recovered").await, (1, 1), "once");
    assert_eq!(sent(&app, "traffic-alert").await, (1, 1));
}
on_both_backends!(a_spike_alerts_once_and_recovers_once_and_an_ordinary_week_never);
