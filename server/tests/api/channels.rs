//! Channels against local HTTP servers standing in for the platforms: an alert episode from real
//! runs reaching DingTalk (signed), a signed webhook and an e-mail channel; platform error codes
//! final, 5xx retried with the same `webhook-id`; a DingTalk robot's 20-a-minute limit kept with
//! 25 alerts arriving in one minute, none lost; and a sender killed mid-delivery re-sending only
//! the message in flight.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use app::domain::chat::{ChannelKind, ChatEvent, DeliveryStatus, EventType};
use app::domain::run::RunStatus;
use app::entities::{channel_delivery, mail_outbox};
use app::i18n::Locale;
use app::services::notifications::channel_outbox::{self, NewEvent};
use app::services::notifications::channels::{self, NewChannel};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use sea_orm::{EntityTrait, QueryOrder};
use server::channels::sender::ChannelSender;
use sha2::Sha256;

use crate::engine::{base, flaky_server, run_to_end};
use crate::helpers::{TestApp, define};
use crate::on_both_backends;

/// One request a stand-in platform received.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    query: String,
    headers: axum::http::HeaderMap,
    body: String,
}

impl Seen {
    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap()
    }

    fn header(&self, name: &str) -> String {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    }

    fn param(&self, name: &str) -> Option<String> {
        form_urlencoded::parse(self.query.as_bytes())
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    }
}

pub(crate) type Log = Arc<Mutex<Vec<Seen>>>;

/// A stand-in platform: answers the n-th request (from 0) with `answer(n)` — an HTTP status and
/// a body — after keeping what it was sent. `hang_on` makes that request never answer.
pub(crate) async fn platform(
    answer: impl Fn(usize) -> (u16, &'static str) + Send + Sync + 'static,
    hang_on: Option<usize>,
) -> (String, Log) {
    let seen: Log = Arc::new(Mutex::new(Vec::new()));
    let count = Arc::new(AtomicUsize::new(0));
    let answer = Arc::new(answer);
    let app = {
        let seen = seen.clone();
        axum::Router::new().fallback(
            move |uri: axum::http::Uri, headers: axum::http::HeaderMap, body: String| {
                let seen = seen.clone();
                let count = count.clone();
                let answer = answer.clone();
                async move {
                    let n = count.fetch_add(1, Ordering::SeqCst);
                    seen.lock().unwrap().push(Seen {
                        query: uri.query().unwrap_or("").to_string(),
                        headers,
                        body,
                    });
                    if hang_on == Some(n) {
                        std::future::pending::<()>().await;
                    }
                    let (status, body) = answer(n);
                    (
                        axum::http::StatusCode::from_u16(status).unwrap(),
                        [("content-type", "application/json")],
                        body,
                    )
                }
            },
        )
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}"), seen)
}

pub(crate) const OK: &str = r#"{"errcode":0,"errmsg":"ok"}"#;

pub(crate) async fn add(
    app: &TestApp,
    name: &str,
    kind: ChannelKind,
    url: &str,
    secret: Option<&str>,
) {
    channels::add(
        &app.db,
        &app.secret_key,
        &NewChannel {
            name: name.into(),
            kind: Some(kind),
            url: Some(url.into()),
            secret: secret.map(str::to_string),
            to: Vec::new(),
        },
        &crate::helpers::TESTER,
        Utc::now(),
    )
    .await
    .unwrap();
}

pub(crate) fn sender(app: &TestApp, name: &str) -> ChannelSender {
    ChannelSender::new(
        app.db.clone(),
        app.secret_key.clone(),
        name.into(),
        "https://ops.example.com".into(),
        Locale::english(),
        server::outbound::Deny::standard(),
    )
}

async fn deliveries(app: &TestApp) -> Vec<channel_delivery::Model> {
    channel_delivery::Entity::find()
        .order_by_asc(channel_delivery::Column::Id)
        .all(&app.db)
        .await
        .unwrap()
}

fn hmac(key: &[u8], message: &[u8]) -> Vec<u8> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).unwrap();
    mac.update(message);
    mac.finalize().into_bytes().to_vec()
}

