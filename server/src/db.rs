//! Connecting to the database and bringing its schema up to date.

use std::time::Duration;

use migration::{Migrator, MigratorTrait};
use sea_orm::sqlx::sqlite::{SqliteJournalMode, SqliteSynchronous};
use sea_orm::{ConnectOptions, Database, DatabaseConnection, DbErr};

#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("DATABASE_URL must start with sqlite:// or postgres://, got '{0}'")]
    Scheme(String),
    #[error("cannot create the directory {path} for the SQLite database: {source}")]
    Directory {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot connect to the database at {url}: {source}")]
    Connect { url: String, source: DbErr },
    #[error("applying migrations failed: {0}")]
    Migrate(DbErr),
}

/// The URL with any password replaced, fit for logs and error messages.
pub fn redacted(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme_end), Some(at)) if at > scheme_end => {
            let userinfo = &url[scheme_end + 3..at];
            match userinfo.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..scheme_end + 3], &url[at..]),
                None => url.to_string(),
            }
        }
        _ => url.to_string(),
    }
}

/// How PostgreSQL is reached (`database_pooler`): directly (or through a pooler in session
/// mode), or through a pooler in transaction mode — PgBouncer's `pool_mode = transaction` —
/// where a server connection is this process's for one transaction only
/// (`docs/operations/several-instances.md`, "Behind PgBouncer").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Pooler {
    #[default]
    None,
    Transaction,
}

impl Pooler {
    pub fn as_str(self) -> &'static str {
        match self {
            Pooler::None => "none",
            Pooler::Transaction => "transaction",
        }
    }
}

/// What PgBouncer answers a startup parameter it does not pass on (`options`, which a direct
/// connection sets): the sign that a pooler stands between.
const POOLER_REFUSAL: &str = "unsupported startup parameter";

/// Connects to SQLite or PostgreSQL, chosen by the URL, directly.
pub async fn connect(url: &str) -> Result<DatabaseConnection, DbError> {
    Ok(connect_via(url, Pooler::None).await?.0)
}

/// Connects as [`connect`], through `pooler`; returns the connection and how it was made. A
/// pooler met where none was said (it refused the direct connection's settings) is used in
/// transaction mode, the one that works through either of its modes, and said so in the log.
pub async fn connect_via(
    url: &str,
    pooler: Pooler,
) -> Result<(DatabaseConnection, Pooler), DbError> {
    match connect_once(url, pooler).await {
        Err(DbError::Connect { source, .. })
            if pooler == Pooler::None && source.to_string().contains(POOLER_REFUSAL) =>
        {
            tracing::warn!(
                "the database refused a direct connection's settings, as PgBouncer does: \
                 connecting as through a pooler in transaction mode (say database_pooler = \
                 \"transaction\" to skip this)"
            );
            Ok((
                connect_once(url, Pooler::Transaction).await?,
                Pooler::Transaction,
            ))
        }
        other => other.map(|db| (db, pooler)),
    }
}

/// A SQLite file gets WAL and a busy timeout, and a small pool: sqlx's default of one
/// connection deadlocks any code that holds a transaction while querying through the pool.
///
/// Through a pooler in transaction mode no statement is kept prepared (the patched sqlx in
/// `vendor/sqlx-postgres` then parses, binds and runs each in one round trip under no name),
/// and no session setting is sent: the server connection is another client's after the
/// transaction.
async fn connect_once(url: &str, pooler: Pooler) -> Result<DatabaseConnection, DbError> {
    let mut options = ConnectOptions::new(url.to_string());
    options
        .connect_timeout(Duration::from_secs(5))
        .acquire_timeout(Duration::from_secs(10))
        .sqlx_logging_level(log::LevelFilter::Debug);

    if url.starts_with("sqlite:") {
        let in_memory = url.contains(":memory:") || url.contains("mode=memory");
        if !in_memory {
            ensure_parent_dir(url)?;
            options.max_connections(8).map_sqlx_sqlite_opts(|o| {
                o.journal_mode(SqliteJournalMode::Wal)
                    .synchronous(SqliteSynchronous::Normal)
                    .busy_timeout(Duration::from_secs(10))
                    .foreign_keys(true)
                    // SQLite's default page cache is 2 MB per connection: big upserts (a
                    // traffic flush) then spend most of their time re-reading index pages
                    // through system calls. Memory-mapping the file and a 32 MB cache cut
                    // that out.
                    .pragma("cache_size", "-32768")
                    .pragma("mmap_size", "268435456")
            });
        } else {
            options.max_connections(1);
        }
    } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        // A node cut off from the database mid-transaction would otherwise keep its row locks
        // until TCP notices, blocking the nodes that take its work over.
        options
            .max_connections(16)
            .map_sqlx_postgres_opts(move |o| match pooler {
                Pooler::None => o.options([("idle_in_transaction_session_timeout", "10s")]),
                // `extra_float_digits` is a startup parameter PgBouncer refuses unless told
                // to ignore it; floats come back in binary, where it changes nothing.
                Pooler::Transaction => o.statement_cache_capacity(0).extra_float_digits(None),
            });
    } else {
        return Err(DbError::Scheme(redacted(url)));
    }

    Database::connect(options)
        .await
        .map_err(|source| DbError::Connect {
            url: redacted(url),
            source,
        })
}

fn ensure_parent_dir(url: &str) -> Result<(), DbError> {
    let path = url
        .trim_start_matches("sqlite://")
        .trim_start_matches("sqlite:")
        .split('?')
        .next()
        .unwrap_or_default();
    if let Some(parent) = std::path::Path::new(path).parent()
        && !parent.as_os_str().is_empty()
    {
        std::fs::create_dir_all(parent).map_err(|source| DbError::Directory {
            path: parent.display().to_string(),
            source,
        })?;
    }
    Ok(())
}

/// Applies every pending migration; returns how many ran.
pub async fn migrate(db: &DatabaseConnection) -> Result<usize, DbError> {
    let pending = Migrator::get_pending_migrations(db)
        .await
        .map_err(DbError::Migrate)?
        .len();
    Migrator::up(db, None).await.map_err(DbError::Migrate)?;
    Ok(pending)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_redacted() {
        assert_eq!(
            redacted("postgres://bulwark:s3cret@db:5432/bulwark"),
            "postgres://bulwark:***@db:5432/bulwark"
        );
        assert_eq!(
            redacted("postgres://postgres@127.0.0.1/test"),
            "postgres://postgres@127.0.0.1/test"
        );
        assert_eq!(
            redacted("sqlite://data/bulwark.db"),
            "sqlite://data/bulwark.db"
        );
    }

    #[tokio::test]
    async fn unknown_scheme_is_refused() {
        let err = connect("mysql://localhost/x").await.unwrap_err();
        assert!(
            err.to_string().contains("sqlite:// or postgres://"),
            "{err}"
        );
    }
}
