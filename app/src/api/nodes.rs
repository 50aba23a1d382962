//! The instances sharing the database, for the Settings page.

use leptos::prelude::*;

use super::AppError;
use crate::views::nodes::NodeView;

#[server(endpoint = "nodes/list")]
pub async fn list_nodes() -> Result<Vec<NodeView>, AppError> {
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            let now = crate::clock::now();
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