/// DingTalk's check, as its documentation describes it, written here apart from the code.
fn dingtalk_signature_holds(seen: &Seen, secret: &str) -> bool {
    let (Some(timestamp), Some(sign)) = (seen.param("timestamp"), seen.param("sign")) else {
        return false;
    };
    let expected = B64.encode(hmac(
        secret.as_bytes(),
        format!("{timestamp}\n{secret}").as_bytes(),
    ));
    sign == expected
}

/// Standard Webhooks verification: HMAC-SHA256 keyed by the base64-decoded `whsec_` secret over
/// `id.timestamp.body`, compared with each `v1,` signature in the header.
fn webhook_signature_holds(seen: &Seen, secret: &str) -> bool {
    let key = B64.decode(secret.strip_prefix("whsec_").unwrap()).unwrap();
    let signed = format!(
        "{}.{}.{}",
        seen.header("webhook-id"),
        seen.header("webhook-timestamp"),
        seen.body
    );
    let expected = format!("v1,{}", B64.encode(hmac(&key, signed.as_bytes())));
    seen.header("webhook-signature")
        .split(' ')
        .any(|s| s == expected)
}

const WHSEC: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

async fn an_episode_reaches_its_channels_and_escalation_its_own(app: TestApp) {
    let (ding, ding_seen) = platform(|_| (200, OK), None).await;
    let (hook, hook_seen) = platform(|_| (200, "{}"), None).await;
    add(
        &app,
        "ops-ding",
        ChannelKind::Dingtalk,
        &format!("{ding}/robot/send?access_token=tok"),
        Some("SECding"),
    )
    .await;
    add(
        &app,
        "incident-hook",
        ChannelKind::Webhook,
        &format!("{hook}/bulwark"),
        Some(WHSEC),
    )
    .await;
    channels::add(
        &app.db,
        &app.secret_key,
        &NewChannel {
            name: "leads".into(),
            kind: Some(ChannelKind::Email),
            to: vec!["lead@example.com".into()],
            ..Default::default()
        },
        &crate::helpers::TESTER,
        Utc::now(),
    )
    .await
    .unwrap();

    // Two attempts per run: ten failures are five dead runs, then the service is back.
    let (http, _) = flaky_server(10, 503).await;
    let mut input = base("nightly-export");
    input.http_url = http;
    input.retry.max_retries = "1".into();
    input.escalate_after = "3".into();
    input.alert_channels = "ops-ding".into();
    input.escalate_channels = "incident-hook, leads".into();
    let job = define(&app.db, input).await;
    use RunStatus::{Dead, Succeeded};
    let mut runs = Vec::new();
    for expected in [Dead, Dead, Dead, Dead, Dead, Succeeded] {
        let (_, finished) = run_to_end(&app.db, job.id, Duration::from_secs(20)).await;
        assert_eq!(finished.status, expected);
        runs.push(finished.id);
    }

    let sent = sender(&app, "node-a")
        .deliver_due(server::clock::now())
        .await
        .unwrap();
    assert_eq!(
        sent, 4,
        "first failure and recovered to DingTalk, escalation and recovered to the webhook"
    );

    let ding_seen = ding_seen.lock().unwrap().clone();
    assert_eq!(ding_seen.len(), 2);
    for seen in &ding_seen {
        assert!(dingtalk_signature_holds(seen, "SECding"), "{seen:?}");
        assert_eq!(seen.param("access_token").as_deref(), Some("tok"));
        assert_eq!(seen.header("content-type"), "application/json");
    }
    let first = ding_seen[0].json();
    assert_eq!(first["msgtype"], "markdown");
    assert_eq!(
        first["markdown"]["title"],
        "nightly-export failed: transient"
    );
    let text = first["markdown"]["text"].as_str().unwrap();
    assert!(text.contains("503"), "the reason: {text}");
    assert!(text.contains("**Attempts:** 2"), "which retry: {text}");
    assert!(text.contains("**Failed in a row:** 1"), "{text}");
    assert!(
        text.contains(&format!("(https://ops.example.com/runs/{})", runs[0])),
        "the run's link: {text}"
    );
    assert!(text.contains("(https://ops.example.com/failed)"), "{text}");
    let recovered = ding_seen[1].json();
    assert_eq!(recovered["markdown"]["title"], "nightly-export recovered");
    assert!(
        recovered["markdown"]["text"]
            .as_str()
            .unwrap()
            .contains("**Down for:**")
    );

    let hook_seen = hook_seen.lock().unwrap().clone();
    assert_eq!(hook_seen.len(), 2);
    for seen in &hook_seen {
        assert!(webhook_signature_holds(seen, WHSEC), "{seen:?}");
    }
    let escalation = hook_seen[0].json();
    assert_eq!(escalation["version"], 1);
    assert_eq!(escalation["type"], "job.escalated");
    assert_eq!(escalation["job"], "nightly-export");
    assert_eq!(escalation["failed_runs"], 3);
    assert_eq!(escalation["run"]["id"], runs[2]);
    assert_eq!(escalation["run"]["status"], "dead");
    assert_eq!(escalation["error"]["class"], "transient");
    assert_eq!(
        escalation["links"]["run"],
        format!("https://ops.example.com/runs/{}", runs[2])
    );
    assert_eq!(hook_seen[1].json()["type"], "job.recovered");
    assert_ne!(
        hook_seen[0].header("webhook-id"),
        hook_seen[1].header("webhook-id")
    );

    // The e-mail channel's address joined the escalation and recovered mails.
    let mails = mail_outbox::Entity::find()
        .order_by_asc(mail_outbox::Column::Id)
        .all(&app.db)
        .await
        .unwrap();
    let to: Vec<(&str, &str)> = mails
        .iter()
        .map(|m| (m.kind.as_str(), m.recipients.as_str()))
        .collect();
    assert_eq!(
        to,
        [
            ("escalation", "lead@example.com"),
            ("recovered", "lead@example.com")
        ]
    );
    assert!(
        deliveries(&app)
            .await
            .iter()
            .all(|d| d.status == DeliveryStatus::Sent && d.answer.is_some())
    );
    let listed = channels::list(&app.db, &app.secret_key).await.unwrap();
    let ding = listed.iter().find(|c| c.name == "ops-ding").unwrap();
    assert!(
        ding.last_answer.as_deref().unwrap().contains("errcode"),
        "{ding:?}"
    );
}
on_both_backends!(an_episode_reaches_its_channels_and_escalation_its_own);

