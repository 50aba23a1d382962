//! Accounts as the Settings page lists them (never a password hash).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::domain::account::Role;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserRow {
    pub id: i64,
    pub username: String,
    pub role: Role,
    pub created_at: DateTime<Utc>,
}
