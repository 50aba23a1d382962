//! `/api/v1/runs` and a job's runs: list with the Runs page's filters, read with attempts,
//! trigger (with an `Idempotency-Key`), cancel.

use app::api::AppError;
use app::domain::api_token::Scope;
use app::domain::run::RunStatus;
use app::services::runs::{self, CancelError, RunFilter, Triggered};
use app::state::AppState;
use app::views::runs::RunView;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use serde::Deserialize;
use utoipa::IntoParams;

use super::Json;
use super::caller::{Admin, Caller, Runner};
use super::jobs::covered;
use super::problem::Problem;
use super::wire::{Page, TriggerBody, TriggeredRun};

#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RunQuery {
    /// Runs of this job.
    pub job: Option<String>,
    /// Runs in this status.
    pub status: Option<RunStatus>,
    /// Runs of the jobs with this tag.
    pub tag: Option<String>,
    /// From the previous page's `next`.
    pub cursor: Option<String>,
    /// At most this many (default 50, at most 500).
    pub limit: Option<u64>,
}

/// A run's cursor: its creation time and id, newest first. The time is kept to the
/// nanosecond, as stored: runs created in one millisecond (a catch-up of missed ticks) would
/// otherwise fall between two pages.
fn cursor_of(run: &RunView) -> String {
    let at = run
        .created_at
        .timestamp_nanos_opt()
        .unwrap_or_else(|| run.created_at.timestamp_micros().saturating_mul(1000));
    format!("{at}_{}", run.id)
}

fn parse_cursor(text: &str) -> Result<(chrono::DateTime<chrono::Utc>, i64), Problem> {
    let bad = || Problem::invalid("cursor", "not a cursor from this list's `next`");
    let (nanos, id) = text.split_once('_').ok_or_else(bad)?;
    let at = chrono::DateTime::from_timestamp_nanos(nanos.parse().map_err(|_| bad())?);
    Ok((at, id.parse().map_err(|_| bad())?))
}

/// Runs, newest first, with their attempts.
#[utoipa::path(get, path = "/runs", tag = "runs", params(RunQuery),
    responses((status = 200, body = Page<RunView>), (status = 422, body = Problem)))]
pub async fn list(
    Runner(caller): Runner,
    State(state): State<AppState>,
    Query(q): Query<RunQuery>,
) -> Result<Json<Page<RunView>>, Problem> {
    let limit = q.limit.unwrap_or(50).clamp(1, 500);
    let job = q.job.filter(|j| !j.is_empty());
    let tag = narrowed(&state, &caller, job.as_deref(), q.tag.as_deref()).await?;
    let filter = RunFilter {
        job,
        status: q.status,
        tag,
        since: None,
        limit: limit + 1,
        before: q
            .cursor
            .as_deref()
            .filter(|c| !c.is_empty())
            .map(parse_cursor)
            .transpose()?,
    };
    let mut items = runs::list(&state.db, &filter).await?;
    let next = if items.len() as u64 > limit {
        items.truncate(limit as usize);
        items.last().map(cursor_of)
    } else {
        None
    };
    Ok(Json(Page { items, next }))
}

/// The tag a list of runs is kept to for `caller` (`tag` as given, checked): a trigger token
/// with tags lists one job it covers, or one of its tags (the only one, when it has one).
pub(crate) async fn narrowed(
    state: &AppState,
    caller: &Caller,
    job: Option<&str>,
    tag: Option<&str>,
) -> Result<Option<String>, Problem> {
    let tag = tag
        .filter(|t| !t.is_empty())
        .map(app::domain::job::tags::parse_tag)
        .transpose()
        .map_err(|e| Problem::from(app::api::AppError::refused("tag", &e)))?;
    if caller.covers(&[]) {
        return Ok(tag);
    }
    if let Some(job) = job {
        covered(state, caller, job).await?;
        return Ok(tag);
    }
    match (tag, caller.tags.as_slice()) {
        (Some(tag), _) if caller.tags.contains(&tag) => Ok(Some(tag)),
        (None, [only]) => Ok(Some(only.clone())),
        _ => Err(Problem::invalid(
            "tag",
            format!(
                "{} lists the runs of one of its tags ({}) or of one job it covers: name it",
                caller.actor,
                caller.tags.join(", ")
            ),
        )),
    }
}

/// One run with its attempts.
#[utoipa::path(get, path = "/runs/{id}", tag = "runs", params(("id" = i64, Path)),
    responses((status = 200, body = RunView), (status = 404, body = Problem)))]
pub async fn get(
    Runner(caller): Runner,
    State(state): State<AppState>,
    Path(id): Path<i64>,
) -> Result<Json<RunView>, Problem> {
    let run = runs::get(&state.db, id)
        .await?
        .ok_or_else(|| Problem::not_found(app::t!("noun-run", id = id)))?;
    if !caller.covers(&[]) {
        covered(&state, &caller, &run.job).await?;
    }
    Ok(Json(run))
}

