//! Behind PgBouncer in transaction mode (Debian's `pgbouncer`, started here): a server
//! connection is an instance's for one transaction only, `LISTEN` hears nothing and a statement
//! prepared in one round trip may be gone by the next. Two instances — one told
//! `database_pooler = "transaction"`, one finding out from PgBouncer's refusal — and a command
//! run every tick once, never succeed twice, and say how they reach the database.

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use app::domain::run::{Outcome, RunStatus};
use app::entities::{job_attempt, job_run, node};
use chrono::{DateTime, Utc};
use sea_orm::{ConnectionTrait, EntityTrait};

use crate::helpers::TestApp;
use crate::process::{bulwark, output, serve_with};

const PGBOUNCER: &str = "/usr/sbin/pgbouncer";

/// Jobs firing every second, each attempt 200 ms: more than one instance running one attempt
/// at a time keeps up with.
fn jobs(count: usize) -> String {
    (0..count)
        .map(|i| {
            format!(
                "[[job]]\nname = \"pooled-{i}\"\ncron = \"* * * * * *\"\nkind = \"builtin\"\n\
                 task = \"demo\"\nparams = {{ failure_rate = \"0\", sleep = \"200ms\" }}\n\
                 misfire = \"run_once\"\n\n"
            )
        })
        .collect()
}

