//! The engine against real parts: a local HTTP server that fails on demand, real child
//! processes, the real `bulwark` binary killed mid-attempt.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use app::domain::job::{JobInput, JobSpec, Kind, Misfire};
use app::domain::retry::Jitter;
use app::domain::run::{ErrorClass, Outcome, RunStatus};
use app::entities::{job, job_attempt, job_run};
use app::services::{jobs, runs};
use chrono::{DateTime, TimeZone, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder};
use server::engine::{Engine, EngineConfig, trigger};

use crate::helpers::{TestApp, define, wait_for_status};
use crate::on_both_backends;

pub(crate) fn engine_config(node: &str) -> EngineConfig {
    let mut config = EngineConfig::new(node.to_string());
    config.poll = Duration::from_millis(50);
    config.lease = Duration::from_secs(3);
    config.grace = Duration::from_millis(300);
    config
}

/// An HTTP job with a fast retry policy (100 ms × 2, three retries, no jitter) that fires once
/// a year: only the runs a test makes happen.
pub(crate) fn base(name: &str) -> JobInput {
    let mut input = JobInput {
        name: name.into(),
        cron: "0 0 0 1 1 *".into(), // once a year: only manual runs happen in these tests
        ..JobInput::default()
    };
    input.retry.first = "100ms".into();
    input.retry.multiplier = "2".into();
    input.retry.max_retries = "3".into();
    input.retry.jitter = Jitter::None.as_str().into();
    input.retry.cap = String::new();
    input.timeout_static = "5s".into();
    input
}

