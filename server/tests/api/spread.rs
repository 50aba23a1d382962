//! A tick spread over the nodes (`app/src/domain/job/spread.rs`): a broadcast gives each
//! matching live node a child run, shards are spread over them, the parent ends when its
//! children have ("1 of 2 failed"), only the failed child waits in the failed queue and is
//! re-triggered alone, and a child whose node dies goes to another node that may run it.

use std::path::Path;
use std::time::Duration;

use app::domain::filters::QueueQuery;
use app::domain::job::JobInput;
use app::domain::labels::Labels;
use app::domain::run::RunStatus;
use app::entities::job_run;
use app::services::{audit::Actor, failed, runs};
use app::views::runs::RunView;
use chrono::Utc;
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder};

use crate::engine::{attempts_of, engine_config, start};
use crate::helpers::{TestApp, define, wait_for_status};
use crate::on_both_backends;

/// A broadcast command job for `role=db` nodes: it prints its shard, fails as shard 1 while
/// `DIR/fail` exists, and waits while `DIR/slow` does.
const BROADCAST: &str = r#"
[[job]]
name = "everywhere"
cron = "0 0 0 1 1 *"
kind = "command"
command = ["sh", "-c", "echo shard $BULWARK_SHARD_INDEX of $BULWARK_SHARD_TOTAL; while [ -f DIR/slow ]; do sleep 0.1; done; if [ -f DIR/fail ] && [ $BULWARK_SHARD_INDEX = 1 ]; then exit 3; fi"]
run_on = { role = "db" }
run_on_count = "all"
[job.retry]
first = "100ms"
multiplier = 1.0
max_retries = 1
jitter = "none"
"#;

async fn view(db: &DatabaseConnection, id: i64) -> RunView {
    runs::get(db, id).await.unwrap().unwrap()
}

/// The children of `parent`, oldest first.
async fn children(db: &DatabaseConnection, parent: i64) -> Vec<job_run::Model> {
    job_run::Entity::find()
        .filter(job_run::Column::ParentId.eq(parent))
        .order_by_asc(job_run::Column::Id)
        .all(db)
        .await
        .unwrap()
}

/// The nodes that ran `run`'s attempts, in order.
async fn nodes_of(db: &DatabaseConnection, run: i64) -> Vec<String> {
    attempts_of(db, run)
        .await
        .into_iter()
        .map(|a| a.node)
        .collect()
}

async fn queue(db: &DatabaseConnection) -> Vec<i64> {
    failed::page(db, &QueueQuery::default(), None, 100)
        .await
        .unwrap()
        .rows
        .iter()
        .map(|r| r.id)
        .collect()
}

/// Waits for every child of `parent` to have an attempt open.
async fn all_running(db: &DatabaseConnection, parent: i64, count: usize) -> Vec<job_run::Model> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let kids = children(db, parent).await;
        if kids.len() == count && kids.iter().all(|c| c.status == RunStatus::Running) {
            return kids;
        }
        assert!(tokio::time::Instant::now() < deadline, "{kids:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn touch(dir: &Path, name: &str) {
    std::fs::write(dir.join(name), "").unwrap();
}

