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
