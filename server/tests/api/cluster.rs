//! Several instances on one PostgreSQL: four real `bulwark serve` processes share jobs that
//! fire every second (half of them only on the three labelled `role=worker`); one runs with its clock ten seconds ahead, one is cut off from the
//! database for longer than a lease and reconnected, one is SIGKILLed mid-run and started
//! again later, one stops gracefully. Then every (job, tick) must have exactly one run, every
//! run must have finished, and neither the killed nor the cut-off process may have written an
//! attempt after it lost its lease.
//!
//! `make test` runs a short version (20 jobs, 16 s). `make bench-cluster` runs the long one
//! (BULWARK_CLUSTER_JOBS=200, BULWARK_CLUSTER_SECONDS=60) and prints the figures.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Child;
use std::time::{Duration, Instant};

use app::domain::run::{Outcome, RunStatus};
use app::entities::{job, job_attempt, job_run};
use chrono::{DateTime, Utc};
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter};

use crate::helpers::TestApp;
use crate::process::{bulwark, output, serve_with};
use crate::proxy::Proxy;

/// Four attempts at a time per node: a tick's runs spread over every node (with the default
/// sixteen, the first node to wake would take them all), so each node has attempts open to
/// kill or cut off.
const FEW_PERMITS: (&str, &str) = ("BULWARK_CONCURRENCY", "4");

/// Every node but node-a carries it; every other job asks for it (`run_on`), so the
/// invariants hold with the claims filtered by labels too.
const WORKER: (&str, &str) = ("BULWARK_NODE_LABELS", "role=worker");

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `count` jobs firing every second, each attempt taking `sleep`.
fn jobs_file(count: u64, sleep: &str) -> String {
    (0..count)
        .map(|i| {
            let run_on = if i % 2 == 1 {
                "run_on = { role = \"worker\" }"
            } else {
                ""
            };
            format!(
                r#"
[[job]]
name = "every-second-{i:03}"
cron = "* * * * * *"
kind = "builtin"
task = "demo"
params = {{ failure_rate = "0", sleep = "{sleep}" }}
misfire = "run_once"
{run_on}
[job.retry]
first = "200ms"
multiplier = 2.0
max_retries = 3
jitter = "none"
"#
            )
        })
        .collect()
}

pub(crate) async fn wait_ready(addr: &str) {
    let client = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if let Ok(res) = client.get(format!("http://{addr}/readyz")).send().await
            && res.status() == 200
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("bulwark at {addr} did not become ready");
}

