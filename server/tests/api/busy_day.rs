//! An ordinary busy day: what a healthy node must never do to its own work — fail a batch of
//! write-backs for one row, lose what a dying task held, let a cancelled run's successor start
//! beside it, drop a due tick on an edit, starve a run started by hand, claim into a window —
//! each made certain rather than hoped for under load. (The load itself: `tests/quiet_node.rs`.)

use std::sync::Arc;
use std::time::Duration;

use app::domain::run::{Outcome, RunStatus};
use app::entities::{job_attempt, job_run};
use app::services::{jobs, maintenance, runs};
use chrono::Utc;
use sea_orm::{ColumnTrait, ConnectionTrait, DatabaseBackend, EntityTrait, QueryFilter, Set};
use server::engine::attempt::{self, Left};
use server::engine::settle::Finished;
use server::engine::supervise::{EngineHealth, supervise};
use server::engine::{Engine, Shared, claim, write_back};
use tokio_util::sync::CancellationToken;

use crate::engine::{attempts_of, base, engine_config, start};
use crate::faults::{ended, shell, wait_for_file};
use crate::helpers::{TestApp, define, disable_system_jobs, noop_job, wait_for_status};
use crate::on_both_backends;

/// Claims the due runs on `shared` and runs their attempts here, to the point where the
/// engine would hand them to the write-back.
async fn finished_attempts(shared: &Arc<Shared>, expected: usize) -> Vec<Finished> {
    let claimed = claim::claim_due(shared, server::clock::now(), 100)
        .await
        .unwrap();
    assert_eq!(claimed.len(), expected);
    let mut finished = Vec::new();
    for claimed in claimed {
        let fence = shared
            .leases
            .hold(claimed.run.id, claimed.run.attempts, claimed.lease_sent);
        match attempt::run(shared.clone(), claimed, fence, CancellationToken::new()).await {
            Left::Finished(f) => finished.push(*f),
            Left::Abandoned { run_id } => panic!("run {run_id} was abandoned"),
        }
    }
    finished
}

/// Manual runs of `n` new no-op jobs.
async fn noop_runs(app: &TestApp, prefix: &str, n: usize) -> Vec<i64> {
    let mut ids = Vec::new();
    for i in 0..n {
        let job = define(&app.db, noop_job(&format!("{prefix}-{i}"))).await;
        ids.push(
            runs::create_manual(&app.db, job.id, Utc::now())
                .await
                .unwrap()
                .id,
        );
    }
    ids
}

/// A trigger that refuses to update the row of `table` with id `id` while `condition` holds
/// of the new row (SQL over `NEW`), the way a database refuses a value it cannot store.
async fn refuse(app: &TestApp, name: &str, table: &str, id: i64, condition: &str) {
    let statements = match app.db.get_database_backend() {
        DatabaseBackend::Postgres => vec![
            format!(
                "CREATE FUNCTION {name}() RETURNS trigger AS $$ BEGIN \
                 IF NEW.id = {id} AND {condition} THEN RAISE EXCEPTION 'refused by {name}'; END IF; \
                 RETURN NEW; END $$ LANGUAGE plpgsql"
            ),
            format!(
                "CREATE TRIGGER {name} BEFORE UPDATE ON {table} FOR EACH ROW EXECUTE FUNCTION {name}()"
            ),
        ],
        _ => vec![format!(
            "CREATE TRIGGER {name} BEFORE UPDATE ON {table} FOR EACH ROW \
             WHEN NEW.id = {id} AND {condition} BEGIN SELECT RAISE(ABORT, 'refused by {name}'); END"
        )],
    };
    for sql in statements {
        app.db.execute_unprepared(&sql).await.unwrap();
    }
}

async fn run(app: &TestApp, id: i64) -> job_run::Model {
    job_run::Entity::find_by_id(id)
        .one(&app.db)
        .await
        .unwrap()
        .unwrap()
}

