//! Runs and their attempts: the Runs page, a run's story, and Run now.

use leptos::prelude::*;

use super::AppError;
use super::codec::Json;
use crate::views::runs::{HourBucket, RunView};

#[server(endpoint = "runs/list", output = Json)]
pub async fn list_runs(
    job: Option<String>,
    status: Option<String>,
    since_hours: Option<u32>,
    tag: Option<String>,
) -> Result<Vec<RunView>, AppError> {
    use crate::domain::run::RunStatus;
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            let status = super::status_filter::<RunStatus>(status.as_deref())?;
            // Ten years is older than anything kept; beyond it the date would not exist.
            const MAX_SINCE_HOURS: u32 = 24 * 3650;
            if since_hours.is_some_and(|h| h > MAX_SINCE_HOURS) {
                return Err(AppError::invalid(
                    "since_hours",
                    format!("since_hours must be at most {MAX_SINCE_HOURS} (ten years)"),
                ));
            }
            let tag = tag
                .as_deref()
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(crate::domain::job::tags::parse_tag)
                .transpose()
                .map_err(|e| AppError::invalid("tag", format!("tag: {e}")))?;
            let filter = crate::services::runs::RunFilter {
                job: job.filter(|j| !j.is_empty()),
                status,
                tag,
                since: since_hours
                    .map(|h| crate::clock::now() - chrono::Duration::hours(i64::from(h))),
                limit: crate::views::runs::RUNS_PAGE_LIMIT,
                before: None,
            };
            Ok(crate::services::runs::list(&state.db, &filter).await?)
        }
        .await,
    )
}

#[server(endpoint = "runs/get", output = Json)]
pub async fn get_run(id: i64) -> Result<RunView, AppError> {
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            crate::services::runs::get(&state.db, id)
                .await?
                .ok_or_else(|| AppError::NotFound(crate::t!("noun-run", id = id)))
        }
        .await,
    )
}

/// What a refused start says: the parameters at fault by field.
#[cfg(feature = "ssr")]
impl From<crate::services::runs::StartError> for AppError {
    fn from(e: crate::services::runs::StartError) -> Self {
        use crate::services::runs::StartError;
        match e {
            StartError::Invalid(errors) => AppError::fields(&errors),
            StartError::Job(e) => AppError::from(e),
            StartError::Db(e) => AppError::internal(&e),
        }
    }
}

/// Queues a run of the job now; the engine picks it up. `params`: the run's parameters as a
/// JSON object, checked against the job's declarations. Returns the run's id.
#[server(endpoint = "jobs/run-now", output = Json)]
pub async fn run_job_now(id: i64, params: Option<String>) -> Result<i64, AppError> {
    use crate::services::runs::Triggered;
    super::respond(
        async {
            let admin = super::auth::require_admin("start runs")?;
            let state = super::state()?;
            let job = crate::services::jobs::get(&state.db, id)
                .await
                .map_err(|_| AppError::NotFound(crate::t!("noun-job", id = id)))?;
            let given: serde_json::Map<String, serde_json::Value> =
                match params.as_deref().map(str::trim).filter(|p| !p.is_empty()) {
                    None => serde_json::Map::new(),
                    Some(text) => serde_json::from_str(text).map_err(|e| {
                        AppError::invalid(
                            "params",
                            crate::t!("error-params-json", error = e.to_string()),
                        )
                    })?,
                };
            let who = super::actor(&admin);
            let by = crate::services::runs::Asker {
                who: &who,
                action: "run.manual",
            };
            let now = crate::clock::now();
            let how = crate::services::runs::Start::default();
            let run = match crate::services::runs::start(&state.db, &job, &given, how, by, now)
                .await
                .map_err(AppError::from)?
            {
                Triggered::Created(run) | Triggered::Existing(run) => run,
            };
            Ok(run.id)
        }
        .await,
    )
}

/// Releases a run held because a job it depends on is failing: it becomes pending and runs.
#[server(endpoint = "runs/release", output = Json)]
pub async fn release_run(id: i64) -> Result<(), AppError> {
    super::respond(
        async {
            let admin = super::auth::require_admin("release held runs")?;
            let state = super::state()?;
            let who = super::actor(&admin);
            let released =
                crate::services::runs::release(&state.db, id, &who, crate::clock::now()).await?;
            if released {
                Ok(())
            } else {
                Err(AppError::invalid(
                    "run",
                    crate::t!("error-not-held", id = id),
                ))
            }
        }
        .await,
    )
}

/// Runs per hour over the last 24 hours, for the Overview.
#[server(endpoint = "dashboard/runs-per-hour", output = Json)]
pub async fn runs_per_hour() -> Result<Vec<HourBucket>, AppError> {
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            Ok(crate::services::runs::per_hour(&state.db, crate::clock::now(), 24).await?)
        }
        .await,
    )
}
