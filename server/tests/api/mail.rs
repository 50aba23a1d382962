//! Mail against a real SMTP server (tests/api/smtp.rs): alert episodes from real runs, delivery
//! when the server is down and then up, a wrong password, several senders, and the .eml
//! fallback.

use std::time::Duration;

use app::domain::email::EmailAddress;
use app::domain::mail::MailStatus;
use app::domain::run::{ErrorClass, Outcome, RunStatus};
use app::entities::mail_outbox;
use app::i18n::mail;
use app::services::outbox::{self, NewMail};
use chrono::Utc;
use sea_orm::{EntityTrait, QueryOrder};
use server::mail::MailSettings;
use server::mail::sender::Sender;

use crate::engine::{base, flaky_server, run_to_end};
use crate::helpers::{TestApp, define};
use crate::on_both_backends;
use crate::smtp::{SmtpSink, free_addr, url};

fn settings(smtp_url: Option<String>, outbox_dir: &std::path::Path) -> MailSettings {
    let config = server::config::Config {
        smtp_url,
        public_url: Some("https://ops.example.com".into()),
        mail_outbox_dir: outbox_dir.to_path_buf(),
        ..Default::default()
    };
    config.mail_settings().unwrap()
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
        recipients: vec![EmailAddress::parse("oncall@example.com").unwrap()],
        composed: mail::test_mail(app::i18n::Locale::english(), "a test"),
    }
}

