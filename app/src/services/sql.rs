//! The few places where SQLite and PostgreSQL differ, for the statements sea-orm's builder
//! cannot say (multi-row upserts with arithmetic, claims with `RETURNING`, bitmap columns).
//!
//! - Placeholders: `$1, $2, …` on PostgreSQL, `?` on SQLite. [`Binder`] numbers them as a
//!   statement is written, so a value and its placeholder are written together and cannot
//!   drift apart.
//! - Row locks: PostgreSQL locks rows (`FOR UPDATE`, and `SKIP LOCKED` so concurrent claimers
//!   pass each other's rows by); SQLite has one writer at a time, so the lock clause is empty
//!   and the single write statement is what serialises claimers.
//!
//! Where the builder can say it (`lock_exclusive()`, `on_conflict`), code uses the builder.

use sea_orm::{DatabaseBackend, Statement, Value};

/// Placeholders `$n` or `?` for a statement being built, with their values in order.
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

    /// Adds a value; returns its placeholder. `?` placeholders are positional: bind in the
    /// order they appear in the statement.
    pub fn bind(&mut self, value: impl Into<Value>) -> String {
        self.values.push(value.into());
        match self.backend {
            DatabaseBackend::Postgres => format!("${}", self.values.len()),
            _ => "?".to_string(),
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
        let mut lite = Binder::new(DatabaseBackend::Sqlite);
        assert_eq!(lite.bind_list(["a", "b"]), "?, ?");
        assert_eq!(skip_locked(DatabaseBackend::Sqlite), "");
        assert_eq!(
            skip_locked(DatabaseBackend::Postgres),
            " FOR UPDATE SKIP LOCKED"
        );
    }
}
