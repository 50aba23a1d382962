//! Maintenance: pause everything (or a tag) now or in a window ahead, resume, and pause one
//! job. Every user reads the state (the banner is on every page); admins change it.

use leptos::prelude::*;

use super::AppError;
use super::codec::Json;
use crate::views::maintenance::{MaintenanceStatus, WindowView};

/// The console's and the REST API's answer to a refused pause, in the request's language.
#[cfg(feature = "ssr")]
impl From<crate::services::maintenance::MaintenanceError> for AppError {
    fn from(e: crate::services::maintenance::MaintenanceError) -> Self {
        maintenance_error(e)
    }
}

#[cfg(feature = "ssr")]
fn maintenance_error(e: crate::services::maintenance::MaintenanceError) -> AppError {
    use crate::services::maintenance::MaintenanceError;
    match e {
        MaintenanceError::Invalid(problem) => AppError::refused("maintenance", &problem),
        MaintenanceError::AlreadyPaused(status) => {
            let locale = crate::i18n::current();
            let reason = status.summary(locale).unwrap_or_default();
            AppError::Conflict(crate::t!(in locale, "error-already-paused", reason = reason))
        }
        MaintenanceError::NotFound(id) => {
            AppError::NotFound(crate::t!("noun-maintenance-window", id = id))
        }
        MaintenanceError::Db(e) => AppError::from(e),
    }
}

/// Read by the layout on every page, the Account page of someone who must change their
/// password included (so it must not refuse them: a refusal would be that page's status).
#[server(endpoint = "maintenance/status", output = Json)]
pub async fn get_maintenance() -> Result<MaintenanceStatus, AppError> {
    super::respond(
        async {
            super::auth::require_signed_in()?;
            let state = super::state()?;
            Ok(crate::services::maintenance::status(&state.db, crate::clock::now()).await?)
        }
        .await,
    )
}

/// Pauses every job now (`until` blank: until someone resumes), or — with `starts` — schedules
/// a window ahead; `tag` limits it to the jobs with that tag.
#[server(endpoint = "maintenance/pause", output = Json)]
pub async fn pause_jobs(
    reason: String,
    until: Option<String>,
    starts: Option<String>,
    tag: Option<String>,
) -> Result<WindowView, AppError> {
    use crate::services::maintenance::{self, NewWindow};
    super::respond(
        async {
            let admin = super::auth::require_admin("pause jobs")?;
            let state = super::state()?;
            let now = crate::clock::now();
            let window = NewWindow {
                starts_at: crate::domain::maintenance::parse_time_field(
                    "starts",
                    starts.as_deref(),
                    now,
                )?
                .unwrap_or(now),
                ends_at: crate::domain::maintenance::parse_time_field(
                    "until",
                    until.as_deref(),
                    now,
                )?,
                reason,
                tag,
            };
            maintenance::schedule(&state.db, window, &super::actor(&admin), now)
                .await
                .map_err(maintenance_error)
        }
        .await,
    )
}

/// Ends every open window; windows ahead stay. Returns how many it ended.
#[server(endpoint = "maintenance/resume", output = Json)]
pub async fn resume_jobs() -> Result<usize, AppError> {
    super::respond(
        async {
            let admin = super::auth::require_admin("resume jobs")?;
            let state = super::state()?;
            let who = super::actor(&admin);
            let ended =
                crate::services::maintenance::resume(&state.db, &who, crate::clock::now()).await?;
            Ok(ended.len())
        }
        .await,
    )
}

/// Ends one open window now, or drops one that has not begun.
#[server(endpoint = "maintenance/cancel", output = Json)]
pub async fn cancel_window(id: i64) -> Result<(), AppError> {
    super::respond(
        async {
            let admin = super::auth::require_admin("change maintenance windows")?;
            let state = super::state()?;
            let who = super::actor(&admin);
            crate::services::maintenance::cancel(&state.db, id, &who, crate::clock::now())
                .await
                .map_err(maintenance_error)?;
            Ok(())
        }
        .await,
    )
}

/// Pauses or resumes one job.
#[server(endpoint = "jobs/pause", output = Json)]
pub async fn set_job_paused(id: i64, paused: bool) -> Result<(), AppError> {
    super::respond(
        async {
            let admin = super::auth::require_admin("pause or resume jobs")?;
            let state = super::state()?;
            let who = super::actor(&admin);
            let now = crate::clock::now();
            crate::services::maintenance::set_job_paused(&state.db, id, paused, &who, now).await?;
            Ok(())
        }
        .await,
    )
}
