//! `/api/v1/failed`: the failed queue with its filters and counts, re-trigger one run or every
//! run a filter matches (previewed with `dry_run`), resolve or discard with a reason.

use app::api::AppError;
use app::domain::filters::{QueueCursor, QueueQuery};
use app::services::failed::{self, Overrides};
use app::state::AppState;
use app::views::failed::QueuePage;
use axum::extract::{Path, Query, State};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::caller::{Admin, Caller};
use super::problem::Problem;
use super::wire::{DryRun, Reason};
use super::{ApiJson, Json};

#[derive(Debug, Default, Clone, Deserialize, IntoParams, ToSchema)]
#[into_params(parameter_in = Query)]
pub struct QueueParams {
    pub job: Option<String>,
    /// An error class: transient, permanent, timeout, unknown.
    pub class: Option<String>,
    /// First day (YYYY-MM-DD, UTC), inclusive.
    pub from: Option<String>,
    /// Last day, inclusive.
    pub to: Option<String>,
    /// Text in the last error message.
    pub text: Option<String>,
    /// Only runs of jobs with this tag.
    pub tag: Option<String>,
}

impl QueueParams {
    fn query(&self) -> Result<QueueQuery, Problem> {
        QueueQuery::parse(
            self.job.as_deref(),
            self.class.as_deref(),
            self.from.as_deref(),
            self.to.as_deref(),
            self.text.as_deref(),
        )
        .and_then(|q| q.with_tag(self.tag.as_deref()))
        .map_err(|e| app::api::AppError::from(e).into())
    }
}

#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct Cursor {
    /// From the previous page's `next`.
    pub cursor: Option<String>,
}

/// A page of the failed queue: the API's list shape, with the queue's counts.
#[derive(Debug, Serialize, ToSchema)]
pub struct FailedPage {
    pub items: Vec<app::views::failed::DeadRun>,
    pub next: Option<String>,
    /// Dead runs matching the filter.
    pub matching: u64,
    /// The whole queue by job, and by error class (`null`: none recorded).
    pub per_job: Vec<(String, u64)>,
    pub per_class: Vec<(Option<app::domain::run::ErrorClass>, u64)>,
}

impl From<QueuePage> for FailedPage {
    fn from(p: QueuePage) -> Self {
        FailedPage {
            items: p.rows,
            next: p.next,
            matching: p.matching,
            per_job: p.per_job,
            per_class: p.per_class,
        }
    }
}

/// Dead runs waiting for a person, newest failure first, with the counts by job and class.
#[utoipa::path(get, path = "/failed", tag = "failed", params(QueueParams, Cursor),
    responses((status = 200, body = FailedPage), (status = 422, body = Problem)))]
pub async fn list(
    _caller: Caller,
    State(state): State<AppState>,
    Query(filter): Query<QueueParams>,
    Query(cursor): Query<Cursor>,
) -> Result<Json<FailedPage>, Problem> {
    let cursor = cursor
        .cursor
        .as_deref()
        .filter(|c| !c.trim().is_empty())
        .map(QueueCursor::parse)
        .transpose()
        .map_err(app::api::AppError::from)?;
    Ok(Json(
        failed::page(&state.db, &filter.query()?, cursor, 50)
            .await
            .map_err(AppError::from)?
            .into(),
    ))
}

/// Starts a dead run again, as a new run that points back at it.
#[utoipa::path(post, path = "/failed/{id}/retrigger", tag = "failed", params(("id" = i64, Path)),
    responses((status = 200, body = Retriggered), (status = 422, body = Problem)))]
pub async fn retrigger(
    Admin(caller): Admin,
    State(state): State<AppState>,
    Path(id): Path<i64>,
) -> Result<Json<Retriggered>, Problem> {
    let now = crate::clock::now();
    let run = failed::retrigger(
        &state.db,
        id,
        &Overrides::default(),
        &caller.as_actor(),
        now,
        now,
    )
    .await
    .map_err(AppError::from)?;
    Ok(Json(Retriggered {
        count: 1,
        run: Some(run),
    }))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Retriggered {
    /// Runs re-triggered (or, for a dry run, that would be).
    pub count: u64,
    /// The new run, when one run was re-triggered.
    pub run: Option<i64>,
}

/// Which runs to re-trigger: the ones listed, or every one the filter matches.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"filter": {"job": "nightly-export", "class": "transient"}, "per_minute": 60}))]
pub struct RetriggerMany {
    #[serde(default)]
    pub ids: Vec<i64>,
    pub filter: Option<QueueParams>,
    /// Released at most this many a minute (1–6000).
    pub per_minute: u32,
}

/// Re-triggers many runs, released at `per_minute`; `dry_run=true` answers how many.
#[utoipa::path(post, path = "/failed/retrigger", tag = "failed", params(DryRun),
    request_body = RetriggerMany,
    responses((status = 200, body = Retriggered), (status = 422, body = Problem)))]
pub async fn retrigger_many(
    Admin(caller): Admin,
    State(state): State<AppState>,
    Query(dry): Query<DryRun>,
    ApiJson(body): ApiJson<RetriggerMany>,
) -> Result<Json<Retriggered>, Problem> {
    let filter = body.filter.as_ref().map(QueueParams::query).transpose()?;
    if dry.dry_run {
        let count = match &filter {
            Some(filter) => failed::count_retriggerable(&state.db, filter)
                .await
                .map_err(AppError::from)?,
            None => body.ids.len() as u64,
        };
        return Ok(Json(Retriggered { count, run: None }));
    }
    let count = failed::retrigger_many(
        &state.db,
        &body.ids,
        filter.as_ref(),
        body.per_minute,
        &caller.as_actor(),
        crate::clock::now(),
    )
    .await
    .map_err(AppError::from)?;
    Ok(Json(Retriggered { count, run: None }))
}

async fn resolve(
    Admin(caller): Admin,
    state: AppState,
    id: i64,
    reason: String,
    discard: bool,
) -> Result<axum::http::StatusCode, Problem> {
    failed::resolve(
        &state.db,
        id,
        &reason,
        discard,
        &caller.as_actor(),
        crate::clock::now(),
    )
    .await
    .map_err(AppError::from)?;
    Ok(axum::http::StatusCode::NO_CONTENT)
}

/// Takes a dead run out of the queue as handled by hand; a reason is required.
#[utoipa::path(post, path = "/failed/{id}/resolve", tag = "failed", params(("id" = i64, Path)),
    request_body = Reason,
    responses((status = 204), (status = 422, body = Problem)))]
pub async fn resolve_run(
    admin: Admin,
    State(state): State<AppState>,
    Path(id): Path<i64>,
    ApiJson(body): ApiJson<Reason>,
) -> Result<axum::http::StatusCode, Problem> {
    resolve(admin, state, id, body.reason, false).await
}

/// Drops a dead run from the queue; a reason is required.
#[utoipa::path(post, path = "/failed/{id}/discard", tag = "failed", params(("id" = i64, Path)),
    request_body = Reason,
    responses((status = 204), (status = 422, body = Problem)))]
pub async fn discard_run(
    admin: Admin,
    State(state): State<AppState>,
    Path(id): Path<i64>,
    ApiJson(body): ApiJson<Reason>,
) -> Result<axum::http::StatusCode, Problem> {
    resolve(admin, state, id, body.reason, true).await
}
