//! The real `bulwark` binary as operators run it: jobs from a file, runs queued from the shell,
//! and a process killed mid-attempt whose run the next process finishes.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use app::domain::run::{Outcome, RunStatus};
use app::entities::{job_attempt, job_run};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};

use crate::helpers::{TestApp, wait_for_status};
use crate::on_both_backends;

const JOBS: &str = r#"
[[job]]
name = "slow-report"
cron = "0 0 0 1 1 *"
kind = "command"
command = ["sleep", "2"]
[job.retry]
first = "100ms"
multiplier = 2.0
max_retries = 3
jitter = "none"
[job.timeout]
static = "30s"

[[job]]
name = "nightly-demo"
cron = "0 0 3 * * *"
timezone = "Europe/Berlin"
kind = "builtin"
task = "demo"
on_exhausted = "fallback:slow-report"
[job.retry]
first = "1s"
multiplier = 1.5
max_retries = 2
[job.alerts]
to = ["oncall@example.com"]
"#;

pub(crate) fn bulwark(
    app: &TestApp,
    dir: &std::path::Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> Command {
    // Benchmarks (make bench-cluster) point BULWARK_BIN at a release build.
    let bin = std::env::var("BULWARK_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_bulwark").into());
    let mut cmd = Command::new(bin);
    cmd.args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("DATABASE_URL", &app.database_url)
        // Every instance and command of one installation shares its key (the start refuses
        // another: what the test application sealed, such as its jobs' revisions, must open).
        .env("BULWARK_SECRET_KEY_FILE", app.secret_key_file())
        .envs(moved_clock_of_this_process())
        .envs(env.iter().copied());
    cmd
}

const LIBFAKETIME: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

fn libfaketime() -> String {
    assert!(
        std::path::Path::new(LIBFAKETIME).exists(),
        "{LIBFAKETIME} is missing: apt-get install faketime (make tools-test does)"
    );
    LIBFAKETIME.to_string()
}

/// Environment that shifts a process's wall clock by `offset` (Debian's libfaketime, which
/// `make test` installs).
pub(crate) fn skewed_clock(offset: &str) -> Vec<(&'static str, String)> {
    vec![
        ("LD_PRELOAD", libfaketime()),
        ("FAKETIME", offset.to_string()),
        ("FAKETIME_DONT_FAKE_MONOTONIC", "1".to_string()),
        ("FAKETIME_DONT_RESET", "1".to_string()),
    ]
}

/// Environment that starts a process's wall clock at `at`, to the second, and lets it run
/// from there: a command whose answer depends on today's date (`traffic stats --range
/// today`) then answers for the day the test wrote its data on, even when the test spans
/// midnight.
pub(crate) fn clock_at(at: chrono::DateTime<chrono::Utc>) -> Vec<(&'static str, String)> {
    vec![
        ("LD_PRELOAD", libfaketime()),
        ("FAKETIME", at.format("@%Y-%m-%d %H:%M:%S").to_string()),
        // libfaketime reads that time in the process's zone.
        ("TZ", "UTC".to_string()),
        ("FAKETIME_DONT_FAKE_MONOTONIC", "1".to_string()),
    ]
}

/// The test binary's own moved clock, when it runs under libfaketime (docs/TESTING.md, "A
/// clock near midnight"), passed on to the processes it starts, so the whole test keeps one
/// time. Nothing when it does not.
fn moved_clock_of_this_process() -> Vec<(&'static str, String)> {
    ["LD_PRELOAD", "FAKETIME", "FAKETIME_DONT_FAKE_MONOTONIC"]
        .into_iter()
        .filter_map(|name| std::env::var(name).ok().map(|value| (name, value)))
        .collect()
}

