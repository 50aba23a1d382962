//! `bulwark jobs history | diff | restore`: a job's revisions from the shell
//! (`app::services::revisions`).

use anyhow::Context;
use app::services::secrets::SecretKey;
use sea_orm::DatabaseConnection;

/// `jobs history NAME [--json]`: one line per revision, newest first: number, when, who, note.
pub async fn history(db: &DatabaseConnection, name: &str, json: bool) -> anyhow::Result<()> {
    let job = super::job_named(db, name).await?;
    let listed = app::services::revisions::history(db, job.id)
        .await
        .context("could not read the revisions")?;
    if json {
        println!("{}", serde_json::to_string_pretty(&listed)?);
        return Ok(());
    }
    println!("revision\tat\tactor\tnote");
    for r in listed {
        println!(
            "{}\t{}\t{}\t{}",
            r.revision,
            r.at.to_rfc3339(),
            r.actor,
            r.note.unwrap_or_default()
        );
    }
    Ok(())
}

/// `jobs diff NAME A B`: each field that differs, as `field: before → after`, credentials
/// hidden.
pub async fn diff(
    db: &DatabaseConnection,
    key: &SecretKey,
    name: &str,
    (a, b): (i32, i32),
) -> anyhow::Result<()> {
    let job = super::job_named(db, name).await?;
    let changes = app::services::revisions::diff(db, key, &job, (a, b)).await?;
    if changes.is_empty() {
        println!("revisions {a} and {b} of {name} are the same");
    }
    for change in changes {
        println!(
            "{}: {} → {}",
            change.field,
            shown(&change.before),
            shown(&change.after)
        );
    }
    Ok(())
}

/// A value on one line: empty as `""`, line breaks as `\n`.
fn shown(value: &str) -> String {
    if value.is_empty() {
        "\"\"".to_string()
    } else {
        value.replace('\n', "\\n")
    }
}

/// `jobs restore NAME R [--note TEXT]`: revision R's definition, credentials included, as the
/// job's next revision (audited as an update by `cli`).
pub async fn restore(
    db: &DatabaseConnection,
    key: &SecretKey,
    name: &str,
    revision: i32,
    note: Option<&str>,
) -> anyhow::Result<()> {
    let job = super::job_named(db, name).await?;
    let default_note = format!("restored from revision {revision}");
    let note = note.unwrap_or(&default_note);
    let now = crate::clock::now();
    let cli = super::cli();
    let saved = app::services::jobs::restore(db, &job, revision, &cli, (key, Some(note)), now)
        .await
        .map_err(|e| match e {
            app::services::jobs::JobError::Invalid(problems) => anyhow::anyhow!(
                "revision {revision} no longer holds: {}",
                problems
                    .iter()
                    .map(|p| format!("{}: {}", p.field, p.problem))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
            other => anyhow::Error::new(other),
        })?;
    if saved.revision == job.revision {
        println!("{name} is at revision {revision}'s definition already: nothing changed");
    } else {
        println!(
            "{name}: revision {} restores revision {revision}",
            saved.revision
        );
    }
    Ok(())
}
