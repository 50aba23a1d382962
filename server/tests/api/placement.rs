//! Where runs go: a node claims only runs of jobs whose `run_on` its labels satisfy, never a
//! command job where commands are off; a run no live node may take waits as
//! `waiting_for_node` (on the Overview, alerted once after the grace, whichever nodes sweep)
//! and starts when a node that may take it comes.

use std::time::Duration;

use app::domain::job::JobInput;
use app::domain::labels::Labels;
use app::domain::run::RunStatus;
use app::entities::{job, job_run, mail_outbox};
use app::services::runs;
use chrono::Utc;
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter};
use server::engine::placement::{Alerted, sweep};

use crate::engine::{attempts_of, engine_config, start};
use crate::helpers::{TestApp, define, wait_for_status};
use crate::on_both_backends;

/// A command job that succeeds at once, asking for `run_on`.
fn command(name: &str, run_on: &str) -> JobInput {
    JobInput {
        kind: "command".into(),
        command_program: "true".into(),
        run_on: run_on.into(),
        alert_to: "ops@example.com".into(),
        ..crate::engine::base(name)
    }
}

/// A built-in job (no command) that succeeds at once, anywhere.
fn builtin(name: &str) -> JobInput {
    JobInput {
        kind: "builtin".into(),
        builtin_task: "demo".into(),
        builtin_params: "sleep=1ms\nfailure_rate=0".into(),
        ..crate::engine::base(name)
    }
}

fn node(name: &str, labels: &str, commands: bool) -> server::engine::EngineConfig {
    let mut config = engine_config(name);
    config.labels = Labels::parse(labels).unwrap();
    config.allow_commands = commands;
    config.node_wait_alert = Duration::ZERO;
    config
}

async fn status(db: &DatabaseConnection, run_id: i64) -> RunStatus {
    job_run::Entity::find_by_id(run_id)
        .one(db)
        .await
        .unwrap()
        .unwrap()
        .status
}

async fn mails_about(db: &DatabaseConnection, job: &job::Model) -> usize {
    mail_outbox::Entity::find()
        .filter(mail_outbox::Column::Subject.contains(job.name.as_str()))
        .all(db)
        .await
        .unwrap()
        .len()
}

/// A `role=web` node without commands runs the built-in job and leaves the command job asking
/// for `role=db` alone; it waits for a node, once alerted though two nodes sweep; a `role=db`
/// node takes it and every later run, a second one sharing them.
async fn runs_go_only_where_their_labels_are(app: TestApp) {
    let db = &app.db;
    let on_db = define(db, command("on-db", "role=db")).await;
    let anywhere = define(db, builtin("anywhere")).await;
    let web = start(db, node("web-1", "role=web", false));
    let waiting = runs::create_manual(db, on_db.id, Utc::now()).await.unwrap();
    let elsewhere = runs::create_manual(db, anywhere.id, Utc::now())
        .await
        .unwrap();
    wait_for_status(
        db,
        elsewhere.id,
        &[RunStatus::Succeeded],
        Duration::from_secs(20),
    )
    .await;
    // The web node has claimed since the other run became due, and passed it by.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(attempts_of(db, waiting.id).await.len(), 0);

    // Two nodes sweep: the run waits, one alert goes out.
    let now = server::clock::now();
    assert_eq!(
        sweep(&web.shared, &Alerted::default(), now).await.unwrap(),
        1
    );
    assert_eq!(
        sweep(&web.shared, &Alerted::default(), now).await.unwrap(),
        1
    );
    assert_eq!(status(db, waiting.id).await, RunStatus::WaitingForNode);
    assert_eq!(mails_about(db, &on_db).await, 1);
    let overview = app::services::overview::read(db, now, chrono_tz::UTC)
        .await
        .unwrap();
    assert_eq!(overview.waiting.len(), 1);
    assert_eq!(overview.waiting[0].run_on, "role=db");

    let db_1 = start(db, node("db-1", "role=db,dc=sh", true));
    let db_2 = start(db, node("db-2", "role=db", true));
    let ran = wait_for_status(
        db,
        waiting.id,
        &[RunStatus::Succeeded],
        Duration::from_secs(20),
    )
    .await;
    assert_eq!(ran.status, RunStatus::Succeeded);
    let mut nodes = Vec::new();
    for _ in 0..12 {
        let run = runs::create_manual(db, on_db.id, Utc::now()).await.unwrap();
        wait_for_status(db, run.id, &[RunStatus::Succeeded], Duration::from_secs(20)).await;
        nodes.extend(attempts_of(db, run.id).await.into_iter().map(|a| a.node));
    }
    assert!(
        nodes.iter().all(|n| n == "db-1" || n == "db-2"),
        "{nodes:?}"
    );
    assert_eq!(mails_about(db, &on_db).await, 1);
    for engine in [web, db_1, db_2] {
        engine.stop().await;
    }
}
on_both_backends!(runs_go_only_where_their_labels_are);

