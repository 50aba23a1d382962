//! `/api/v1/maintenance` and `/api/v1/jobs/{name}/pause|resume`: pausing from a pipeline (a
//! deploy pauses every job, or a tag, and resumes after), by the console's rules
//! (`app::services::maintenance`).

use app::api::AppError;
use app::services::maintenance::{self, MaintenanceError, NewWindow};
use app::state::AppState;
use app::views::maintenance::{MaintenanceStatus, WindowView};
use axum::extract::{Path, State};
use serde::Deserialize;
use utoipa::ToSchema;

use super::Json;
use super::caller::{Admin, Caller};
use super::problem::Problem;

fn maintenance_error(e: MaintenanceError) -> Problem {
    app::api::AppError::from(e).into()
}

/// What is paused now and what is scheduled: what `bulwark status --json` prints.
#[utoipa::path(get, path = "/maintenance", tag = "maintenance",
    responses((status = 200, body = MaintenanceStatus), (status = 401, body = Problem)))]
pub async fn status(
    _caller: Caller,
    State(state): State<AppState>,
) -> Result<Json<MaintenanceStatus>, Problem> {
    Ok(Json(
        maintenance::status(&state.db, crate::clock::now()).await?,
    ))
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct PauseRequest {
    /// Why (the console's banner shows it).
    pub reason: String,
    /// When the pause ends by itself: a duration from now (`2h`) or a UTC time
    /// (`2026-12-24 17:00`, or RFC 3339). None: until resumed.
    pub until: Option<String>,
    /// When it starts, the same way (None: now).
    pub starts: Option<String>,
    /// Only the jobs with this tag.
    pub tag: Option<String>,
}

/// Pauses every job (or a tag's) now, or schedules a window ahead: no cron run and no retry
/// starts while it is open; running attempts finish; runs started by hand still run.
#[utoipa::path(post, path = "/maintenance/pause", tag = "maintenance", request_body = PauseRequest,
    responses((status = 200, body = WindowView), (status = 409, body = Problem), (status = 422, body = Problem)))]
pub async fn pause(
    Admin(caller): Admin,
    State(state): State<AppState>,
    Json(request): Json<PauseRequest>,
) -> Result<Json<WindowView>, Problem> {
    let now = crate::clock::now();
    let time = |field, text: Option<&str>| {
        app::domain::maintenance::parse_time_field(field, text, now).map_err(AppError::from)
    };
    let window = NewWindow {
        starts_at: time("starts", request.starts.as_deref())?.unwrap_or(now),
        ends_at: time("until", request.until.as_deref())?,
        reason: request.reason,
        tag: request.tag,
    };
    let window = maintenance::schedule(&state.db, window, &caller.as_actor(), now)
        .await
        .map_err(maintenance_error)?;
    Ok(Json(window))
}

/// Ends every open pause (windows ahead stay); returns the windows it ended.
#[utoipa::path(post, path = "/maintenance/resume", tag = "maintenance",
    responses((status = 200, body = Vec<WindowView>), (status = 403, body = Problem)))]
pub async fn resume(
    Admin(caller): Admin,
    State(state): State<AppState>,
) -> Result<Json<Vec<WindowView>>, Problem> {
    let ended = maintenance::resume(&state.db, &caller.as_actor(), crate::clock::now()).await?;
    Ok(Json(ended))
}

async fn set_paused(
    caller: Caller,
    state: AppState,
    name: String,
    paused: bool,
) -> Result<Json<app::views::jobs::JobDetail>, Problem> {
    let row = super::jobs::by_name(&state, &name).await?;
    let now = crate::clock::now();
    let row = maintenance::set_job_paused(&state.db, row.id, paused, &caller.as_actor(), now)
        .await
        .map_err(AppError::from)?;
    Ok(Json(super::jobs::detail(&row)?))
}

/// Pauses one job: its ticks wait (and follow its misfire policy on resume), no retry starts.
#[utoipa::path(post, path = "/jobs/{name}/pause", tag = "jobs", params(("name" = String, Path)),
    responses((status = 200, body = app::views::jobs::JobDetail), (status = 404, body = Problem)))]
pub async fn pause_job(
    Admin(caller): Admin,
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Json<app::views::jobs::JobDetail>, Problem> {
    set_paused(caller, state, name, true).await
}

/// Resumes a paused job.
#[utoipa::path(post, path = "/jobs/{name}/resume", tag = "jobs", params(("name" = String, Path)),
    responses((status = 200, body = app::views::jobs::JobDetail), (status = 404, body = Problem)))]
pub async fn resume_job(
    Admin(caller): Admin,
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Json<app::views::jobs::JobDetail>, Problem> {
    set_paused(caller, state, name, false).await
}
