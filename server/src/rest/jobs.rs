//! `/api/v1/jobs`: list, read, create, update, delete, enable/disable, apply a set.
//! The same services and rules as the Jobs page and `bulwark jobs apply`.

use app::api::AppError;
use app::domain::job::{JobInput, JobSpec};
use app::entities::job;
use app::services::jobs;
use app::state::AppState;
use app::views::jobs::{JobDetail, JobRow};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::IntoResponse;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};

use super::caller::{Admin, Caller, Runner};
use super::problem::Problem;
use super::wire::{DryRun, JobSet, Page, PageQuery};
use super::{ApiJson, Json};
use crate::jobs_file::{Applied, Document, apply_checked, parse_document};

pub(super) async fn by_name(state: &AppState, name: &str) -> Result<job::Model, Problem> {
    job::Entity::find()
        .filter(job::Column::Name.eq(name))
        .one(&state.db)
        .await?
        .ok_or_else(|| Problem::not_found(app::t!("noun-job-named", name = name)))
}

/// A job by name that `caller` may read (a trigger token reads only the jobs it covers).
pub(super) async fn covered(
    state: &AppState,
    caller: &Caller,
    name: &str,
) -> Result<job::Model, Problem> {
    let job = by_name(state, name).await?;
    if caller.covers(&app::domain::job::tags::from_column(&job.tags)) {
        Ok(job)
    } else {
        Err(caller.not_covered(&job.name))
    }
}

pub(super) fn detail(row: &job::Model) -> Result<JobDetail, Problem> {
    // Credentials never travel back in full: secret headers show as hidden.
    Ok(app::services::held::detail(row, app::i18n::current()).map_err(AppError::from)?)
}

/// Jobs by name.
#[utoipa::path(get, path = "/jobs", tag = "jobs", params(PageQuery),
    responses((status = 200, body = Page<JobRow>), (status = 401, body = Problem)))]
pub async fn list(
    _caller: Caller,
    State(state): State<AppState>,
    Query(page): Query<PageQuery>,
) -> Result<Json<Page<JobRow>>, Problem> {
    let mut rows = jobs::list(&state.db, crate::clock::now()).await?;
    rows.sort_by(|a, b| a.name.cmp(&b.name));
    let after = page.cursor.as_deref().unwrap_or("");
    let mut items: Vec<JobRow> = rows
        .into_iter()
        .filter(|r| r.name.as_str() > after)
        .take(page.limit() as usize + 1)
        .collect();
    let next = if items.len() as u64 > page.limit() {
        items.truncate(page.limit() as usize);
        items.last().map(|r| r.name.clone())
    } else {
        None
    };
    Ok(Json(Page { items, next }))
}

/// One job's definition (the editor's fields; secret headers hidden).
#[utoipa::path(get, path = "/jobs/{name}", tag = "jobs", params(("name" = String, Path)),
    responses((status = 200, body = JobDetail), (status = 404, body = Problem)))]
pub async fn get(
    Runner(caller): Runner,
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Json<JobDetail>, Problem> {
    Ok(Json(detail(&covered(&state, &caller, &name).await?)?))
}

/// Creates a job. Every invalid field is named in `errors`.
#[utoipa::path(post, path = "/jobs", tag = "jobs", request_body = JobInput,
    responses((status = 201, body = JobDetail), (status = 422, body = Problem), (status = 403, body = Problem)))]
pub async fn create(
    Admin(caller): Admin,
    State(state): State<AppState>,
    ApiJson(input): ApiJson<JobInput>,
) -> Result<(StatusCode, Json<JobDetail>), Problem> {
    let spec = JobSpec::parse(&input).map_err(|e| app::api::AppError::fields(&e))?;
    let now = crate::clock::now();
    let row = jobs::save(
        &state.db,
        None,
        &spec,
        &caller.as_actor(),
        &state.secret_key,
        now,
    )
    .await
    .map_err(AppError::from)?;
    Ok((StatusCode::CREATED, Json(detail(&row)?)))
}

/// Replaces a job's definition; hidden secret headers keep their stored values.
#[utoipa::path(put, path = "/jobs/{name}", tag = "jobs", params(("name" = String, Path)),
    request_body = JobInput,
    responses((status = 200, body = JobDetail), (status = 404, body = Problem), (status = 422, body = Problem)))]