fn event(n: usize) -> NewEvent {
    let mut event = ChatEvent::general(EventType::Trend, format!("alert {n}"), Utc::now());
    event.job = format!("job-{n}");
    NewEvent {
        dedupe_key: format!("test:{n}"),
        job_id: None,
        run_id: None,
        event,
        worded: Vec::new(),
    }
}

async fn enqueue(app: &TestApp, channel: &str, n: usize, now: DateTime<Utc>) {
    channel_outbox::enqueue(
        &app.db,
        &[channel.to_string()],
        &event(n),
        now,
        Locale::english(),
    )
    .await
    .unwrap();
}

async fn platform_codes_are_final_and_server_errors_retried(app: TestApp) {
    let (ding, ding_seen) = platform(
        |_| (200, r#"{"errcode":310000,"errmsg":"sign not match"}"#),
        None,
    )
    .await;
    let (hook, hook_seen) = platform(|n| if n < 2 { (503, "busy") } else { (204, "") }, None).await;
    add(
        &app,
        "ding",
        ChannelKind::Dingtalk,
        &format!("{ding}/robot/send"),
        None,
    )
    .await;
    add(
        &app,
        "hook",
        ChannelKind::Webhook,
        &format!("{hook}/in"),
        Some(WHSEC),
    )
    .await;
    let t0 = Utc::now();
    enqueue(&app, "ding", 1, t0).await;
    // Enqueued twice: one message.
    enqueue(&app, "hook", 2, t0).await;
    enqueue(&app, "hook", 2, t0).await;

    let sender = sender(&app, "node-a");
    assert_eq!(sender.deliver_due(t0).await.unwrap(), 2);
    let rows = deliveries(&app).await;
    assert_eq!(rows.len(), 2);
    assert_eq!(
        rows[0].status,
        DeliveryStatus::Failed,
        "errcode ≠ 0 is final"
    );
    assert_eq!(
        rows[0].answer.as_deref(),
        Some("errcode 310000: sign not match")
    );
    assert_eq!(rows[1].status, DeliveryStatus::Pending, "a 503 is retried");
    assert!(rows[1].answer.as_deref().unwrap().starts_with("HTTP 503"));
    assert!(rows[1].next_attempt_at > t0 + chrono::Duration::seconds(29));

    // Not before its time; then again, and again, until accepted.
    assert_eq!(
        sender
            .deliver_due(t0 + chrono::Duration::seconds(10))
            .await
            .unwrap(),
        0
    );
    assert_eq!(
        sender
            .deliver_due(t0 + chrono::Duration::seconds(31))
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        sender
            .deliver_due(t0 + chrono::Duration::seconds(100))
            .await
            .unwrap(),
        1
    );
    let rows = deliveries(&app).await;
    assert_eq!(rows[1].status, DeliveryStatus::Sent);
    assert_eq!(rows[1].attempts, 3);
    let hook_seen = hook_seen.lock().unwrap().clone();
    assert_eq!(hook_seen.len(), 3);
    let ids: Vec<String> = hook_seen.iter().map(|s| s.header("webhook-id")).collect();
    assert!(
        ids.iter().all(|id| id == &ids[0] && id.starts_with("msg_")),
        "{ids:?}"
    );
    assert!(hook_seen.iter().all(|s| webhook_signature_holds(s, WHSEC)));
    assert_eq!(
        ding_seen.lock().unwrap().len(),
        1,
        "a final answer is not retried"
    );

    // Re-sent by hand after fixing the channel: the same message again.
    assert!(
        channel_outbox::resend(&app.db, rows[0].id, &crate::helpers::TESTER, t0)
            .await
            .unwrap()
    );
    assert_eq!(
        sender
            .deliver_due(t0 + chrono::Duration::seconds(101))
            .await
            .unwrap(),
        1
    );
    assert_eq!(ding_seen.lock().unwrap().len(), 2);
}
on_both_backends!(platform_codes_are_final_and_server_errors_retried);

async fn twenty_five_alerts_in_a_minute_are_twenty_messages_and_a_summary(app: TestApp) {
    let (ding, ding_seen) = platform(|_| (200, OK), None).await;
    add(
        &app,
        "ding",
        ChannelKind::Dingtalk,
        &format!("{ding}/robot/send?access_token=t"),
        Some("SECrate"),
    )
    .await;
    let sender = sender(&app, "node-a");
    let t0 = Utc::now();
    let at = |s: i64| t0 + chrono::Duration::seconds(s);
    // Ten alerts, then fifteen more twenty seconds later: twenty-five within one minute.
    for n in 0..10 {
        enqueue(&app, "ding", n, t0).await;
    }
    assert_eq!(sender.deliver_due(t0).await.unwrap(), 10);
    for n in 10..25 {
        enqueue(&app, "ding", n, at(20)).await;
    }
    assert_eq!(
        sender.deliver_due(at(20)).await.unwrap(),
        10,
        "the minute's last ten slots"
    );
    assert_eq!(
        sender.deliver_due(at(40)).await.unwrap(),
        0,
        "still at the limit"
    );
    let held: Vec<_> = deliveries(&app)
        .await
        .into_iter()
        .filter(|d| d.held)
        .collect();
    assert_eq!(held.len(), 5);
    assert_eq!(sender.deliver_due(at(61)).await.unwrap(), 1, "one summary");

    let seen = ding_seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 21);
    // Never more than twenty in any minute, by the timestamps the robot was sent.
    let mut times: Vec<i64> = seen
        .iter()
        .map(|s| s.param("timestamp").unwrap().parse().unwrap())
        .collect();
    times.sort_unstable();
    for (i, t) in times.iter().enumerate() {
        let in_minute = times[i..].iter().filter(|u| **u < t + 60_000).count();
        assert!(
            in_minute <= 20,
            "{in_minute} messages in the minute from {t}"
        );
    }
    assert!(seen.iter().all(|s| dingtalk_signature_holds(s, "SECrate")));
    // None lost: the summary names each of the five held back.
    let summary = seen[20].json();
    let text = summary["markdown"]["text"].as_str().unwrap();
    assert_eq!(
        summary["markdown"]["title"],
        "5 more alerts while the channel was at its rate limit"
    );
    for n in 20..25 {
        assert!(
            text.contains(&format!("- alert {n}")),
            "alert {n} in {text}"
        );
    }
    let rows = deliveries(&app).await;
    let summary_row = rows.iter().find(|r| r.kind == "channel.summary").unwrap();
    assert_eq!(summary_row.status, DeliveryStatus::Sent);
    assert_eq!(
        rows.iter()
            .filter(
                |r| r.status == DeliveryStatus::Summarised && r.merged_into == Some(summary_row.id)
            )
            .count(),
        5
    );
    assert_eq!(
        rows.iter()
            .filter(|r| r.status == DeliveryStatus::Sent)
            .count(),
        21
    );
}
on_both_backends!(twenty_five_alerts_in_a_minute_are_twenty_messages_and_a_summary);

