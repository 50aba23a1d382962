//! Runs and their attempts: the Runs page, a run's story, and Run now.

use chrono::{DateTime, Utc};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use super::AppError;

/// Which runs to list.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunFilter {
    pub job: Option<String>,
    pub status: Option<String>,
    /// Only runs created at or after this time.
    pub since: Option<DateTime<Utc>>,
    pub limit: u64,
}

/// One attempt, as lists and the detail page show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttemptView {
    pub number: i32,
    pub outcome: Option<String>,
    pub error_class: Option<String>,
    pub started_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
    pub duration_ms: Option<i64>,
    pub timeout_ms: i64,
    pub message: Option<String>,
    pub output_tail: Option<String>,
    pub node: String,
    pub load_avg: Option<f64>,
    pub slow: bool,
}

/// A run with its job's name and every attempt, oldest attempt first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunView {
    pub id: i64,
    pub job_id: i64,
    pub job: String,
    pub trigger: String,
    pub status: String,
    pub scheduled_for: DateTime<Utc>,
    pub created_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
    pub next_attempt_at: Option<DateTime<Utc>>,
    pub idempotency_key: String,
    pub last_error_class: Option<String>,
    pub last_error: Option<String>,
    pub attempts: Vec<AttemptView>,
    /// How it left the failed queue, by whom, when and why.
    pub resolution: Option<String>,
    pub resolved_by: Option<String>,
    pub resolved_at: Option<DateTime<Utc>>,
    pub resolution_reason: Option<String>,
    /// The dead run this one re-triggers, and the runs that re-trigger this one.
    pub retrigger_of: Option<i64>,
    pub retriggered_as: Vec<i64>,
    /// The retry and timeout policy recorded when the run was created (JSON), and one-off
    /// overrides from a re-trigger.
    pub policy: Option<String>,
    pub override_timeout_ms: Option<i64>,
    pub override_retry: Option<String>,
}

#[server(endpoint = "runs/list")]
pub async fn list_runs(
    job: Option<String>,
    status: Option<String>,
    since_hours: Option<u32>,
) -> Result<Vec<RunView>, AppError> {
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            let filter = RunFilter {
                job: job.filter(|j| !j.is_empty()),
                status: status.filter(|s| !s.is_empty()),
                since: since_hours.map(|h| Utc::now() - chrono::Duration::hours(i64::from(h))),
                limit: 200,
            };
            Ok(crate::services::runs::list(&state.db, &filter).await?)
        }
        .await,
    )
}

#[server(endpoint = "runs/get")]
pub async fn get_run(id: i64) -> Result<RunView, AppError> {
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            crate::services::runs::get(&state.db, id)
                .await?
                .ok_or_else(|| AppError::NotFound(format!("run {id}")))
        }
        .await,
    )
}

/// Queues a run of the job now; the engine picks it up. Returns the run's id.
#[server(endpoint = "jobs/run-now")]
pub async fn run_job_now(id: i64) -> Result<i64, AppError> {
    super::respond(
        async {
            let admin = super::auth::require_admin("start runs")?;
            let state = super::state()?;
            let job = crate::services::jobs::get(&state.db, id)
                .await
                .map_err(|_| AppError::NotFound(format!("job {id}")))?;
            let run = crate::services::runs::create_manual(&state.db, job.id, Utc::now()).await?;
            let ip = super::auth::request_ip();
            crate::services::audit::record(
                &state.db,
                &crate::services::audit::Actor {
                    id: Some(admin.id),
                    name: &admin.username,
                    ip: ip.as_deref(),
                },
                "run.manual",
                &job.name,
                serde_json::json!({ "run": run.id }),
                Utc::now(),
            )
            .await?;
            Ok(run.id)
        }
        .await,
    )
}

/// Releases a run held because a job it depends on is failing: it becomes pending and runs.
#[server(endpoint = "runs/release")]
pub async fn release_run(id: i64) -> Result<(), AppError> {
    super::respond(
        async {
            let admin = super::auth::require_admin("release held runs")?;
            let state = super::state()?;
            let ip = super::auth::request_ip();
            let released =
                crate::services::runs::release(&state.db, id, &admin, ip.as_deref(), Utc::now())
                    .await?;
            if released {
                Ok(())
            } else {
                Err(AppError::invalid(
                    "run",
                    format!("run {id} is not held (it is not blocked)"),
                ))
            }
        }
        .await,
    )
}