async fn an_episode_of_five_failures_mails_three_times(app: TestApp) {
    // The trends job, firing at a minute's turn, would see these failures and mail too.
    crate::helpers::disable_system_jobs(&app.db).await;
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
    use RunStatus::{Dead, Succeeded};
    for expected in [Dead, Dead, Dead, Dead, Dead, Succeeded] {
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
    assert_eq!(sender.deliver_due(server::clock::now()).await.unwrap(), 3);
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
    assert!(!body.contains(app::domain::mail::CONSOLE));

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
    assert!(outbox_rows(&app).await.iter().all(
        |r| r.status == MailStatus::Sent && r.reply.as_deref().unwrap_or("").starts_with("250")
    ));
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

    let now = server::clock::now();
    assert_eq!(sender.deliver_due(now).await.unwrap(), 1);
    let row = &outbox_rows(&app).await[0];
    assert_eq!((row.status, row.attempts), (MailStatus::Pending, 1));
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
    assert_eq!((row.status, row.attempts), (MailStatus::Sent, 2));
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
    wrong.deliver_due(server::clock::now()).await.unwrap();
    let row = &outbox_rows(&app).await[0];
    assert_eq!(row.status, MailStatus::Failed, "a refusal is final");
    let error = row.last_error.as_deref().unwrap();
    assert!(
        error.contains("535") && error.contains("Invalid credentials"),
        "{error}"
    );
    assert!(sink.mails().is_empty());

    // Fixed password, resend: delivered.
    let who = crate::helpers::TESTER;
    assert!(
        outbox::resend(&app.db, row.id, &who, Utc::now())
            .await
            .unwrap()
    );
    let right = sender(
        &app,
        settings(Some(sink.url(Some(("bulwark", "right")))), dir.path()),
        "node-a",
    );
    assert_eq!(right.deliver_due(server::clock::now()).await.unwrap(), 1);
    assert_eq!(sink.mails().len(), 1);
}
on_both_backends!(a_wrong_password_is_refused_in_the_servers_words);

async fn several_senders_deliver_each_mail_once(app: TestApp) {
    let sink = SmtpSink::start(None).await;
    let dir = tempfile::tempdir().unwrap();
    // Queued and delivered by the same clock (the server's follows the database's, which may
    // be a few milliseconds behind this process's: a mail queued "now" by the other clock was
    // once not yet due).
    let now = server::clock::now();
    for i in 0..40 {
        outbox::enqueue(&app.db, note(&format!("many-{i}")), now)
            .await
            .unwrap();
    }
    let a = sender(&app, settings(Some(sink.url(None)), dir.path()), "node-a");
    let b = sender(&app, settings(Some(sink.url(None)), dir.path()), "node-b");
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
    assert_eq!(sender.deliver_due(server::clock::now()).await.unwrap(), 1);
    let row = &outbox_rows(&app).await[0];
    assert_eq!(row.status, MailStatus::Written);
    let path = dir.path().join(format!("{}-test.eml", row.id));
    let eml = std::fs::read_to_string(&path).unwrap();
    assert!(eml.contains("Subject: [Bulwark] Test mail"), "{eml}");
    assert!(eml.contains("To: oncall@example.com"));
    assert!(eml.contains("https://ops.example.com"));
}
on_both_backends!(without_smtp_mail_is_kept_and_written_as_eml);

/// The digest's figures against the runs and attempts tables, and `bulwark digest send`
/// delivering it to a real SMTP server (and printing it with --dry-run).
async fn the_digest_matches_the_runs_table(app: TestApp) {
    use app::entities::{job_attempt, job_run};
    use app::services::notifications::digest;

    crate::helpers::disable_system_jobs(&app.db).await;
    // A job that needs a retry once and then succeeds, and one that always fails.
    let (flaky, _) = flaky_server(1, 503).await;
    let mut input = base("orders-sync");
    input.http_url = flaky;
    let ok_job = define(&app.db, input).await;
    let (broken, _) = flaky_server(1000, 500).await;
    let mut input = base("invoice-export");
    input.http_url = broken;
    input.retry.max_retries = "2".into();
    let bad_job = define(&app.db, input).await;
    for _ in 0..2 {
        run_to_end(&app.db, ok_job.id, Duration::from_secs(20)).await;
    }
    let (_, dead) = run_to_end(&app.db, bad_job.id, Duration::from_secs(20)).await;
    assert_eq!(dead.status, RunStatus::Dead);

    let now = Utc::now() + chrono::Duration::seconds(1);
    let digest = digest::gather(&app.db, now).await.unwrap();
    // The same figures, counted here from every row.
    let runs = job_run::Entity::find().all(&app.db).await.unwrap();
    let attempts = job_attempt::Entity::find().all(&app.db).await.unwrap();
    for (job, name) in [(&ok_job, "orders-sync"), (&bad_job, "invoice-export")] {
        let figures = digest.jobs.iter().find(|j| j.job == name).unwrap();
        let mine: Vec<_> = runs.iter().filter(|r| r.job_id == job.id).collect();
        let ids: Vec<i64> = mine.iter().map(|r| r.id).collect();
        let tries: Vec<_> = attempts
            .iter()
            .filter(|a| ids.contains(&a.run_id))
            .collect();
        assert_eq!(figures.runs, mine.len() as u64, "{name}");
        assert_eq!(
            figures.succeeded,
            mine.iter()
                .filter(|r| r.status == RunStatus::Succeeded)
                .count() as u64
        );
        assert_eq!(
            figures.retries,
            tries.iter().filter(|a| a.number > 1).count() as u64
        );
        assert_eq!(
            figures.timeouts,
            tries
                .iter()
                .filter(|a| a.error_class == Some(ErrorClass::Timeout))
                .count() as u64
        );
    }
    assert_eq!(
        digest
            .jobs
            .iter()
            .find(|j| j.job == "orders-sync")
            .unwrap()
            .retries,
        1
    );
    assert_eq!(
        digest
            .jobs
            .iter()
            .find(|j| j.job == "invoice-export")
            .unwrap()
            .retries,
        2
    );
    assert_eq!(digest.queue.len(), 1);
    assert_eq!(digest.queue[0].run_id, dead.id);
    let ended: u64 = digest.hours.iter().map(|h| h.succeeded + h.failed).sum();
    assert_eq!(ended, 3);

    let sink = SmtpSink::start(None).await;
    let dir = tempfile::tempdir().unwrap();
    let run = |args: Vec<String>, env: Vec<(String, String)>| {
        let cmd = {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let env: Vec<(&str, &str)> =
                env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            crate::process::bulwark(&app, dir.path(), &args, &env)
        };
        tokio::task::spawn_blocking(move || crate::process::output(cmd))
    };
    let (code, out, err) = run(
        vec![
            "digest".into(),
            "send".into(),
            "--dry-run".into(),
            "--to".into(),
            "cto@example.com".into(),
        ],
        vec![],
    )
    .await
    .unwrap();
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("3 runs, 1 failed, 1 in the failed queue"),
        "{out}"
    );
    assert!(out.contains("invoice-export"));
    assert!(sink.mails().is_empty(), "a dry run sends nothing");

    let (code, out, err) = run(
        vec![
            "digest".into(),
            "send".into(),
            "--to".into(),
            "cto@example.com".into(),
        ],
        vec![("BULWARK_SMTP_URL".into(), sink.url(None))],
    )
    .await
    .unwrap();
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("digest sent to cto@example.com: 250"), "{out}");
    let mails = sink.mails();
    assert_eq!(mails.len(), 1);
    assert_eq!(mails[0].to, ["cto@example.com"]);
    assert!(
        mails[0]
            .header("Subject")
            .unwrap()
            .contains("3 runs, 1 failed, 1 in the failed queue")
    );

    let (code, _, err) = run(
        vec![
            "digest".into(),
            "send".into(),
            "--to".into(),
            "not-an-address".into(),
        ],
        vec![],
    )
    .await
    .unwrap();
    assert_eq!(code, 1);
    assert!(
        err.contains("'not-an-address' is not an e-mail address"),
        "{err}"
    );
}
on_both_backends!(the_digest_matches_the_runs_table);

