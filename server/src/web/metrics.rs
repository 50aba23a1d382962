//! `GET /metrics` (`crate::metrics` renders the series): a scrape needs a read or admin API
//! token (Bearer), or no token at all on the separate `metrics_addr` listener when one is
//! configured (bind it where only Prometheus reaches).

use std::sync::Arc;

use app::state::AppState;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::metrics::{BufferFigures, render};
use crate::traffic::Recorder;

/// What the handler needs.
#[derive(Clone)]
pub struct Scrape {
    pub app: AppState,
    pub recorder: Arc<Recorder>,
    /// On the separate `metrics_addr` listener: no token asked.
    pub open: bool,
}

/// `GET /metrics`.
pub async fn handler(State(scrape): State<Scrape>, parts: axum::http::request::Parts) -> Response {
    if !scrape.open {
        let token = match crate::rest::caller::bearer(&parts.headers) {
            Some(Ok(token)) => token,
            Some(Err(problem)) => return problem.into_response(),
            None => {
                return crate::rest::problem::Problem::unauthorized(
                    "send 'Authorization: Bearer <token>' (a read or admin token), or scrape the metrics_addr listener",
                )
                .into_response();
            }
        };
        let from = crate::rest::caller::address(&parts, &scrape.app);
        match crate::rest::caller::token_caller(&scrape.app, token, from).await {
            Err(problem) => return problem.into_response(),
            // A trigger token starts runs; the figures of every job are more than that.
            Ok(caller) if caller.scope == app::domain::api_token::Scope::Trigger => {
                return crate::rest::problem::Problem::new(
                    axum::http::StatusCode::FORBIDDEN,
                    format!(
                        "{} is a trigger token: /metrics needs a read or admin token",
                        caller.actor
                    ),
                )
                .into_response();
            }
            Ok(_) => {}
        }
    }
    let stats = scrape.recorder.buffer.stats();
    let buffer = BufferFigures {
        bytes: stats.bytes,
        dropped: stats.dropped,
        limited: stats.limited,
    };
    match render(&scrape.app.db, &buffer).await {
        Ok(text) => (
            [(
                header::CONTENT_TYPE,
                "text/plain; version=0.0.4; charset=utf-8",
            )],
            text,
        )
            .into_response(),
        Err(e) => {
            tracing::error!(error = %e, "cannot read the metrics");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                "the database is unreachable",
            )
                .into_response()
        }
    }
}

/// The `/metrics` route, with its own state.
pub fn router(scrape: Scrape) -> axum::Router {
    axum::Router::new()
        .route("/metrics", axum::routing::get(handler))
        .with_state(scrape)
}
