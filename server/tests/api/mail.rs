//! Mail against a real SMTP server (tests/api/smtp.rs): alert episodes from real runs, delivery
//! when the server is down and then up, a wrong password, several senders, and the .eml
//! fallback.

use std::time::Duration;

use app::domain::mail;
use app::entities::mail_outbox;
use app::services::outbox::{self, NewMail};
use chrono::Utc;
use sea_orm::{EntityTrait, QueryOrder};
use server::mail::MailSettings;
use server::mail::sender::Sender;

use crate::engine::{base, define, flaky_server, run_to_end};
use crate::helpers::TestApp;
use crate::on_both_backends;
use crate::smtp::{SmtpSink, free_addr, url};

fn settings(smtp_url: Option<String>, outbox_dir: &std::path::Path) -> MailSettings {
    let config = server::config::Config {
        smtp_url,
        public_url: Some("https://ops.example.com".into()),
        mail_outbox_dir: outbox_dir.to_path_buf(),
        ..Default::default()
    };
    MailSettings::from_config(&config).unwrap()
}

fn sender(app: &TestApp, settings: MailSettings, name: &str) -> Sender {
    Sender {
        db: app.db.clone(),
        settings,
        name: name.into(),
    }
}

async fn outbox_rows(app: &TestApp) -> Vec<mail_outbox::Model> {
    mail_outbox::Entity::find()
        .order_by_asc(mail_outbox::Column::Id)
        .all(&app.db)
        .await
        .unwrap()
}

fn note(key: &str) -> NewMail {
    NewMail {
        dedupe_key: key.into(),
        kind: "test".into(),
        job_id: None,
        run_id: None,
        recipients: vec!["oncall@example.com".into()],
        composed: mail::test_mail("a test"),
    }
}

async fn an_episode_of_five_failures_mails_three_times(app: TestApp) {
    // Two attempts per run: ten failures are five dead runs, then the service is back.
    let (http, _) = flaky_server(10, 503).await;
    let mut input = base("nightly-export");
    input.http_url = http;
    input.retry.max_retries = "1".into();
    input.alert_to = "oncall@example.com".into();
    input.escalate_after = "3".into();
    input.escalate_to = "lead@example.com".into();
    let job = define(&app.db, input).await;
    let mut last_run = 0;
    for expected in ["dead", "dead", "dead", "dead", "dead", "succeeded"] {
        let (_, finished) = run_to_end(&app.db, job.id, Duration::from_secs(20)).await;
        assert_eq!(finished.status, expected);
        last_run = finished.id;
    }

    let rows = outbox_rows(&app).await;
    let kinds: Vec<&str> = rows.iter().map(|r| r.kind.as_str()).collect();
    assert_eq!(kinds, ["first_failure", "escalation", "recovered"]);

    let sink = SmtpSink::start(None).await;
    let dir = tempfile::tempdir().unwrap();
    let sender = sender(&app, settings(Some(sink.url(None)), dir.path()), "node-a");
    assert_eq!(sender.deliver_due(Utc::now()).await.unwrap(), 3);
    let mails = sink.mails();
    assert_eq!(mails.len(), 3);

    let first = &mails[0];
    assert_eq!(first.to, ["oncall@example.com"]);
    assert_eq!(
        first.header("Subject").unwrap(),
        "[Bulwark] nightly-export failed: transient"
    );
    assert_eq!(first.from, "bulwark@localhost");
    let body = first.body();
    assert!(body.contains("https://ops.example.com/runs/"), "{body}");
    assert!(body.contains("https://ops.example.com/failed"), "{body}");
    assert!(
        body.contains("503"),
        "the error's message is in the mail: {body}"
    );
    assert!(!body.contains(mail::CONSOLE));

    assert_eq!(mails[1].to, ["lead@example.com"]);
    assert!(
        mails[1]
            .header("Subject")
            .unwrap()
            .contains("failed 3 runs in a row")
    );
    assert_eq!(mails[2].to, ["oncall@example.com", "lead@example.com"]);
    assert_eq!(
        mails[2].header("Subject").unwrap(),
        "[Bulwark] nightly-export recovered"
    );
    assert!(
        mails[2]
            .body()
            .contains(&format!("https://ops.example.com/runs/{last_run}"))
    );
    assert!(
        outbox_rows(&app)
            .await
            .iter()
            .all(|r| r.status == "sent" && r.reply.as_deref().unwrap_or("").starts_with("250"))
    );
}
on_both_backends!(an_episode_of_five_failures_mails_three_times);

