//! Watched jobs on a clock the test controls: ticks become runs awaiting pings, a ping settles
//! the tick whose window holds it, a missed tick alerts once, escalates once and recovers once,
//! `/fail` parks its message in the failed queue (resolve or discard only), a known-absent tick
//! is cancelled, overlapping `rid`s keep their own durations, a run too short to be true is dead
//! `too_fast` and one too long (of a job Bulwark runs, too) is said once; pings and sweeps racing
//! from two pools, and pings spread over two real instances on PostgreSQL, settle a tick once;
//! and the ping URLs, `bulwark exec` and `bulwark import crontab` work as a host uses them.

use app::domain::chat::{ChannelKind, EventType};
use app::domain::job::{JobInput, JobSpec, Kind};
use app::domain::run::{ErrorClass, RunStatus};
use app::domain::watch::Ping;
use app::entities::{channel_delivery, job, job_attempt, job_run};
use app::services::notifications::channels::{self, NewChannel};
use app::services::watch::{self, Incoming, Pinged};
use chrono::{DateTime, Duration, Utc};
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder};

use crate::helpers::{TESTER, TestApp};
use crate::on_both_backends;
use crate::process::{cli as bulwark, text};

/// 00:00:30 on a day far from the test's own clock: every time below is set from it.
fn t0() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2030-01-01T00:00:30Z")
        .unwrap()
        .to_utc()
}

fn at(minute: i64, second: f64) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2030-01-01T00:00:00Z")
        .unwrap()
        .to_utc()
        + Duration::minutes(minute)
        + Duration::milliseconds((second * 1000.0) as i64)
}

fn watched(name: &str) -> JobInput {
    JobInput {
        name: name.into(),
        kind: Kind::Watch.as_str().into(),
        cron: "0 * * * * *".into(),
        watch_grace: "20s".into(),
        escalate_after: "3".into(),
        alert_channels: "ops".into(),
        ..JobInput::default()
    }
}

/// The job, defined at [`t0`] (its first tick is 00:01:00), and the chat channel its alerts
/// go to.
async fn watched_job(app: &TestApp, input: JobInput) -> job::Model {
    if channels::list(&app.db, &app.secret_key)
        .await
        .unwrap()
        .is_empty()
    {
        channels::add(
            &app.db,
            &app.secret_key,
            &NewChannel {
                name: "ops".into(),
                kind: Some(ChannelKind::Webhook),
                url: Some("http://127.0.0.1:9/ops".into()),
                ..Default::default()
            },
            &TESTER,
            Utc::now(),
        )
        .await
        .unwrap();
    }
    let spec = JobSpec::parse(&input).unwrap();
    app::services::jobs::create(&app.db, &spec, t0())
        .await
        .unwrap()
}

async fn tick(db: &DatabaseConnection, now: DateTime<Utc>) {
    server::engine::trigger::enqueue_due_ticks(db, now, std::time::Duration::from_secs(30))
        .await
        .unwrap();
}

async fn sweep(db: &DatabaseConnection, now: DateTime<Utc>) -> usize {
    watch::sweep(db, now, app::i18n::Locale::english())
        .await
        .unwrap()
        .len()
}

async fn ping(
    app: &TestApp,
    job: &job::Model,
    ping: Ping,
    rid: Option<&str>,
    body: &str,
    now: DateTime<Utc>,
) -> Pinged {
    let incoming = Incoming {
        ping,
        rid,
        body: body.as_bytes(),
        node: "test",
    };
    watch::ping(
        &app.db,
        &app.secret_key,
        job,
        incoming,
        now,
        app::i18n::Locale::english(),
    )
    .await
    .unwrap()
}

async fn run(db: &DatabaseConnection, id: i64) -> (job_run::Model, job_attempt::Model) {
    let run = job_run::Entity::find_by_id(id)
        .one(db)
        .await
        .unwrap()
        .unwrap();
    let attempt = job_attempt::Entity::find()
        .filter(job_attempt::Column::RunId.eq(id))
        .one(db)
        .await
        .unwrap()
        .expect("the run has its attempt");
    (run, attempt)
}

