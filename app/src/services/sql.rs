//! The few places where SQLite and PostgreSQL differ, for the statements sea-orm's builder
//! cannot say (multi-row upserts with arithmetic, claims with `RETURNING`, bitmap columns).
//!
//! - Placeholders: `$1, $2, …` on PostgreSQL, `?1, ?2, …` on SQLite. [`Binder`] numbers them
//!   as a statement is written, so a value and its placeholder are written together and the
//!   order values are bound in never matters.
//! - Row locks: PostgreSQL locks rows (`FOR UPDATE`, and `SKIP LOCKED` so concurrent claimers
//!   pass each other's rows by); SQLite has one writer at a time, so the lock clause is empty
//!   and the single write statement is what serialises claimers.
//!
//! Where the builder can say it (`lock_exclusive()`, `on_conflict`), code uses the builder.

use sea_orm::{DatabaseBackend, Statement, Value};

/// Numbered placeholders (`$n` or `?n`) for a statement being built, with their values.
pub struct Binder {
    backend: DatabaseBackend,
    values: Vec<Value>,
}

impl Binder {
    pub fn new(backend: DatabaseBackend) -> Binder {
        Binder {
            backend,
            values: Vec::new(),
        }
    }

    /// Adds a value; returns its placeholder.
    pub fn bind(&mut self, value: impl Into<Value>) -> String {
        self.values.push(value.into());
        match self.backend {
            DatabaseBackend::Postgres => format!("${}", self.values.len()),
            _ => format!("?{}", self.values.len()),
        }
    }

    /// Adds a value with a PostgreSQL type (`bigint`, `timestamptz`, …): for rows of a
    /// `VALUES` list, whose columns PostgreSQL cannot type from untyped parameters.
    pub fn bind_as(&mut self, value: impl Into<Value>, pg_type: &str) -> String {
        let placeholder = self.bind(value);
        match self.backend {
            DatabaseBackend::Postgres => format!("{placeholder}::{pg_type}"),
            _ => placeholder,
        }
    }

    /// Binds each value, separated by commas (for `IN (…)` and `VALUES (…)`).
    pub fn bind_list<V: Into<Value>>(&mut self, values: impl IntoIterator<Item = V>) -> String {
        values
            .into_iter()
            .map(|v| self.bind(v))
            .collect::<Vec<_>>()
            .join(", ")
    }

    pub fn statement(self, sql: String) -> Statement {
        Statement::from_sql_and_values(self.backend, sql, self.values)
    }

    /// The statement, keeping the values for another one over the same placeholders.
    pub fn statement_cloned(&self, sql: String) -> Statement {
        Statement::from_sql_and_values(self.backend, sql, self.values.clone())
    }
}

/// Rows of values to update many rows with different values in one statement: the columns'
/// names (prefixed `v_` in the statement, so they never clash with the table's) and
/// PostgreSQL types, and one `Vec` of values per row.
pub struct Values {
    pub columns: &'static [(&'static str, &'static str)],
    pub rows: Vec<Vec<Value>>,
}

/// `UPDATE table SET … FROM <values> v WHERE …`, the statement each backend needs: a `VALUES`
/// list joined as `v` (PostgreSQL), or the same list as a common table expression (SQLite,
/// which reads `UPDATE … FROM` since 3.33). `set`, `condition` and `returning` name the
/// values as `v.v_<column>`.
pub fn update_from(
    b: &mut Binder,
    table: &str,
    values: &Values,
    set: &str,
    condition: &str,
    returning: &str,
) -> String {
    let names: Vec<String> = values
        .columns
        .iter()
        .map(|(name, _)| format!("v_{name}"))
        .collect();
    let rows: Vec<String> = values
        .rows
        .iter()
        .map(|row| {
            let cells: Vec<String> = row
                .iter()
                .zip(values.columns)
                .map(|(value, (_, pg_type))| b.bind_as(value.clone(), pg_type))
                .collect();
            format!("({})", cells.join(", "))
        })
        .collect();
    let returning = if returning.is_empty() {
        String::new()
    } else {
        format!(" RETURNING {returning}")
    };
    match b.backend {
        DatabaseBackend::Postgres => format!(
            "UPDATE {table} SET {set} FROM (VALUES {}) AS v ({}) WHERE {condition}{returning}",
            rows.join(", "),
            names.join(", ")
        ),
        _ => format!(
            "WITH v ({}) AS (VALUES {}) UPDATE {table} SET {set} FROM v WHERE {condition}{returning}",
            names.join(", "),
            rows.join(", ")
        ),
    }
}

/// ` FOR UPDATE` on PostgreSQL: lock the selected rows until the transaction ends. Nothing on
/// SQLite, whose write lock already serialises writers.
pub fn for_update(backend: DatabaseBackend) -> &'static str {
    match backend {
        DatabaseBackend::Postgres => " FOR UPDATE",
        _ => "",
    }
}

/// ` FOR UPDATE SKIP LOCKED` on PostgreSQL: lock the selected rows, passing over rows another
/// transaction holds (for claiming work). Nothing on SQLite, as [`for_update`].
pub fn skip_locked(backend: DatabaseBackend) -> &'static str {
    match backend {
        DatabaseBackend::Postgres => " FOR UPDATE SKIP LOCKED",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_follow_the_backend() {
        let mut pg = Binder::new(DatabaseBackend::Postgres);
        assert_eq!(pg.bind(1), "$1");
        assert_eq!(pg.bind_list([2, 3]), "$2, $3");
        assert_eq!(pg.bind_as(4, "bigint"), "$4::bigint");
        let mut lite = Binder::new(DatabaseBackend::Sqlite);
        assert_eq!(lite.bind_list(["a", "b"]), "?1, ?2");
        assert_eq!(lite.bind_as(3, "bigint"), "?3");
        assert_eq!(skip_locked(DatabaseBackend::Sqlite), "");
        assert_eq!(
            skip_locked(DatabaseBackend::Postgres),
            " FOR UPDATE SKIP LOCKED"
        );
    }
}
