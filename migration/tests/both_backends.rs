//! The migrations apply, roll back and re-apply on a real SQLite file and, when
//! `BULWARK_TEST_POSTGRES_URL` is set, on a fresh PostgreSQL database.

use migration::{Migrator, MigratorTrait};
use sea_orm_migration::sea_orm::{ConnectionTrait, Database, DatabaseConnection};

async fn exercise(db: &DatabaseConnection) {
    Migrator::up(db, None).await.expect("migrations apply");
    let applied = Migrator::get_applied_migrations(db).await.expect("list");
    assert_eq!(applied.len(), Migrator::migrations().len());
    for table in [
        "users",
        "sessions",
        "audit_log",
        "jobs",
        "job_runs",
        "job_attempts",
    ] {
        db.execute_unprepared(&format!("SELECT COUNT(*) FROM {table}"))
            .await
            .unwrap_or_else(|e| panic!("table {table} missing: {e}"));
    }
    Migrator::down(db, None)
        .await
        .expect("migrations roll back");
    assert!(
        db.execute_unprepared("SELECT COUNT(*) FROM users")
            .await
            .is_err(),
        "down must drop the tables"
    );
    Migrator::up(db, None).await.expect("migrations re-apply");
}

#[tokio::test]
async fn sqlite_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("m.db").display());
    let db = Database::connect(&url).await.expect("connect sqlite");
    exercise(&db).await;
}

#[tokio::test]
async fn postgres() {
    let Ok(base) = std::env::var("BULWARK_TEST_POSTGRES_URL") else {
        eprintln!("BULWARK_TEST_POSTGRES_URL not set: PostgreSQL migration test skipped");
        return;
    };
    let admin = Database::connect(&base).await.expect("connect postgres");
    let name = format!("bulwark_migr_{}", std::process::id());
    let _ = admin
        .execute_unprepared(&format!("DROP DATABASE IF EXISTS {name}"))
        .await;
    admin
        .execute_unprepared(&format!("CREATE DATABASE {name}"))
        .await
        .expect("create database");
    let url = match base.rsplit_once('/') {
        Some((prefix, _)) => format!("{prefix}/{name}"),
        None => panic!("BULWARK_TEST_POSTGRES_URL has no database path: {base}"),
    };
    let db = Database::connect(&url)
        .await
        .expect("connect fresh database");
    exercise(&db).await;
    db.close().await.expect("close");
    admin
        .execute_unprepared(&format!("DROP DATABASE {name}"))
        .await
        .expect("drop database");
}
