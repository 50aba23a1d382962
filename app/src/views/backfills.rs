//! Backfills as the job page and the REST API list them.

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

use crate::domain::backfill::BackfillState;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct BackfillRow {
    pub id: i64,
    /// The business dates it covers, inclusive.
    pub from: NaiveDate,
    pub to: NaiveDate,
    pub state: BackfillState,
    /// Runs it made, runs of them that have ended, and runs going now.
    pub total: u64,
    pub done: u64,
    pub going: u64,
    pub parallel: u32,
    pub per_minute: Option<u32>,
    pub rerun: bool,
    pub created_by: String,
    pub created_at: DateTime<Utc>,
}
