//! `/ping/{token}`: a watched job reports (`app/src/domain/watch.rs`). `GET` or `POST`, the
//! plain URL for success, `/start`, `/fail`, `/{exit-code}` (0–255) and `/log`, `?rid=` to tell
//! overlapping runs apart; a body (up to `ping_body_max_kb`) is the run's output. The token is
//! the credential, so a ping needs no session or API token — and an unknown one answers 404
//! as fast as a known one is looked up. Pings are rate-limited per token and never counted as
//! traffic (`server/src/traffic/rules.rs`).

use std::num::NonZeroU32;
use std::sync::LazyLock;

use app::domain::run::RunStatus;
use app::domain::watch::Ping;
use app::services::watch::{self, Incoming, WatchError};
use app::state::AppState;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::routing::get;
use serde::{Deserialize, Serialize};

use super::Json;
use super::problem::Problem;

/// Pings per ping URL per minute.
const PER_MINUTE: u32 = 120;

/// Longest `rid`.
const RID_CHARS: usize = 128;

static LIMITER: LazyLock<governor::DefaultKeyedRateLimiter<String>> = LazyLock::new(|| {
    governor::RateLimiter::keyed(governor::Quota::per_minute(
        NonZeroU32::new(PER_MINUTE).unwrap_or(NonZeroU32::MIN),
    ))
});

pub fn routes() -> axum::Router<AppState> {
    axum::Router::new()
        .route("/ping/{token}", get(plain).post(plain))
        .route("/ping/{token}/{what}", get(named).post(named))
}

#[derive(Debug, Deserialize)]
pub struct PingQuery {
    /// Which of several overlapping runs this ping is about.
    rid: Option<String>,
}

/// What a ping did.
#[derive(Debug, Serialize)]
pub struct PingAnswer {
    /// The run it went to.
    run_id: i64,
    /// What that run is now.
    status: RunStatus,
    /// No tick was expected then: the run was made for this ping.
    unexpected: bool,
}

async fn plain(
    State(state): State<AppState>,
    Path(token): Path<String>,
    Query(query): Query<PingQuery>,
    body: axum::body::Bytes,
) -> Result<Json<PingAnswer>, Problem> {
    take(&state, &token, Ping::Success, query, &body).await
}

async fn named(
    State(state): State<AppState>,
    Path((token, what)): Path<(String, String)>,
    Query(query): Query<PingQuery>,
    body: axum::body::Bytes,
) -> Result<Json<PingAnswer>, Problem> {
    let Some(ping) = Ping::parse(Some(&what)) else {
        return Err(Problem::new(
            StatusCode::NOT_FOUND,
            "no such ping: the URL alone, /start, /fail, /log or an exit code from 0 to 255",
        ));
    };
    take(&state, &token, ping, query, &body).await
}

async fn take(
    state: &AppState,
    token: &str,
    ping: Ping,
    query: PingQuery,
    body: &[u8],
) -> Result<Json<PingAnswer>, Problem> {
    let not_found = || Problem::new(StatusCode::NOT_FOUND, "no such ping URL");
    let Some(job) = watch::find(&state.db, token).await? else {
        return Err(not_found());
    };
    if LIMITER.check_key(&token.to_ascii_lowercase()).is_err() {
        return Err(Problem::new(
            StatusCode::TOO_MANY_REQUESTS,
            format!("this ping URL takes at most {PER_MINUTE} pings a minute"),
        ));
    }
    let rid = query
        .rid
        .as_deref()
        .map(str::trim)
        .filter(|r| !r.is_empty());
    if rid.is_some_and(|r| r.chars().count() > RID_CHARS || r.chars().any(char::is_control)) {
        return Err(Problem::invalid(
            "rid",
            format!("at most {RID_CHARS} characters, none of them control characters"),
        ));
    }
    let incoming = Incoming {
        ping,
        rid,
        body: &body[..body.len().min(state.ping_body_max)],
        node: &crate::metrics::node_id(),
    };
    let now = crate::clock::now();
    match watch::ping(
        &state.db,
        &state.secret_key,
        &job,
        incoming,
        now,
        state.default_locale,
    )
    .await
    {
        Ok(pinged) => {
            if let Some(ended) = &pinged.ended {
                crate::metrics::watched_ended(ended);
            }
            Ok(Json(PingAnswer {
                run_id: pinged.run_id,
                status: pinged.status,
                unexpected: pinged.unexpected,
            }))
        }
        Err(WatchError::NotWatched(_)) => Err(not_found()),
        Err(e @ WatchError::NothingToLog) => Err(Problem::new(StatusCode::CONFLICT, e.to_string())),
        Err(WatchError::Job(e)) => {
            tracing::error!(job = %job.name, error = %e, "a ping could not be taken");
            Err(Problem::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "the job's definition cannot be read; see the server log",
            ))
        }
        Err(WatchError::Db(e)) => Err(e.into()),
    }
}

/// What `POST /api/v1/jobs/{name}/ping-url` is asked.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
pub struct PingUrlRequest {
    /// Make a new URL; the old one stops working.
    #[serde(default)]
    rotate: bool,
}

/// A watched job's ping URL.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct PingUrl {
    url: String,
}

/// A watched job's ping URL, made when it has none (with `rotate`, made again).
#[utoipa::path(post, path = "/jobs/{name}/ping-url", tag = "jobs", params(("name" = String, Path)),
    request_body = PingUrlRequest,
    responses((status = 200, body = PingUrl), (status = 404, body = Problem),
        (status = 422, body = Problem)))]
pub async fn url(
    super::caller::Admin(caller): super::caller::Admin,
    State(state): State<AppState>,
    Path(name): Path<String>,
    body: axum::body::Bytes,
) -> Result<Json<PingUrl>, Problem> {
    let job = super::jobs::by_name(&state, &name).await?;
    let asked: PingUrlRequest = if body.iter().all(u8::is_ascii_whitespace) {
        PingUrlRequest::default()
    } else {
        serde_json::from_slice(&body)
            .map_err(|e| Problem::invalid("body", format!("not a ping-URL request: {e}")))?
    };
    let token = match watch::token(
        &state.db,
        &state.secret_key,
        &job,
        asked.rotate,
        &caller.as_actor(),
        crate::clock::now(),
    )
    .await
    {
        Ok(token) => token,
        Err(WatchError::Db(e)) => return Err(e.into()),
        Err(e) => return Err(Problem::invalid("kind", e.to_string())),
    };
    Ok(Json(PingUrl {
        url: format!("{}/ping/{token}", state.public_url.trim_end_matches('/')),
    }))
}
