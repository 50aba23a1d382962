//! PostgreSQL's table statistics and dead rows, kept by Bulwark where the server does not.
//!
//! The engine's tables change all day: every run is inserted, updated as it is claimed,
//! renewed and settled, and deleted by retention. PostgreSQL's autovacuum normally vacuums and
//! analyses them. Where it is turned off (`autovacuum = off`), dead rows pile up and the
//! planner keeps the estimates of an empty table, so a read that should follow an index
//! scans the whole table instead — `bulwark bench soak` measured a read of 20 rows that scanned
//! 17,516, growing each minute. Then Bulwark does for the tables of its schema what autovacuum
//! would, by the server's own autovacuum thresholds (`docs/operations/several-instances.md`).

use sea_orm::{ConnectionTrait, DbErr, Statement};

/// A table whose dead rows or changes since its last analysis passed autovacuum's threshold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Due {
    pub table: String,
    /// Dead rows passed `autovacuum_vacuum_threshold` + scale × live rows.
    pub vacuum: bool,
    /// Changes passed `autovacuum_analyze_threshold` + scale × live rows.
    pub analyze: bool,
}

/// Whether the server vacuums and analyses on its own (`autovacuum` and `track_counts`, which
/// autovacuum needs, both on).
pub async fn autovacuum_on(db: &impl ConnectionTrait) -> Result<bool, DbErr> {
    let row = db
        .query_one_raw(Statement::from_string(
            db.get_database_backend(),
            "SELECT current_setting('autovacuum') = 'on' \
               AND current_setting('track_counts') = 'on' AS on",
        ))
        .await?;
    match row {
        Some(row) => row.try_get::<bool>("", "on"),
        None => Ok(true),
    }
}

/// The hot tables — every run and attempt is inserted, updated several times and deleted;
/// heartbeats and outboxes change all day — and the autovacuum settings migration 41 gives
/// them (`migration/src/m20261211_000041_hot_tables.rs`): vacuumed after 2 % of their rows
/// died instead of the server's default 20 %, so a queue of a million runs is not left with
/// 200,000 dead rows for index scans to step over.
pub const HOT_TABLES: &[&str] = &[
    "job_runs",
    "job_attempts",
    "nodes",
    "mail_outbox",
    "channel_deliveries",
];

/// One of autovacuum's settings for table `c` (in `pg_class`): its own where the table has
/// one, the server's otherwise.
fn setting(name: &str) -> String {
    format!(
        "COALESCE((SELECT option_value::float8 FROM pg_options_to_table(c.reloptions) \
           WHERE option_name = '{name}'), current_setting('{name}')::float8)"
    )
}

/// The tables of the current schema that autovacuum would vacuum or analyse now, by each
/// table's own settings.
pub async fn due(db: &impl ConnectionTrait) -> Result<Vec<Due>, DbErr> {
    let sql = format!(
        "SELECT s.relname::text AS name, \
           s.n_dead_tup > {} + {} * s.n_live_tup AS vacuum, \
           s.n_mod_since_analyze > {} + {} * s.n_live_tup AS analyze \
         FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid \
         WHERE s.schemaname = current_schema() ORDER BY s.relname",
        setting("autovacuum_vacuum_threshold"),
        setting("autovacuum_vacuum_scale_factor"),
        setting("autovacuum_analyze_threshold"),
        setting("autovacuum_analyze_scale_factor"),
    );
    let rows = db
        .query_all_raw(Statement::from_string(db.get_database_backend(), sql))
        .await?;
    let mut due = Vec::new();
    for row in rows {
        let d = Due {
            table: row.try_get("", "name")?,
            vacuum: row.try_get("", "vacuum")?,
            analyze: row.try_get("", "analyze")?,
        };
        if d.vacuum || d.analyze {
            due.push(d);
        }
    }
    Ok(due)
}

/// What `/metrics` shows of the tables' health on PostgreSQL.
#[derive(Debug, Clone, PartialEq)]
pub struct Health {
    /// Dead rows in each table of the current schema that has any, by name.
    pub dead_rows: Vec<(String, i64)>,
    /// How long the oldest transaction open on this database (another session's) has been:
    /// while it is, no vacuum may remove a row that died after it began.
    pub oldest_transaction_seconds: f64,
}

/// [`Health`] now; `None` on SQLite, which keeps no such statistics.
pub async fn health(db: &impl ConnectionTrait) -> Result<Option<Health>, DbErr> {
    let backend = db.get_database_backend();
    if backend != sea_orm::DatabaseBackend::Postgres {
        return Ok(None);
    }
    let rows = db
        .query_all_raw(Statement::from_string(
            backend,
            "SELECT relname::text AS name, n_dead_tup AS dead FROM pg_stat_user_tables \
             WHERE schemaname = current_schema() AND n_dead_tup > 0 ORDER BY relname",
        ))
        .await?;
    let mut dead_rows = Vec::with_capacity(rows.len());
    for row in rows {
        dead_rows.push((row.try_get("", "name")?, row.try_get("", "dead")?));
    }
    let oldest = db
        .query_one_raw(Statement::from_string(
            backend,
            "SELECT COALESCE(EXTRACT(EPOCH FROM max(clock_timestamp() - xact_start)), 0)::float8 \
               AS age FROM pg_stat_activity \
             WHERE datname = current_database() AND xact_start IS NOT NULL \
               AND pid <> pg_backend_pid()",
        ))
        .await?;
    let oldest_transaction_seconds = match oldest {
        Some(row) => row.try_get("", "age")?,
        None => 0.0,
    };
    Ok(Some(Health {
        dead_rows,
        oldest_transaction_seconds,
    }))
}

/// Vacuums (and analyses) or only analyses one table. `SKIP_LOCKED`: a table another node is
/// already vacuuming, or a migration holds, is left for the next round. Outside any
/// transaction, as `VACUUM` must be.
pub async fn tend(db: &impl ConnectionTrait, due: &Due) -> Result<(), DbErr> {
    let table = quote_ident(&due.table);
    let sql = if due.vacuum {
        format!("VACUUM (ANALYZE, SKIP_LOCKED) {table}")
    } else {
        format!("ANALYZE (SKIP_LOCKED) {table}")
    };
    db.execute_unprepared(&sql).await.map(|_| ())
}

/// A PostgreSQL identifier, quoted: the name comes from the catalogue, but a name is still
/// data in a statement.
fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::quote_ident;

    #[test]
    fn identifiers_are_quoted_with_their_quotes_doubled() {
        assert_eq!(quote_ident("job_runs"), "\"job_runs\"");
        assert_eq!(quote_ident("a\"b"), "\"a\"\"b\"");
    }
}