pub(crate) struct Running {
    pub(crate) shared: Arc<server::engine::Shared>,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

pub(crate) fn start(db: &DatabaseConnection, config: EngineConfig) -> Running {
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let engine = Engine::new(db.clone(), config);
    let shared = engine.shared();
    let task = tokio::spawn(engine.run(async move {
        let _ = stopped.await;
    }));
    Running { shared, stop, task }
}

impl Running {
    pub(crate) async fn stop(self) {
        let _ = self.stop.send(());
        tokio::time::timeout(Duration::from_secs(10), self.task)
            .await
            .expect("engine stops within its grace period")
            .expect("engine task");
    }
}

/// Queues a manual run of `job_id`, runs an engine until the run ends, and stops it.
pub(crate) async fn run_to_end(
    db: &DatabaseConnection,
    job_id: i64,
    within: Duration,
) -> (job_run::Model, job_run::Model) {
    run_to_end_on(db, job_id, within, engine_config("node-a")).await
}

/// [`run_to_end`] with an engine configured by the caller.
pub(crate) async fn run_to_end_on(
    db: &DatabaseConnection,
    job_id: i64,
    within: Duration,
    config: EngineConfig,
) -> (job_run::Model, job_run::Model) {
    let run = runs::create_manual(db, job_id, Utc::now()).await.unwrap();
    let engine = start(db, config);
    let finished =
        wait_for_status(db, run.id, &[RunStatus::Succeeded, RunStatus::Dead], within).await;
    engine.stop().await;
    (run, finished)
}

pub(crate) async fn attempts_of(db: &DatabaseConnection, run_id: i64) -> Vec<job_attempt::Model> {
    job_attempt::Entity::find()
        .filter(job_attempt::Column::RunId.eq(run_id))
        .order_by_asc(job_attempt::Column::Number)
        .all(db)
        .await
        .unwrap()
}

/// A local HTTP server whose `/flaky` answers `status` to the first `failures` requests and
/// 200 afterwards; it records when each request arrived.
pub(crate) async fn flaky_server(
    failures: usize,
    status: u16,
) -> (String, Arc<std::sync::Mutex<Vec<DateTime<Utc>>>>) {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let count = Arc::new(AtomicUsize::new(0));
    let app = {
        let seen = seen.clone();
        axum::Router::new().route(
            "/flaky",
            axum::routing::any(move |headers: axum::http::HeaderMap| {
                let seen = seen.clone();
                let count = count.clone();
                async move {
                    seen.lock().unwrap().push(Utc::now());
                    assert!(headers.contains_key("idempotency-key"));
                    let n = count.fetch_add(1, Ordering::SeqCst);
                    let code = if n < failures { status } else { 200 };
                    (
                        axum::http::StatusCode::from_u16(code).unwrap(),
                        format!("answer {n}"),
                    )
                }
            }),
        )
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}/flaky"), seen)
}

async fn the_reference_schedule_retries_after_each_planned_delay(app: TestApp) {
    let (url, seen) = flaky_server(3, 503).await;
    let job = define(
        &app.db,
        JobInput {
            http_url: url,
            ..base("flaky-http")
        },
    )
    .await;
    let (run, finished) = run_to_end(&app.db, job.id, Duration::from_secs(20)).await;

    assert_eq!(finished.status, RunStatus::Succeeded);
    let attempts = attempts_of(&app.db, run.id).await;
    let outcomes: Vec<_> = attempts.iter().map(|a| a.outcome.unwrap()).collect();
    assert_eq!(
        outcomes,
        [
            Outcome::Failed,
            Outcome::Failed,
            Outcome::Failed,
            Outcome::Succeeded
        ]
    );
    assert!(
        attempts[..3]
            .iter()
            .all(|a| a.error_class == Some(ErrorClass::Transient))
    );
    // F = 100 ms, M = 2 (the reference schedule scaled down from 10 s): each retry starts no
    // sooner than its planned delay after the previous attempt ended.
    for (i, planned_ms) in [100, 200, 400].into_iter().enumerate() {
        let gap =
            (attempts[i + 1].started_at - attempts[i].finished_at.unwrap()).num_milliseconds();
        assert!(
            gap >= planned_ms - 5,
            "retry {} started {gap} ms after attempt {}, planned {planned_ms}",
            i + 1,
            i + 1
        );
    }
    assert_eq!(seen.lock().unwrap().len(), 4);
}
on_both_backends!(the_reference_schedule_retries_after_each_planned_delay);

async fn permanent_errors_are_not_retried(app: TestApp) {
    let (url, seen) = flaky_server(100, 404).await;
    let job = define(
        &app.db,
        JobInput {
            http_url: url,
            ..base("gone")
        },
    )
    .await;
    let (run, finished) = run_to_end(&app.db, job.id, Duration::from_secs(10)).await;

    assert_eq!(finished.status, RunStatus::Dead);
    assert_eq!(finished.last_error_class, Some(ErrorClass::Permanent));
    let attempts = attempts_of(&app.db, run.id).await;
    assert_eq!(attempts.len(), 1);
    assert_eq!(
        attempts[0].message.as_deref(),
        Some("HTTP 404 is not an expected status")
    );
    assert!(
        attempts[0]
            .output_tail
            .as_deref()
            .unwrap()
            .contains("answer 0")
    );
    assert_eq!(seen.lock().unwrap().len(), 1);
}
on_both_backends!(permanent_errors_are_not_retried);

async fn a_timeout_kills_the_process(app: TestApp) {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let mut input = base("sleeper");
    input.kind = Kind::Command.as_str().into();
    input.command_program = "sh".into();
    input.command_args = format!(
        "-c\necho started; echo $$ > {}; exec sleep 30",
        pid_file.display()
    );
    input.timeout_static = "500ms".into();
    input.retry.max_retries = "1".into();
    let job = define(&app.db, input).await;
    let (run, finished) = run_to_end(&app.db, job.id, Duration::from_secs(15)).await;

    assert_eq!(finished.status, RunStatus::Dead);
    let attempts = attempts_of(&app.db, run.id).await;
    assert_eq!(
        attempts.len(),
        2,
        "the timeout is retried like a transient failure"
    );
    for a in &attempts {
        assert_eq!(a.outcome, Some(Outcome::TimedOut));
        assert_eq!(a.timeout_ms, 500);
        assert!(a.output_tail.as_deref().unwrap().contains("started"));
        assert!(a.duration_ms.unwrap() < 5_000, "killed, not waited for");
    }
    let pid = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .to_string();
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists(),
        "the timed-out process {pid} must be gone"
    );
}
on_both_backends!(a_timeout_kills_the_process);

