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

use sea_orm::sea_query::ArrayType;
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

    pub fn backend(&self) -> DatabaseBackend {
        self.backend
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

    /// `expr IN (ids)` with one parameter however many ids there are, so the statement's text,
    /// its prepared statement and its plan are the same for any list: an array on PostgreSQL
    /// (`expr = ANY($n)`), a JSON array on SQLite. An empty list matches nothing.
    pub fn in_ids(&mut self, expr: &str, ids: &[i64]) -> String {
        match self.backend {
            DatabaseBackend::Postgres => {
                let array = Value::Array(
                    ArrayType::BigInt,
                    Some(Box::new(
                        ids.iter().map(|id| Value::BigInt(Some(*id))).collect(),
                    )),
                );
                format!("{expr} = ANY({})", self.bind(array))
            }
            _ => {
                let json = serde_json::Value::from(ids.to_vec()).to_string();
                format!(
                    "{expr} IN (SELECT value FROM json_each({}))",
                    self.bind(json)
                )
            }
        }
    }

    /// The database's own "now", for lease expiries: `now()` on PostgreSQL (the transaction's
    /// start), so every node writes and compares leases by the one clock of the server they
    /// share, whatever their own clocks say; on SQLite, which has no clock but this process's,
    /// this process's time bound as a value (the one exact text format SQLite compares).
    pub fn db_now(&mut self) -> String {
        match self.backend {
            DatabaseBackend::Postgres => "now()".into(),
            _ => self.bind(crate::clock::now()),
        }
    }

    /// [`Binder::db_now`] plus `span`.
    pub fn db_now_plus(&mut self, span: std::time::Duration) -> String {
        match self.backend {
            DatabaseBackend::Postgres => format!(
                "(now() + CAST({} AS double precision) * interval '1 millisecond')",
                self.bind(span.as_millis().min(i64::MAX as u128) as i64)
            ),
            _ => self.bind(
                crate::clock::now()
                    + chrono::Duration::from_std(span).unwrap_or(chrono::Duration::zero()),
            ),
        }
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
/// PostgreSQL types, and one `Vec` of values per row. For [`update_from`] the first column is
/// the `id` of the row to update.
pub struct Values {
    pub columns: &'static [(&'static str, &'static str)],
    pub rows: Vec<Vec<Value>>,
}

/// `UPDATE table SET … FROM <values> v WHERE table.id = v.v_id AND …`: the rows of `table`
/// whose `id` is the first column of `values`. `set`, `condition` and `returning` name the
/// values as `v.v_<column>`.
///
/// The rows travel as one JSON parameter (see [`rows_source`]), so the statement's text is the
/// same for any number of rows: prepared once per connection, its plan reused. (A `VALUES`
/// list of parameters instead costs a fresh prepare per batch size, a plan over thousands of
/// parameters on PostgreSQL, and on SQLite a bind whose cost grows with the square of the
/// number of numbered parameters.)
///
/// Keep `condition` to what cannot be checked before: neither planner can see how many rows
/// the JSON holds, and a condition that looks selective (a status, a lease) tempts it to read
/// the table by that condition and scan the JSON again for every row it finds. Joined by id
/// alone, the JSON is read once and each row found by its key.
pub fn update_from(
    b: &mut Binder,
    table: &str,
    values: &Values,
    set: &str,
    condition: &str,
    returning: &str,
) -> String {
    let returning = returning_clause(returning);
    let key = values.columns.first().map_or("id", |(name, _)| name);
    let condition = if condition.is_empty() {
        format!("{table}.id = v.v_{key}")
    } else {
        format!("{table}.id = v.v_{key} AND {condition}")
    };
    let source = rows_source(b, values);
    match b.backend {
        DatabaseBackend::Postgres => {
            format!("UPDATE {table} SET {set} FROM {source} WHERE {condition}{returning}")
        }
        _ => format!("WITH {source} UPDATE {table} SET {set} FROM v WHERE {condition}{returning}"),
    }
}

/// `INSERT INTO table (columns) SELECT <select> FROM <values> v [<tail>]`: many rows in one
/// statement with the same text for any number of them (see [`update_from`]). `select` names
/// the values as `v.v_<column>`; `tail` is an `ON CONFLICT …` clause or empty.
pub fn insert_from(
    b: &mut Binder,
    table: &str,
    columns: &str,
    values: &Values,
    select: &str,
    tail: &str,
    returning: &str,
) -> String {
    let returning = returning_clause(returning);
    let source = rows_source(b, values);
    let tail = if tail.is_empty() {
        String::new()
    } else {
        format!(" {tail}")
    };
    match b.backend {
        DatabaseBackend::Postgres => format!(
            "INSERT INTO {table} ({columns}) SELECT {select} FROM {source}{tail}{returning}"
        ),
        // `WHERE true` tells SQLite's parser that an ON CONFLICT clause is not a join's.
        _ => format!(
            "WITH {source} INSERT INTO {table} ({columns}) SELECT {select} FROM v WHERE true{tail}{returning}"
        ),
    }
}

fn returning_clause(returning: &str) -> String {
    if returning.is_empty() {
        String::new()
    } else {
        format!(" RETURNING {returning}")
    }
}

/// The rows as a relation named `v`, read from one JSON array of objects: on PostgreSQL
/// `json_to_recordset($n::json) AS v(v_a type, …)`, on SQLite the body of a common table
/// expression `v AS (SELECT json_extract(…) AS v_a, … FROM json_each(?n))`.
fn rows_source(b: &mut Binder, values: &Values) -> String {
    let names: Vec<String> = values
        .columns
        .iter()
        .map(|(name, _)| format!("v_{name}"))
        .collect();
    let json = b.bind(json_objects(&names, &values.rows, b.backend));
    match b.backend {
        DatabaseBackend::Postgres => {
            let typed: Vec<String> = names
                .iter()
                .zip(values.columns)
                .map(|(name, (_, pg_type))| format!("{name} {pg_type}"))
                .collect();
            format!(
                "json_to_recordset({json}::json) AS v ({})",
                typed.join(", ")
            )
        }
        _ => {
            let fields: Vec<String> = names
                .iter()
                .map(|name| format!("json_extract(e.value, '$.{name}') AS {name}"))
                .collect();
            format!(
                "v AS (SELECT {} FROM json_each({json}) AS e)",
                fields.join(", ")
            )
        }
    }
}

/// The rows as a JSON array of objects keyed by `names`, written straight into one text (a
/// flush sends hundreds of thousands of values; building a `serde_json::Value` tree first
/// cost more than the database took to read them).
fn json_objects(names: &[String], rows: &[Vec<Value>], backend: DatabaseBackend) -> String {
    let keys: Vec<String> = names.iter().map(|name| format!("\"{name}\":")).collect();
    let mut out = Vec::with_capacity(rows.len() * keys.iter().map(|k| k.len() + 12).sum::<usize>());
    out.push(b'[');
    for (i, row) in rows.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.push(b'{');
        for (j, (key, value)) in keys.iter().zip(row).enumerate() {
            if j > 0 {
                out.push(b',');
            }
            out.extend_from_slice(key.as_bytes());
            write_json(&mut out, value, backend);
        }
        out.push(b'}');
    }
    out.push(b']');
    // Only JSON's punctuation, numbers and serde's escaped texts were written: valid UTF-8.
    match String::from_utf8(out) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

/// One value as [`json_of`] writes it, the common kinds without building a `Value`.
fn write_json(out: &mut Vec<u8>, value: &Value, backend: DatabaseBackend) {
    use std::io::Write;
    let written = match value {
        Value::SmallInt(Some(n)) => write!(out, "{n}").map_err(serde_json::Error::io),
        Value::Int(Some(n)) => write!(out, "{n}").map_err(serde_json::Error::io),
        Value::BigInt(Some(n)) => write!(out, "{n}").map_err(serde_json::Error::io),
        Value::String(Some(text)) => serde_json::to_writer(&mut *out, storable(text).as_ref()),
        other => serde_json::to_writer(&mut *out, &json_of(other, backend)),
    };
    if written.is_err() {
        // Writing into memory does not fail; should serde refuse a value, it is NULL.
        out.extend_from_slice(b"null");
    }
}

/// A SQLite `select` (whose columns include `columns`) wrapped so that its rows come back as
/// one JSON array of arrays, in the single column `rows` of a single row. For results of
/// thousands of small rows: SQLite's driver hands each row over from its worker thread on its
/// own, at several times the query's cost, while serde reads the one text at memory speed.
/// Texts stay exact, whatever characters they hold. (PostgreSQL streams rows cheaply, and
/// building the JSON there costs more than it saves: its callers read rows.)
pub fn sqlite_json_rows(select: &str, columns: &[&str]) -> String {
    let columns: Vec<String> = columns.iter().map(|c| format!("r.{c}")).collect();
    format!(
        "SELECT json_group_array(json_array({})) AS rows FROM ({select}) r",
        columns.join(", ")
    )
}

/// A bound value as JSON. Timestamps are written as each backend stores and compares them:
/// RFC 3339 for PostgreSQL to parse, and on SQLite the very text sqlx writes for a
/// `DateTime<Utc>` (SQLite compares timestamps as text, so the format must match).
fn json_of(value: &Value, backend: DatabaseBackend) -> serde_json::Value {
    use serde_json::Value as Json;
    match value {
        Value::Bool(v) => v.map_or(Json::Null, Json::Bool),
        Value::SmallInt(v) => v.map_or(Json::Null, Json::from),
        Value::Int(v) => v.map_or(Json::Null, Json::from),
        Value::BigInt(v) => v.map_or(Json::Null, Json::from),
        Value::Double(v) => v.map_or(Json::Null, Json::from),
        Value::String(v) => v
            .as_ref()
            .map_or(Json::Null, |s| Json::String(storable(s).into_owned())),
        Value::ChronoDateTimeUtc(v) => v.map_or(Json::Null, |at| {
            Json::String(match backend {
                DatabaseBackend::Postgres => {
                    at.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
                }
                _ => at.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, false),
            })
        }),
        other => {
            // The columns of a batch are the engine's own; a new type needs a line above.
            tracing::error!(value = ?other, "a batched value of a type json_of does not write; written as NULL");
            Json::Null
        }
    }
}

/// `text` as both databases store it: NUL, which PostgreSQL's `text` (and its JSON parser, on
/// the way to it) refuses, shown as U+2400 (␀). The engine's texts are made storable where they
/// are produced (`server/src/engine/executor.rs`, `tail`); this is the last guard, for
/// the batched statements, so one odd string can never fail a whole batch.
pub fn storable(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains('\0') {
        std::borrow::Cow::Owned(text.replace('\0', "\u{2400}"))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// A state word (`RunStatus::Pending.as_str()`) as an SQL literal, for conditions that must
/// match a partial index's predicate: both planners prove a partial index usable only from
/// constants, never from a bound parameter (a prepared statement's generic plan would read the
/// whole table instead). The words are the code's own, lowercase letters and underscores.
pub fn word(word: &'static str) -> String {
    debug_assert!(word.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'));
    format!("'{word}'")
}

/// ` INDEXED BY index` on SQLite: the index a lookup must use, where SQLite's planner, which
/// has no statistics, would take another. (SQLite refuses the statement if the index cannot
/// serve it, so a test notices.) Nothing on PostgreSQL, whose planner weighs them.
pub fn indexed_by(backend: DatabaseBackend, index: &'static str) -> String {
    debug_assert!(index.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'));
    match backend {
        DatabaseBackend::Sqlite => format!(" INDEXED BY {index}"),
        _ => String::new(),
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

/// Begins a transaction that reads and then writes. On SQLite it takes the write lock first,
/// with a write that changes nothing: in WAL mode a transaction that has read and then writes
/// fails at once, not after the busy timeout, when another connection (the engine, on a busy
/// day) committed in between. PostgreSQL needs nothing of the kind.
pub async fn begin_write(
    db: &sea_orm::DatabaseConnection,
) -> Result<sea_orm::DatabaseTransaction, sea_orm::DbErr> {
    use sea_orm::{ConnectionTrait, TransactionTrait};
    let txn = db.begin().await?;
    if txn.get_database_backend() == DatabaseBackend::Sqlite {
        txn.execute_unprepared("UPDATE audit_log SET id = id WHERE 0")
            .await?;
    }
    Ok(txn)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_written_as_the_json_they_are() {
        let at = chrono::DateTime::parse_from_rfc3339("2026-12-07T10:00:00Z")
            .unwrap()
            .to_utc();
        let rows = vec![
            vec![
                Value::BigInt(Some(-7)),
                Value::String(Some("quote \" back \\ nul \0 tab \t 中".into())),
                Value::Bool(Some(true)),
                Value::ChronoDateTimeUtc(Some(at)),
                Value::SmallInt(Some(3)),
            ],
            vec![
                Value::BigInt(None),
                Value::String(None),
                Value::Bool(None),
                Value::ChronoDateTimeUtc(None),
                Value::Int(Some(i32::MIN)),
            ],
        ];
        let names: Vec<String> = ["v_a", "v_b", "v_c", "v_d", "v_e"].map(String::from).into();
        for backend in [DatabaseBackend::Sqlite, DatabaseBackend::Postgres] {
            let written: serde_json::Value =
                serde_json::from_str(&json_objects(&names, &rows, backend)).unwrap();
            let expected: Vec<serde_json::Value> = rows
                .iter()
                .map(|row| {
                    serde_json::Value::Object(
                        names
                            .iter()
                            .zip(row)
                            .map(|(name, value)| (name.clone(), json_of(value, backend)))
                            .collect(),
                    )
                })
                .collect();
            assert_eq!(written, serde_json::Value::Array(expected), "{backend:?}");
        }
        assert_eq!(
            json_objects(
                &names[..1],
                &[vec![Value::String(Some("a\0".into()))]],
                DatabaseBackend::Sqlite
            ),
            "[{\"v_a\":\"a\u{2400}\"}]"
        );
    }

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

    #[test]
    fn batched_text_never_carries_nul() {
        let values = Values {
            columns: &[("id", "bigint"), ("message", "text")],
            rows: vec![vec![1i64.into(), "a\0b".into()]],
        };
        for backend in [DatabaseBackend::Postgres, DatabaseBackend::Sqlite] {
            let mut b = Binder::new(backend);
            update_from(&mut b, "t", &values, "message = v.v_message", "", "");
            let json = match &b.values[0] {
                Value::String(Some(json)) => json.clone(),
                other => panic!("{other:?}"),
            };
            assert!(
                json.contains("a\u{2400}b") && !json.contains("\\u0000"),
                "{json}"
            );
        }
    }
}
