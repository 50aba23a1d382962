//! Secrets as the Settings page lists them: a name and when it was set, never a value.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SecretRow {
    pub name: String,
    pub updated_at: DateTime<Utc>,
}