/// Waits until no run is pending, running or waiting to retry.
pub(crate) async fn until_drained(app: &TestApp, within: Duration) {
    let deadline = Instant::now() + within;
    loop {
        let open = job_run::Entity::find()
            .filter(job_run::Column::Status.is_in(RunStatus::ACTIVE.iter().copied()))
            .all(&app.db)
            .await
            .unwrap()
            .len();
        if open == 0 {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{open} runs still open after {within:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Whether `node` has an attempt open.
async fn has_open_attempt(app: &TestApp, node: &str) -> bool {
    !job_attempt::Entity::find()
        .filter(job_attempt::Column::Node.eq(node))
        .filter(job_attempt::Column::Outcome.is_null())
        .all(&app.db)
        .await
        .unwrap()
        .is_empty()
}

/// Stops `node` (SIGSTOP) while it has an attempt open, and returns when it stopped.
///
/// An attempt lasts 100 ms, less than seeing it open and sending a signal can take on a loaded
/// machine, so the node is frozen first, given time for what it had already sent to land, and
/// left frozen only if an attempt is still open then; otherwise it is thawed and the next
/// attempt is tried. The caller kills, cuts off or thaws it.
async fn freeze_mid_attempt(app: &TestApp, child: &mut Child, node: &str) -> DateTime<Utc> {
    loop {
        wait_for_open_attempt(app, node).await;
        kill(child, nix::sys::signal::Signal::SIGSTOP);
        tokio::time::sleep(Duration::from_millis(200)).await;
        let frozen_at = Utc::now();
        if has_open_attempt(app, node).await {
            return frozen_at;
        }
        kill(child, nix::sys::signal::Signal::SIGCONT);
    }
}

/// Waits until `node` has an attempt open (they last 100 ms).
async fn wait_for_open_attempt(app: &TestApp, node: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if has_open_attempt(app, node).await {
            return;
        }
        assert!(Instant::now() < deadline, "{node} never ran an attempt");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The test's `bulwark serve` processes, killed if the test ends early (a failed assertion
/// would otherwise leave them running, holding database connections).
struct Nodes(Vec<(String, Child)>);

impl std::ops::Deref for Nodes {
    type Target = Vec<(String, Child)>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for Nodes {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl Drop for Nodes {
    fn drop(&mut self) {
        for (_, child) in &mut self.0 {
            if matches!(child.try_wait(), Ok(None)) {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
}

pub(crate) fn kill(child: &mut Child, signal: nix::sys::signal::Signal) {
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), signal).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn instances_run_every_tick_once_through_a_kill_and_a_partition() {
    let Some(app) = TestApp::postgres("cluster_three_nodes").await else {
        eprintln!("BULWARK_TEST_POSTGRES_URL not set: skipped (one SQLite instance is the rule)");
        return;
    };
    let jobs = env_number("BULWARK_CLUSTER_JOBS", 20);
    let seconds = env_number("BULWARK_CLUSTER_SECONDS", 16);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("jobs.toml");
    std::fs::write(&file, jobs_file(jobs, "100ms")).unwrap();
    let (code, _, err) = output(bulwark(
        &app,
        dir.path(),
        &["jobs", "apply", file.to_str().unwrap()],
        &[],
    ));
    assert_eq!(code, 0, "{err}");

    let started = Utc::now();
    let mut nodes = Nodes(Vec::new());
    // node-c's clock runs ten seconds ahead — more than a lease, so without keeping time by
    // the database it would take over every other node's runs (libfaketime shifts the wall
    // clock only; timers keep the real monotonic clock).
    for (name, skew) in [("node-a", None), ("node-b", None), ("node-c", Some("+10s"))] {
        let env = match skew {
            Some(offset) => crate::process::skewed_clock(offset),
            None => Vec::new(),
        };
        let mut env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        env.push(FEW_PERMITS);
        if name != "node-a" {
            env.push(WORKER);
        }
        let (child, addr) = serve_with(&app, dir.path(), name, &env);
        wait_ready(&addr).await;
        nodes.push((name.to_string(), child));
    }

    // node-d reaches the database through a proxy that will stop forwarding.
    let proxy = Proxy::to_database(&app.database_url).await;
    let through_proxy = proxy.url_for(&app.database_url);
    let (child, addr) = serve_with(
        &app,
        dir.path(),
        "node-d",
        &[
            ("DATABASE_URL", through_proxy.as_str()),
            FEW_PERMITS,
            WORKER,
        ],
    );
    wait_ready(&addr).await;
    nodes.push(("node-d".into(), child));

    // Cut node-d off mid-attempt, for more than a lease (3 s): frozen with an attempt open,
    // cut, then thawed, so it finishes the attempt without a way to write it back.
    tokio::time::sleep(Duration::from_secs(seconds / 5)).await;
    let node_d = nodes.len() - 1;
    freeze_mid_attempt(&app, &mut nodes[node_d].1, "node-d").await;
    proxy.cut();
    let cut_at = Utc::now();
    kill(&mut nodes[node_d].1, nix::sys::signal::Signal::SIGCONT);

    // Kill node-b in the middle, while it is running attempts; bring it back later under a
    // new name so its old attempts can be told from the new ones.
    tokio::time::sleep(Duration::from_secs(seconds / 5)).await;
    // Kill it mid-attempt.
    let killed_at = freeze_mid_attempt(&app, &mut nodes[1].1, "node-b").await;
    kill(&mut nodes[1].1, nix::sys::signal::Signal::SIGKILL);
    nodes[1].1.wait().unwrap();
    tokio::time::sleep(Duration::from_secs(seconds / 4)).await;
    // node-d is reconnected once the others have taken over what it had open (on a loaded
    // machine that can take longer than the sleep above): what it had in flight arrives late.
    let deadline = Instant::now() + Duration::from_secs(60);
    while has_open_attempt(&app, "node-d").await {
        assert!(
            Instant::now() < deadline,
            "node-d's open attempts were never taken over while it was cut off"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    proxy.heal();
    let healed_at = Utc::now();
    // node-b comes back with its clock a second behind.
    let env = crate::process::skewed_clock("-1s");
    let mut env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    env.push(FEW_PERMITS);
    env.push(WORKER);
    let (child, addr) = serve_with(&app, dir.path(), "node-b-restarted", &env);
    wait_ready(&addr).await;
    nodes.push(("node-b-restarted".into(), child));
    // The nodes page shows the skew each node measured against the database.
    tokio::time::sleep(Duration::from_secs(6)).await;
    let skews: BTreeMap<String, Option<i64>> = app::entities::node::Entity::find()
        .all(&app.db)
        .await
        .unwrap()
        .into_iter()
        .map(|n| (n.node_id, n.clock_skew_ms))
        .collect();
    println!("  measured clock skew (ms): {skews:?}");
    let near = |node: &str, ms: i64| skews[node].is_some_and(|s| (s - ms).abs() < 300);
    assert!(
        near("node-a", 0) && near("node-c", 10_000) && near("node-b-restarted", -1000),
        "{skews:?}"
    );

    // A rolling deploy: node-a stops gracefully while runs are going; the others carry on.
    kill(&mut nodes[0].1, nix::sys::signal::Signal::SIGTERM);
    assert!(nodes[0].1.wait().unwrap().success(), "node-a exits cleanly");
    let remaining = seconds.saturating_sub(seconds * 2 / 5 + seconds / 4);
    tokio::time::sleep(Duration::from_secs(remaining.max(2))).await;

    // Stop new ticks, let what is running finish, then stop the nodes gracefully.
    app.db
        .execute_unprepared("UPDATE jobs SET enabled = false")
        .await
        .unwrap();
    let stopped_ticking = Utc::now();
    until_drained(&app, Duration::from_secs(60)).await;
    for (name, child) in nodes.iter_mut() {
        if name != "node-b" && name != "node-a" {
            kill(child, nix::sys::signal::Signal::SIGTERM);
            assert!(child.wait().unwrap().success(), "{name} exits cleanly");
        }
    }

    // The registry: node-a said goodbye, node-b fell silent at its kill (lost once 20 s pass).
    let registry: BTreeMap<String, app::entities::node::Model> =
        app::entities::node::Entity::find()
            .all(&app.db)
            .await
            .unwrap()
            .into_iter()
            .map(|n| (n.node_id.clone(), n))
            .collect();
    assert!(registry["node-a"].stopped_at.is_some());
    let b = &registry["node-b"];
    assert!(b.stopped_at.is_none() && b.heartbeat_at <= killed_at);
    assert_eq!(
        app::domain::node::NodeState::of(
            b.stopped_at,
            b.heartbeat_at,
            b.heartbeat_at + chrono::Duration::seconds(21)
        ),
        app::domain::node::NodeState::Lost
    );

    let job_names: BTreeMap<i64, String> = job::Entity::find()
        .all(&app.db)
        .await
        .unwrap()
        .into_iter()
        .map(|j| (j.id, j.name))
        .collect();
    let runs = job_run::Entity::find().all(&app.db).await.unwrap();
    let attempts = job_attempt::Entity::find().all(&app.db).await.unwrap();

    // Every (job, tick) once: duplicates are impossible by the unique index, so count misses:
    // every second from the first tick any job got to the last must be there for every job.
    let mut ticks: BTreeMap<i64, BTreeSet<DateTime<Utc>>> = BTreeMap::new();
    // Only the test's jobs: the system jobs (traffic-flush every 5 minutes) may tick too.
    for run in runs
        .iter()
        .filter(|r| job_names[&r.job_id].starts_with("every-second-"))
    {
        if let Some(tick) = run.cron_tick {
            assert!(
                ticks.entry(run.job_id).or_default().insert(tick),
                "duplicate tick"
            );
        }
    }
    let first = ticks
        .values()
        .filter_map(|t| t.first())
        .min()
        .copied()
        .unwrap();
    let last = ticks
        .values()
        .filter_map(|t| t.last())
        .max()
        .copied()
        .unwrap();
    let expected = (last - first).num_seconds() + 1;
    let mut misses = 0;
    for (job_id, seen) in &ticks {
        let mut at = first;
        while at <= last {
            if !seen.contains(&at) {
                misses += 1;
                eprintln!("missed: {} at {at}", job_names[job_id]);
            }
            at += chrono::Duration::seconds(1);
        }
    }
    assert_eq!(ticks.len() as u64, jobs, "every job ran");
    // The labelled jobs ran only where the label is.
    let run_job: BTreeMap<i64, i64> = runs.iter().map(|r| (r.id, r.job_id)).collect();
    let astray: Vec<&str> = attempts
        .iter()
        .filter(|a| a.node == "node-a")
        .map(|a| job_names[&run_job[&a.run_id]].as_str())
        .filter(|name| {
            name.strip_prefix("every-second-")
                .and_then(|n| n.parse::<u32>().ok())
                .is_some_and(|n| n % 2 == 1)
        })
        .collect();
    assert!(astray.is_empty(), "run_on jobs ran on node-a: {astray:?}");

    let unfinished: Vec<_> = runs
        .iter()
        .filter(|r| !matches!(r.status, RunStatus::Succeeded | RunStatus::Skipped))
        .map(|r| (r.id, r.status))
        .collect();

    // The killed node's attempts: those open when it died are closed by another node as
    // interrupted; none of its own write-backs lands after the kill.
    let late_writes: Vec<_> = attempts
        .iter()
        .filter(|a| a.node == "node-b" && a.outcome != Some(Outcome::Interrupted))
        .filter(|a| {
            a.finished_at
                .is_some_and(|f| f > killed_at + chrono::Duration::milliseconds(50))
        })
        .map(|a| a.id)
        .collect();
    let interrupted: Vec<&job_attempt::Model> = attempts
        .iter()
        .filter(|a| a.node == "node-b" && a.outcome == Some(Outcome::Interrupted))
        .collect();
    let takeover_s: Vec<f64> = interrupted
        .iter()
        .filter_map(|a| a.finished_at)
        .map(|f| (f - killed_at).num_milliseconds() as f64 / 1000.0)
        .collect();
    let mut per_run_success: BTreeMap<i64, usize> = BTreeMap::new();
    for a in attempts
        .iter()
        .filter(|a| a.outcome == Some(Outcome::Succeeded))
    {
        *per_run_success.entry(a.run_id).or_default() += 1;
    }
    let double_success = per_run_success.values().filter(|n| **n > 1).count();
    let mut per_node: BTreeMap<&str, usize> = BTreeMap::new();
    for a in &attempts {
        *per_node.entry(a.node.as_str()).or_default() += 1;
    }
    let elapsed = (stopped_ticking - started).num_milliseconds() as f64 / 1000.0;
    // The cut-off node: its attempts open at the cut were closed by others as interrupted;
    // none of its write-backs for attempts that ended while it was cut off landed (each was
    // fenced out when it arrived after the heal); it went back to work after the heal.
    let cut_interrupted: Vec<&job_attempt::Model> = attempts
        .iter()
        .filter(|a| a.node == "node-d" && a.outcome == Some(Outcome::Interrupted))
        .filter(|a| a.started_at <= cut_at)
        .collect();
    let cut_late_writes: Vec<_> = attempts
        .iter()
        .filter(|a| a.node == "node-d" && a.outcome != Some(Outcome::Interrupted))
        .filter(|a| {
            a.finished_at
                .is_some_and(|f| f > cut_at + chrono::Duration::milliseconds(50) && f < healed_at)
        })
        .map(|a| a.id)
        .collect();
    let back_to_work = attempts
        .iter()
        .filter(|a| a.node == "node-d" && a.started_at > healed_at)
        .count();
    // One execution at a time: each attempt of a run starts after the one before it ended.
    let mut by_run: BTreeMap<i64, Vec<&job_attempt::Model>> = BTreeMap::new();
    for a in &attempts {
        by_run.entry(a.run_id).or_default().push(a);
    }
    let overlapping: Vec<i64> = by_run
        .iter_mut()
        .filter_map(|(run, list)| {
            list.sort_by_key(|a| a.number);
            list.windows(2)
                .any(|w| w[0].finished_at.is_none_or(|end| w[1].started_at < end))
                .then_some(*run)
        })
        .collect();
    // Attempt times are written by the database's clock: a run started before its tick would
    // mean a node trusted its own fast clock.
    let early: Vec<_> = attempts
        .iter()
        .filter(|a| a.number == 1)
        .filter_map(|a| {
            let tick = runs.iter().find(|r| r.id == a.run_id)?.cron_tick?;
            (a.started_at < tick - chrono::Duration::milliseconds(250))
                .then_some((a.node.clone(), tick))
        })
        .collect();

    println!(
        "cluster proof: {jobs} jobs firing every second, {elapsed:.0} s, 4 nodes, node-b SIGKILLed at +{:.1} s",
        (killed_at - started).num_milliseconds() as f64 / 1000.0
    );
    println!(
        "  ticks expected per job {expected}, runs {}, duplicates 0 (unique index), misses {misses}",
        runs.len()
    );
    println!(
        "  unfinished runs {}, runs with two successful attempts {double_success}",
        unfinished.len()
    );
    println!("  attempts per node {per_node:?}");
    println!(
        "  node-b attempts open at the kill, closed by others as interrupted: {}",
        interrupted.len()
    );
    println!("  takeover delay after the kill (s): {takeover_s:?}");
    println!("  node-b write-backs after the kill: {}", late_writes.len());
    println!(
        "  node-d cut off from +{:.1} s to +{:.1} s: {} attempts interrupted, {} late write-backs landed, {} attempts after the heal",
        (cut_at - started).num_milliseconds() as f64 / 1000.0,
        (healed_at - started).num_milliseconds() as f64 / 1000.0,
        cut_interrupted.len(),
        cut_late_writes.len(),
        back_to_work
    );
    println!("  runs with overlapping attempts: {}", overlapping.len());
    println!("  runs started before their tick: {}", early.len());
    println!(
        "  throughput: {:.1} attempts/s across the cluster",
        attempts.len() as f64 / elapsed
    );

    assert_eq!(misses, 0, "every (job, tick) has a run");
    assert!(unfinished.is_empty(), "every run finished: {unfinished:?}");
    assert_eq!(double_success, 0, "no run succeeded twice");
    assert!(early.is_empty(), "no run started early: {early:?}");
    assert!(
        late_writes.is_empty(),
        "the killed node wrote nothing after it died: {late_writes:?}"
    );
    assert!(
        !interrupted.is_empty(),
        "the kill landed mid-attempt, so there was work to take over"
    );
    assert!(
        !cut_interrupted.is_empty(),
        "the cut landed mid-attempt, so there was work to take over"
    );
    assert!(
        cut_late_writes.is_empty(),
        "the cut-off node's late write-backs were refused: {cut_late_writes:?}"
    );
    assert!(back_to_work > 0, "node-d worked again after the heal");
    assert!(
        overlapping.is_empty(),
        "runs whose attempts overlap: {overlapping:?}"
    );
    for a in interrupted.iter().chain(&cut_interrupted) {
        let run = runs.iter().find(|r| r.id == a.run_id).unwrap();
        assert_eq!(
            run.status,
            RunStatus::Succeeded,
            "the interrupted run was retried to success"
        );
    }
}

/// The database restarted under two busy instances, as a failover or a restart does it: every
/// session is ended and no new one is let in for five seconds — longer than a lease. The
/// instances carry on without being restarted: they reconnect, the attempts under way are
/// taken over as interrupted, no run succeeds twice or runs two attempts at once, and nothing
/// is left unfinished.
#[tokio::test(flavor = "multi_thread")]
async fn instances_ride_out_a_database_restart() {
    let Some(app) = TestApp::postgres("cluster_failover").await else {
        eprintln!("BULWARK_TEST_POSTGRES_URL not set: skipped");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("jobs.toml");
    // Attempts of ten seconds, longer than the outage and a lease together: every attempt
    // under way when the database goes is still going when its lease lapses.
    std::fs::write(&file, jobs_file(8, "10s")).unwrap();
    let apply = ["jobs", "apply", file.to_str().unwrap()];
    let (code, _, err) = output(bulwark(&app, dir.path(), &apply, &[]));
    assert_eq!(code, 0, "{err}");
    let mut nodes = Nodes(Vec::new());
    for name in ["node-a", "node-b"] {
        let (child, addr) = serve_with(&app, dir.path(), name, &[FEW_PERMITS, WORKER]);
        wait_ready(&addr).await;
        nodes.push((name.to_string(), child));
    }
    for name in ["node-a", "node-b"] {
        wait_for_open_attempt(&app, name).await;
    }
    let cut_at = Utc::now();

    let database = app
        .database_url
        .rsplit_once('/')
        .map(|(_, name)| name.to_string())
        .unwrap();
    let base = std::env::var("BULWARK_TEST_POSTGRES_URL").unwrap();
    let admin = server::db::connect(&base).await.unwrap();
    for sql in [
        format!("ALTER DATABASE {database} ALLOW_CONNECTIONS false"),
        format!(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{database}'"
        ),
    ] {
        admin.execute_unprepared(&sql).await.unwrap();
    }
    tokio::time::sleep(Duration::from_secs(5)).await;
    admin
        .execute_unprepared(&format!("ALTER DATABASE {database} ALLOW_CONNECTIONS true"))
        .await
        .unwrap();
    admin.close().await.unwrap();
    let back = Utc::now();
    tokio::time::sleep(Duration::from_secs(6)).await;
    for (name, child) in nodes.iter_mut() {
        assert!(matches!(child.try_wait(), Ok(None)), "{name} kept running");
    }

    app.db
        .execute_unprepared("UPDATE jobs SET enabled = false")
        .await
        .unwrap();
    until_drained(&app, Duration::from_secs(60)).await;
    for (name, child) in nodes.iter_mut() {
        kill(child, nix::sys::signal::Signal::SIGTERM);
        assert!(child.wait().unwrap().success(), "{name} exits cleanly");
    }
    let runs = job_run::Entity::find().all(&app.db).await.unwrap();
    let attempts = job_attempt::Entity::find().all(&app.db).await.unwrap();
    for name in ["node-a", "node-b"] {
        assert!(
            attempts
                .iter()
                .any(|a| a.node == name && a.started_at > back),
            "{name} went back to work without a restart"
        );
    }
    let unfinished: Vec<_> = runs
        .iter()
        .filter(|r| !matches!(r.status, RunStatus::Succeeded | RunStatus::Skipped))
        .map(|r| (r.id, r.status))
        .collect();
    assert!(unfinished.is_empty(), "{unfinished:?}");
    let mut by_run: BTreeMap<i64, Vec<&job_attempt::Model>> = BTreeMap::new();
    for a in &attempts {
        by_run.entry(a.run_id).or_default().push(a);
    }
    for (run, list) in by_run.iter_mut() {
        list.sort_by_key(|a| a.number);
        let successes = list
            .iter()
            .filter(|a| a.outcome == Some(Outcome::Succeeded))
            .count();
        assert!(successes <= 1, "run {run} succeeded {successes} times");
        assert!(
            !list
                .windows(2)
                .any(|w| w[0].finished_at.is_none_or(|end| w[1].started_at < end)),
            "run {run}'s attempts overlap: {list:?}"
        );
    }
    // What was under way when the database went was taken over, never written as done.
    let under_way: Vec<&job_attempt::Model> = attempts
        .iter()
        .filter(|a| a.started_at < cut_at && a.finished_at.is_none_or(|f| f > cut_at))
        .collect();
    println!(
        "  {} runs, {} attempts, {} under way at the restart",
        runs.len(),
        attempts.len(),
        under_way.len()
    );
    assert!(under_way.len() >= 2, "{under_way:?}");
    assert!(
        under_way
            .iter()
            .all(|a| a.outcome == Some(Outcome::Interrupted)),
        "{under_way:?}"
    );
}
