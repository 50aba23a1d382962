//! `/api/v1/calendars` and `/api/v1/jobs/{name}/backfills`, `/api/v1/backfills/{id}/…`: work
//! calendars and backfills for pipelines, by the console's rules (`app::services::calendars`,
//! `app::services::backfills`).

use app::api::AppError;
use app::domain::backfill::{BackfillState, Pace};
use app::domain::calendar::CalendarInput;
use app::services::backfills::{self, Request};
use app::services::calendars;
use app::state::AppState;
use app::views::backfills::{BackfillPlan, BackfillRow};
use app::views::calendars::CalendarSummary;
use axum::extract::{Path, State};
use chrono::NaiveDate;
use serde::Deserialize;
use utoipa::ToSchema;

use super::caller::{Admin, Caller};
use super::jobs::covered;
use super::problem::Problem;
use super::{ApiJson, Json};

/// Every calendar, with the years it has dates for and the jobs following it.
#[utoipa::path(get, path = "/calendars", tag = "calendars",
    responses((status = 200, body = Vec<CalendarSummary>), (status = 401, body = Problem)))]
pub async fn list(
    _caller: Caller,
    State(state): State<AppState>,
) -> Result<Json<Vec<CalendarSummary>>, Problem> {
    Ok(Json(
        calendars::list(&state.db).await.map_err(AppError::from)?,
    ))
}

/// Creates or replaces the calendar named in the path (the body's `name` must match).
#[utoipa::path(put, path = "/calendars/{name}", tag = "calendars", request_body = CalendarInput,
    params(("name" = String, Path)),
    responses((status = 200, body = CalendarInput), (status = 422, body = Problem), (status = 403, body = Problem)))]
pub async fn put(
    Admin(caller): Admin,
    State(state): State<AppState>,
    Path(name): Path<String>,
    ApiJson(input): ApiJson<CalendarInput>,
) -> Result<Json<CalendarInput>, Problem> {
    if input.name != name {
        return Err(Problem::invalid(
            "name",
            "the body's name is not the path's",
        ));
    }
    let saved = calendars::save(&state.db, &input, &caller.as_actor(), crate::clock::now())
        .await
        .map_err(AppError::from)?;
    Ok(Json(saved.to_input()))
}

/// Removes a calendar no job follows.
#[utoipa::path(delete, path = "/calendars/{name}", tag = "calendars",
    params(("name" = String, Path)),
    responses((status = 200), (status = 404, body = Problem), (status = 422, body = Problem)))]
pub async fn remove(
    Admin(caller): Admin,
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Json<()>, Problem> {
    calendars::delete(&state.db, &name, &caller.as_actor(), crate::clock::now())
        .await
        .map_err(AppError::from)?;
    Ok(Json(()))
}

/// A backfill asked for.
#[derive(Debug, Deserialize, ToSchema)]
pub struct BackfillBody {
    /// The first business date, in the job's zone.
    pub from: NaiveDate,
    /// The last, inclusive; not after today.
    pub to: NaiveDate,
    /// Runs of the backfill started at once, at most (default 1); a job's runs still execute
    /// one at a time.
    pub parallel: Option<u32>,
    /// Runs started per minute, at most.
    pub per_minute: Option<u32>,
    /// Give a new run to ticks whose latest run ended dead.
    #[serde(default)]
    pub rerun: bool,
    /// Only say what would run.
    #[serde(default)]
    pub dry_run: bool,
}

/// Runs the job's past ticks over a range of business dates again (or says which it would):
/// one run per tick its calendar lets run, ticks that have a run left alone.
#[utoipa::path(post, path = "/jobs/{name}/backfills", tag = "jobs", request_body = BackfillBody,
    params(("name" = String, Path)),
    responses((status = 200, body = BackfillPlan), (status = 422, body = Problem), (status = 403, body = Problem)))]
pub async fn start(
    Admin(caller): Admin,
    State(state): State<AppState>,
    Path(name): Path<String>,
    ApiJson(body): ApiJson<BackfillBody>,
) -> Result<Json<BackfillPlan>, Problem> {
    let job = covered(&state, &caller, &name).await?;
    let request = Request {
        from: body.from,
        to: body.to,
        pace: Pace {
            parallel: body.parallel.unwrap_or(1),
            per_minute: body.per_minute,
        },
        rerun: body.rerun,
    };
    let now = crate::clock::now();
    let (made, planned) = if body.dry_run {
        let (_, planned) = backfills::plan(&state.db, &job, &request, now)
            .await
            .map_err(AppError::from)?;
        (None, planned)
    } else {
        let (made, planned) = backfills::start(&state.db, &job, &request, &caller.as_actor(), now)
            .await
            .map_err(AppError::from)?;
        (made.map(|b| b.id), planned)
    };
    let spec = app::services::jobs::to_spec(&job).map_err(AppError::from)?;
    Ok(Json(backfills::plan_view(&spec, made, &planned)))
}

/// The job's backfills, newest first, with their progress.
#[utoipa::path(get, path = "/jobs/{name}/backfills", tag = "jobs", params(("name" = String, Path)),
    responses((status = 200, body = Vec<BackfillRow>), (status = 404, body = Problem)))]
pub async fn of_job(
    caller: Caller,
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Json<Vec<BackfillRow>>, Problem> {
    let job = covered(&state, &caller, &name).await?;
    let rows = backfills::of_job(&state.db, job.id)
        .await
        .map_err(AppError::from)?;
    Ok(Json(rows))
}

/// Pauses a running backfill: no run of it starts until it is resumed.
#[utoipa::path(post, path = "/backfills/{id}/pause", tag = "jobs", params(("id" = i64, Path)),
    responses((status = 200), (status = 404, body = Problem), (status = 409, body = Problem)))]
pub async fn pause(
    admin: Admin,
    state: State<AppState>,
    Path(id): Path<i64>,
) -> Result<Json<()>, Problem> {
    change(admin, state, id, BackfillState::Paused).await
}

/// Resumes a paused backfill.
#[utoipa::path(post, path = "/backfills/{id}/resume", tag = "jobs", params(("id" = i64, Path)),
    responses((status = 200), (status = 404, body = Problem), (status = 409, body = Problem)))]
pub async fn resume(
    admin: Admin,
    state: State<AppState>,
    Path(id): Path<i64>,
) -> Result<Json<()>, Problem> {
    change(admin, state, id, BackfillState::Running).await
}

/// Cancels a backfill: its runs not yet started are cancelled, the ones running finish.
#[utoipa::path(post, path = "/backfills/{id}/cancel", tag = "jobs", params(("id" = i64, Path)),
    responses((status = 200), (status = 404, body = Problem), (status = 409, body = Problem)))]
pub async fn cancel(
    admin: Admin,
    state: State<AppState>,
    Path(id): Path<i64>,
) -> Result<Json<()>, Problem> {
    change(admin, state, id, BackfillState::Cancelled).await
}

async fn change(
    Admin(caller): Admin,
    State(state): State<AppState>,
    id: i64,
    to: BackfillState,
) -> Result<Json<()>, Problem> {
    // The caller must cover the backfill's job, as for the job's other changes.
    let job = backfills::job_of(&state.db, id)
        .await
        .map_err(AppError::from)?;
    covered(&state, &caller, &job.name).await?;
    backfills::change(&state.db, id, to, &caller.as_actor(), crate::clock::now())
        .await
        .map_err(AppError::from)?;
    Ok(Json(()))
}