async fn said(db: &DatabaseConnection, job_id: i64, event: EventType) -> usize {
    channel_delivery::Entity::find()
        .filter(channel_delivery::Column::JobId.eq(job_id))
        .filter(channel_delivery::Column::Kind.eq(event.as_str()))
        .all(db)
        .await
        .unwrap()
        .len()
}

async fn runs_of(db: &DatabaseConnection, job_id: i64) -> Vec<job_run::Model> {
    job_run::Entity::find()
        .filter(job_run::Column::JobId.eq(job_id))
        .order_by_asc(job_run::Column::Id)
        .all(db)
        .await
        .unwrap()
}

async fn a_watched_job_alerts_once_escalates_once_and_recovers(app: TestApp) {
    let job = watched_job(&app, watched("nightly-backup")).await;
    // 00:01: the tick awaits its ping; /start and the ping two seconds later settle it.
    tick(&app.db, at(1, 0.5)).await;
    let runs = runs_of(&app.db, job.id).await;
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].status, RunStatus::AwaitingPing);
    assert_eq!(runs[0].lease_owner, None);
    let started = ping(&app, &job, Ping::Start, None, "", at(1, 1.0)).await;
    assert_eq!(
        (started.run_id, started.status),
        (runs[0].id, RunStatus::Running)
    );
    let done = ping(&app, &job, Ping::Success, None, "42 files\n", at(1, 3.0)).await;
    let (settled, attempt) = run(&app.db, done.run_id).await;
    assert_eq!(settled.status, RunStatus::Succeeded);
    assert_eq!(attempt.duration_ms, Some(2_000));
    assert_eq!(sweep(&app.db, at(1, 30.0)).await, 0);

    // 00:02, 00:03, 00:04 go unpinged: one alert, nothing for the second, one escalation.
    for minute in 2..=4 {
        tick(&app.db, at(minute, 0.5)).await;
        assert_eq!(sweep(&app.db, at(minute, 19.0)).await, 0, "within grace");
        assert_eq!(sweep(&app.db, at(minute, 21.0)).await, 1, "past grace");
        assert_eq!(said(&app.db, job.id, EventType::FirstFailure).await, 1);
    }
    assert_eq!(said(&app.db, job.id, EventType::Escalation).await, 1);
    let missed: Vec<job_run::Model> = runs_of(&app.db, job.id)
        .await
        .into_iter()
        .filter(|r| r.last_error_class == Some(ErrorClass::Missed))
        .collect();
    assert_eq!(missed.len(), 3);
    assert!(
        missed
            .iter()
            .all(|r| r.status == RunStatus::Dead && r.attempts == 1)
    );

    // 00:05: a ping two seconds after the tick recovers it, naming the downtime.
    tick(&app.db, at(5, 0.5)).await;
    let back = ping(&app, &job, Ping::Success, None, "", at(5, 2.0)).await;
    assert_eq!(back.status, RunStatus::Succeeded);
    assert!(!back.unexpected);
    assert_eq!(said(&app.db, job.id, EventType::Recovered).await, 1);

    // 00:06: /fail with a body parks that message in the failed queue, which cannot re-run it.
    tick(&app.db, at(6, 0.5)).await;
    let failed = ping(&app, &job, Ping::Fail, None, "disk full", at(6, 1.0)).await;
    let (dead, _) = run(&app.db, failed.run_id).await;
    assert_eq!(dead.status, RunStatus::Dead);
    assert_eq!(dead.last_error_class, Some(ErrorClass::Permanent));
    assert_eq!(dead.last_error.as_deref(), Some("disk full"));
    let refused = app::services::failed::retrigger(
        &app.db,
        dead.id,
        &Default::default(),
        &TESTER,
        at(6, 2.0),
        at(6, 2.0),
    )
    .await;
    assert!(refused.is_err(), "a watched run is never re-triggered");

    // 00:07: a tick known not to come is cancelled, and nothing alerts for it.
    tick(&app.db, at(7, 0.5)).await;
    let awaiting = runs_of(&app.db, job.id).await.pop().unwrap();
    assert_eq!(awaiting.status, RunStatus::AwaitingPing);
    let cancelled = app::services::runs::cancel(&app.db, awaiting.id, &TESTER, at(7, 1.0))
        .await
        .unwrap();
    assert_eq!(cancelled.status, RunStatus::Cancelled);
    assert_eq!(sweep(&app.db, at(7, 30.0)).await, 0);
}
on_both_backends!(a_watched_job_alerts_once_escalates_once_and_recovers);