/// A batch of write-backs with one row the database refuses with its texts and one it refuses
/// whatever is in it: every other run is written as it ended; the first is written with its
/// outcome and the reason in place of its texts; the second is let go for recovery, which
/// retries it once its lease lapses — no run is executed twice because of a neighbour.
async fn one_row_never_fails_its_neighbours(app: TestApp) {
    let ids = noop_runs(&app, "batch", 8).await;
    let shared = Engine::new(app.db.clone(), engine_config("node-a")).shared();
    let finished = finished_attempts(&shared, 8).await;
    let texts = finished
        .iter()
        .find(|f| f.run.id == ids[2])
        .unwrap()
        .attempt_id;
    refuse(
        &app,
        "no_texts",
        "job_attempts",
        texts,
        "NEW.message IS NULL",
    )
    .await;
    refuse(&app, "never", "job_runs", ids[5], "NEW.status <> 'running'").await;

    let mut parts = vec![finished];
    write_back::write(&shared, &mut parts).await;
    assert!(parts.is_empty());
    assert_eq!(shared.leases.count(), 0, "nothing is held any more");
    for (i, id) in ids.iter().enumerate() {
        let run = run(&app, *id).await;
        let attempts = attempts_of(&app.db, *id).await;
        match i {
            5 => {
                assert_eq!(run.status, RunStatus::Running, "left for recovery");
                assert_eq!(attempts[0].outcome, None);
            }
            _ => {
                assert_eq!(run.status, RunStatus::Succeeded, "run {i}");
                assert_eq!(attempts[0].outcome, Some(Outcome::Succeeded), "run {i}");
            }
        }
        let message = attempts[0].message.clone().unwrap_or_default();
        assert_eq!(
            message.contains("could not be stored: ") && message.contains("refused by no_texts"),
            i == 2,
            "run {i}: {message}"
        );
    }
    let drop = match app.db.get_database_backend() {
        DatabaseBackend::Postgres => "DROP TRIGGER never ON job_runs",
        _ => "DROP TRIGGER never",
    };
    app.db.execute_unprepared(drop).await.unwrap();
    crate::helpers::lapse_leases(&app.db).await;
    let recovered = server::engine::recovery::recover_expired(
        &app.db,
        &shared.specs,
        Utc::now(),
        app::i18n::Locale::english(),
    )
    .await
    .unwrap();
    assert_eq!(recovered, 1);
    assert_eq!(run(&app, ids[5]).await.status, RunStatus::RetryWait);
}
on_both_backends!(one_row_never_fails_its_neighbours);

/// The write-back task killed while it holds a batch it could not write yet (the database is
/// busy): its supervisor starts it again, and the new task writes that very batch — nothing is
/// lost, nothing is run again.
async fn a_killed_write_back_task_loses_nothing(app: TestApp) {
    let ids = noop_runs(&app, "killed", 3).await;
    let shared = Engine::new(app.db.clone(), engine_config("node-a")).shared();
    let finished = finished_attempts(&shared, 3).await;
    let (writes, backlog) = write_back::Backlog::channel(8);
    let health = Arc::new(EngineHealth::default());
    let done = CancellationToken::new();
    let writer = tokio::spawn({
        let (shared, health, done) = (shared.clone(), health.clone(), done.clone());
        async move {
            supervise("write-back", &health, &done, || {
                write_back::run(shared.clone(), backlog.clone())
            })
            .await
        }
    });
    // The database busy with another writer: the batch waits inside the write-back.
    let blocker = sea_orm::TransactionTrait::begin(&app.db).await.unwrap();
    let hold = match app.db.get_database_backend() {
        DatabaseBackend::Postgres => "LOCK TABLE jobs IN EXCLUSIVE MODE",
        _ => "UPDATE settings SET value = value WHERE 1 = 0",
    };
    blocker.execute_unprepared(hold).await.unwrap();
    for f in finished {
        writes.send(f).await.unwrap();
    }
    // Taken out of the channel means in the task's hands: wait until it has one, which it
    // then holds while it waits for the database.
    while writes.capacity() + 3 == writes.max_capacity() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(health.abort("write-back"), "the task was running");
    blocker.rollback().await.unwrap();
    for id in &ids {
        wait_for_status(
            &app.db,
            *id,
            &[RunStatus::Succeeded],
            Duration::from_secs(20),
        )
        .await;
        assert_eq!(
            attempts_of(&app.db, *id).await.len(),
            1,
            "run {id} ran once"
        );
    }
    assert_eq!(health.failure(), None, "one death is within the budget");
    drop(writes);
    done.cancel();
    writer.await.unwrap();
    assert_eq!(shared.leases.count(), 0);
}
on_both_backends!(a_killed_write_back_task_loses_nothing);

