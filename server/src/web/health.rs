//! Liveness and readiness for load balancers and orchestrators.

use app::state::AppState;
use axum::extract::State;
use axum::http::StatusCode;

/// The process is up and serving HTTP.
pub async fn healthz() -> &'static str {
    "ok"
}

/// The process can reach its database; 503 otherwise, so a balancer stops sending traffic.
/// The second line names the build, so a rolling upgrade can be watched node by node.
pub async fn readyz(State(state): State<AppState>) -> (StatusCode, String) {
    match state.db.ping().await {
        Ok(()) => (
            StatusCode::OK,
            format!("ready\nbulwark {}\n", *crate::version::LONG),
        ),
        Err(e) => {
            tracing::warn!(error = %e, "readiness check: database unreachable");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                "database unreachable\n".to_string(),
            )
        }
    }
}
