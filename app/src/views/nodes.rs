//! The instances sharing the database, as the Settings page lists them.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::domain::node::NodeState;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct NodeView {
    pub node_id: String,
    pub host: String,
    pub pid: i32,
    pub version: String,
    pub addr: String,
    pub started_at: DateTime<Utc>,
    pub heartbeat_at: DateTime<Utc>,
    pub stopped_at: Option<DateTime<Utc>>,
    pub state: NodeState,
    pub clock_skew_ms: Option<i64>,
    /// Seconds since its last heartbeat, by the server's clock when the list was read.
    pub silent_s: i64,
    /// Its `node_labels`, as `dc=sh,role=db`.
    pub labels: String,
    /// Whether it serves the console, runs jobs, runs command jobs.
    pub web: bool,
    pub engine: bool,
    pub commands: bool,
    /// How it reaches PostgreSQL: `none`, or `transaction` (through a pooler in transaction
    /// mode, where `LISTEN` hears nothing and the poll carries the wake-ups).
    #[serde(default)]
    pub database_pooler: String,
}
