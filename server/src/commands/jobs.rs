//! `bulwark jobs apply | list | run | check | seed-demo`: jobs as code, and jobs from the shell.

use std::path::Path;

use anyhow::Context;
use app::services::jobs;
use sea_orm::DatabaseConnection;

use crate::jobs_file::{apply_checked, parse_document};

pub async fn apply(
    db: &DatabaseConnection,
    key: &app::services::secrets::SecretKey,
    path: &Path,
) -> anyhow::Result<()> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let refused = |problems: Vec<String>| {
        anyhow::anyhow!(
            "{} was not applied (nothing was changed):\n  {}",
            path.display(),
            problems.join("\n  ")
        )
    };
    let doc = parse_document(&text).map_err(refused)?;
    let applied = apply_checked(db, doc, false, &super::cli(), key)
        .await
        .map_err(refused)?;
    println!(
        "{}: {} created, {} updated, {} unchanged{}{}",
        path.display(),
        applied.created.len(),
        applied.updated.len(),
        applied.unchanged.len(),
        match applied.calendars.len() {
            0 => String::new(),
            n => format!("; {n} calendars saved"),
        },
        match applied.pools.len() {
            0 => String::new(),
            n => format!("; {n} pools saved"),
        }
    );
    Ok(())
}

pub async fn list(db: &DatabaseConnection) -> anyhow::Result<()> {
    let rows = jobs::list(db, crate::clock::now())
        .await
        .context("could not list jobs")?;
    println!(
        "{:<28} {:<8} {:<20} {:<18} {:<8} next fire",
        "name", "kind", "cron", "timezone", "state"
    );
    for row in rows {
        use app::domain::cron::{CronExpr, format_fire_time, parse_timezone};
        let next = match (
            row.enabled,
            CronExpr::parse(&row.cron),
            parse_timezone(&row.timezone),
        ) {
            (true, Ok(cron), Ok(tz)) => cron
                .next_after(&tz, crate::clock::now())
                .map(|t| format_fire_time(&t))
                .unwrap_or_else(|e| e.to_string()),
            // Watched `every` so long: the next tick is kept, not computed.
            (true, Err(_), Ok(_)) if row.kind == app::domain::job::Kind::Watch => row
                .next_fire_at
                .map(|t| format_fire_time(&t))
                .unwrap_or_else(|| "-".into()),
            (false, _, _) => "-".into(),
            _ => "invalid schedule".into(),
        };
        println!(
            "{:<28} {:<8} {:<20} {:<18} {:<8} {next}",
            row.name,
            row.kind.as_str(),
            row.cron,
            row.timezone,
            if row.enabled { "enabled" } else { "disabled" }
        );
    }
    Ok(())
}

pub async fn run(
    db: &DatabaseConnection,
    name: &str,
    business_date: Option<chrono::NaiveDate>,
) -> anyhow::Result<()> {
    let job = super::job_named(db, name).await?;
    if job.kind == app::domain::job::Kind::Watch {
        anyhow::bail!(
            "{name} is a watched job: it runs elsewhere and pings (see `bulwark watch url {name}`)"
        );
    }
    let request = app::services::runs::Request {
        business_date,
        ..Default::default()
    };
    let run = match app::services::runs::trigger(db, job.id, request, crate::clock::now())
        .await
        .context("could not create the run")?
    {
        app::services::runs::Triggered::Created(run)
        | app::services::runs::Triggered::Existing(run) => run,
    };
    println!(
        "run {} of {name} queued; a running `bulwark serve` picks it up",
        run.id
    );
    Ok(())
}

/// `bulwark jobs check [--confirm NAME] [--json]`: the jobs that use a parameter where it is no
/// longer allowed (`app::services::held`), each place named; with `--confirm`, one of them
/// runs as written until its next edit (audited).
pub async fn check(
    db: &DatabaseConnection,
    confirm: Option<&str>,
    json: bool,
) -> anyhow::Result<()> {
    use app::services::held;
    if let Some(name) = confirm {
        held::confirm(db, name, &super::cli(), crate::clock::now())
            .await
            .map_err(|e| match e {
                jobs::JobError::Invalid(errors) => anyhow::anyhow!(
                    "{}",
                    errors
                        .into_iter()
                        .map(|e| e.problem.to_string())
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
                other => anyhow::Error::new(other).context("could not confirm the job"),
            })?;
        eprintln!("{name} runs with its parameters as written until its next edit");
        return Ok(());
    }
    let flagged = held::flagged(db)
        .await
        .context("could not check the jobs")?;
    if json {
        println!(
            "{}",
            serde_json::to_string(&flagged).context("could not write JSON")?
        );
        return Ok(());
    }
    if flagged.is_empty() {
        println!("every job uses its parameters where they are allowed");
    }
    for job in &flagged {
        let state = if job.held {
            "held"
        } else {
            "runs as written (confirmed)"
        };
        println!("{}: {state}", job.name);
        for m in &job.misplaced {
            println!(
                "  {}: {}",
                m.field,
                app::domain::job::parse::misplaced_problem(m)
            );
        }
    }
    Ok(())
}
