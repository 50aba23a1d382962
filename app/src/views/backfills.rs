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

/// What a backfill runs (or would): its ticks, and the backfill made, if one was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct BackfillPlan {
    pub backfill: Option<i64>,
    pub ticks: Vec<BackfillTick>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct BackfillTick {
    /// When it runs, RFC 3339 in the job's zone.
    pub scheduled_at: String,
    pub business_date: NaiveDate,
    /// `new`, `rerun` (its latest run ended dead) or `has_run` (left alone).
    pub action: String,
    /// The run it has, or the dead one it reruns.
    pub run: Option<i64>,
}