async fn a_mail_waits_for_a_server_that_was_down_and_arrives_once(app: TestApp) {
    let addr = free_addr().await;
    let dir = tempfile::tempdir().unwrap();
    let sender = sender(&app, settings(Some(url(addr, None)), dir.path()), "node-a");
    assert!(
        outbox::enqueue(&app.db, note("down-then-up"), Utc::now())
            .await
            .unwrap()
    );
    assert!(
        !outbox::enqueue(&app.db, note("down-then-up"), Utc::now())
            .await
            .unwrap(),
        "deduplicated"
    );

    let now = Utc::now();
    assert_eq!(sender.deliver_due(now).await.unwrap(), 1);
    let row = &outbox_rows(&app).await[0];
    assert_eq!((row.status.as_str(), row.attempts), ("pending", 1));
    assert!(
        row.last_error.as_deref().unwrap().contains("onnection"),
        "{row:?}"
    );
    // PostgreSQL keeps microseconds: compare to the millisecond.
    assert!((row.next_attempt_at - now).num_milliseconds() >= 29_999);
    // Not due yet: nothing is tried.
    assert_eq!(sender.deliver_due(now).await.unwrap(), 0);

    let sink = SmtpSink::start_on(addr, None).await;
    let later = now + chrono::Duration::seconds(31);
    assert_eq!(sender.deliver_due(later).await.unwrap(), 1);
    assert_eq!(
        sender
            .deliver_due(later + chrono::Duration::hours(2))
            .await
            .unwrap(),
        0
    );
    assert_eq!(sink.mails().len(), 1);
    let row = &outbox_rows(&app).await[0];
    assert_eq!((row.status.as_str(), row.attempts), ("sent", 2));
}
on_both_backends!(a_mail_waits_for_a_server_that_was_down_and_arrives_once);

async fn a_wrong_password_is_refused_in_the_servers_words(app: TestApp) {
    let sink = SmtpSink::start(Some("right")).await;
    let dir = tempfile::tempdir().unwrap();
    let wrong = sender(
        &app,
        settings(Some(sink.url(Some(("bulwark", "wrong")))), dir.path()),
        "node-a",
    );
    outbox::enqueue(&app.db, note("wrong-password"), Utc::now())
        .await
        .unwrap();
    wrong.deliver_due(Utc::now()).await.unwrap();
    let row = &outbox_rows(&app).await[0];
    assert_eq!(row.status, "failed", "a refusal is final");
    let error = row.last_error.as_deref().unwrap();
    assert!(
        error.contains("535") && error.contains("Invalid credentials"),
        "{error}"
    );
    assert!(sink.mails().is_empty());

    // Fixed password, resend: delivered.
    assert!(outbox::resend(&app.db, row.id, Utc::now()).await.unwrap());
    let right = sender(
        &app,
        settings(Some(sink.url(Some(("bulwark", "right")))), dir.path()),
        "node-a",
    );
    assert_eq!(right.deliver_due(Utc::now()).await.unwrap(), 1);
    assert_eq!(sink.mails().len(), 1);
}
on_both_backends!(a_wrong_password_is_refused_in_the_servers_words);

async fn several_senders_deliver_each_mail_once(app: TestApp) {
    let sink = SmtpSink::start(None).await;
    let dir = tempfile::tempdir().unwrap();
    for i in 0..40 {
        outbox::enqueue(&app.db, note(&format!("many-{i}")), Utc::now())
            .await
            .unwrap();
    }
    let a = sender(&app, settings(Some(sink.url(None)), dir.path()), "node-a");
    let b = sender(&app, settings(Some(sink.url(None)), dir.path()), "node-b");
    let now = Utc::now();
    let (x, y) = tokio::join!(a.deliver_due(now), b.deliver_due(now));
    assert_eq!(x.unwrap() + y.unwrap(), 40);
    let mut ids: Vec<String> = sink
        .mails()
        .iter()
        .map(|m| m.header("Message-ID").unwrap())
        .collect();
    assert_eq!(ids.len(), 40);
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 40, "no mail twice");
}
on_both_backends!(several_senders_deliver_each_mail_once);

async fn without_smtp_mail_is_kept_and_written_as_eml(app: TestApp) {
    let dir = tempfile::tempdir().unwrap();
    let sender = sender(&app, settings(None, dir.path()), "node-a");
    outbox::enqueue(&app.db, note("eml"), Utc::now())
        .await
        .unwrap();
    assert_eq!(sender.deliver_due(Utc::now()).await.unwrap(), 1);
    let row = &outbox_rows(&app).await[0];
    assert_eq!(row.status, "written");
    let path = dir.path().join(format!("{}-test.eml", row.id));
    let eml = std::fs::read_to_string(&path).unwrap();
    assert!(eml.contains("Subject: [Bulwark] Test mail"), "{eml}");
    assert!(eml.contains("To: oncall@example.com"));
    assert!(eml.contains("https://ops.example.com"));
}
on_both_backends!(without_smtp_mail_is_kept_and_written_as_eml);
