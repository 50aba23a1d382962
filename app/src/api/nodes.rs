//! The instances sharing the database, for the Settings page.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use super::AppError;
use crate::domain::node::NodeState;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeView {
    pub node_id: String,
    pub host: String,
    pub pid: i32,
    pub version: String,
    pub addr: String,
    pub started_at: chrono::DateTime<chrono::Utc>,
    pub heartbeat_at: chrono::DateTime<chrono::Utc>,
    pub stopped_at: Option<chrono::DateTime<chrono::Utc>>,
    pub state: NodeState,
    pub clock_skew_ms: Option<i64>,
    /// Seconds since its last heartbeat, by the server's clock when the list was read.
    pub silent_s: i64,
}

#[server(endpoint = "nodes/list")]
pub async fn list_nodes() -> Result<Vec<NodeView>, AppError> {
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            let now = chrono::Utc::now();
            let nodes = crate::services::nodes::list(&state.db, now).await?;
            Ok(nodes
                .into_iter()
                .map(|n| NodeView {
                    silent_s: (now - n.row.heartbeat_at).num_seconds().max(0),
                    node_id: n.row.node_id,
                    host: n.row.host,
                    pid: n.row.pid,
                    version: n.row.version,
                    addr: n.row.addr,
                    started_at: n.row.started_at,
                    heartbeat_at: n.row.heartbeat_at,
                    stopped_at: n.row.stopped_at,
                    state: n.state,
                    clock_skew_ms: n.row.clock_skew_ms,
                })
                .collect())
        }
        .await,
    )
}