/// The issue's three instances on PostgreSQL: A `role=web`, B and C `role=db`, real processes.
#[tokio::test(flavor = "multi_thread")]
async fn a_broadcast_runs_once_per_matching_node_and_survives_one_dying() {
    let Some(app) = TestApp::postgres("spread_broadcast").await else {
        eprintln!("BULWARK_TEST_POSTGRES_URL not set: skipped");
        return;
    };
    let db = &app.db;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("jobs.toml");
    let text = BROADCAST.replace("DIR", dir.path().to_str().unwrap());
    std::fs::write(&file, text).unwrap();
    let apply = ["jobs", "apply", file.to_str().unwrap()];
    let (code, _, err) =
        crate::process::output(crate::process::bulwark(&app, dir.path(), &apply, &[]));
    assert_eq!(code, 0, "{err}");
    let job = app::entities::job::Entity::find()
        .filter(app::entities::job::Column::Name.eq("everywhere"))
        .one(db)
        .await
        .unwrap()
        .unwrap();
    let mut nodes = Vec::new();
    for (name, labels) in [
        ("node-a", "role=web"),
        ("node-b", "role=db"),
        ("node-c", "role=db"),
    ] {
        let (child, addr) =
            crate::process::serve_with(&app, dir.path(), name, &[("BULWARK_NODE_LABELS", labels)]);
        crate::cluster::wait_ready(&addr).await;
        nodes.push(child);
    }

    // Shard 1 fails: the parent is dead, "1 of 2 failed", only that child is in the queue.
    touch(dir.path(), "fail");
    let parent = runs::create_manual(db, job.id, Utc::now()).await.unwrap();
    let ended = wait_for_status(db, parent.id, &[RunStatus::Dead], Duration::from_secs(30)).await;
    assert_eq!(ended.shard_total, Some(2));
    let kids = children(db, parent.id).await;
    let shards: Vec<_> = kids
        .iter()
        .map(|c| (c.shard_index, c.shard_total))
        .collect();
    assert_eq!(shards, [(Some(0), Some(2)), (Some(1), Some(2))]);
    assert_eq!(nodes_of(db, kids[0].id).await, ["node-b"]);
    assert_eq!(nodes_of(db, kids[1].id).await, ["node-c"]);
    let seen = view(db, parent.id).await;
    let count = seen.children_count();
    assert_eq!((count.failed, count.total), (1, 2));
    assert!(!seen.in_failed_queue());
    assert_eq!(queue(db).await, [kids[1].id]);
    let output = attempts_of(db, kids[0].id).await[0].output_tail.clone();
    assert!(output.unwrap_or_default().contains("shard 0 of 2"));

    // Mended and re-triggered alone: the parent succeeds.
    std::fs::remove_file(dir.path().join("fail")).unwrap();
    let again = failed::retrigger(
        db,
        kids[1].id,
        &failed::Overrides::default(),
        &Actor::named("test"),
        Utc::now(),
        Utc::now(),
    )
    .await
    .unwrap();
    wait_for_status(db, again, &[RunStatus::Succeeded], Duration::from_secs(30)).await;
    let mended = view(db, parent.id).await;
    assert_eq!(mended.status, RunStatus::Succeeded);
    assert_eq!(mended.children.len(), 3);
    assert!(queue(db).await.is_empty());

    // C is killed mid-attempt: its child goes to B, never to A.
    touch(dir.path(), "slow");
    let parent = runs::create_manual(db, job.id, Utc::now()).await.unwrap();
    let kids = all_running(db, parent.id, 2).await;
    let on_c = kids
        .iter()
        .find(|c| c.lease_owner.as_deref() == Some("node-c"))
        .expect("a child on node-c");
    nodes[2].kill().unwrap();
    nodes[2].wait().unwrap();
    std::fs::remove_file(dir.path().join("slow")).unwrap();
    let ended = wait_for_status(
        db,
        parent.id,
        &[RunStatus::Succeeded],
        Duration::from_secs(40),
    )
    .await;
    assert_eq!(ended.status, RunStatus::Succeeded);
    assert_eq!(nodes_of(db, on_c.id).await, ["node-c", "node-b"]);
    for mut child in nodes {
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// An HTTP job in shards on one node: each child asks for its own part (`${shard:index}`),
/// the parent waits for all of them; cancelling a parent stops its children.
async fn shards_ask_for_their_parts_and_a_cancel_stops_them_all(app: TestApp) {
    let db = &app.db;
    let (url, seen) = crate::secrets::echo_server().await;
    let input = JobInput {
        http_url: format!("{url}/part/${{shard:index}}/of/${{shard:total}}"),
        shards: "3".into(),
        ..crate::engine::base("in-parts")
    };
    let job = define(db, input).await;
    let mut config = engine_config("only-node");
    config.labels = Labels::default();
    let engine = start(db, config);
    let parent = runs::create_manual(db, job.id, Utc::now()).await.unwrap();
    wait_for_status(
        db,
        parent.id,
        &[RunStatus::Succeeded],
        Duration::from_secs(20),
    )
    .await;
    let mut paths: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .filter_map(|line| line.split(' ').next().map(str::to_string))
        .collect();
    paths.sort();
    assert_eq!(paths, ["/part/0/of/3", "/part/1/of/3", "/part/2/of/3"]);
    engine.stop().await;

    // No engine: the next tick is given no children; cancelling it ends it.
    let waiting = runs::create_manual(db, job.id, Utc::now()).await.unwrap();
    let cancelled = runs::cancel(db, waiting.id, &Actor::named("test"), Utc::now())
        .await
        .unwrap();
    assert_eq!(cancelled.status, RunStatus::Cancelled);
    // Given children that wait (their node is busy elsewhere), a cancel ends them and it.
    let parent = runs::create_manual(db, job.id, Utc::now()).await.unwrap();
    let held = job_run::Entity::find_by_id(parent.id)
        .one(db)
        .await
        .unwrap()
        .unwrap();
    let txn = sea_orm::TransactionTrait::begin(db).await.unwrap();
    for index in 0..3 {
        let child = app::services::children::child_of(&held, index, 3, Some("away"), Utc::now());
        job_run::Entity::insert(child).exec(&txn).await.unwrap();
    }
    job_run::Entity::update_many()
        .col_expr(
            job_run::Column::Status,
            sea_orm::sea_query::Expr::value(RunStatus::Running),
        )
        .col_expr(
            job_run::Column::ShardTotal,
            sea_orm::sea_query::Expr::value(3),
        )
        .col_expr(
            job_run::Column::DueAt,
            sea_orm::sea_query::Expr::value(Option::<chrono::DateTime<Utc>>::None),
        )
        .filter(job_run::Column::Id.eq(parent.id))
        .exec(&txn)
        .await
        .unwrap();
    txn.commit().await.unwrap();
    let stopped = runs::cancel(db, parent.id, &Actor::named("test"), Utc::now())
        .await
        .unwrap();
    assert_eq!(stopped.status, RunStatus::Cancelled);
    let kids = children(db, parent.id).await;
    assert!(
        kids.iter().all(|c| c.status == RunStatus::Cancelled),
        "{kids:?}"
    );
}
on_both_backends!(shards_ask_for_their_parts_and_a_cancel_stops_them_all);

/// A failed shard re-triggered while its siblings still run is taken at once (children run
/// outside the job's lane), and the parent then ends succeeded.
async fn a_shard_retriggered_while_its_siblings_run_ends_the_parent(app: TestApp) {
    let db = &app.db;
    let dir = tempfile::tempdir().unwrap();
    let fixed = dir.path().join("fixed");
    let input = JobInput {
        kind: "command".into(),
        command_program: "sh".into(),
        command_args: format!(
            "-c\nif [ $BULWARK_SHARD_INDEX = 0 ]; then sleep 3; exit 0; fi; [ -f {} ] || exit 3",
            fixed.display()
        ),
        shards: "2".into(),
        ..crate::engine::base("mended-early")
    };
    let job = define(db, input).await;
    let engine = start(db, engine_config("shard-node"));
    let parent = runs::create_manual(db, job.id, Utc::now()).await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let failed = loop {
        let kids = children(db, parent.id).await;
        if let Some(dead) = kids.iter().find(|c| c.status == RunStatus::Dead) {
            break dead.clone();
        }
        assert!(tokio::time::Instant::now() < deadline, "{kids:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    std::fs::write(&fixed, "").unwrap();
    let again = failed::retrigger(
        db,
        failed.id,
        &failed::Overrides::default(),
        &Actor::named("test"),
        Utc::now(),
        Utc::now(),
    )
    .await
    .unwrap();
    let parent_now = job_run::Entity::find_by_id(parent.id)
        .one(db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        parent_now.status,
        RunStatus::Running,
        "re-triggered while shard 0 ran"
    );
    wait_for_status(db, again, &[RunStatus::Succeeded], Duration::from_secs(20)).await;
    let ended = wait_for_status(
        db,
        parent.id,
        &[RunStatus::Succeeded],
        Duration::from_secs(20),
    )
    .await;
    assert_eq!(ended.status, RunStatus::Succeeded);
    engine.stop().await;
}
on_both_backends!(a_shard_retriggered_while_its_siblings_run_ends_the_parent);