/// The longest `Idempotency-Key` kept.
const MAX_KEY: usize = 200;

/// Starts a run of the job now. With an `Idempotency-Key` header, a repeated key answers 200
/// with the run the first request made, instead of making another.
#[utoipa::path(post, path = "/jobs/{name}/runs", tag = "runs",
    params(("name" = String, Path), ("Idempotency-Key" = Option<String>, Header, description = "the same key, the same run")),
    request_body(content = TriggerBody, content_type = "application/json"),
    responses((status = 201, body = TriggeredRun), (status = 200, body = TriggeredRun, description = "a run with this Idempotency-Key exists"),
        (status = 404, body = Problem), (status = 422, body = Problem)))]
pub async fn trigger(
    Runner(caller): Runner,
    State(state): State<AppState>,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Result<(StatusCode, Json<TriggeredRun>), Problem> {
    if caller.scope == Scope::Read {
        return Err(Problem::new(
            StatusCode::FORBIDDEN,
            format!("{} may read but not start runs", caller.actor),
        ));
    }
    let job = covered(&state, &caller, &name).await?;
    if !caller.may_start(&app::domain::job::tags::from_column(&job.tags)) {
        return Err(caller.not_covered(&job.name));
    }
    let key = idempotency_key(&headers)?;
    let body = trigger_body(&body)?;
    start(
        &state,
        &job,
        &body,
        key.as_deref(),
        false,
        &caller.as_actor(),
    )
    .await
}

/// The request's `Idempotency-Key`, checked.
pub(crate) fn idempotency_key(headers: &HeaderMap) -> Result<Option<String>, Problem> {
    let Some(value) = headers.get("idempotency-key") else {
        return Ok(None);
    };
    value
        .to_str()
        .ok()
        .map(str::trim)
        .filter(|k| !k.is_empty() && k.len() <= MAX_KEY)
        .map(|k| Some(k.to_string()))
        .ok_or_else(|| {
            Problem::invalid(
                "Idempotency-Key",
                format!("the Idempotency-Key must be 1 to {MAX_KEY} visible characters"),
            )
        })
}

/// A trigger's body; none at all means no parameters.
pub(crate) fn trigger_body(body: &[u8]) -> Result<TriggerBody, Problem> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(TriggerBody::default());
    }
    serde_json::from_slice(body)
        .map_err(|e| Problem::invalid("body", format!("not a trigger body: {e}")))
}

/// Starts a run of `job` with the body's parameters (checked against its declarations) unless
/// `key` names one already: what an API trigger and a trigger URL share.
pub(crate) async fn start(
    state: &AppState,
    job: &app::entities::job::Model,
    body: &TriggerBody,
    key: Option<&str>,
    waits_for_pause: bool,
    actor: &app::services::audit::Actor<'_>,
) -> Result<(StatusCode, Json<TriggeredRun>), Problem> {
    let now = crate::clock::now();
    let by = runs::Asker {
        who: actor,
        action: "run.triggered",
    };
    let how = runs::Start {
        key,
        waits_for_pause,
        business_date: body.business_date,
    };
    let started = runs::start(&state.db, job, &body.params, how, by, now)
        .await
        .map_err(AppError::from)?;
    let (status, run, replay) = match started {
        Triggered::Created(run) => (StatusCode::CREATED, run, false),
        Triggered::Existing(run) => (StatusCode::OK, run, true),
    };
    Ok((
        status,
        Json(TriggeredRun {
            id: run.id,
            job: job.name.clone(),
            status: run.status,
            created_at: run.created_at,
            // A replay names the run, never its values: whoever sends a key someone else used
            // learns nothing of what they sent.
            params: run
                .params
                .as_deref()
                .filter(|_| !replay)
                .and_then(|p| serde_json::from_str(p).ok()),
            url: format!("/runs/{}", run.id),
        }),
    ))
}

/// Cancels a run that has not ended; a running attempt is stopped.
#[utoipa::path(post, path = "/runs/{id}/cancel", tag = "runs", params(("id" = i64, Path)),
    responses((status = 200, body = RunView), (status = 404, body = Problem), (status = 409, body = Problem)))]
pub async fn cancel(
    Admin(caller): Admin,
    State(state): State<AppState>,
    Path(id): Path<i64>,
) -> Result<Json<RunView>, Problem> {
    match runs::cancel(&state.db, id, &caller.as_actor(), crate::clock::now()).await {
        Ok(_) => {}
        Err(CancelError::NotFound(_)) => {
            return Err(Problem::not_found(app::t!("noun-run", id = id)));
        }
        Err(e @ CancelError::Ended(..)) => {
            return Err(Problem::new(StatusCode::CONFLICT, e.to_string()));
        }
        Err(CancelError::Db(e)) => return Err(e.into()),
    }
    get(Runner(caller), State(state), Path(id)).await
}
