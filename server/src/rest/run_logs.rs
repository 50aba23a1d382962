//! `/api/v1/runs/{id}/log` (an attempt's whole output, with byte ranges) and
//! `/api/v1/runs/search` (lines of many runs' output): what `bulwark runs log` and
//! `bulwark runs search` print, for callers over HTTP. Viewers may read both.

use std::ops::RangeInclusive;

use app::services::run_logs::{self, Placed, SearchError, SearchFilter};
use app::state::AppState;
use app::views::run_logs::LogMatch;
use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use sea_orm::DatabaseConnection;
use serde::Deserialize;
use utoipa::IntoParams;

use super::Json;
use super::caller::Runner;
use super::jobs::covered;
use super::problem::Problem;
use super::runs::narrowed;
use super::wire::Page;

#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LogQuery {
    /// Which attempt (default: the last).
    pub attempt: Option<i32>,
    /// Each line after its time and stream, instead of the bytes as written (no ranges).
    pub timestamps: Option<bool>,
}

/// An attempt's whole output as the job wrote it — or, with `timestamps=true`, each line
/// after its time and stream. A `Range: bytes=…` header (one range) answers 206 with that
/// part; while the attempt runs, the log is what has been stored so far.
#[utoipa::path(get, path = "/runs/{id}/log", tag = "runs",
    params(("id" = i64, Path), LogQuery, ("Range" = Option<String>, Header, description = "bytes=FIRST-LAST, one range")),
    responses((status = 200, content_type = "text/plain", body = String),
        (status = 206, content_type = "text/plain", body = String, description = "the range asked for"),
        (status = 404, body = Problem), (status = 416, body = Problem)))]
pub async fn log(
    Runner(caller): Runner,
    State(state): State<AppState>,
    Path(id): Path<i64>,
    Query(q): Query<LogQuery>,
    headers: HeaderMap,
) -> Result<Response, Problem> {
    let run = app::services::runs::get(&state.db, id)
        .await?
        .ok_or_else(|| Problem::not_found(app::t!("noun-run", id = id)))?;
    if !caller.covers(&[]) {
        covered(&state, &caller, &run.job).await?;
    }
    // A run that has not started has an empty log; an attempt it never had is not found.
    let (chunks, number) = match run_logs::attempt_id(&state.db, id, q.attempt).await? {
        Some((attempt_id, number)) => (run_logs::placed(&state.db, attempt_id, -1).await?, number),
        None if q.attempt.is_none() => (Vec::new(), 0),
        None => {
            let n = q.attempt.unwrap_or_default();
            let problem = Problem::new(
                StatusCode::NOT_FOUND,
                format!("run {id} has no attempt {n}"),
            );
            return Err(problem);
        }
    };
    let total = chunks
        .last()
        .map_or(0, |c| c.byte_offset + i64::from(c.byte_len)) as u64;
    let name = format!("attachment; filename=\"run-{id}-attempt-{number}.log\"");
    let timestamps = q.timestamps.unwrap_or(false);
    let range = match headers.get(header::RANGE).filter(|_| !timestamps) {
        Some(value) => match one_range(value, total) {
            Ok(range) => range,
            Err(()) => return Ok(unsatisfiable(total)),
        },
        None => None,
    };
    let (status, bytes) = match &range {
        Some(r) => (StatusCode::PARTIAL_CONTENT, r.clone()),
        None => (StatusCode::OK, 0..=total.saturating_sub(1)),
    };
    let body = Body::from_stream(stream(state.db.clone(), chunks, bytes.clone(), timestamps));
    let mut response = (status, body).into_response();
    let h = response.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    h.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    if let Ok(value) = HeaderValue::from_str(&name) {
        h.insert(header::CONTENT_DISPOSITION, value);
    }
    if !timestamps {
        let len = if total == 0 {
            0
        } else {
            bytes.end() - bytes.start() + 1
        };
        h.insert(header::CONTENT_LENGTH, HeaderValue::from(len));
    }
    if range.is_some()
        && let Ok(value) =
            HeaderValue::from_str(&format!("bytes {}-{}/{total}", bytes.start(), bytes.end()))
    {
        h.insert(header::CONTENT_RANGE, value);
    }
    Ok(response)
}