pub(crate) fn output(mut cmd: Command) -> (i32, String, String) {
    let out = cmd.output().expect("run bulwark");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn serve(app: &TestApp, dir: &std::path::Path, node: &str) -> Child {
    serve_on(app, dir, node).0
}

/// Starts `bulwark serve` on a free port; returns the process and its address.
pub(crate) fn serve_on(app: &TestApp, dir: &std::path::Path, node: &str) -> (Child, String) {
    serve_with(app, dir, node, &[])
}

/// [`serve_on`] with extra environment variables.
pub(crate) fn serve_with(
    app: &TestApp,
    dir: &std::path::Path,
    node: &str,
    env: &[(&str, &str)],
) -> (Child, String) {
    serve_args(app, dir, node, &["serve"], env)
}

/// [`serve_with`] with the command line given (`["serve", "--no-web"]`).
pub(crate) fn serve_args(
    app: &TestApp,
    dir: &std::path::Path,
    node: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> (Child, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    bulwark(
        app,
        dir,
        args,
        &[
            ("BULWARK_ADDR", addr.as_str()),
            ("BULWARK_NODE_ID", node),
            ("BULWARK_LEASE_SECONDS", "3"),
            ("BULWARK_GRACE_SECONDS", "5"),
            ("BULWARK_ADMIN_PASSWORD", "not-used-here"),
        ],
    )
    .envs(env.iter().copied())
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .map(|child| (child, addr.clone()))
    .expect("start bulwark serve")
}

async fn jobs_apply_list_run_and_runs_list(app: TestApp) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("jobs.toml");
    std::fs::write(&file, JOBS).unwrap();
    let path = file.to_str().unwrap();

    let (code, out, err) = output(bulwark(&app, dir.path(), &["jobs", "apply", path], &[]));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("2 created, 0 updated, 0 unchanged"), "{out}");
    let (_, out, _) = output(bulwark(&app, dir.path(), &["jobs", "apply", path], &[]));
    assert!(
        out.contains("0 created, 0 updated, 2 unchanged"),
        "idempotent: {out}"
    );

    // A bad file changes nothing and names the line.
    let broken = JOBS
        .replace("multiplier = 1.5", "multiplier = 1.55")
        .replace(
            "command = [\"sleep\", \"2\"]",
            "command = [\"sleep\", \"3\"]",
        );
    std::fs::write(&file, broken).unwrap();
    let (code, _, err) = output(bulwark(&app, dir.path(), &["jobs", "apply", path], &[]));
    assert_eq!(code, 1);
    assert!(err.contains("job 2 'nightly-demo' (line 15): retry.multiplier: multiplier '1.55' has more than one decimal"), "{err}");
    assert!(err.contains("nothing was changed"), "{err}");
    let unchanged = app::entities::job::Entity::find()
        .filter(app::entities::job::Column::Name.eq("slow-report"))
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    assert!(
        unchanged.config.contains("\"2\""),
        "the valid job of a refused file is not applied either"
    );
    let (_, listed, _) = output(bulwark(&app, dir.path(), &["jobs", "list"], &[]));
    assert!(
        listed.contains("nightly-demo") && listed.contains("CET"),
        "{listed}"
    );

    let (code, out, _) = output(bulwark(
        &app,
        dir.path(),
        &["jobs", "run", "nightly-demo"],
        &[],
    ));
    assert_eq!(code, 0);
    assert!(out.contains("queued"), "{out}");
    let (code, _, err) = output(bulwark(
        &app,
        dir.path(),
        &["jobs", "run", "no-such-job"],
        &[],
    ));
    assert_eq!(code, 1);
    assert!(err.contains("there is no job named 'no-such-job'"), "{err}");

    let (code, out, _) = output(bulwark(
        &app,
        dir.path(),
        &["runs", "list", "--job", "nightly-demo", "--json"],
        &[],
    ));
    assert_eq!(code, 0);
    let runs: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(runs.as_array().unwrap().len(), 1);
    assert_eq!(runs[0]["job"], "nightly-demo");
    assert_eq!(runs[0]["trigger"], "manual");
    assert_eq!(runs[0]["status"], "pending");
    assert!(
        runs[0]["scheduled_for"]
            .as_str()
            .unwrap()
            .ends_with("+00:00")
    );
    assert_eq!(runs[0]["attempts"], serde_json::json!([]));

    // Every status the runs table holds is one `--status` takes (the list is the enum's own),
    // and a word that is none of them is a usage error naming the choices.
    let job = runs[0]["id"].as_i64().unwrap();
    job_run::Entity::update_many()
        .col_expr(
            job_run::Column::Status,
            sea_orm::sea_query::Expr::value(RunStatus::Blocked),
        )
        .filter(job_run::Column::Id.eq(job))
        .exec(&app.db)
        .await
        .unwrap();
    for status in RunStatus::ALL {
        let (code, out, err) = output(bulwark(
            &app,
            dir.path(),
            &["runs", "list", "--status", status.as_str(), "--json"],
            &[],
        ));
        assert_eq!(code, 0, "--status {status}: {err}");
        let listed: serde_json::Value = serde_json::from_str(&out).unwrap();
        let expected = usize::from(*status == RunStatus::Blocked);
        assert_eq!(
            listed.as_array().unwrap().len(),
            expected,
            "--status {status}"
        );
    }
    let (code, _, err) = output(bulwark(
        &app,
        dir.path(),
        &["runs", "list", "--status", "stuck"],
        &[],
    ));
    assert_eq!(code, 2);
    assert!(
        err.contains("retry_wait") && err.contains("blocked"),
        "{err}"
    );
}
on_both_backends!(jobs_apply_list_run_and_runs_list);

