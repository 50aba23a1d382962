//! The nodes table as the Settings page shows it.

use chrono::{DateTime, Utc};
use sea_orm::{DatabaseConnection, DbErr, EntityTrait, QueryOrder};

use crate::domain::node::NodeState;
use crate::entities::node;

/// A node with its state judged at `now`.
pub struct NodeSummary {
    pub row: node::Model,
    pub state: NodeState,
}

impl NodeSummary {
    /// The node as the Settings page and the API show it.
    pub fn view(self, now: DateTime<Utc>) -> crate::views::nodes::NodeView {
        crate::views::nodes::NodeView {
            silent_s: (now - self.row.heartbeat_at).num_seconds().max(0),
            node_id: self.row.node_id,
            host: self.row.host,
            pid: self.row.pid,
            version: self.row.version,
            addr: self.row.addr,
            started_at: self.row.started_at,
            heartbeat_at: self.row.heartbeat_at,
            stopped_at: self.row.stopped_at,
            state: self.state,
            clock_skew_ms: self.row.clock_skew_ms,
            labels: self.row.labels,
            web: self.row.web,
            engine: self.row.engine,
            commands: self.row.commands,
            database_pooler: self.row.database_pooler,
        }
    }
}

/// Live nodes first, then lost, then stopped; newest heartbeat first within each.
pub async fn list(db: &DatabaseConnection, now: DateTime<Utc>) -> Result<Vec<NodeSummary>, DbErr> {
    let mut nodes: Vec<NodeSummary> = node::Entity::find()
        .order_by_desc(node::Column::HeartbeatAt)
        .all(db)
        .await?
        .into_iter()
        .map(|row| NodeSummary {
            state: NodeState::of(row.stopped_at, row.heartbeat_at, now),
            row,
        })
        .collect();
    nodes.sort_by_key(|n| match n.state {
        NodeState::Live => 0,
        NodeState::Lost => 1,
        NodeState::Stopped => 2,
    });
    Ok(nodes)
}