/// PgBouncer in transaction mode in front of `database` on the test server, on a free port,
/// with a pool of four server connections for all clients; killed when dropped.
struct Bouncer {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Bouncer {
    fn start(upstream: &reqwest::Url, database: &str) -> Bouncer {
        assert!(
            Path::new(PGBOUNCER).exists(),
            "{PGBOUNCER} is missing: apt-get install pgbouncer (make tools-test does)"
        );
        let dir = tempfile::tempdir().unwrap();
        // PgBouncer refuses to run as root: started as root, it becomes `nobody`, who must
        // read its files.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let user = upstream.username();
        let config = format!(
            "[databases]\n{database} = host={} port={} dbname={database} user={user}\n\n\
             [pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = {port}\nunix_socket_dir =\n\
             auth_type = trust\nauth_file = {}/users.txt\npool_mode = transaction\n\
             default_pool_size = 4\nmax_client_conn = 200\n",
            upstream.host_str().unwrap(),
            upstream.port().unwrap_or(5432),
            dir.path().display(),
        );
        for (name, text) in [
            ("pgbouncer.ini", config),
            ("users.txt", format!("\"{user}\" \"\"\n")),
        ] {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
        let mut command = Command::new(PGBOUNCER);
        // `/proc/self` belongs to this process's effective user.
        let uid = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata("/proc/self").unwrap());
        if uid == 0 {
            command.args(["-u", "nobody"]);
        }
        let child = command
            .arg(dir.path().join("pgbouncer.ini"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start pgbouncer");
        Bouncer {
            child,
            port,
            _dir: dir,
        }
    }
}

impl Drop for Bouncer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn instances_behind_pgbouncer_in_transaction_mode_run_every_tick_once() {
    let Some(app) = TestApp::postgres("pooler").await else {
        eprintln!("BULWARK_TEST_POSTGRES_URL not set: skipped");
        return;
    };
    let direct = reqwest::Url::parse(&app.database_url).unwrap();
    let database = direct.path().trim_start_matches('/').to_string();
    let bouncer = Bouncer::start(&direct, &database);
    let mut pooled = direct.clone();
    pooled.set_port(Some(bouncer.port)).unwrap();
    let pooled = pooled.to_string();
    let via_pooler = [
        ("DATABASE_URL", pooled.as_str()),
        ("BULWARK_DATABASE_POOLER", "transaction"),
    ];
    let one_at_a_time = ("BULWARK_CONCURRENCY", "1");

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("jobs.toml");
    std::fs::write(&file, jobs(6)).unwrap();
    // A command through the pooler too.
    let apply = ["jobs", "apply", file.to_str().unwrap()];
    let wait = tokio::time::Instant::now() + Duration::from_secs(10);
    let (code, out, err) = loop {
        let result = output(bulwark(&app, dir.path(), &apply, &via_pooler));
        if result.0 == 0 || tokio::time::Instant::now() > wait {
            break result;
        }
        // PgBouncer may not be listening yet.
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(code, 0, "{out}{err}");

    let mut nodes: Vec<(&str, Child)> = Vec::new();
    for (name, env) in [
        ("told", [&via_pooler[..], &[one_at_a_time]].concat()),
        (
            "found-out",
            vec![("DATABASE_URL", pooled.as_str()), one_at_a_time],
        ),
    ] {
        let (child, addr) = serve_with(&app, dir.path(), name, &env);
        crate::cluster::wait_ready(&addr).await;
        nodes.push((name, child));
    }
    tokio::time::sleep(Duration::from_secs(8)).await;
    app.db
        .execute_unprepared("UPDATE jobs SET enabled = false")
        .await
        .unwrap();
    let stopped: DateTime<Utc> = Utc::now();
    crate::cluster::until_drained(&app, Duration::from_secs(60)).await;
    for (name, child) in &mut nodes {
        crate::cluster::kill(child, nix::sys::signal::Signal::SIGTERM);
        assert!(child.wait().unwrap().success(), "{name} exits cleanly");
    }

    let modes: BTreeMap<String, String> = node::Entity::find()
        .all(&app.db)
        .await
        .unwrap()
        .into_iter()
        .map(|n| (n.node_id, n.database_pooler))
        .collect();
    assert_eq!(modes["told"], "transaction");
    assert_eq!(modes["found-out"], "transaction");
    let admin = app.signed_in("admin", crate::helpers::ADMIN_PASSWORD).await;
    let settings = admin
        .get(app.url("/settings"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        settings.contains("through a pooler in transaction mode"),
        "Settings → Nodes says how each node reaches the database"
    );
    check_every_tick_once(&app, stopped).await;
    drop(bouncer);
}

/// Every job ticked every second from its first tick to its last, each tick's run finished,
/// and no run succeeded twice; both instances ran attempts.
async fn check_every_tick_once(app: &TestApp, stopped: DateTime<Utc>) {
    let runs = job_run::Entity::find().all(&app.db).await.unwrap();
    let attempts = job_attempt::Entity::find().all(&app.db).await.unwrap();
    let names: BTreeMap<i64, String> = app::entities::job::Entity::find()
        .all(&app.db)
        .await
        .unwrap()
        .into_iter()
        .map(|j| (j.id, j.name))
        .collect();
    let mut ticks: BTreeMap<i64, BTreeSet<DateTime<Utc>>> = BTreeMap::new();
    for run in runs
        .iter()
        .filter(|r| names[&r.job_id].starts_with("pooled-"))
    {
        assert!(
            matches!(run.status, RunStatus::Succeeded | RunStatus::Skipped),
            "run {} is {:?}",
            run.id,
            run.status
        );
        if let Some(tick) = run.cron_tick {
            ticks.entry(run.job_id).or_default().insert(tick);
        }
    }
    assert_eq!(ticks.len(), 6, "every job ran");
    for (job, seen) in &ticks {
        let (first, last) = (*seen.first().unwrap(), *seen.last().unwrap());
        assert!(last <= stopped + chrono::Duration::seconds(1));
        let expected = (last - first).num_seconds() + 1;
        assert_eq!(seen.len() as i64, expected, "{} missed a tick", names[job]);
        assert!(expected >= 4, "{} ticked {expected} times", names[job]);
    }
    let mut successes: BTreeMap<i64, usize> = BTreeMap::new();
    for a in attempts
        .iter()
        .filter(|a| a.outcome == Some(Outcome::Succeeded))
    {
        *successes.entry(a.run_id).or_default() += 1;
    }
    assert!(successes.values().all(|n| *n == 1), "a run succeeded twice");
    for node in ["told", "found-out"] {
        assert!(
            attempts.iter().any(|a| a.node == node),
            "{node} ran attempts"
        );
    }
}