async fn a_killed_process_loses_nothing(app: TestApp) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("jobs.toml");
    std::fs::write(&file, JOBS).unwrap();
    let (code, _, err) = output(bulwark(
        &app,
        dir.path(),
        &["jobs", "apply", file.to_str().unwrap()],
        &[],
    ));
    assert_eq!(code, 0, "{err}");
    output(bulwark(
        &app,
        dir.path(),
        &["jobs", "run", "slow-report"],
        &[],
    ));
    let run = job_run::Entity::find().one(&app.db).await.unwrap().unwrap();

    // The first process starts the two-second command; kill it (SIGKILL, no goodbye) mid-way.
    let mut first = serve(&app, dir.path(), "first");
    wait_for_status(
        &app.db,
        run.id,
        &[RunStatus::Running],
        Duration::from_secs(20),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    first.kill().expect("SIGKILL");
    first.wait().unwrap();

    // A new process finds the expired lease, records the interruption and retries the run.
    let mut second = serve(&app, dir.path(), "second");
    let done = wait_for_status(
        &app.db,
        run.id,
        &[RunStatus::Succeeded, RunStatus::Dead],
        Duration::from_secs(30),
    )
    .await;
    assert_eq!(done.status, RunStatus::Succeeded);
    let attempts = job_attempt::Entity::find()
        .filter(job_attempt::Column::RunId.eq(run.id))
        .order_by_asc(job_attempt::Column::Number)
        .all(&app.db)
        .await
        .unwrap();
    let story: Vec<(Option<Outcome>, &str)> = attempts
        .iter()
        .map(|a| (a.outcome, a.node.as_str()))
        .collect();
    assert_eq!(
        story,
        [
            (Some(Outcome::Interrupted), "first"),
            (Some(Outcome::Succeeded), "second")
        ]
    );

    // SIGTERM stops the second process gracefully.
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(second.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let status = second.wait().unwrap();
    assert!(status.success(), "graceful stop exits 0, got {status:?}");
}
on_both_backends!(a_killed_process_loses_nothing);

/// `bulwark ARGS` run on this host against the test's server and database, `stdin` as its
/// standard input; waits for it.
pub(crate) fn cli(app: &TestApp, args: &[&str], stdin: &str) -> std::process::Output {
    cli_with_env(app, args, stdin, &[])
}

/// [`cli`] with further environment variables (settings the command needs).
pub(crate) fn cli_with_env(
    app: &TestApp,
    args: &[&str],
    stdin: &str,
    more: &[(&str, &str)],
) -> std::process::Output {
    use std::io::Write;
    use std::process::Stdio;
    let key = app.secret_key_file();
    let dir = key.parent().expect("the key's directory").to_path_buf();
    let key = key.display().to_string();
    let url = app.url("");
    let mut env = vec![
        ("BULWARK_SECRET_KEY_FILE", key.as_str()),
        ("BULWARK_PUBLIC_URL", url.as_str()),
    ];
    env.extend_from_slice(more);
    let mut child = bulwark(app, &dir, args, &env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn bulwark");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    child.wait_with_output().expect("wait")
}

/// Output as text.
pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
