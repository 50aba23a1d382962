//! Liveness and readiness for load balancers and orchestrators.

use std::sync::Arc;

use app::state::AppState;
use axum::Extension;
use axum::extract::State;
use axum::http::StatusCode;

use crate::engine::supervise::EngineHealth;

/// The engine's health, where this process runs one.
#[derive(Clone)]
pub struct Engine(pub Option<Arc<EngineHealth>>);

/// The process is up and serving HTTP.
pub async fn healthz() -> &'static str {
    "ok"
}

/// The process can reach its database and its engine works; 503 otherwise, so a balancer
/// stops sending traffic and an orchestrator restarts it. The second line names the build, so
/// a rolling upgrade can be watched node by node.
pub async fn readyz(
    State(state): State<AppState>,
    Extension(Engine(engine)): Extension<Engine>,
) -> (StatusCode, String) {
    if let Some(why) = engine.and_then(|health| health.failure()) {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("engine stopped: {why}\n"),
        );
    }
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