/// A waiting run goes back to `pending` when a node that may take it is live (it need not
/// have claimed yet), and the sweep forgets it.
async fn a_live_node_that_may_take_a_run_releases_it(app: TestApp) {
    let db = &app.db;
    let on_db = define(db, command("released", "role=db")).await;
    let web = start(db, node("web-2", "role=web", true));
    let run = runs::create_manual(db, on_db.id, Utc::now()).await.unwrap();
    let now = server::clock::now();
    assert_eq!(
        sweep(&web.shared, &Alerted::default(), now).await.unwrap(),
        1
    );
    assert_eq!(status(db, run.id).await, RunStatus::WaitingForNode);
    // A `role=db` instance heart-beats (not running here, so the run stays unclaimed).
    server::cluster::register(
        db,
        &server::cluster::NodeIdentity {
            node_id: "db-elsewhere".into(),
            addr: "127.0.0.1:1".into(),
            labels: Labels::parse("role=db").unwrap(),
            commands: true,
            web: false,
            engine: true,
            pooler: server::db::Pooler::None,
        },
    )
    .await
    .unwrap();
    assert_eq!(
        sweep(&web.shared, &Alerted::default(), now).await.unwrap(),
        0
    );
    assert_eq!(status(db, run.id).await, RunStatus::Pending);
    web.stop().await;
}
on_both_backends!(a_live_node_that_may_take_a_run_releases_it);

/// `bulwark serve --no-web` with `BULWARK_NODE_LABELS`: it answers health and nothing of the
/// console, says what it is in the nodes table, and runs the job that asks for its label.
#[tokio::test(flavor = "multi_thread")]
async fn a_jobs_only_instance_runs_its_labelled_work() {
    let app = TestApp::sqlite_with(|_, _| {}).await;
    let dir = tempfile::tempdir().unwrap();
    let on_db = define(&app.db, command("jobs-only", "role=db")).await;
    let (mut child, addr) = crate::process::serve_args(
        &app,
        dir.path(),
        "worker-1",
        &["serve", "--no-web"],
        &[("BULWARK_NODE_LABELS", "role=db,dc=sh")],
    );
    crate::cluster::wait_ready(&addr).await;
    let client = reqwest::Client::new();
    for path in ["/login", "/api/v1/jobs", "/api/collect"] {
        let res = client
            .get(format!("http://{addr}{path}"))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 404, "{path}");
    }
    let row = app::entities::node::Entity::find_by_id("worker-1".to_string())
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (row.labels.as_str(), row.web, row.engine, row.commands),
        ("dc=sh,role=db", false, true, true)
    );
    let run = runs::create_manual(&app.db, on_db.id, Utc::now())
        .await
        .unwrap();
    wait_for_status(
        &app.db,
        run.id,
        &[RunStatus::Succeeded],
        Duration::from_secs(30),
    )
    .await;
    let nodes: Vec<String> = attempts_of(&app.db, run.id)
        .await
        .into_iter()
        .map(|a| a.node)
        .collect();
    assert_eq!(nodes, ["worker-1"]);
    child.kill().unwrap();
    child.wait().unwrap();
}

/// A pool of two over five slow jobs on three nodes: never more than two running at once
/// (sampled every 20 ms), all five done, in the order they were due.
async fn a_pool_never_runs_more_than_its_size(app: TestApp) {
    let db = &app.db;
    // A job naming a pool no one defined is refused, naming the field.
    let unknown = JobInput {
        pool: "backups".into(),
        ..command("no-pool-yet", "")
    };
    let spec = app::domain::job::JobSpec::parse(&unknown).unwrap();
    match app::services::jobs::create(db, &spec, Utc::now()).await {
        Err(app::services::jobs::JobError::Invalid(problems)) => {
            assert_eq!(problems[0].field, "pool")
        }
        other => panic!("{other:?}"),
    }
    let pool = app::domain::pool::PoolInput {
        name: "backups".into(),
        size: 2,
    };
    app::services::pools::store(db, &pool.parse().unwrap(), Utc::now())
        .await
        .unwrap();
    let mut runs = Vec::new();
    for i in 0..5 {
        let input = JobInput {
            command_program: "sleep".into(),
            command_args: "0.4".into(),
            pool: "backups".into(),
            ..command(&format!("backup-{i}"), "")
        };
        let job = define(db, input).await;
        runs.push(runs::create_manual(db, job.id, Utc::now()).await.unwrap());
    }
    let nodes: Vec<_> = ["pool-a", "pool-b", "pool-c"]
        .into_iter()
        .map(|n| start(db, node(n, "", true)))
        .collect();
    let mut most = 0;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let running = job_run::Entity::find()
            .filter(job_run::Column::Id.is_in(runs.iter().map(|r| r.id)))
            .filter(job_run::Column::Status.eq(RunStatus::Running))
            .all(db)
            .await
            .unwrap()
            .len();
        most = most.max(running);
        let done = job_run::Entity::find()
            .filter(job_run::Column::Id.is_in(runs.iter().map(|r| r.id)))
            .filter(job_run::Column::Status.eq(RunStatus::Succeeded))
            .all(db)
            .await
            .unwrap();
        if done.len() == runs.len() {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{} of 5 done",
            done.len()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(most, 2, "the pool ran up to its size, never more");
    let usage = app::services::pools::usage(db, Utc::now()).await.unwrap();
    assert_eq!((usage[0].running, usage[0].waiting), (0, 0));
    for engine in nodes {
        engine.stop().await;
    }
}
on_both_backends!(a_pool_never_runs_more_than_its_size);
