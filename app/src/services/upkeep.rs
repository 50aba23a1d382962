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

/// The tables of the current schema that autovacuum would vacuum or analyse now.
pub async fn due(db: &impl ConnectionTrait) -> Result<Vec<Due>, DbErr> {
    let rows = db
        .query_all_raw(Statement::from_string(
            db.get_database_backend(),
            "SELECT relname::text AS name, \
               n_dead_tup > current_setting('autovacuum_vacuum_threshold')::float8 \
                 + current_setting('autovacuum_vacuum_scale_factor')::float8 * n_live_tup AS vacuum, \
               n_mod_since_analyze > current_setting('autovacuum_analyze_threshold')::float8 \
                 + current_setting('autovacuum_analyze_scale_factor')::float8 * n_live_tup AS analyze \
             FROM pg_stat_user_tables WHERE schemaname = current_schema() ORDER BY relname",
        ))
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
