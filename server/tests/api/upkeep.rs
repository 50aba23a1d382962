//! PostgreSQL without autovacuum: the node's upkeep finds what autovacuum would have tended,
//! and vacuums and analyses it (`server/src/upkeep.rs`).

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use app::services::upkeep;
use sea_orm::{ConnectionTrait, DatabaseConnection, Statement, TransactionTrait};

use crate::helpers::TestApp;

/// The server's statistics reach `pg_stat_user_tables` within a few seconds of a change, each
/// statement's on its own: a table can be due for analysis (its inserts counted) a moment
/// before its deletes make it due for a vacuum, so this waits for the vacuum.
async fn until_due(db: &DatabaseConnection, table: &str) -> upkeep::Due {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let due = upkeep::due(db).await.unwrap();
        if let Some(d) = due.into_iter().find(|d| d.table == table && d.vacuum) {
            return d;
        }
        assert!(
            Instant::now() < deadline,
            "{table} never became due for a vacuum"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Dead rows left and how many times the table was vacuumed by hand.
async fn counters(db: &DatabaseConnection, table: &str) -> (i64, i64) {
    let row = db
        .query_one_raw(Statement::from_sql_and_values(
            db.get_database_backend(),
            "SELECT n_dead_tup, vacuum_count FROM pg_stat_user_tables WHERE relname = $1",
            [table.into()],
        ))
        .await
        .unwrap()
        .unwrap();
    (
        row.try_get("", "n_dead_tup").unwrap(),
        row.try_get("", "vacuum_count").unwrap(),
    )
}

/// Waits for a vacuum after the `before`-th to have left the table clean. A tend skips a table
/// another vacuum holds (`SKIP_LOCKED`), and the test application's own upkeep duty may be
/// vacuuming it at that moment: then that vacuum is the one that finishes the work.
async fn vacuumed_clean(db: &DatabaseConnection, table: &str, before: i64) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (dead, vacuums) = counters(db, table).await;
        if vacuums > before && dead == 0 {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{table}: {dead} dead rows, {vacuums} vacuums (was {before})"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Waits for the table to be due for nothing. Its analysis reaches `pg_stat_user_tables` on its
/// own, after the vacuum's, and may be the test application's own upkeep's when that held the
/// table while the test tended it (`SKIP_LOCKED`).
async fn no_longer_due(db: &DatabaseConnection, table: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let due = upkeep::due(db).await.unwrap();
        if due.iter().all(|d| d.table != table) {
            return;
        }
        assert!(Instant::now() < deadline, "still due: {due:?}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Runs the statements in one transaction. A backend hands its table counters to
/// `pg_stat_user_tables` when its transaction ends, so statements run on two pooled
/// connections could arrive in either order: an insert's counters arriving after the vacuum
/// made the table due for analysis again (seen in CI: "still due … analyze: true").
async fn in_one_transaction(db: &DatabaseConnection, statements: &[&str]) {
    let tx = db.begin().await.unwrap();
    for sql in statements {
        tx.execute_unprepared(sql).await.unwrap();
    }
    tx.commit().await.unwrap();
}

/// Dead rows past the threshold make a table due; tending it vacuums it (its dead rows are
/// gone and it is not due again), and a table with a quote in its name is only data. A round
/// does it by itself exactly when the server's autovacuum is off.
#[tokio::test(flavor = "multi_thread")]
async fn dead_rows_are_vacuumed_where_autovacuum_would() {
    let Some(app) = TestApp::postgres("upkeep_dead_rows").await else {
        eprintln!("BULWARK_TEST_POSTGRES_URL not set: skipped");
        return;
    };
    let db = &app.db;
    in_one_transaction(
        db,
        &[
            "CREATE TABLE \"churn\"\"s\" (id int) WITH (autovacuum_enabled = false)",
            "INSERT INTO \"churn\"\"s\" SELECT generate_series(1, 5000)",
            "DELETE FROM \"churn\"\"s\" WHERE id > 10",
        ],
    )
    .await;
    let due = until_due(db, "churn\"s").await;
    assert!(due.vacuum && due.analyze, "{due:?}");
    let (dead, vacuums) = counters(db, "churn\"s").await;
    assert!(dead >= 4990, "{dead}");

    upkeep::tend(db, &due).await.unwrap();
    vacuumed_clean(db, "churn\"s", vacuums).await;
    no_longer_due(db, "churn\"s").await;

    in_one_transaction(
        db,
        &[
            "INSERT INTO \"churn\"\"s\" SELECT generate_series(1, 5000)",
            "DELETE FROM \"churn\"\"s\"",
        ],
    )
    .await;
    until_due(db, "churn\"s").await;
    let vacuums = counters(db, "churn\"s").await.1;
    let autovacuum = upkeep::autovacuum_on(db).await.unwrap();
    let tended = server::upkeep::round(db, &AtomicBool::new(false))
        .await
        .unwrap();
    if autovacuum {
        assert_eq!(tended, 0, "autovacuum tends the tables");
        assert_eq!(counters(db, "churn\"s").await.1, vacuums);
    } else {
        assert!(tended >= 1, "a round without autovacuum tends what is due");
        vacuumed_clean(db, "churn\"s", vacuums).await;
    }
}

/// The hot tables carry their own autovacuum settings (migration 41), the thresholds `due`
/// reads are each table's own, and `/metrics`' table health sees dead rows and a transaction
/// held open.
#[tokio::test(flavor = "multi_thread")]
async fn hot_tables_are_vacuumed_sooner_and_a_held_transaction_shows() {
    let Some(app) = TestApp::postgres("upkeep_hot_tables").await else {
        eprintln!("BULWARK_TEST_POSTGRES_URL not set: skipped");
        return;
    };
    let db = &app.db;
    for table in upkeep::HOT_TABLES {
        let row = db
            .query_one_raw(Statement::from_sql_and_values(
                db.get_database_backend(),
                "SELECT array_to_string(reloptions, ',') AS options FROM pg_class \
                 WHERE relname = $1 AND relnamespace = current_schema()::regnamespace",
                [(*table).into()],
            ))
            .await
            .unwrap()
            .unwrap();
        let options: Option<String> = row.try_get("", "options").unwrap();
        let options = options.unwrap_or_default();
        assert!(
            options.contains("autovacuum_vacuum_scale_factor=0.02"),
            "{table}: {options}"
        );
    }
    // 300 dead rows of 1,000: due for a vacuum by the server's settings (50 + 20 % of the 700
    // live), not by this table's own scale factor of 0.5 (50 + 350).
    in_one_transaction(
        db,
        &[
            "CREATE TABLE lenient (id int) WITH (autovacuum_enabled = false, \
             autovacuum_vacuum_scale_factor = 0.5, autovacuum_analyze_scale_factor = 0.5)",
            "INSERT INTO lenient SELECT generate_series(1, 1000)",
            "DELETE FROM lenient WHERE id > 700",
        ],
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(30);
    let health = loop {
        let health = upkeep::health(db).await.unwrap().unwrap();
        if health
            .dead_rows
            .iter()
            .any(|(t, n)| t == "lenient" && *n == 300)
        {
            break health;
        }
        assert!(Instant::now() < deadline, "{health:?}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    assert!(health.oldest_transaction_seconds >= 0.0);
    let due = upkeep::due(db).await.unwrap();
    assert!(
        due.iter().all(|d| d.table != "lenient" || !d.vacuum),
        "{due:?}"
    );

    let held = db.begin().await.unwrap();
    held.execute_unprepared("SELECT txid_current()")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let health = upkeep::health(db).await.unwrap().unwrap();
    assert!(
        health.oldest_transaction_seconds >= 1.0,
        "{}",
        health.oldest_transaction_seconds
    );
    held.rollback().await.unwrap();
}