/// Trend alerts from real attempt rows: a burst of timeouts mails each condition once, a second
/// look mails nothing new, and the same burst after a quiet spell is a new episode.
async fn a_failure_burst_mails_each_trend_once_per_episode(app: TestApp) {
    use app::entities::job_attempt;
    use app::services::{notifications, runs, trends};
    use sea_orm::ActiveValue::Set;

    notifications::save_digest_settings(&app.db, "sre@example.com", "", "08:00")
        .await
        .unwrap();
    let mut input = base("batch-import");
    input.http_url = "http://127.0.0.1:9/never-called".into();
    let job = define(&app.db, input).await;
    let run = runs::create_manual(&app.db, job.id, Utc::now())
        .await
        .unwrap();
    let now = server::clock::now();
    // Attempt numbers are unique per run.
    let number = std::cell::Cell::new(0);
    let attempt = |minutes_ago: i64, outcome: Outcome, class: Option<ErrorClass>| {
        let at = now - chrono::Duration::minutes(minutes_ago);
        number.set(number.get() + 1);
        job_attempt::ActiveModel {
            run_id: Set(run.id),
            number: Set(number.get()),
            started_at: Set(at),
            finished_at: Set(Some(at)),
            duration_ms: Set(Some(100)),
            timeout_ms: Set(1000),
            outcome: Set(Some(outcome)),
            error_class: Set(class),
            node: Set("test".into()),
            slow: Set(false),
            ..Default::default()
        }
    };
    let mut rows = Vec::new();
    // The usual: a few transient failures over the day, plenty of successes.
    for i in 0..12 {
        rows.push(attempt(
            60 + i as i64 * 90,
            Outcome::Failed,
            Some(ErrorClass::Transient),
        ));
    }
    for i in 0..60 {
        rows.push(attempt(1 + i as i64 % 14, Outcome::Succeeded, None));
    }
    // Now: 25 timeouts in the last 3 minutes.
    for i in 0..25 {
        rows.push(attempt(
            1 + i as i64 % 3,
            Outcome::TimedOut,
            Some(ErrorClass::Timeout),
        ));
    }
    job_attempt::Entity::insert_many(rows)
        .exec_without_returning(&app.db)
        .await
        .unwrap();

    let check = |at: chrono::DateTime<Utc>| {
        let db = app.db.clone();
        async move {
            trends::check(&db, at, app::i18n::Locale::english())
                .await
                .unwrap()
        }
    };
    let said = check(now).await;
    assert!(said.contains("new: spike, rate, burst:timeout"), "{said}");
    let trend_mails = || async {
        outbox_rows(&app)
            .await
            .into_iter()
            .filter(|r| r.kind == "trend")
            .collect::<Vec<_>>()
    };
    let mails = trend_mails().await;
    assert_eq!(mails.len(), 3);
    assert!(mails.iter().all(|m| m.recipients == "sre@example.com"));
    let burst = mails
        .iter()
        .find(|m| m.dedupe_key == "trend:burst:timeout:1")
        .unwrap();
    assert_eq!(burst.subject, "[Bulwark] Trend: a burst of timeout errors");
    assert!(
        burst
            .body_text
            .contains("25 of the 25 failures in the last 5 minutes were timeout errors"),
        "{}",
        burst.body_text
    );

    // A minute later it still holds: nothing new.
    check(now + chrono::Duration::minutes(1)).await;
    assert_eq!(trend_mails().await.len(), 3);

    // Clear for longer than the quiet spell: the episodes end. The same burst again is new.
    let later = now + chrono::Duration::minutes(40);
    let said = check(later).await;
    assert!(said.contains("3 episode(s) ended"), "{said}");
    let again: Vec<_> = (0..25)
        .map(|i| {
            let mut a = attempt(0, Outcome::TimedOut, Some(ErrorClass::Timeout));
            a.finished_at = Set(Some(later - chrono::Duration::seconds(30 + i as i64)));
            a
        })
        .collect();
    job_attempt::Entity::insert_many(again)
        .exec_without_returning(&app.db)
        .await
        .unwrap();
    check(later).await;
    assert!(
        trend_mails()
            .await
            .iter()
            .any(|m| m.dedupe_key == "trend:burst:timeout:2")
    );
}
on_both_backends!(a_failure_burst_mails_each_trend_once_per_episode);

