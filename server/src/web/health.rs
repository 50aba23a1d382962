//! Liveness and readiness for load balancers and orchestrators.

use app::state::AppState;
use axum::extract::State;
use axum::http::StatusCode;

/// The process is up and serving HTTP.
pub async fn healthz() -> &'static str {
    "ok"
}

/// The process can reach its database; 503 otherwise, so a balancer stops sending traffic.
pub async fn readyz(State(state): State<AppState>) -> (StatusCode, &'static str) {
    match state.db.ping().await {
        Ok(()) => (StatusCode::OK, "ready"),
        Err(e) => {
            tracing::warn!(error = %e, "readiness check: database unreachable");
            (StatusCode::SERVICE_UNAVAILABLE, "database unreachable")
        }
    }
}