async fn overlapping_rids_keep_their_own_runs_and_a_too_short_run_is_dead(app: TestApp) {
    let job = watched_job(&app, watched("sync")).await;
    tick(&app.db, at(1, 0.5)).await;
    let a = ping(&app, &job, Ping::Start, Some("a"), "", at(1, 1.0)).await;
    let b = ping(&app, &job, Ping::Start, Some("b"), "", at(1, 2.0)).await;
    assert_ne!(a.run_id, b.run_id);
    assert!(b.unexpected, "the tick was taken: b is a run of its own");
    ping(&app, &job, Ping::Success, Some("b"), "", at(1, 5.0)).await;
    ping(&app, &job, Ping::Exit(0), Some("a"), "", at(1, 4.0)).await;
    assert_eq!(run(&app.db, a.run_id).await.1.duration_ms, Some(3_000));
    assert_eq!(run(&app.db, b.run_id).await.1.duration_ms, Some(3_000));
    assert_eq!(run(&app.db, a.run_id).await.0.finished_at, Some(at(1, 4.0)));
    assert_eq!(run(&app.db, b.run_id).await.0.finished_at, Some(at(1, 5.0)));

    // Ten runs of about two seconds teach it; then one of 0.1 s is too fast to be true.
    for minute in 2..=11 {
        tick(&app.db, at(minute, 0.5)).await;
        ping(&app, &job, Ping::Start, None, "", at(minute, 1.0)).await;
        let spread = 1.9 + f64::from(minute as i32 % 3) * 0.1;
        ping(
            &app,
            &job,
            Ping::Success,
            None,
            "",
            at(minute, 1.0 + spread),
        )
        .await;
    }
    tick(&app.db, at(12, 0.5)).await;
    ping(&app, &job, Ping::Start, None, "", at(12, 1.0)).await;
    let quick = ping(&app, &job, Ping::Success, None, "", at(12, 1.1)).await;
    let (dead, attempt) = run(&app.db, quick.run_id).await;
    assert_eq!(dead.status, RunStatus::Dead);
    assert_eq!(attempt.error_class, Some(ErrorClass::TooFast));
    assert_eq!(said(&app.db, job.id, EventType::FirstFailure).await, 1);
}
on_both_backends!(overlapping_rids_keep_their_own_runs_and_a_too_short_run_is_dead);

/// Two pools on one database stand for two instances: pings and sweeps for the same tick
/// from both, at once, settle it exactly once and alert once.
async fn pings_on_two_instances_settle_a_tick_once(app: TestApp) {
    let job = watched_job(&app, watched("shared")).await;
    let other = server::db::connect(&app.database_url).await.unwrap();
    tick(&app.db, at(1, 0.5)).await;
    tick(&other, at(1, 0.6)).await;
    assert_eq!(runs_of(&app.db, job.id).await.len(), 1, "one run per tick");
    let mut tasks = Vec::new();
    for i in 0..8 {
        let db = if i % 2 == 0 {
            app.db.clone()
        } else {
            other.clone()
        };
        let (key, job) = (app.secret_key.clone(), job.clone());
        tasks.push(tokio::spawn(async move {
            let incoming = Incoming {
                ping: Ping::Fail,
                rid: None,
                body: b"boom",
                node: "racer",
            };
            watch::ping(
                &db,
                &key,
                &job,
                incoming,
                at(1, 5.0),
                app::i18n::Locale::english(),
            )
            .await
            .unwrap()
        }));
    }
    let mut settled = Vec::new();
    for task in tasks {
        settled.push(task.await.unwrap());
    }
    let on_tick = settled.iter().filter(|p| !p.unexpected).count();
    assert_eq!(on_tick, 1, "the tick is settled by one ping: {settled:?}");
    // The sweeps on both find nothing left of it.
    let (one, two) = tokio::join!(sweep(&app.db, at(1, 30.0)), sweep(&other, at(1, 30.0)));
    assert_eq!(one + two, 0);
    assert_eq!(said(&app.db, job.id, EventType::FirstFailure).await, 1);
}
on_both_backends!(pings_on_two_instances_settle_a_tick_once);

