//! `bulwark runs list`: runs newest first, with every attempt.

use anyhow::Context;
use app::domain::run::{ErrorClass, Outcome, RunStatus, TimeoutKind, Trigger};
use app::services::runs::{self, RunFilter};
use app::views::runs::RunView;
use chrono::{DateTime, SecondsFormat, Utc};
use sea_orm::DatabaseConnection;
use serde::Serialize;

/// The JSON shape other tools read (`docs/ARCHITECTURE.md`, "Command line").
#[derive(Debug, Serialize)]
struct RunJson {
    id: i64,
    job: String,
    trigger: Trigger,
    status: RunStatus,
    scheduled_for: String,
    last_error_class: Option<ErrorClass>,
    last_error: Option<String>,
    /// The revision of its job it ran; null before the engine took it.
    revision: Option<i32>,
    /// A child run's parent (a spread job's tick); null for any other run.
    parent: Option<i64>,
    /// A child run's place: `{ "index": 0, "total": 2 }`; null for any other run.
    shard: Option<app::domain::job::spread::Shard>,
    attempts: Vec<AttemptJson>,
}

#[derive(Debug, Serialize)]
struct AttemptJson {
    number: i32,
    outcome: Option<Outcome>,
    error_class: Option<ErrorClass>,
    started_at: String,
    finished_at: Option<String>,
    duration_ms: Option<i64>,
    timeout_ms: i64,
    timeout_kind: Option<TimeoutKind>,
    spent_retry: bool,
    node: String,
}

fn rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, false)
}

fn to_json(run: RunView) -> RunJson {
    RunJson {
        id: run.id,
        job: run.job,
        trigger: run.trigger,
        status: run.status,
        scheduled_for: rfc3339(run.scheduled_for),
        last_error_class: run.last_error_class,
        last_error: run.last_error,
        revision: run.revision,
        parent: run.parent,
        shard: run.shard,
        attempts: run
            .attempts
            .into_iter()
            .map(|a| AttemptJson {
                number: a.number,
                outcome: a.outcome,
                error_class: a.error_class,
                started_at: rfc3339(a.started_at),
                finished_at: a.finished_at.map(rfc3339),
                duration_ms: a.duration_ms,
                timeout_ms: a.timeout_ms,
                timeout_kind: a.timeout_kind,
                spent_retry: a.spent_retry,
                node: a.node,
            })
            .collect(),
    }
}

pub async fn list(db: &DatabaseConnection, filter: RunFilter, json: bool) -> anyhow::Result<()> {
    let rows = runs::list(db, &filter)
        .await
        .context("could not list runs")?;
    if json {
        let out: Vec<RunJson> = rows.into_iter().map(to_json).collect();
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    println!(
        "{:>7}  {:<24} {:<10} {:<11} {:<25} attempts",
        "id", "job", "trigger", "status", "scheduled for"
    );
    for run in rows {
        let attempts: Vec<String> = run
            .attempts
            .iter()
            .map(|a| {
                format!(
                    "{}:{}",
                    a.number,
                    a.outcome
                        .map_or(RunStatus::Running.as_str(), Outcome::as_str)
                )
            })
            .collect();
        println!(
            "{:>7}  {:<24} {:<10} {:<11} {:<25} {}",
            run.id,
            run.job,
            run.trigger.as_str(),
            run.status.as_str(),
            rfc3339(run.scheduled_for),
            attempts.join(" ")
        );
    }
    Ok(())
}