async fn a_sender_killed_mid_delivery_resends_only_the_message_in_flight(app: TestApp) {
    // The third request never gets an answer: the sender is killed while it waits.
    let (hook, seen) = platform(|_| (200, "{}"), Some(2)).await;
    add(
        &app,
        "hook",
        ChannelKind::Webhook,
        &format!("{hook}/in"),
        Some(WHSEC),
    )
    .await;
    let t0 = Utc::now();
    for n in 0..5 {
        enqueue(&app, "hook", n, t0).await;
    }
    let first = sender(&app, "node-a");
    let task = tokio::spawn(async move { first.deliver_due(t0).await });
    for _ in 0..200 {
        if seen.lock().unwrap().len() == 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(seen.lock().unwrap().len(), 3);
    task.abort();
    let _ = task.await;

    // Another node, once the dead one's lease has run out.
    let later = t0 + chrono::Duration::minutes(6);
    assert_eq!(sender(&app, "node-b").deliver_due(later).await.unwrap(), 3);
    let seen = seen.lock().unwrap().clone();
    let titles: Vec<String> = seen
        .iter()
        .map(|s| s.json()["title"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        titles,
        [
            "alert 0", "alert 1", "alert 2", "alert 2", "alert 3", "alert 4"
        ],
        "only the message in flight went twice"
    );
    assert_eq!(
        seen[2].header("webhook-id"),
        seen[3].header("webhook-id"),
        "with the same webhook-id, so the receiver can drop it"
    );
    assert!(
        deliveries(&app)
            .await
            .iter()
            .all(|d| d.status == DeliveryStatus::Sent)
    );
}
on_both_backends!(a_sender_killed_mid_delivery_resends_only_the_message_in_flight);

async fn channels_are_checked_where_named_edited_in_place_and_kept_while_used(app: TestApp) {
    use app::domain::job::{JobSpec, parse::parse_channels};
    use app::services::jobs::JobError;
    let (old, _) = platform(|_| (200, OK), None).await;
    let (new, new_seen) = platform(|_| (200, OK), None).await;
    add(
        &app,
        "ops-ding",
        ChannelKind::Dingtalk,
        &format!("{old}/robot/send?access_token=old"),
        Some("SECkept"),
    )
    .await;

    // A job naming a channel that does not exist is refused, with the field named.
    let mut input = crate::helpers::noop_job("watched");
    input.alert_channels = "ops-ding, nope".into();
    let spec = JobSpec::parse(&input).unwrap();
    match app::services::jobs::create(&app.db, &spec, Utc::now()).await {
        Err(JobError::Invalid(errors)) => {
            assert_eq!(errors.len(), 1, "{errors:?}");
            assert_eq!(errors[0].field, "alert_channels");
            assert!(
                errors[0]
                    .problem
                    .to_string()
                    .contains("no channel named 'nope'")
            );
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    let mut bad = Vec::new();
    parse_channels("alert_channels", "ok-name, not a name", &mut |f, m| {
        bad.push((f.to_string(), m))
    });
    assert_eq!(bad.len(), 1, "{bad:?}");

    input.alert_channels = "ops-ding".into();
    define(&app.db, input).await;
    // In use: not removed, and the error says where.
    let refused = channels::remove(&app.db, "ops-ding", &crate::helpers::TESTER, Utc::now())
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("job watched"), "{refused}");

    // A new URL, the secret kept: the next message goes to the new robot, still signed.
    let edited = channels::edit(
        &app.db,
        &app.secret_key,
        "ops-ding",
        &channels::ChannelChange {
            locale: None,
            url: Some(format!("{new}/robot/send?access_token=new")),
            ..Default::default()
        },
        &crate::helpers::TESTER,
        Utc::now(),
    )
    .await
    .unwrap();
    assert!(edited.signed);
    enqueue(&app, "ops-ding", 1, Utc::now()).await;
    assert_eq!(
        sender(&app, "node-a")
            .deliver_due(Utc::now())
            .await
            .unwrap(),
        1
    );
    let seen = new_seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].param("access_token").as_deref(), Some("new"));
    assert!(dingtalk_signature_holds(&seen[0], "SECkept"));

    // A bad URL changes nothing.
    assert!(
        channels::edit(
            &app.db,
            &app.secret_key,
            "ops-ding",
            &channels::ChannelChange {
                locale: None,
                url: Some("ftp://elsewhere".into()),
                ..Default::default()
            },
            &crate::helpers::TESTER,
            Utc::now(),
        )
        .await
        .is_err()
    );
    let opened = channels::open(&app.db, &app.secret_key, "ops-ding")
        .await
        .unwrap();
    assert!(opened.url.ends_with("access_token=new"));
    let cleared = channels::edit(
        &app.db,
        &app.secret_key,
        "ops-ding",
        &channels::ChannelChange {
            locale: None,
            clear_secret: true,
            ..Default::default()
        },
        &crate::helpers::TESTER,
        Utc::now(),
    )
    .await
    .unwrap();
    assert!(!cleared.signed);
}
on_both_backends!(channels_are_checked_where_named_edited_in_place_and_kept_while_used);

async fn the_digest_goes_to_chat_as_a_summary_linking_the_full_one(app: TestApp) {
    use app::services::notifications::{self, digest};
    let (ding, seen) = platform(|_| (200, OK), None).await;
    add(
        &app,
        "ops-ding",
        ChannelKind::Dingtalk,
        &format!("{ding}/robot/send"),
        None,
    )
    .await;
    notifications::save_digest_settings(&app.db, "sre@example.com", "ops-ding", "08:00")
        .await
        .unwrap();
    let bad = notifications::save_digest_settings(&app.db, "", "ops-ding, missing", "09:00").await;
    assert!(
        bad.unwrap_err()
            .to_string()
            .contains("no channel named 'missing'")
    );
    assert_eq!(
        notifications::channels(&app.db).await.unwrap(),
        ["ops-ding"],
        "unchanged"
    );

    let said = digest::queue_daily(&app.db, Utc::now(), chrono_tz::UTC, Locale::english())
        .await
        .unwrap();
    assert!(said.contains("channel ops-ding"), "{said}");
    let again = digest::queue_daily(&app.db, Utc::now(), chrono_tz::UTC, Locale::english())
        .await
        .unwrap();
    assert!(again.contains("already queued"), "{again}");
    assert_eq!(
        sender(&app, "node-a")
            .deliver_due(Utc::now())
            .await
            .unwrap(),
        1
    );
    let mail = mail_outbox::Entity::find()
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    let body = seen.lock().unwrap()[0].json();
    let text = body["markdown"]["text"].as_str().unwrap();
    assert!(
        body["markdown"]["title"]
            .as_str()
            .unwrap()
            .starts_with("Bulwark daily digest")
    );
    assert!(text.contains("**Runs:**"), "{text}");
    assert!(
        text.contains(&format!(
            "[Full digest](https://ops.example.com/notifications?mail={})",
            mail.id
        )),
        "{text}"
    );
    // In use by the digest: not removed.
    assert!(
        channels::remove(&app.db, "ops-ding", &crate::helpers::TESTER, Utc::now())
            .await
            .is_err()
    );
}
on_both_backends!(the_digest_goes_to_chat_as_a_summary_linking_the_full_one);

async fn alerts_speak_the_language_of_their_mails_and_of_each_channel(app: TestApp) {
    let zh = Locale::parse("zh-CN").unwrap();
    app::services::notifications::set_mail_locale(&app.db, Some(zh))
        .await
        .unwrap();
    let (ding, ding_seen) = platform(|_| (200, OK), None).await;
    let (hook, hook_seen) = platform(|_| (200, "{}"), None).await;
    add(
        &app,
        "ops-ding",
        ChannelKind::Dingtalk,
        &format!("{ding}/robot/send?access_token=tok"),
        None,
    )
    .await;
    add(
        &app,
        "hook-zh",
        ChannelKind::Webhook,
        &format!("{hook}/bulwark"),
        Some(WHSEC),
    )
    .await;
    channels::edit(
        &app.db,
        &app.secret_key,
        "hook-zh",
        &channels::ChannelChange {
            locale: Some(Some(zh)),
            ..Default::default()
        },
        &crate::helpers::TESTER,
        Utc::now(),
    )
    .await
    .unwrap();

    let (http, _) = flaky_server(2, 503).await;
    let mut input = base("nightly-export");
    input.http_url = http;
    input.retry.max_retries = "1".into();
    input.alert_to = "oncall@example.com".into();
    input.alert_channels = "ops-ding, hook-zh".into();
    let job = define(&app.db, input).await;
    let (_, finished) = run_to_end(&app.db, job.id, Duration::from_secs(20)).await;
    assert_eq!(finished.status, RunStatus::Dead);

    // The mail, in the mail language.
    let mails = mail_outbox::Entity::find().all(&app.db).await.unwrap();
    assert_eq!(mails.len(), 1);
    assert_eq!(
        mails[0].subject,
        "[Bulwark] nightly-export 运行失败：transient"
    );
    assert!(
        mails[0].body_text.contains("失败队列"),
        "{}",
        mails[0].body_text
    );

    // Each channel in its own: the DingTalk robot sets none (English, the default here).
    assert_eq!(
        sender(&app, "node-a")
            .deliver_due(server::clock::now())
            .await
            .unwrap(),
        2
    );
    let ding_text = ding_seen.lock().unwrap()[0].json().to_string();
    assert!(
        ding_text.contains("nightly-export failed: transient"),
        "{ding_text}"
    );
    let hook_text = hook_seen.lock().unwrap()[0].json().to_string();
    assert!(hook_text.contains("运行失败"), "{hook_text}");
    assert!(!hook_text.contains("failed: transient"), "{hook_text}");
    // The outbox rows show each message's title as its channel reads it.
    let titles: Vec<String> = deliveries(&app)
        .await
        .into_iter()
        .map(|d| d.title)
        .collect();
    assert!(titles.iter().any(|t| t.contains("运行失败")), "{titles:?}");
    assert!(
        titles.iter().any(|t| t.contains("failed: transient")),
        "{titles:?}"
    );
}
on_both_backends!(alerts_speak_the_language_of_their_mails_and_of_each_channel);
