//! Upgrading: a SQLite database written by Bulwark 0.1 (commit ba0e32b; how the fixture was
//! made is in `server/tests/fixtures/make-v0.1.sh`) is migrated to the current schema by a
//! starting server, which then serves everything it held.

use app::entities::{job, job_attempt, job_run, user};
use migration::MigratorTrait;
use sea_orm::{ConnectionTrait, EntityTrait, PaginatorTrait};

use crate::helpers::TestApp;

const V0_1: &str = include_str!("../fixtures/v0.1.sql");
/// The fixture's administrator, as `make-v0.1.sh` created it.
const V0_1_ADMIN_PASSWORD: &str = "fixture-admin-password";

/// What 0.1 had, counted with plain SQL on its own schema.
async fn count(db: &impl ConnectionTrait, table: &str) -> i64 {
    db.query_one_raw(sea_orm::Statement::from_string(
        db.get_database_backend(),
        format!("SELECT COUNT(*) FROM {table}"),
    ))
    .await
    .unwrap()
    .unwrap()
    .try_get_by_index(0)
    .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_database_from_0_1_is_migrated_and_served() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("bulwark.db").display()
    );
    let old = sea_orm::Database::connect(&url).await.unwrap();
    old.execute_unprepared(V0_1).await.unwrap();
    let applied_before = count(&old, "seaql_migrations").await;
    let (jobs, runs, attempts) = (
        count(&old, "jobs").await,
        count(&old, "job_runs").await,
        count(&old, "job_attempts").await,
    );
    assert!(
        jobs >= 3 && runs >= 3 && attempts >= 3,
        "the fixture has data"
    );
    let old_users = count(&old, "users").await;
    old.close().await.unwrap();

    // The test server applies the migrations as `serve` does, then serves.
    let app = TestApp::start(url, dir, |_, _| {}).await;
    let applied = count(&app.db, "seaql_migrations").await;
    assert!(applied > applied_before);
    assert_eq!(applied as usize, migration::Migrator::migrations().len());
    assert_eq!(
        i64::try_from(job_run::Entity::find().count(&app.db).await.unwrap()).unwrap(),
        runs
    );
    assert_eq!(
        i64::try_from(job_attempt::Entity::find().count(&app.db).await.unwrap()).unwrap(),
        attempts
    );
    // The server adds its system jobs (cleanup, digest …) if 0.1 did not have them.
    let all_jobs = job::Entity::find().all(&app.db).await.unwrap();
    assert!(all_jobs.len() as i64 >= jobs);
    // The test harness adds a viewer; everyone from 0.1 is still there.
    assert_eq!(
        user::Entity::find().count(&app.db).await.unwrap() as i64,
        old_users + 1
    );

    // 0.1's administrator signs in with their password and sees their jobs and runs.
    let admin = app.signed_in("admin", V0_1_ADMIN_PASSWORD).await;
    let page = admin
        .get(app.url("/jobs"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for name in ["demo-flaky", "demo-steady", "demo-broken"] {
        assert!(page.contains(name), "{name} on the Jobs page");
    }
    let listed: serde_json::Value = app
        .call(&admin, "runs/list", &[("since_hours", "87600")])
        .await
        .json()
        .await
        .unwrap();
    assert!(
        !listed.as_array().map(Vec::is_empty).unwrap_or(true),
        "0.1's runs are listed: {listed}"
    );
}
