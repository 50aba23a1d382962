//! The audit log as pages show it.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// One audit entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditEntry {
    pub at: DateTime<Utc>,
    pub actor: String,
    pub action: String,
    pub subject: String,
    pub detail: String,
}