/// An engine task that keeps dying is given up on: the engine stops claiming, hands back what
/// runs (no retry spent, nothing left `running`), and `/readyz` says why.
async fn an_engine_that_cannot_keep_its_tasks_stops_and_says_so(app: TestApp) {
    disable_system_jobs(&app.db).await;
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let job = define(
        &app.db,
        shell(
            "long",
            &format!("echo $$ > {}; sleep 60", pidfile.display()),
        ),
    )
    .await;
    let long = runs::create_manual(&app.db, job.id, Utc::now())
        .await
        .unwrap();
    let health = app.engine_health.clone();
    let pid = wait_for_file(&pidfile, Duration::from_secs(20)).await;
    let client = app.client();
    assert_eq!(
        client
            .get(app.url("/readyz"))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    for killed in 1..=server::engine::supervise::RESTARTS as u64 + 1 {
        // Each time the task is running again, kill it.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while health.starts("trigger") < killed {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the trigger was not started again"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(health.abort("trigger"));
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    let why = loop {
        if let Some(why) = health.failure() {
            break why;
        }
        assert!(tokio::time::Instant::now() < deadline, "not given up on");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(why.contains("trigger task died"), "{why}");
    let handed = wait_for_status(
        &app.db,
        long.id,
        &[RunStatus::RetryWait, RunStatus::Pending],
        Duration::from_secs(20),
    )
    .await;
    assert_eq!(handed.handbacks, 1, "handed back, no retry spent");
    assert!(ended(&pid), "its process is gone");
    let ready = client.get(app.url("/readyz")).send().await.unwrap();
    assert_eq!(ready.status(), 503);
    assert!(ready.text().await.unwrap().contains("engine stopped"));
}
on_both_backends!(
    an_engine_that_cannot_keep_its_tasks_stops_and_says_so,
    |config, workers| {
        workers.engine = true;
        config.grace_seconds = 1;
    }
);

/// Cancelling a running run stops its attempt first and only then lets the job's next run
/// start: the two never overlap.
async fn a_cancelled_run_holds_its_lane_until_its_attempt_has_stopped(app: TestApp) {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let mut input = shell(
        "cancelled",
        &format!("echo $$ >> {}; sleep 60", pidfile.display()),
    );
    input.overlap = app::domain::job::Overlap::Queue.as_str().into();
    let job = define(&app.db, input).await;
    let first = runs::create_manual(&app.db, job.id, Utc::now())
        .await
        .unwrap();
    let second = runs::create_manual(&app.db, job.id, Utc::now())
        .await
        .unwrap();
    let engine = start(&app.db, engine_config("node-a"));
    let pid = wait_for_file(&pidfile, Duration::from_secs(10)).await;
    let asked = runs::cancel(&app.db, first.id, &crate::helpers::TESTER, Utc::now())
        .await
        .unwrap();
    assert_eq!(
        asked.status,
        RunStatus::Running,
        "asked to stop, still holding its lane"
    );
    assert!(asked.cancel_requested_at.is_some());
    let shown = runs::get(&app.db, first.id).await.unwrap().unwrap();
    assert_eq!(
        shown.cancel_requested_at, asked.cancel_requested_at,
        "the run page and the API say it is being cancelled"
    );
    assert_eq!(run(&app, second.id).await.status, RunStatus::Pending);
    let cancelled = wait_for_status(
        &app.db,
        first.id,
        &[RunStatus::Cancelled],
        Duration::from_secs(10),
    )
    .await;
    assert!(
        ended(pid.lines().next().unwrap()),
        "stopped before anything else"
    );
    wait_for_status(
        &app.db,
        second.id,
        &[RunStatus::Running],
        Duration::from_secs(10),
    )
    .await;
    let stopped = attempts_of(&app.db, first.id).await[0].clone();
    let next = attempts_of(&app.db, second.id).await[0].clone();
    assert_eq!(stopped.outcome, Some(Outcome::Interrupted));
    assert!(
        next.started_at >= stopped.finished_at.unwrap()
            && next.started_at >= cancelled.finished_at.unwrap(),
        "the next run started {} before the cancelled one stopped {:?}",
        next.started_at,
        stopped.finished_at
    );
    runs::cancel(&app.db, second.id, &crate::helpers::TESTER, Utc::now())
        .await
        .unwrap();
    wait_for_status(
        &app.db,
        second.id,
        &[RunStatus::Cancelled],
        Duration::from_secs(10),
    )
    .await;
    engine.stop().await;
}
on_both_backends!(a_cancelled_run_holds_its_lane_until_its_attempt_has_stopped);

/// Saving a job whose tick has come but is not recorded yet keeps that tick.
async fn an_edit_keeps_a_due_tick(app: TestApp) {
    disable_system_jobs(&app.db).await;
    let mut input = base("edited");
    input.kind = app::domain::job::Kind::Builtin.as_str().into();
    input.cron = "0 * * * * *".into();
    let spec = app::domain::job::JobSpec::parse(&input).unwrap();
    let defined = Utc::now() - chrono::Duration::minutes(5);
    let row = jobs::create(&app.db, &spec, defined).await.unwrap();
    let due = row.next_fire_at.unwrap();
    assert!(due <= Utc::now());
    input.description = "edited while its tick was due".into();
    let spec = app::domain::job::JobSpec::parse(&input).unwrap();
    let saved = jobs::save(
        &app.db,
        Some(row.id),
        &spec,
        &crate::helpers::TESTER,
        &app.secret_key,
        Utc::now(),
    )
    .await
    .unwrap();
    assert_eq!(saved.next_fire_at, Some(due), "the due tick is kept");
    server::engine::trigger::enqueue_due_ticks(&app.db, Utc::now(), Duration::from_secs(600))
        .await
        .unwrap();
    let ticks: Vec<_> = job_run::Entity::find()
        .filter(job_run::Column::JobId.eq(row.id))
        .all(&app.db)
        .await
        .unwrap()
        .into_iter()
        .filter_map(|r| r.cron_tick)
        .collect();
    assert!(ticks.contains(&due), "{ticks:?} lacks {due}");
}
on_both_backends!(an_edit_keeps_a_due_tick);

/// A flood of due ticks and retries does not keep a run started by hand waiting: it is in the
/// first claim.
async fn a_run_started_by_hand_gets_its_share_of_a_busy_claim(app: TestApp) {
    disable_system_jobs(&app.db).await;
    let now = Utc::now();
    for i in 0..12 {
        let job = define(&app.db, noop_job(&format!("flood-{i}"))).await;
        let mut tick = crate::helpers::run_row(job.id, RunStatus::Pending, now);
        tick.trigger = Set(app::domain::run::Trigger::Cron);
        tick.cron_tick = Set(Some(now - chrono::Duration::seconds(i)));
        tick.due_at = Set(Some(now - chrono::Duration::seconds(60 + i)));
        crate::helpers::insert_run(&app.db, tick).await;
    }
    let by_hand = define(&app.db, noop_job("by-hand")).await;
    let manual = runs::create_manual(&app.db, by_hand.id, now).await.unwrap();
    let shared = Engine::new(app.db.clone(), engine_config("node-a")).shared();
    let claimed = claim::claim_due(&shared, Utc::now(), 4).await.unwrap();
    assert_eq!(claimed.len(), 4);
    assert!(
        claimed.iter().any(|c| c.run.id == manual.id),
        "the manual run waits behind the ticks"
    );
}
on_both_backends!(a_run_started_by_hand_gets_its_share_of_a_busy_claim);

/// A window that opens between two claims holds from its first moment, whatever the cache of
/// pauses read a moment before.
async fn a_window_holds_from_its_first_moment(app: TestApp) {
    disable_system_jobs(&app.db).await;
    let now = Utc::now();
    let opens = now + chrono::Duration::seconds(30);
    maintenance::schedule(
        &app.db,
        maintenance::NewWindow {
            starts_at: opens,
            ends_at: None,
            reason: "deploy".into(),
            tag: None,
        },
        &app::services::audit::Actor::named("alice"),
        now,
    )
    .await
    .unwrap();
    let job = define(&app.db, noop_job("ticking")).await;
    let mut tick = crate::helpers::run_row(job.id, RunStatus::Pending, now);
    tick.trigger = Set(app::domain::run::Trigger::Cron);
    tick.cron_tick = Set(Some(now));
    tick.due_at = Set(Some(now));
    crate::helpers::insert_run(&app.db, tick).await;
    let shared = Engine::new(app.db.clone(), engine_config("node-a")).shared();
    // Before: nothing paused (and the cache now holds that).
    assert!(!shared.pauses.get(&app.db, now).await.unwrap().all);
    assert!(
        claim::claim_due(&shared, opens + chrono::Duration::milliseconds(1), 10)
            .await
            .unwrap()
            .is_empty(),
        "claimed inside the window"
    );
}
on_both_backends!(a_window_holds_from_its_first_moment);

/// What a command prints is stored whatever it is — a NUL byte and invalid UTF-8 included —
/// on both databases, with a note saying what was replaced.
async fn odd_output_is_stored(app: TestApp) {
    let job = define(&app.db, shell("odd", r"printf 'a\000b\377'")).await;
    let (_, finished) = crate::engine::run_to_end(&app.db, job.id, Duration::from_secs(20)).await;
    assert_eq!(finished.status, RunStatus::Succeeded);
    let attempt = job_attempt::Entity::find()
        .filter(job_attempt::Column::RunId.eq(finished.id))
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        attempt.output_tail.as_deref(),
        Some(
            "a\u{2400}b\u{FFFD}\n(Bulwark: NUL bytes are shown as \u{2400}, invalid UTF-8 as \u{FFFD})"
        )
    );
}
on_both_backends!(odd_output_is_stored);

/// A claim reads a job's recent durations from the database once; after that it reads memory
/// however old the entry, and an old entry is read again only when asked, by one caller at a
/// time — the read that, inside the claim's transaction, grew with the tables under
/// `bulwark bench soak`.
async fn durations_are_read_again_outside_the_claim(app: TestApp) {
    let ids = noop_runs(&app, "history", 1).await;
    let shared = Engine::new(app.db.clone(), engine_config("node-a")).shared();
    let mut parts = vec![finished_attempts(&shared, 1).await];
    write_back::write(&shared, &mut parts).await;
    let job_id = run(&app, ids[0]).await.job_id;
    let attempt = attempts_of(&app.db, ids[0]).await.remove(0);
    let stored = attempt.duration_ms.unwrap() as u64;

    let histories = server::engine::cache::Histories::with_ttl(Duration::ZERO);
    assert_eq!(
        histories.recent(&app.db, job_id, 20).await.unwrap(),
        [stored]
    );
    // Another node's view of the same success, changed behind this node's back.
    job_attempt::Entity::update_many()
        .col_expr(job_attempt::Column::DurationMs, 987_654.into())
        .filter(job_attempt::Column::Id.eq(attempt.id))
        .exec(&app.db)
        .await
        .unwrap();
    assert_eq!(
        histories.recent(&app.db, job_id, 20).await.unwrap(),
        [stored],
        "an entry held is not read again by a claim"
    );
    let stale = histories.take_stale(&[job_id, job_id + 1000]);
    assert_eq!(stale, [(job_id, 20)], "only a job held is read again");
    assert!(
        histories.take_stale(&[job_id]).is_empty(),
        "one read at a time"
    );
    histories.reread(&app.db, stale).await;
    assert_eq!(
        histories.recent(&app.db, job_id, 20).await.unwrap(),
        [987_654]
    );
    histories.record(job_id, 5);
    assert_eq!(
        histories.recent(&app.db, job_id, 20).await.unwrap(),
        [5, 987_654]
    );
}
on_both_backends!(durations_are_read_again_outside_the_claim);

/// The reads the engine repeats for every job all day probe an index and stop, however long
/// the job's history: SQLite's plan for a job's recent durations walks its runs newest first
/// and sorts nothing (sorting by the attempts' end read every attempt the job ever had, and
/// `bulwark bench soak` saw lateness creep with it). The plan is asked of SQLite itself, on the
/// real schema.
#[tokio::test(flavor = "multi_thread")]
async fn a_jobs_recent_durations_do_not_read_its_whole_history() {
    use sea_orm::{QueryTrait, Statement};

    let app = TestApp::sqlite_with(|_, _| {}).await;
    let query = runs::recent_success_query(7, 20).build(DatabaseBackend::Sqlite);
    let plan = app
        .db
        .query_all_raw(Statement::from_sql_and_values(
            DatabaseBackend::Sqlite,
            format!("EXPLAIN QUERY PLAN {}", query.sql),
            query.values.map(|v| v.0).unwrap_or_default(),
        ))
        .await
        .unwrap()
        .iter()
        .map(|row| row.try_get::<String>("", "detail").unwrap())
        .collect::<Vec<_>>();
    assert!(
        plan.iter()
            .all(|step| !step.contains("TEMP B-TREE") && !step.starts_with("SCAN")),
        "{plan:#?}"
    );
    assert!(
        plan.iter().any(|step| step.contains("idx_job_runs_job_id")),
        "{plan:#?}"
    );
}
