//! The engine under faults: a node cut off from its database, a panicking task, a lost lease,
//! a shutdown in the middle of an attempt, a dispatcher with nothing it may claim, a long
//! outage, a skewed clock, recoveries racing each other, a command that hangs silently.
//! Each of these broke a promise of the engine once; each test shows it holds now.

use std::collections::BTreeMap;
use std::time::Duration;

use app::domain::job::{JobInput, JobSpec, Kind, Misfire};
use app::domain::run::{ErrorClass, Outcome, RunStatus, TimeoutKind};
use app::entities::{job, job_run};
use app::services::{jobs, runs};
use chrono::{TimeZone, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter};
use server::engine::{Engine, claim, recovery, trigger};

use crate::engine::{attempts_of, base, engine_config, start};
use crate::helpers::{TestApp, define, wait_for_status};
use crate::on_both_backends;
use crate::proxy::Proxy;

/// A command job running `sh -c script` with a long timeout.
pub(crate) fn shell(name: &str, script: &str) -> JobInput {
    let mut input = base(name);
    input.kind = Kind::Command.as_str().into();
    input.command_program = "sh".into();
    input.command_args = format!("-c\n{script}");
    input.timeout_static = "1m".into();
    input
}

/// Whether process `pid` has ended (gone, or a zombie waiting for a parent to reap it).
pub(crate) fn ended(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        // The state follows the command name in parentheses: "123 (sleep) Z ...".
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

/// Waits until `path` exists and is not empty; returns its trimmed text.
pub(crate) async fn wait_for_file(path: &std::path::Path, within: Duration) -> String {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && !text.trim().is_empty()
        {
            return text.trim().to_string();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Fault 1: a node that cannot renew its lease stops its attempt before another node may take
/// the run over — the two executions never overlap — and what it would write late is refused.
#[tokio::test(flavor = "multi_thread")]
async fn a_node_cut_off_from_the_database_stops_before_another_takes_over() {
    let Some(app) = TestApp::postgres("partition_fence").await else {
        eprintln!("BULWARK_TEST_POSTGRES_URL not set: skipped (a partition needs a network)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let lines = dir.path().join("lines");
    let grandchild = dir.path().join("grandchild");
    // Attempt 1 starts a background process and reports itself alive every 50 ms, forever;
    // attempt 2 just records its start and end.
    let script = format!(
        "echo \"start $BULWARK_ATTEMPT $(date +%s%N)\" >> {out}; \
         if [ \"$BULWARK_ATTEMPT\" = 1 ]; then sleep 120 & echo $! > {pid}; \
           while true; do echo \"alive 1 $(date +%s%N)\" >> {out}; sleep 0.05; done; fi; \
         echo \"end $BULWARK_ATTEMPT $(date +%s%N)\" >> {out}",
        out = lines.display(),
        pid = grandchild.display()
    );
    let job = define(&app.db, shell("partitioned", &script)).await;

    let proxy = Proxy::to_database(&app.database_url).await;
    let through_proxy = server::db::connect(&proxy.url_for(&app.database_url))
        .await
        .unwrap();

    let run = runs::create_manual(&app.db, job.id, Utc::now())
        .await
        .unwrap();
    let node_a = start(&through_proxy, engine_config("node-a"));
    wait_for_file(&grandchild, Duration::from_secs(10)).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    proxy.cut();
    let cut_at = tokio::time::Instant::now();
    let node_b = start(&app.db, engine_config("node-b"));

    let done = wait_for_status(
        &app.db,
        run.id,
        &[RunStatus::Succeeded, RunStatus::Dead],
        Duration::from_secs(30),
    )
    .await;
    let took_over_after = cut_at.elapsed();
    assert_eq!(done.status, RunStatus::Succeeded);
    assert_eq!(done.attempts, 2);

    // The two executions, as the commands themselves recorded them (given time to show an
    // attempt 1 that would still be running: it reports every 50 ms).
    tokio::time::sleep(Duration::from_millis(500)).await;
    let text = std::fs::read_to_string(&lines).unwrap();
    let mut by_attempt: BTreeMap<String, Vec<u128>> = BTreeMap::new();
    for line in text.lines() {
        let parts: Vec<&str> = line.split_whitespace().collect();
        by_attempt
            .entry(parts[1].to_string())
            .or_default()
            .push(parts[2].parse().unwrap());
    }
    let a_last = *by_attempt["1"].iter().max().unwrap();
    let b_first = *by_attempt["2"].iter().min().unwrap();
    println!(
        "partition: node-b took over {:.1} s after the cut; attempt 1 last alive {:.0} ms before attempt 2 started",
        took_over_after.as_secs_f64(),
        (b_first - a_last) as f64 / 1e6
    );
    assert!(
        a_last < b_first,
        "the executions overlap: attempt 1 still alive {} ms after attempt 2 started",
        (a_last - b_first) / 1_000_000
    );
    let pid = std::fs::read_to_string(&grandchild).unwrap();
    assert!(
        ended(pid.trim()),
        "the cut-off attempt's background process {pid} was killed with its group"
    );

    let attempts = attempts_of(&app.db, run.id).await;
    assert_eq!(attempts.len(), 2);
    assert_eq!(attempts[0].node, "node-a");
    assert_eq!(attempts[0].outcome, Some(Outcome::Interrupted));
    assert!(
        attempts[0]
            .message
            .as_deref()
            .unwrap()
            .contains("stopped renewing")
    );
    assert_eq!(attempts[1].node, "node-b");
    assert_eq!(attempts[1].outcome, Some(Outcome::Succeeded));

    // The network heals: whatever node-a had in flight arrives late and changes nothing.
    proxy.heal();
    tokio::time::sleep(Duration::from_secs(2)).await;
    node_a.stop().await;
    node_b.stop().await;
    let after = job_run::Entity::find_by_id(run.id)
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(after.status, RunStatus::Succeeded);
    assert_eq!(after.attempts, 2);
    assert_eq!(after.lease_owner, None);
    assert_eq!(attempts_of(&app.db, run.id).await, attempts);
    let alive_lines = text.lines().count();
    assert_eq!(
        std::fs::read_to_string(&lines).unwrap().lines().count(),
        alive_lines,
        "nothing of attempt 1 ran after the heal"
    );
}

/// Fault 2: a panic in the work ends the attempt as a transient failure with the panic's
/// message; the run follows its retry policy instead of staying stuck.
async fn a_panicking_attempt_fails_and_follows_its_policy(app: TestApp) {
    let mut input = base("panics");
    input.kind = Kind::Builtin.as_str().into();
    input.builtin_task = "demo".into();
    input.builtin_params = "sleep=10ms\npanic=true".into();
    input.retry.max_retries = "1".into();
    let job = define(&app.db, input).await;
    let run = runs::create_manual(&app.db, job.id, Utc::now())
        .await
        .unwrap();
    let engine = start(&app.db, engine_config("node-a"));
    let done = wait_for_status(
        &app.db,
        run.id,
        &[RunStatus::Dead, RunStatus::Succeeded],
        Duration::from_secs(15),
    )
    .await;
    engine.stop().await;
    assert_eq!(done.status, RunStatus::Dead);
    assert_eq!(done.lease_owner, None, "the lease ended with the attempt");
    let attempts = attempts_of(&app.db, run.id).await;
    assert_eq!(attempts.len(), 2, "retried once, as the policy says");
    for a in &attempts {
        assert_eq!(a.outcome, Some(Outcome::Failed));
        assert_eq!(a.error_class, Some(ErrorClass::Transient));
        let message = a.message.as_deref().unwrap();
        assert!(
            message.contains("the attempt panicked: demo panic"),
            "{message}"
        );
    }
}
on_both_backends!(a_panicking_attempt_fails_and_follows_its_policy);

/// Fault 4 (and 1, on one database): a run taken over by another node stops its attempt at
/// the next renewal, kills its whole process group, and writes nothing.
async fn a_lost_lease_stops_the_attempt_and_kills_its_group(app: TestApp) {
    let dir = tempfile::tempdir().unwrap();
    let grandchild = dir.path().join("grandchild");
    let job = define(
        &app.db,
        shell(
            "taken-over",
            &format!("sleep 120 & echo $! > {}; wait", grandchild.display()),
        ),
    )
    .await;
    let run = runs::create_manual(&app.db, job.id, Utc::now())
        .await
        .unwrap();
    let engine = start(&app.db, engine_config("node-a"));
    let pid = wait_for_file(&grandchild, Duration::from_secs(10)).await;
    // Another node took the run over (as recovery does after an expiry).
    job_run::Entity::update_many()
        .col_expr(job_run::Column::LeaseOwner, Expr::value("node-x"))
        .filter(job_run::Column::Id.eq(run.id))
        .exec(&app.db)
        .await
        .unwrap();
    // Renewals come every second (a third of the 3 s lease).
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !ended(&pid) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the attempt's background process {pid} outlived the lost lease"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    engine.stop().await;
    let after = job_run::Entity::find_by_id(run.id)
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(after.status, RunStatus::Running, "node-a wrote nothing");
    assert_eq!(after.lease_owner.as_deref(), Some("node-x"));
    let attempts = attempts_of(&app.db, run.id).await;
    assert_eq!(attempts.len(), 1);
    assert_eq!(
        attempts[0].outcome, None,
        "left for the new owner to record"
    );
}
on_both_backends!(a_lost_lease_stops_the_attempt_and_kills_its_group);

/// Faults 4 and 8: at the end of the shutdown grace the attempt's whole process group is
/// killed, and the hand-back does not spend a retry — a run on its last retry survives a
/// rolling deploy.
async fn a_handed_back_attempt_spends_no_retry_and_leaves_no_process(app: TestApp) {
    let dir = tempfile::tempdir().unwrap();
    let grandchild = dir.path().join("grandchild");
    // Attempt 1 fails transiently (exit 75); attempt 2 is the last the policy allows, and is
    // running when the node shuts down; any later attempt succeeds.
    let script = format!(
        "if [ \"$BULWARK_ATTEMPT\" = 1 ]; then exit 75; fi; \
         if [ \"$BULWARK_ATTEMPT\" = 2 ]; then sleep 120 & echo $! > {}; wait; fi; exit 0",
        grandchild.display()
    );
    let mut input = shell("deployed-under", &script);
    input.retry.max_retries = "1".into();
    let job = define(&app.db, input).await;
    let run = runs::create_manual(&app.db, job.id, Utc::now())
        .await
        .unwrap();
    let engine = start(&app.db, engine_config("node-a"));
    let pid = wait_for_file(&grandchild, Duration::from_secs(10)).await;
    engine.stop().await;
    assert!(
        ended(&pid),
        "the handed-back attempt's background process {pid} was killed"
    );
    let handed_back = job_run::Entity::find_by_id(run.id)
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        handed_back.status,
        RunStatus::RetryWait,
        "not dead: the hand-back spent no retry"
    );
    let attempts = attempts_of(&app.db, run.id).await;
    assert_eq!(attempts.len(), 2);
    assert!(attempts[0].spent_retry);
    assert_eq!(attempts[1].outcome, Some(Outcome::Interrupted));
    assert!(!attempts[1].spent_retry);

    // `runs list --json` says so to other tools.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_bulwark"))
        .args(["runs", "list", "--job", "deployed-under", "--json"])
        .current_dir(dir.path())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("DATABASE_URL", &app.database_url)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let listed_attempts = &listed[0]["attempts"];
    assert_eq!(listed_attempts[0]["spent_retry"], true);
    assert_eq!(listed_attempts[1]["spent_retry"], false);
    assert_eq!(listed_attempts[1]["outcome"], "interrupted");

    // The next process runs it once more, and it succeeds.
    let engine = start(&app.db, engine_config("node-b"));
    let done = wait_for_status(
        &app.db,
        run.id,
        &[RunStatus::Succeeded, RunStatus::Dead],
        Duration::from_secs(10),
    )
    .await;
    engine.stop().await;
    assert_eq!(done.status, RunStatus::Succeeded);
    assert_eq!(done.attempts, 3);
}
on_both_backends!(a_handed_back_attempt_spends_no_retry_and_leaves_no_process);

/// Fault 5: with nothing it may claim — every permit taken, or the only due work behind a run
/// of the same job — the dispatcher sleeps instead of spinning.
async fn the_dispatcher_sleeps_when_nothing_can_be_claimed(app: TestApp) {
    crate::helpers::disable_system_jobs(&app.db).await;
    let mut long = shell("long", "sleep 3");
    long.overlap = app::domain::job::Overlap::Queue.as_str().into();
    let long = define(&app.db, long).await;
    let other = define(&app.db, shell("other", "true")).await;
    // Every permit taken: one permit, held by `long`, while `other` is due.
    let mut config = engine_config("node-a");
    config.concurrency = 1;
    let first = runs::create_manual(&app.db, long.id, Utc::now())
        .await
        .unwrap();
    let engine = start(&app.db, config);
    wait_for_status(
        &app.db,
        first.id,
        &[RunStatus::Running],
        Duration::from_secs(10),
    )
    .await;
    runs::create_manual(&app.db, other.id, Utc::now())
        .await
        .unwrap();
    let before = engine
        .shared
        .dispatch_rounds
        .load(std::sync::atomic::Ordering::Relaxed);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let no_permit = engine
        .shared
        .dispatch_rounds
        .load(std::sync::atomic::Ordering::Relaxed)
        - before;
    engine.stop().await;

    // A permit free, but the due runs queued behind a running run of the same job.
    let engine = start(&app.db, engine_config("node-b"));
    let running = runs::create_manual(&app.db, long.id, Utc::now())
        .await
        .unwrap();
    wait_for_status(
        &app.db,
        running.id,
        &[RunStatus::Running],
        Duration::from_secs(10),
    )
    .await;
    for _ in 0..3 {
        runs::create_manual(&app.db, long.id, Utc::now())
            .await
            .unwrap();
    }
    let before = engine
        .shared
        .dispatch_rounds
        .load(std::sync::atomic::Ordering::Relaxed);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let queued = engine
        .shared
        .dispatch_rounds
        .load(std::sync::atomic::Ordering::Relaxed)
        - before;
    engine.stop().await;
    println!(
        "dispatcher rounds in 2 s: {no_permit} with no permit free, {queued} with the due runs queued behind a running one"
    );
    // The poll is 50 ms here: about 40 rounds in 2 s, plus a wake-up per event. A spinning
    // dispatcher makes thousands.
    assert!(no_permit < 200, "{no_permit} rounds with no permit free");
    assert!(queued < 200, "{queued} rounds with nothing claimable");
}
on_both_backends!(the_dispatcher_sleeps_when_nothing_can_be_claimed);

/// Fault 6: after an outage of any length the misfire policy runs the newest missed tick once
/// and records the latest missed ones as skipped — once, however many passes look.
async fn a_long_outage_runs_the_newest_missed_tick_once(app: TestApp) {
    // Every second, defined thirty hours before now: 108,000 ticks missed, planned in one
    // pass that steps back from now instead of counting them.
    let now =
        Utc.with_ymd_and_hms(2026, 11, 30, 12, 0, 0).unwrap() + chrono::Duration::milliseconds(700);
    for (name, misfire) in [("every-second", Misfire::RunOnce), ("skips", Misfire::Skip)] {
        let mut input = base(name);
        input.cron = "* * * * * *".into();
        input.kind = Kind::Builtin.as_str().into();
        input.misfire = misfire.as_str().into();
        let spec = JobSpec::parse(&input).unwrap();
        jobs::create(&app.db, &spec, now - chrono::Duration::hours(30))
            .await
            .unwrap();
    }
    let misfire_after = Duration::from_millis(500);
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
                .count(&db)
                .await
                .unwrap()
        }
    };
    let pass = trigger::enqueue_due_ticks(&app.db, now, misfire_after)
        .await
        .unwrap();
    assert_eq!(count("every-second", RunStatus::Pending).await, 1);
    assert_eq!(count("every-second", RunStatus::Skipped).await, 99);
    assert_eq!(count("skips", RunStatus::Pending).await, 0);
    assert_eq!(count("skips", RunStatus::Skipped).await, 100);
    assert_eq!(pass.inserted, 200);
    let newest = job_run::Entity::find()
        .filter(job_run::Column::Status.eq(RunStatus::Pending))
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        newest.scheduled_for,
        Utc.with_ymd_and_hms(2026, 11, 30, 12, 0, 0).unwrap()
    );
    // Other passes — other nodes, later loops — find nothing more to do.
    for _ in 0..3 {
        let again = trigger::enqueue_due_ticks(&app.db, now, misfire_after)
            .await
            .unwrap();
        assert_eq!(again.inserted, 0);
    }
    assert_eq!(count("every-second", RunStatus::Pending).await, 1);
}
on_both_backends!(a_long_outage_runs_the_newest_missed_tick_once);

/// Fault 9: recoveries running at once — several nodes' sweeps, a busy SQLite — each take
/// over a share or nothing; none fails, and every run is taken over exactly once.
async fn concurrent_recoveries_take_each_run_once(app: TestApp) {
    let mut input = base("crowd");
    input.kind = Kind::Builtin.as_str().into();
    input.overlap = app::domain::job::Overlap::Queue.as_str().into();
    let mut ids = Vec::new();
    for i in 0..30 {
        let job = define(
            &app.db,
            JobInput {
                name: format!("crowd-{i}"),
                ..input.clone()
            },
        )
        .await;
        ids.push(
            runs::create_manual(&app.db, job.id, Utc::now())
                .await
                .unwrap()
                .id,
        );
    }
    let dead_node = Engine::new(app.db.clone(), engine_config("node-dead")).shared();
    let claimed = claim::claim_due(&dead_node, Utc::now(), 100).await.unwrap();
    assert_eq!(claimed.len(), 30);
    // Half of them lost their attempt rows (an older engine died between claim and insert).
    app.db
        .execute_unprepared(&format!(
            "DELETE FROM job_attempts WHERE run_id IN ({})",
            ids[..15]
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(",")
        ))
        .await
        .unwrap();

    crate::helpers::lapse_leases(&app.db).await;
    let later = Utc::now();
    let mut sweeps = tokio::task::JoinSet::new();
    for n in 0..4 {
        let db = app.db.clone();
        let node = Engine::new(db.clone(), engine_config(&format!("node-{n}"))).shared();
        sweeps.spawn(async move {
            recovery::recover_expired(&db, &node.specs, later, app::i18n::Locale::english()).await
        });
    }
    let mut total = 0;
    while let Some(result) = sweeps.join_next().await {
        total += result
            .unwrap()
            .expect("a sweep never fails for a lost race");
    }
    // PostgreSQL lets one sweep at a time through; the others skip their turn.
    let mut passes = 0;
    while total < 30 && passes < 5 {
        total += recovery::recover_expired(
            &app.db,
            &dead_node.specs,
            later,
            app::i18n::Locale::english(),
        )
        .await
        .unwrap();
        passes += 1;
    }
    assert_eq!(total, 30, "each run taken over once");
    for id in ids {
        let attempts = attempts_of(&app.db, id).await;
        assert_eq!(attempts.len(), 1, "run {id}: one attempt row");
        assert_eq!(attempts[0].outcome, Some(Outcome::Interrupted));
        let run = job_run::Entity::find_by_id(id)
            .one(&app.db)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(run.status, RunStatus::RetryWait);
    }
}
on_both_backends!(concurrent_recoveries_take_each_run_once);

/// Progress, not just time: a command that prints nothing for its stall timeout, or a
/// built-in that reports no progress, ends as a stalled timeout long before its time limit;
/// one that keeps talking runs to its end.
async fn a_silent_attempt_ends_as_stalled(app: TestApp) {
    let stall = |mut input: JobInput| {
        input.timeout_stall = "500ms".into();
        input.timeout_static = "20s".into();
        input.retry.max_retries = "1".into();
        input
    };
    let silent = define(&app.db, stall(shell("silent", "echo started; sleep 30"))).await;
    let talking = define(
        &app.db,
        stall(shell(
            "talking",
            "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo $i; sleep 0.1; done",
        )),
    )
    .await;
    let quiet_task = define(
        &app.db,
        stall(JobInput {
            kind: Kind::Builtin.as_str().into(),
            builtin_task: "demo".into(),
            builtin_params: "sleep=3s\nprogress=false\nfailure_rate=0".into(),
            ..base("quiet-task")
        }),
    )
    .await;
    let busy_task = define(
        &app.db,
        stall(JobInput {
            kind: Kind::Builtin.as_str().into(),
            builtin_task: "demo".into(),
            builtin_params: "sleep=1200ms\nfailure_rate=0".into(),
            ..base("busy-task")
        }),
    )
    .await;
    let mut ids = Vec::new();
    for job in [&silent, &talking, &quiet_task, &busy_task] {
        ids.push(
            runs::create_manual(&app.db, job.id, Utc::now())
                .await
                .unwrap()
                .id,
        );
    }
    let engine = start(&app.db, engine_config("node-a"));
    let mut ended = Vec::new();
    for id in &ids {
        ended.push(
            wait_for_status(
                &app.db,
                *id,
                &[RunStatus::Succeeded, RunStatus::Dead],
                Duration::from_secs(20),
            )
            .await,
        );
    }
    engine.stop().await;
    for (i, name) in [(0, "silent"), (2, "quiet-task")] {
        assert_eq!(ended[i].status, RunStatus::Dead, "{name}");
        for a in attempts_of(&app.db, ids[i]).await {
            assert_eq!(a.outcome, Some(Outcome::TimedOut), "{name}");
            assert_eq!(a.timeout_kind, Some(TimeoutKind::Stalled), "{name}");
            assert!(a.duration_ms.unwrap() < 2_500, "{name}: ended at the stall");
            assert!(
                a.message
                    .as_deref()
                    .unwrap()
                    .contains("stall timeout of 500 ms"),
                "{name}: {:?}",
                a.message
            );
        }
    }
    for (i, name) in [(1, "talking"), (3, "busy-task")] {
        assert_eq!(ended[i].status, RunStatus::Succeeded, "{name}");
        assert_eq!(ended[i].attempts, 1, "{name}");
    }
}
on_both_backends!(a_silent_attempt_ends_as_stalled);

/// Fault 7: the command line keeps time by the database like the nodes do. A machine whose
/// clock runs an hour ahead would otherwise schedule an applied job's first tick an hour late
/// and date a manual run in the future.
#[tokio::test(flavor = "multi_thread")]
async fn the_command_line_keeps_time_by_the_database() {
    let Some(app) = TestApp::postgres("cli_clock").await else {
        eprintln!(
            "BULWARK_TEST_POSTGRES_URL not set: skipped (SQLite shares this machine's clock)"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("jobs.toml");
    std::fs::write(
        &file,
        "[[job]]\nname = \"minutely\"\ncron = \"0 * * * * *\"\nkind = \"builtin\"\ntask = \"noop\"\n",
    )
    .unwrap();
    let bulwark = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_bulwark"))
            .args(args)
            .current_dir(dir.path())
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("DATABASE_URL", &app.database_url)
            .env("BULWARK_SECRET_KEY_FILE", app.secret_key_file())
            .envs(crate::process::skewed_clock("+1h"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    bulwark(&["jobs", "apply", file.to_str().unwrap()]);
    bulwark(&["jobs", "run", "minutely"]);

    let now = Utc::now();
    let job = job::Entity::find()
        .filter(job::Column::Name.eq("minutely"))
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    let next = job.next_fire_at.expect("the next tick is set");
    assert!(
        next <= now + chrono::Duration::minutes(2),
        "first tick at {next}, an hour late by the skewed clock"
    );
    assert!(
        (job.updated_at - now).num_minutes().abs() < 2,
        "{}",
        job.updated_at
    );
    let run = job_run::Entity::find()
        .filter(job_run::Column::JobId.eq(job.id))
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    assert!(
        (run.created_at - now).num_minutes().abs() < 2,
        "the manual run is dated {} (now {now})",
        run.created_at
    );
}
