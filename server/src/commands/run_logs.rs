//! `bulwark runs log` and `bulwark runs search`: an attempt's whole output, and lines of
//! many runs' output (`app/src/services/run_logs.rs`).

use std::io::Write;

use anyhow::Context;
use app::services::run_logs::{self, SearchFilter};
use sea_orm::DatabaseConnection;

/// How `runs log` prints.
#[derive(Debug, Clone, Copy)]
pub struct Printing {
    pub follow: bool,
    pub timestamps: bool,
}

/// Prints attempt `attempt` of run `id` (its last by default): the bytes as the job wrote
/// them, or each line after its time and stream.
pub async fn print(
    db: &DatabaseConnection,
    id: i64,
    attempt: Option<i32>,
    how: Printing,
) -> anyhow::Result<()> {
    let (attempt_id, _) = run_logs::attempt_id(db, id, attempt)
        .await
        .context("could not read the run")?
        .with_context(|| match attempt {
            Some(n) => format!("run {id} has no attempt {n}"),
            None => format!("run {id} has no attempt yet (or there is no such run)"),
        })?;
    let mut out = std::io::stdout().lock();
    let mut seq = -1;
    loop {
        let running = how.follow && run_logs::running(db, attempt_id).await?;
        for placed in run_logs::placed(db, attempt_id, seq).await? {
            let chunk = run_logs::chunk(db, placed.id)
                .await?
                .context("a chunk of the log went away while it was read")?;
            write_chunk(&mut out, &chunk, how.timestamps)?;
            seq = placed.seq;
        }
        out.flush()?;
        if !running {
            return Ok(());
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
}

fn write_chunk(
    out: &mut impl Write,
    chunk: &run_logs::NewChunk,
    timestamps: bool,
) -> std::io::Result<()> {
    if timestamps {
        out.write_all(&run_logs::stamped(chunk))
    } else {
        out.write_all(&chunk.bytes)
    }
}

/// `--since 7d`: that long before now.
pub fn since(text: &str) -> anyhow::Result<chrono::DateTime<chrono::Utc>> {
    run_logs::since(text, crate::clock::now()).map_err(|e| anyhow::anyhow!("--since {text}: {e}"))
}

/// Prints the lines found: one JSON object per line with `--json`, else `run/attempt:line`
/// and the text.
pub async fn search(
    db: &DatabaseConnection,
    filter: &SearchFilter,
    json: bool,
) -> anyhow::Result<()> {
    let found = run_logs::search(db, filter).await.map_err(|e| match e {
        run_logs::SearchError::TooShort => anyhow::anyhow!("{e}"),
        run_logs::SearchError::Db(e) => anyhow::Error::new(e).context("could not search"),
    })?;
    let mut out = std::io::stdout().lock();
    for hit in found {
        if json {
            let line = serde_json::json!({
                "run": hit.run, "attempt": hit.attempt, "line": hit.line, "text": hit.text,
                "job": hit.job, "stream": hit.stream, "at": hit.at,
            });
            writeln!(out, "{line}")?;
        } else {
            writeln!(
                out,
                "{}/{}:{}\t{}\t{}",
                hit.run, hit.attempt, hit.line, hit.job, hit.text
            )?;
        }
    }
    Ok(())
}