async fn a_running_commands_output_is_on_its_attempt_before_it_ends(app: TestApp) {
    let secret_free = "first line";
    let mut input = base("talker");
    input.kind = Kind::Command.as_str().into();
    input.command_program = "sh".into();
    input.command_args =
        format!("-c\necho '{secret_free}'; echo to-stderr >&2; sleep 4; echo last line");
    input.timeout_static = "30s".into();
    let job = define(&app.db, input).await;
    let run = runs::create_manual(&app.db, job.id, Utc::now())
        .await
        .unwrap();
    let engine = start(&app.db, engine_config("node-a"));
    // Read from the database, as a page served by any instance would. The two pipes are read
    // apart, so the stderr line may be written a moment before the stdout line printed first:
    // this waits for both, while the attempt is still running.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    let live = loop {
        let attempts = attempts_of(&app.db, run.id).await;
        if let Some(a) = attempts.first()
            && a.finished_at.is_none()
            && a.output_tail
                .as_deref()
                .is_some_and(|t| t.contains("to-stderr") && t.contains(secret_free))
        {
            break a.output_tail.clone().unwrap();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no live output of both streams: {attempts:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(
        !live.contains("last line"),
        "written before the command ended: {live}"
    );
    let finished = wait_for_status(
        &app.db,
        run.id,
        &[RunStatus::Succeeded],
        Duration::from_secs(20),
    )
    .await;
    engine.stop().await;
    assert_eq!(finished.status, RunStatus::Succeeded);
    let tail = attempts_of(&app.db, run.id).await[0]
        .output_tail
        .clone()
        .unwrap();
    assert!(
        tail.contains("first line") && tail.contains("last line"),
        "the tail stays: {tail}"
    );
}
on_both_backends!(a_running_commands_output_is_on_its_attempt_before_it_ends);

async fn exit_codes_are_classed(app: TestApp) {
    let mut transient = base("tempfail");
    transient.kind = Kind::Command.as_str().into();
    transient.command_program = "sh".into();
    transient.command_args = "-c\nexit 75".into();
    transient.retry.max_retries = "2".into();
    let mut permanent = transient.clone();
    permanent.name = "broken".into();
    permanent.command_args = "-c\necho oops >&2; exit 3".into();
    let t = define(&app.db, transient).await;
    let p = define(&app.db, permanent).await;
    let t_run = runs::create_manual(&app.db, t.id, Utc::now())
        .await
        .unwrap();
    let p_run = runs::create_manual(&app.db, p.id, Utc::now())
        .await
        .unwrap();
    let engine = start(&app.db, engine_config("node-a"));
    wait_for_status(
        &app.db,
        t_run.id,
        &[RunStatus::Dead],
        Duration::from_secs(10),
    )
    .await;
    wait_for_status(
        &app.db,
        p_run.id,
        &[RunStatus::Dead],
        Duration::from_secs(10),
    )
    .await;
    engine.stop().await;

    assert_eq!(
        attempts_of(&app.db, t_run.id).await.len(),
        3,
        "exit 75 is retried"
    );
    let broken = attempts_of(&app.db, p_run.id).await;
    assert_eq!(broken.len(), 1, "exit 3 is permanent");
    assert_eq!(broken[0].message.as_deref(), Some("sh exited with code 3"));
    assert!(broken[0].output_tail.as_deref().unwrap().contains("oops"));
}
on_both_backends!(exit_codes_are_classed);

async fn graceful_shutdown_hands_running_attempts_back(app: TestApp) {
    let mut input = base("long");
    input.kind = Kind::Command.as_str().into();
    input.command_program = "sleep".into();
    input.command_args = "10".into();
    input.timeout_static = "1m".into();
    let job = define(&app.db, input).await;
    let run = runs::create_manual(&app.db, job.id, Utc::now())
        .await
        .unwrap();
    let engine = start(&app.db, engine_config("node-a"));
    wait_for_status(
        &app.db,
        run.id,
        &[RunStatus::Running],
        Duration::from_secs(10),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    engine.stop().await;

    let after = job_run::Entity::find_by_id(run.id)
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        after.status,
        RunStatus::RetryWait,
        "handed back for the next process to retry"
    );
    assert_eq!(after.lease_owner, None);
    let attempts = attempts_of(&app.db, run.id).await;
    assert_eq!(attempts.len(), 1);
    assert_eq!(attempts[0].outcome, Some(Outcome::Interrupted));
    assert!(
        attempts[0]
            .message
            .as_deref()
            .unwrap()
            .contains("shut down")
    );

    // The next process picks it up and runs it again.
    job::Entity::update_many()
        .col_expr(
            job::Column::Config,
            Expr::value(r#"{"kind":"command","program":"true","args":[]}"#),
        )
        .filter(job::Column::Id.eq(job.id))
        .exec(&app.db)
        .await
        .unwrap();
    let engine = start(&app.db, engine_config("node-b"));
    let done = wait_for_status(
        &app.db,
        run.id,
        &[RunStatus::Succeeded],
        Duration::from_secs(10),
    )
    .await;
    engine.stop().await;
    assert_eq!(done.attempts, 2);
}
on_both_backends!(graceful_shutdown_hands_running_attempts_back);

async fn an_expired_lease_is_recovered_and_fenced(app: TestApp) {
    let job = define(
        &app.db,
        JobInput {
            kind: Kind::Builtin.as_str().into(),
            builtin_params: "failure_rate=0".into(),
            ..base("demo")
        },
    )
    .await;
    let run = runs::create_manual(&app.db, job.id, Utc::now())
        .await
        .unwrap();
    // Node A claims the run and dies before it writes anything.
    let node_a = Engine::new(app.db.clone(), engine_config("node-a")).shared();
    let node_b = Engine::new(app.db.clone(), engine_config("node-b")).shared();
    let claimed = server::engine::claim::claim_due(&node_a, Utc::now(), 10)
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1);
    // Nobody else can claim it while the lease holds.
    assert!(
        server::engine::claim::claim_due(&node_b, Utc::now(), 10)
            .await
            .unwrap()
            .is_empty()
    );
    // A takeover before the lease expired changes nothing.
    assert_eq!(
        server::engine::recovery::recover_expired(
            &app.db,
            &node_b.specs,
            Utc::now(),
            app::i18n::Locale::english()
        )
        .await
        .unwrap(),
        0
    );

    crate::helpers::lapse_leases(&app.db).await;
    let later = Utc::now();
    let recovered = server::engine::recovery::recover_expired(
        &app.db,
        &node_b.specs,
        later,
        app::i18n::Locale::english(),
    )
    .await
    .unwrap();
    assert_eq!(recovered, 1);
    let after = job_run::Entity::find_by_id(run.id)
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(after.status, RunStatus::RetryWait);
    let attempts = attempts_of(&app.db, run.id).await;
    assert_eq!(attempts.len(), 1, "the lost attempt still gets its row");
    assert_eq!(attempts[0].outcome, Some(Outcome::Interrupted));
    assert_eq!(attempts[0].node, "node-a");
    assert_eq!(
        attempts[0].timeout_ms, claimed[0].timeout.ms as i64,
        "the timeout it ran under is kept"
    );

    // Recovering again changes nothing: the run is no longer running.
    assert_eq!(
        server::engine::recovery::recover_expired(
            &app.db,
            &node_b.specs,
            later,
            app::i18n::Locale::english()
        )
        .await
        .unwrap(),
        0
    );
}
on_both_backends!(an_expired_lease_is_recovered_and_fenced);

async fn misfire_policies_record_every_missed_tick(app: TestApp) {
    // Every minute; last defined ten minutes before `now`; `now` is 30 s past a minute, so the
    // ten ticks due are all later than the misfire threshold.
    let now = Utc.with_ymd_and_hms(2026, 11, 30, 12, 0, 30).unwrap();
    for (name, misfire) in [("once", Misfire::RunOnce), ("skipper", Misfire::Skip)] {
        let mut input = base(name);
        input.cron = "0 * * * * *".into();
        input.kind = Kind::Builtin.as_str().into();
        input.misfire = misfire.as_str().into();
        let spec = JobSpec::parse(&input).unwrap();
        jobs::create(&app.db, &spec, now - chrono::Duration::minutes(10))
            .await
            .unwrap();
    }
    let pass = trigger::enqueue_due_ticks(&app.db, now, Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(pass.inserted, 20);
    let count = |name: &'static str, status: RunStatus| {
        let db = app.db.clone();
        async move {
            let job = job::Entity::find()
                .filter(job::Column::Name.eq(name))
                .one(&db)
                .await
                .unwrap()
                .unwrap();
            job_run::Entity::find()
                .filter(job_run::Column::JobId.eq(job.id))
                .filter(job_run::Column::Status.eq(status))
                .all(&db)
                .await
                .unwrap()
        }
    };
    let ran = count("once", RunStatus::Pending).await;
    assert_eq!(ran.len(), 1);
    assert_eq!(
        ran[0].scheduled_for,
        Utc.with_ymd_and_hms(2026, 11, 30, 12, 0, 0).unwrap(),
        "the latest missed tick runs"
    );
    assert_eq!(count("once", RunStatus::Skipped).await.len(), 9);
    assert_eq!(count("skipper", RunStatus::Pending).await.len(), 0);
    let skipped = count("skipper", RunStatus::Skipped).await;
    assert_eq!(skipped.len(), 10);
    assert!(
        skipped[0]
            .last_error
            .as_deref()
            .unwrap()
            .contains("misfire: skip")
    );

    // Idempotent: the same ticks again (another node, a second pass) add nothing.
    let again = trigger::enqueue_due_ticks(&app.db, now, Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(again.inserted, 0);
    assert_eq!(
        again.next_tick,
        Some(Utc.with_ymd_and_hms(2026, 11, 30, 12, 1, 0).unwrap()),
        "the engine is told when to wake for the next tick"
    );
    // The next on-time tick is pending.
    let next = now + chrono::Duration::seconds(31);
    let later = trigger::enqueue_due_ticks(&app.db, next, Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(later.inserted, 2);
}
on_both_backends!(misfire_policies_record_every_missed_tick);