/// The one range a `Range` header asks for; `None` for several (the whole log is the
/// answer then, as the standard allows) or a header that is not a byte range; `Err` for a
/// range outside the log.
fn one_range(value: &HeaderValue, total: u64) -> Result<Option<RangeInclusive<u64>>, ()> {
    use http_range_header::StartPosition;
    let Some(mut parsed) = value
        .to_str()
        .ok()
        .and_then(|v| http_range_header::parse_range_header(v).ok())
    else {
        return Ok(None);
    };
    if parsed.ranges.len() != 1 {
        return Ok(None);
    }
    // A suffix longer than the log is the whole log (RFC 9110, 14.1.2), not an error.
    if let StartPosition::FromLast(n) = parsed.ranges[0].start
        && n > total
    {
        parsed.ranges[0].start = StartPosition::Index(0);
    }
    match parsed.validate(total) {
        Ok(mut ranges) if total > 0 => Ok(ranges.pop()),
        _ => Err(()),
    }
}

/// 416, saying how long the log is.
fn unsatisfiable(total: u64) -> Response {
    let problem = Problem::new(
        StatusCode::RANGE_NOT_SATISFIABLE,
        format!("the log has {total} bytes"),
    );
    let mut response = problem.into_response();
    if let Ok(value) = HeaderValue::from_str(&format!("bytes */{total}")) {
        response.headers_mut().insert(header::CONTENT_RANGE, value);
    }
    response
}

/// The bytes `range` of the log (or its lines with their times), a chunk at a time.
fn stream(
    db: DatabaseConnection,
    chunks: Vec<Placed>,
    range: RangeInclusive<u64>,
    timestamps: bool,
) -> impl futures_util::Stream<Item = Result<Bytes, std::io::Error>> {
    let wanted: Vec<Placed> = chunks
        .into_iter()
        .filter(|c| {
            let first = c.byte_offset as u64;
            let last = first + c.byte_len as u64;
            last > *range.start() && first <= *range.end()
        })
        .collect();
    use futures_util::StreamExt;
    // Fused: the compression layer polls once more after the end.
    futures_util::stream::unfold((db, wanted.into_iter()), move |(db, mut rest)| {
        let range = range.clone();
        async move {
            let placed = rest.next()?;
            let piece = piece(&db, placed, &range, timestamps).await;
            Some((piece, (db, rest)))
        }
    })
    .fuse()
}

async fn piece(
    db: &DatabaseConnection,
    placed: Placed,
    range: &RangeInclusive<u64>,
    timestamps: bool,
) -> Result<Bytes, std::io::Error> {
    let chunk = run_logs::chunk(db, placed.id)
        .await
        .map_err(std::io::Error::other)?
        .ok_or_else(|| std::io::Error::other("a chunk of the log went away while it was read"))?;
    if timestamps {
        return Ok(Bytes::from(run_logs::stamped(&chunk)));
    }
    let first = placed.byte_offset as u64;
    let from = range.start().saturating_sub(first) as usize;
    let to = ((range.end() + 1 - first) as usize).min(chunk.bytes.len());
    Ok(Bytes::copy_from_slice(&chunk.bytes[from.min(to)..to]))
}

#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SearchQuery {
    /// What to look for: at least three characters, case ignored.
    pub q: String,
    pub job: Option<String>,
    /// Runs of the jobs with this tag.
    pub tag: Option<String>,
    pub status: Option<app::domain::run::RunStatus>,
    /// Runs created this long ago at most (`7d`, `12h`).
    pub since: Option<String>,
    /// At most this many lines (default 100, at most 1000).
    pub limit: Option<usize>,
}

/// Lines of runs' output holding `q`, newest run first (`next` is always null: narrow the
/// search instead).
#[utoipa::path(get, path = "/runs/search", tag = "runs", params(SearchQuery),
    responses((status = 200, body = Page<LogMatch>), (status = 422, body = Problem)))]
pub async fn search(
    Runner(caller): Runner,
    State(state): State<AppState>,
    Query(q): Query<SearchQuery>,
) -> Result<Json<Page<LogMatch>>, Problem> {
    let job = q.job.filter(|j| !j.is_empty());
    let tag = narrowed(&state, &caller, job.as_deref(), q.tag.as_deref()).await?;
    let since = match q.since.as_deref().filter(|s| !s.is_empty()) {
        Some(text) => Some(
            run_logs::since(text, crate::clock::now())
                .map_err(|e| Problem::invalid("since", e.to_string()))?,
        ),
        None => None,
    };
    let filter = SearchFilter {
        text: q.q,
        job,
        tag,
        status: q.status,
        since,
        limit: q.limit.unwrap_or(100).clamp(1, 1000),
    };
    let items = run_logs::search(&state.db, &filter)
        .await
        .map_err(|e| match e {
            SearchError::TooShort => Problem::invalid("q", e.to_string()),
            SearchError::Db(e) => Problem::from(app::api::AppError::from(e)),
        })?;
    Ok(Json(Page { items, next: None }))
}
