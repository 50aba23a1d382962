//! `bulwark backup`: taken while the engine runs jobs every second, restored into a new
//! directory and served there with every job and run of the moment it was taken.

use std::collections::BTreeMap;
use std::time::Duration;

use app::domain::run::RunStatus;
use app::entities::{job, job_run};
use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter};

use crate::helpers::{TestApp, define, noop_job};
use crate::process::{bulwark, output, serve_with};

fn engine_on(_: &mut server::config::Config, workers: &mut crate::helpers::Workers) {
    workers.engine = true;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_backup_taken_while_jobs_run_restores_and_serves() {
    let app = TestApp::sqlite_with(engine_on).await;
    for i in 0..4 {
        let mut input = noop_job(&format!("every-second-{i}"));
        input.cron = "* * * * * *".into();
        define(&app.db, input).await;
    }
    let succeeded = || {
        job_run::Entity::find()
            .filter(job_run::Column::Status.eq(RunStatus::Succeeded))
            .count(&app.db)
    };
    for _ in 0..300 {
        if succeeded().await.unwrap() >= 12 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(succeeded().await.unwrap() >= 12, "the engine runs the jobs");

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bulwark-backup.db");
    let runs_before = job_run::Entity::find().count(&app.db).await.unwrap();
    let (code, out, err) = output(bulwark(
        &app,
        dir.path(),
        &["backup", file.to_str().unwrap()],
        &[],
    ));
    assert_eq!(code, 0, "{err}");
    let runs_after = job_run::Entity::find().count(&app.db).await.unwrap();
    assert!(out.starts_with("backed up to"), "{out}");
    assert!(file.is_file());
    assert!(!dir.path().join("bulwark-backup.db.partial").exists());
    // It holds hashes and sealed credentials: its owner's alone, whatever the umask.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");

    // The copy is one moment between the two counts, and what had ended then is as it was.
    let copy_url = format!("sqlite://{}?mode=ro", file.display());
    let copy = sea_orm::Database::connect(&copy_url).await.unwrap();
    let copied_runs = job_run::Entity::find().all(&copy).await.unwrap();
    let n = copied_runs.len() as u64;
    assert!(
        (runs_before..=runs_after).contains(&n),
        "{runs_before} ≤ {n} ≤ {runs_after}"
    );
    assert!(out.contains(&format!("{n} runs")), "{out}");
    let live: BTreeMap<i64, job_run::Model> = job_run::Entity::find()
        .all(&app.db)
        .await
        .unwrap()
        .into_iter()
        .map(|r| (r.id, r))
        .collect();
    for run in &copied_runs {
        let now = &live[&run.id];
        if matches!(run.status, RunStatus::Succeeded | RunStatus::Dead) {
            assert_eq!((run.status, run.finished_at), (now.status, now.finished_at));
        }
    }
    let jobs = job::Entity::find().count(&copy).await.unwrap();
    assert_eq!(jobs, job::Entity::find().count(&app.db).await.unwrap());
    copy.close().await.unwrap();

    // Never over an existing file.
    let (code, _, err) = output(bulwark(
        &app,
        dir.path(),
        &["backup", file.to_str().unwrap()],
        &[],
    ));
    assert_eq!(code, 1);
    assert!(err.contains("exists already"), "{err}");

    // Restored: the copy put where a new instance's database_url points, served from there.
    let restored = tempfile::tempdir().unwrap();
    std::fs::create_dir(restored.path().join("data")).unwrap();
    std::fs::copy(&file, restored.path().join("data/bulwark.db")).unwrap();
    let url = format!(
        "sqlite://{}?mode=rwc",
        restored.path().join("data/bulwark.db").display()
    );
    let env = [("DATABASE_URL", url.as_str()), ("BULWARK_ENGINE", "false")];
    let (code, token, err) = output(bulwark(
        &app,
        restored.path(),
        &[
            "token",
            "create",
            "restore-check",
            "--owner",
            "admin",
            "--role",
            "viewer",
        ],
        &env,
    ));
    assert_eq!(code, 0, "{err}");
    let (mut child, addr) = serve_with(&app, restored.path(), "restored", &env);
    let client = reqwest::Client::new();
    let get = |path: String| {
        let request = client
            .get(format!("http://{addr}/api/v1{path}"))
            .bearer_auth(token.trim());
        async move { request.send().await }
    };
    let mut ready = false;
    for _ in 0..100 {
        if let Ok(res) = client.get(format!("http://{addr}/readyz")).send().await
            && res.status() == 200
        {
            ready = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(ready, "the restored instance serves");
    let listed: serde_json::Value = get("/jobs".into()).await.unwrap().json().await.unwrap();
    assert_eq!(listed["items"].as_array().unwrap().len() as u64, jobs);
    let mut served = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            Some(c) => format!("/runs?limit=500&cursor={c}"),
            None => "/runs?limit=500".into(),
        };
        let page: serde_json::Value = get(path).await.unwrap().json().await.unwrap();
        served.extend(
            page["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["id"].as_i64().unwrap()),
        );
        match page["next"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
    }
    served.sort_unstable();
    let mut expected: Vec<i64> = copied_runs.iter().map(|r| r.id).collect();
    expected.sort_unstable();
    assert_eq!(served, expected, "every run of the backup, served");
    let _ = child.kill();
    let _ = child.wait();
}