/// The same, the other way round: a tick nobody pinged, swept by both at once, dies once.
async fn two_instances_sweep_a_missed_tick_once(app: TestApp) {
    let job = watched_job(&app, watched("quiet")).await;
    let other = server::db::connect(&app.database_url).await.unwrap();
    tick(&app.db, at(1, 0.5)).await;
    let (one, two) = tokio::join!(sweep(&app.db, at(1, 25.0)), sweep(&other, at(1, 25.0)));
    assert_eq!(one + two, 1);
    assert_eq!(said(&app.db, job.id, EventType::FirstFailure).await, 1);
}
on_both_backends!(two_instances_sweep_a_missed_tick_once);

/// The ping URLs as a host calls them: no session, `GET` or `POST`, a body kept as the output
/// with the vault's secrets taken out, unknown tokens and paths 404.
async fn ping_urls_answer_without_a_session(app: TestApp) {
    app.set_secret("db-password", "hunter2-very-secret").await;
    let mut input = watched("report");
    input.watch_grace = "1h".into();
    let job = watched_job(&app, input).await;
    let token = watch::token(&app.db, &app.secret_key, &job, false, &TESTER, Utc::now())
        .await
        .unwrap();
    let job = job::Entity::find_by_id(job.id)
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    let again = watch::token(&app.db, &app.secret_key, &job, false, &TESTER, Utc::now())
        .await
        .unwrap();
    assert_eq!(token, again, "the URL stays until rotated");
    let client = reqwest::Client::new();
    let url = app.url(&format!("/ping/{token}"));
    let start = client
        .get(format!("{url}/start?rid=r1"))
        .send()
        .await
        .unwrap();
    assert_eq!(start.status(), 200);
    let started: serde_json::Value = start.json().await.unwrap();
    assert_eq!(started["status"], "running");
    let body = "line one\npassword=hunter2-very-secret\n";
    let end = client
        .post(format!("{url}/3?rid=r1"))
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(end.status(), 200);
    let answer: serde_json::Value = end.json().await.unwrap();
    assert_eq!(answer["status"], "dead");
    let run_id = answer["run_id"].as_i64().unwrap();
    let (dead, attempt) = run(&app.db, run_id).await;
    assert!(dead.last_error.unwrap().contains("line one"));
    let tail = attempt.output_tail.unwrap();
    assert!(tail.contains("${secret:db-password}") && !tail.contains("hunter2"));
    let log = app::services::run_logs::summaries(&app.db, run_id)
        .await
        .unwrap();
    assert_eq!(log.iter().map(|s| s.last_line).max(), Some(2));

    for (path, status) in [
        ("/ping/00000000000000000000000000000000", 404),
        ("/ping/not-a-token/start", 404),
        (&format!("/ping/{token}/maybe"), 404),
        (&format!("/ping/{token}/256"), 404),
    ] {
        let answer = client.get(app.url(path)).send().await.unwrap();
        let got = answer.status();
        let text = answer.text().await.unwrap();
        assert_eq!(got, status, "{path}: {}", &text[..text.len().min(300)]);
    }
    let rotated = watch::token(&app.db, &app.secret_key, &job, true, &TESTER, Utc::now())
        .await
        .unwrap();
    assert_ne!(rotated, token);
    let old = client.get(&url).send().await.unwrap();
    assert_eq!(old.status(), 404, "a rotated URL stops working");
}
on_both_backends!(ping_urls_answer_without_a_session);

/// A job watched `every` so long is expected that long after its last ping.
async fn every_is_anchored_to_the_last_ping(app: TestApp) {
    let mut input = watched("heartbeat");
    input.cron = String::new();
    input.watch_every = "10m".into();
    input.watch_grace = "1m".into();
    let job = watched_job(&app, input).await;
    // Defined at 00:00:30: first expected at 00:10:30. A ping at 00:08 moves it to 00:18.
    let early = ping(&app, &job, Ping::Success, None, "", at(8, 0.0)).await;
    assert_eq!(early.status, RunStatus::Succeeded);
    tick(&app.db, at(11, 0.0)).await;
    assert_eq!(
        runs_of(&app.db, job.id).await.len(),
        1,
        "nothing due at 00:10:30"
    );
    tick(&app.db, at(18, 1.0)).await;
    let runs = runs_of(&app.db, job.id).await;
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[1].cron_tick, Some(at(18, 0.0)));
    assert_eq!(sweep(&app.db, at(19, 1.0)).await, 1);
}
on_both_backends!(every_is_anchored_to_the_last_ping);

