//! `bulwark backup FILE`: a consistent copy of a SQLite database, taken while `serve` runs.
//!
//! `VACUUM INTO` reads the database inside one transaction, so the copy is one moment of it
//! whatever the engine writes meanwhile (WAL lets both go on), and it comes out compacted. It
//! is written beside FILE first and renamed once checked, so a failed backup leaves no file
//! that looks like one. PostgreSQL has its own tool for this: `pg_dump`.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use sea_orm::{ConnectionTrait, DatabaseBackend, DatabaseConnection, Statement};

pub async fn backup(db: &DatabaseConnection, file: &Path) -> anyhow::Result<()> {
    if db.get_database_backend() != DatabaseBackend::Sqlite {
        bail!(
            "bulwark backup copies SQLite databases; for PostgreSQL use its own tool, for \
             example: pg_dump --format=custom --file {} \"$DATABASE_URL\" (and pg_restore to \
             bring it back)",
            file.display()
        );
    }
    if file.exists() {
        bail!(
            "{} exists already: backups never overwrite a file",
            file.display()
        );
    }
    let partial = partial_name(file);
    // A partial file from an interrupted backup is ours to replace.
    let _ = std::fs::remove_file(&partial);
    // The copy holds password hashes, trigger-URL ids and sealed credentials: readable by its
    // owner alone from its first byte, whatever the umask. SQLite writes into an empty file.
    create_private(&partial)?;
    let target = partial
        .to_str()
        .context("the backup's path is not valid UTF-8")?;
    db.execute_raw(Statement::from_sql_and_values(
        DatabaseBackend::Sqlite,
        "VACUUM INTO ?",
        [target.into()],
    ))
    .await
    .with_context(|| format!("could not write the backup to {}", partial.display()))?;

    let summary = check(&partial).await.inspect_err(|_| {
        let _ = std::fs::remove_file(&partial);
    })?;
    std::fs::rename(&partial, file)
        .with_context(|| format!("could not move the backup to {}", file.display()))?;
    let bytes = std::fs::metadata(file).map(|m| m.len()).unwrap_or(0);
    println!(
        "backed up to {} ({bytes} bytes): {} jobs, {} runs, {} attempts, {} users",
        file.display(),
        summary.jobs,
        summary.runs,
        summary.attempts,
        summary.users
    );
    Ok(())
}

/// An empty file only its owner may read or write.
fn create_private(path: &Path) -> anyhow::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
        .open(path)
        .with_context(|| format!("could not create {}", path.display()))?;
    Ok(())
}

struct Summary {
    jobs: i64,
    runs: i64,
    attempts: i64,
    users: i64,
}

/// Opens the copy on its own and asks SQLite whether it is sound.
async fn check(file: &Path) -> anyhow::Result<Summary> {
    let url = format!("sqlite://{}?mode=ro", file.display());
    let copy = sea_orm::Database::connect(&url)
        .await
        .with_context(|| format!("could not open the backup {}", file.display()))?;
    let answer = copy
        .query_one_raw(Statement::from_string(
            DatabaseBackend::Sqlite,
            "PRAGMA integrity_check",
        ))
        .await?
        .map(|row| row.try_get_by_index::<String>(0))
        .transpose()?
        .unwrap_or_default();
    if answer != "ok" {
        bail!("the backup failed SQLite's integrity check: {answer}");
    }
    let count = |table: &'static str| {
        let copy = copy.clone();
        async move {
            copy.query_one_raw(Statement::from_string(
                DatabaseBackend::Sqlite,
                format!("SELECT COUNT(*) FROM {table}"),
            ))
            .await?
            .map(|row| row.try_get_by_index::<i64>(0))
            .transpose()?
            .context("no answer to a count")
        }
    };
    let summary = Summary {
        jobs: count("jobs").await?,
        runs: count("job_runs").await?,
        attempts: count("job_attempts").await?,
        users: count("users").await?,
    };
    copy.close().await?;
    Ok(summary)
}

fn partial_name(file: &Path) -> PathBuf {
    let mut name = file.file_name().unwrap_or_default().to_os_string();
    name.push(".partial");
    file.with_file_name(name)
}