pub async fn update(
    Admin(caller): Admin,
    State(state): State<AppState>,
    Path(name): Path<String>,
    ApiJson(mut input): ApiJson<JobInput>,
) -> Result<Json<JobDetail>, Problem> {
    let stored = by_name(&state, &name).await?;
    input.restore_secrets(&jobs::to_spec(&stored).map_err(AppError::from)?.to_input());
    let spec = JobSpec::parse(&input).map_err(|e| app::api::AppError::fields(&e))?;
    let now = crate::clock::now();
    let key = &state.secret_key;
    let row = jobs::save(
        &state.db,
        Some(stored.id),
        &spec,
        &caller.as_actor(),
        key,
        now,
    )
    .await
    .map_err(AppError::from)?;
    Ok(Json(detail(&row)?))
}

/// Deletes a job and its runs; the audit log keeps its definition.
#[utoipa::path(delete, path = "/jobs/{name}", tag = "jobs", params(("name" = String, Path)),
    responses((status = 204), (status = 404, body = Problem), (status = 403, body = Problem)))]
pub async fn delete(
    Admin(caller): Admin,
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<StatusCode, Problem> {
    let row = by_name(&state, &name).await?;
    jobs::delete(&state.db, row.id, &caller.as_actor(), crate::clock::now())
        .await
        .map_err(AppError::from)?;
    Ok(StatusCode::NO_CONTENT)
}

async fn set_enabled(
    Admin(caller): Admin,
    state: AppState,
    name: String,
    enabled: bool,
) -> Result<Json<JobDetail>, Problem> {
    let row = by_name(&state, &name).await?;
    let now = crate::clock::now();
    let row = jobs::set_enabled(&state.db, row.id, enabled, &caller.as_actor(), now)
        .await
        .map_err(AppError::from)?;
    Ok(Json(detail(&row)?))
}

/// Lets the job's schedule fire again.
#[utoipa::path(post, path = "/jobs/{name}/enable", tag = "jobs", params(("name" = String, Path)),
    responses((status = 200, body = JobDetail), (status = 404, body = Problem)))]
pub async fn enable(
    admin: Admin,
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Json<JobDetail>, Problem> {
    set_enabled(admin, state, name, true).await
}

/// Stops the job's schedule (runs already started go on).
#[utoipa::path(post, path = "/jobs/{name}/disable", tag = "jobs", params(("name" = String, Path)),
    responses((status = 200, body = JobDetail), (status = 404, body = Problem)))]
pub async fn disable(
    admin: Admin,
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Json<JobDetail>, Problem> {
    set_enabled(admin, state, name, false).await
}

/// Creates or updates a whole set of jobs, all or nothing: a jobs file (`content-type:
/// application/toml`, the format of `bulwark jobs apply`) or JSON `{"jobs": [JobInput…]}`.
/// With `dry_run=true` nothing is written and the answer says what would change.
#[utoipa::path(post, path = "/jobs/apply", tag = "jobs", params(DryRun),
    request_body(content = JobSet, description = "JSON, or a jobs file as application/toml"),
    responses((status = 200, body = Applied), (status = 422, body = Problem)))]
pub async fn apply(
    Admin(caller): Admin,
    State(state): State<AppState>,
    Query(dry): Query<DryRun>,
    headers: HeaderMap,
    body: String,
) -> Result<impl IntoResponse, Problem> {
    let is_toml = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("toml"));
    let refused = |problems: Vec<String>| {
        Problem::from(app::api::AppError::Fields(
            problems
                .into_iter()
                .map(|p| app::views::FieldError::new("jobs", p))
                .collect(),
        ))
    };
    let doc = if is_toml {
        parse_document(&body).map_err(refused)?
    } else {
        let set: JobSet = serde_json::from_str(&body)
            .map_err(|e| Problem::invalid("body", format!("not a job set: {e}")))?;
        let mut specs = Vec::new();
        let mut problems = Vec::new();
        for (i, input) in set.jobs.iter().enumerate() {
            match JobSpec::parse(input) {
                Ok(spec) => specs.push(spec),
                Err(errors) => problems.extend(errors.into_iter().map(|e| {
                    let words = app::i18n::current().say(&e.problem);
                    format!("job {} '{}': {}: {words}", i + 1, input.name, e.field)
                })),
            }
        }
        if !problems.is_empty() {
            return Err(refused(problems));
        }
        Document {
            jobs: specs,
            ..Document::default()
        }
    };
    let (who, key) = (caller.as_actor(), &state.secret_key);
    let applied = apply_checked(&state.db, doc, dry.dry_run, &who, key)
        .await
        .map_err(refused)?;
    Ok(Json(applied))
}