/// A crontab imported twice changes nothing the second time and comes back rewritten through
/// `bulwark exec`, whose command's exit code and output reach the run; `watch url` prints the
/// same URL the rewritten crontab uses.
#[tokio::test(flavor = "multi_thread")]
async fn a_crontab_imports_once_and_exec_reports_through_its_url() {
    let app = TestApp::sqlite_with(|_, _| {}).await;
    let crontab = "MAILTO=ops@example.com\n# the nightly dump\n@daily pg_dump shop > /tmp/shop.sql\n@reboot /opt/start.sh\n";
    let first = bulwark(&app, &["import", "crontab", "-", "--as", "watch"], crontab);
    assert!(first.status.success(), "{}", text(&first.stderr));
    assert!(
        text(&first.stderr).contains("created 1"),
        "{}",
        text(&first.stderr)
    );
    assert!(text(&first.stderr).contains("line 4: not imported (@reboot"));
    let rewritten = text(&first.stdout);
    assert!(rewritten.starts_with(
        "MAILTO=ops@example.com\n# the nightly dump\n@daily bulwark exec --ping-url "
    ));
    assert!(
        rewritten
            .contains(" -- /bin/sh -c 'pg_dump shop > /tmp/shop.sql'\n@reboot /opt/start.sh\n")
    );
    let again = bulwark(&app, &["import", "crontab", "-", "--as", "watch"], crontab);
    assert!(text(&again.stderr).contains("created 0, updated 0, unchanged 1"));
    assert_eq!(
        text(&again.stdout),
        rewritten,
        "a second import changes nothing"
    );

    let job = job::Entity::find()
        .filter(job::Column::Kind.eq(Kind::Watch))
        .one(&app.db)
        .await
        .unwrap()
        .expect("the watched job");
    let spec = app::services::jobs::to_spec(&job).unwrap();
    assert_eq!(
        spec.cron.map(|c| c.as_str().to_string()).as_deref(),
        Some("0 0 0 * * *")
    );
    assert_eq!(spec.alerts.to.len(), 1);
    let url = text(&bulwark(&app, &["watch", "url", &job.name], "").stdout);
    let url = url.trim();
    assert!(rewritten.contains(&format!("--ping-url {url} --")));

    let exec = bulwark(
        &app,
        &[
            "exec",
            "--ping-url",
            url,
            "--",
            "sh",
            "-c",
            "echo hi; exit 3",
        ],
        "",
    );
    assert_eq!(exec.status.code(), Some(3), "{}", text(&exec.stderr));
    assert_eq!(text(&exec.stdout), "hi\n");
    let runs = runs_of(&app.db, job.id).await;
    let (dead, attempt) = run(&app.db, runs.last().unwrap().id).await;
    assert_eq!(dead.status, RunStatus::Dead);
    assert_eq!(attempt.output_tail.as_deref(), Some("hi\n"));
    assert!(attempt.duration_ms.is_some(), "exec pings /start first");

    // Bulwark unreachable: the command still runs and keeps its exit code.
    let offline = bulwark(
        &app,
        &[
            "exec",
            "--ping-url",
            "http://127.0.0.1:9/ping/x",
            "--",
            "true",
        ],
        "",
    );
    assert_eq!(offline.status.code(), Some(0));
    assert!(text(&offline.stderr).contains("could not ping Bulwark"));
}