/// The application as `serve` starts it — engine and mail sender included — takes a run from
/// the browser's Run now to a dead run and its alert written out, with nothing driven by hand.
async fn the_whole_application_runs_a_job_and_sends_its_alert(app: TestApp) {
    let mut input = base("always-broken");
    input.http_url = flaky_server(1000, 404).await.0;
    input.alert_to = "oncall@example.com".into();
    let job = define(&app.db, input).await;
    let admin = app.signed_in("admin", crate::helpers::ADMIN_PASSWORD).await;
    let res = app
        .call(&admin, "jobs/run-now", &[("id", &job.id.to_string())])
        .await;
    assert_eq!(res.status(), 200);
    let run_id: i64 = res.json().await.unwrap();
    let dead = crate::helpers::wait_for_status(
        &app.db,
        run_id,
        &[RunStatus::Dead],
        Duration::from_secs(30),
    )
    .await;
    assert_eq!(dead.last_error_class, Some(ErrorClass::Permanent));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let alert = outbox_rows(&app)
            .await
            .into_iter()
            .find(|m| m.run_id == Some(run_id));
        if let Some(alert) = alert
            && alert.status == MailStatus::Written
        {
            assert_eq!(alert.kind, "first_failure");
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the alert was not delivered by the application's own sender"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

mod the_whole_application_runs_a_job_and_sends_its_alert {
    fn everything(_: &mut server::config::Config, workers: &mut crate::helpers::Workers) {
        workers.engine = true;
        workers.mail_sender = true;
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn sqlite() {
        let app = crate::helpers::TestApp::sqlite_with(everything).await;
        super::the_whole_application_runs_a_job_and_sends_its_alert(app).await;
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn postgres() {
        match crate::helpers::TestApp::postgres_with("whole_application", everything).await {
            Some(app) => super::the_whole_application_runs_a_job_and_sends_its_alert(app).await,
            None => eprintln!("BULWARK_TEST_POSTGRES_URL not set: skipped"),
        }
    }
}
