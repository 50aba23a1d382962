//! `/api/v1/jobs/{name}/revisions`: a job's revisions, the fields two of them differ in, and
//! restoring one (`app::services::revisions`).

use app::api::AppError;
use app::domain::job::diff::FieldChange;
use app::state::AppState;
use app::views::jobs::{JobDetail, RevisionRow};
use axum::extract::{Path, Query, State};
use serde::Deserialize;

use super::caller::{Admin, Caller};
use super::jobs::{by_name, covered, detail};
use super::problem::Problem;
use super::{ApiJson, Json};

impl From<app::services::revisions::RevisionError> for Problem {
    fn from(e: app::services::revisions::RevisionError) -> Self {
        use app::services::revisions::RevisionError;
        match e {
            RevisionError::NotFound { job, revision } => {
                Problem::not_found(app::t!("noun-revision", job = job, revision = revision))
            }
            other => Problem::from(AppError::internal(&other)),
        }
    }
}

/// A job's revisions, newest first: who made each (a person or `token:NAME`), when, and its
/// note.
#[utoipa::path(get, path = "/jobs/{name}/revisions", tag = "jobs", params(("name" = String, Path)),
    responses((status = 200, body = Vec<RevisionRow>), (status = 404, body = Problem)))]
pub async fn list(
    caller: Caller,
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Json<Vec<RevisionRow>>, Problem> {
    let job = covered(&state, &caller, &name).await?;
    Ok(Json(
        app::services::revisions::history(&state.db, job.id).await?,
    ))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
pub struct Between {
    /// The earlier revision.
    from: i32,
    /// The later revision.
    to: i32,
}

/// The fields that differ from one revision to another, credentials hidden.
#[utoipa::path(get, path = "/jobs/{name}/revisions/diff", tag = "jobs",
    params(("name" = String, Path), Between),
    responses((status = 200, body = Vec<FieldChange>), (status = 404, body = Problem)))]
pub async fn diff(
    caller: Caller,
    State(state): State<AppState>,
    Path(name): Path<String>,
    Query(between): Query<Between>,
) -> Result<Json<Vec<FieldChange>>, Problem> {
    let job = covered(&state, &caller, &name).await?;
    let pair = (between.from, between.to);
    Ok(Json(
        app::services::revisions::diff(&state.db, &state.secret_key, &job, pair).await?,
    ))
}

#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
pub struct RestoreBody {
    /// Kept with the new revision.
    #[serde(default)]
    note: Option<String>,
}

/// Makes a revision's definition — credentials included — the job's again, as its next
/// revision. The body may be `{}`.
#[utoipa::path(post, path = "/jobs/{name}/revisions/{revision}/restore", tag = "jobs",
    params(("name" = String, Path), ("revision" = i32, Path)), request_body = RestoreBody,
    responses((status = 200, body = JobDetail), (status = 404, body = Problem), (status = 422, body = Problem)))]
pub async fn restore(
    Admin(caller): Admin,
    State(state): State<AppState>,
    Path((name, revision)): Path<(String, i32)>,
    ApiJson(body): ApiJson<RestoreBody>,
) -> Result<Json<JobDetail>, Problem> {
    let job = by_name(&state, &name).await?;
    let note = body.note;
    let now = crate::clock::now();
    let change = (&state.secret_key, note.as_deref());
    let saved =
        app::services::jobs::restore(&state.db, &job, revision, &caller.as_actor(), change, now)
            .await
            .map_err(AppError::from)?;
    Ok(Json(detail(&saved)?))
}