/// A job Bulwark runs is judged by the same rule: after ten successes of 20 ms, one of 1.5 s
/// is flagged and said once, to the job's channel, the run itself a success.
async fn a_run_job_that_takes_too_long_says_so_once(app: TestApp) {
    use sea_orm::{ActiveModelTrait, Set};
    let mut input = crate::engine::base("report");
    input.kind = Kind::Builtin.as_str().into();
    input.builtin_task = "demo".into();
    input.builtin_params = "sleep=1500ms\nfailure_rate=0".into();
    input.alert_channels = "ops".into();
    let job = watched_job(&app, input).await;
    for i in 0..10 {
        let at = Utc::now() - Duration::minutes(30 - i);
        let run = crate::helpers::insert_run(
            &app.db,
            crate::helpers::run_row(job.id, RunStatus::Succeeded, at),
        )
        .await;
        job_attempt::ActiveModel {
            run_id: Set(run.id),
            number: Set(1),
            started_at: Set(at),
            finished_at: Set(Some(at + Duration::milliseconds(20))),
            duration_ms: Set(Some(20)),
            timeout_ms: Set(5_000),
            outcome: Set(Some(app::domain::run::Outcome::Succeeded)),
            node: Set("earlier".into()),
            slow: Set(false),
            spent_retry: Set(true),
            ..Default::default()
        }
        .insert(&app.db)
        .await
        .unwrap();
    }
    let (_, finished) =
        crate::engine::run_to_end(&app.db, job.id, std::time::Duration::from_secs(30)).await;
    assert_eq!(finished.status, RunStatus::Succeeded);
    let (_, attempt) = run(&app.db, finished.id).await;
    assert!(attempt.slow, "1.5 s after ten of 20 ms is too slow");
    assert_eq!(said(&app.db, job.id, EventType::TooSlow).await, 1);
    assert_eq!(said(&app.db, job.id, EventType::FirstFailure).await, 0);
}
on_both_backends!(a_run_job_that_takes_too_long_says_so_once);

/// Pings spread over two real instances on PostgreSQL — this test's server and a `bulwark
/// serve` whose engine ticks and sweeps — land on ticks every two seconds for six seconds:
/// every run is settled once (one attempt each), and the failing job alerts once.
#[tokio::test(flavor = "multi_thread")]
async fn pings_through_two_instances_settle_each_tick_once() {
    let Some(app) = TestApp::postgres("watch_two_instances").await else {
        eprintln!("BULWARK_TEST_POSTGRES_URL not set: skipped");
        return;
    };
    let mut input = watched("two-nodes");
    input.cron = "*/2 * * * * *".into();
    input.watch_grace = "1s".into();
    input.escalate_after = "100".into();
    watched_job(&app, watched("first")).await; // makes the channel
    let spec = JobSpec::parse(&input).unwrap();
    let job = app::services::jobs::create(&app.db, &spec, Utc::now())
        .await
        .unwrap();
    let token = watch::token(&app.db, &app.secret_key, &job, false, &TESTER, Utc::now())
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let key = app.secret_key_file().display().to_string();
    let (mut other, addr) = crate::process::serve_with(
        &app,
        dir.path(),
        "node-b",
        &[("BULWARK_SECRET_KEY_FILE", key.as_str())],
    );
    let client = reqwest::Client::new();
    let bases = [app.url(""), format!("http://{addr}")];
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while client
        .get(format!("{}/healthz", bases[1]))
        .send()
        .await
        .is_err()
    {
        assert!(std::time::Instant::now() < deadline, "node-b did not start");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let mut pinged = 0;
    for i in 0..12 {
        let url = format!("{}/ping/{token}/fail", bases[i % 2]);
        let answer = client.post(url).body("boom").send().await.unwrap();
        assert_eq!(answer.status(), 200);
        pinged += 1;
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
    other.kill().unwrap();
    other.wait().unwrap();
    let runs = runs_of(&app.db, job.id).await;
    let ended: Vec<&job_run::Model> = runs
        .iter()
        .filter(|r| r.status == RunStatus::Dead)
        .collect();
    assert!(
        ended.len() >= pinged,
        "every ping settled a run: {}",
        ended.len()
    );
    for run in &ended {
        let attempts = job_attempt::Entity::find()
            .filter(job_attempt::Column::RunId.eq(run.id))
            .all(&app.db)
            .await
            .unwrap();
        assert_eq!(attempts.len(), 1, "run {} settled once", run.id);
    }
    let by_ping = ended
        .iter()
        .filter(|r| r.last_error.as_deref() == Some("boom"))
        .count();
    assert_eq!(by_ping, pinged, "each ping settled exactly one run");
    assert_eq!(said(&app.db, job.id, EventType::FirstFailure).await, 1);
}
