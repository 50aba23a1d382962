//! API tokens as Settings and `bulwark token list` show them: never the token itself.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::domain::account::Role;
use crate::domain::api_token::Scope;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenInfo {
    pub name: String,
    /// The role its requests act with (its scope's: `read` and `trigger` read as a viewer).
    pub role: Role,
    pub scope: Scope,
    /// A trigger token's tags; empty: every job.
    pub tags: Vec<String>,
    /// The owning account's username; `None` for a token made before tokens had owners, or
    /// whose owner was deleted.
    pub owner: Option<String>,
    /// The owner is deleted, disabled or no longer holds a role the scope needs.
    pub stopped_by_owner: bool,
    pub created_by: String,
    pub created_at: DateTime<Utc>,
    pub expires_at: Option<DateTime<Utc>>,
    pub last_used_at: Option<DateTime<Utc>>,
    /// The address of its latest use.
    pub last_used_from: Option<String>,
    pub revoked_at: Option<DateTime<Utc>>,
}

impl TokenInfo {
    /// `active`, `revoked`, `expired`, or `stopped` (by its owner's account) at `now`.
    pub fn state(&self, now: DateTime<Utc>) -> &'static str {
        if self.revoked_at.is_some() {
            "revoked"
        } else if self.expires_at.is_some_and(|at| at <= now) {
            "expired"
        } else if self.stopped_by_owner {
            "stopped"
        } else {
            "active"
        }
    }
}

/// A token just created: the one time it is shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreatedToken {
    pub token: String,
    pub info: TokenInfo,
}
