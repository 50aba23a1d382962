//! Runs and their attempts: the Runs page, a run's story, the Overview's chart.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::domain::run::{ErrorClass, Outcome, Resolution, RunStatus, TimeoutKind, Trigger};

/// One attempt, as lists and the detail page show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct AttemptView {
    pub number: i32,
    /// `None` while it runs.
    pub outcome: Option<Outcome>,
    pub error_class: Option<ErrorClass>,
    pub started_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
    pub duration_ms: Option<i64>,
    pub timeout_ms: i64,
    pub message: Option<String>,
    pub output_tail: Option<String>,
    pub node: String,
    pub load_avg: Option<f64>,
    pub slow: bool,
    /// For a timeout: the time limit, or the stall timeout (no output for too long).
    pub timeout_kind: Option<TimeoutKind>,
    /// Whether the attempt counted against the retry limit (a hand-back at shutdown does not).
    pub spent_retry: bool,
}

/// A run with its job's name and every attempt, oldest attempt first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct RunView {
    pub id: i64,
    pub job_id: i64,
    pub job: String,
    pub trigger: Trigger,
    pub status: RunStatus,
    pub scheduled_for: DateTime<Utc>,
    pub created_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
    pub next_attempt_at: Option<DateTime<Utc>>,
    pub idempotency_key: String,
    pub last_error_class: Option<ErrorClass>,
    pub last_error: Option<String>,
    pub attempts: Vec<AttemptView>,
    /// How it left the failed queue, by whom, when and why.
    pub resolution: Option<Resolution>,
    pub resolved_by: Option<String>,
    pub resolved_at: Option<DateTime<Utc>>,
    pub resolution_reason: Option<String>,
    /// The dead run this one re-triggers, and the runs that re-trigger this one.
    pub retrigger_of: Option<i64>,
    pub retriggered_as: Vec<i64>,
    /// The retry and timeout policy recorded when the run was created (JSON), and one-off
    /// overrides from a re-trigger.
    pub policy: Option<String>,
    pub override_timeout_ms: Option<i64>,
    pub override_retry: Option<String>,
    /// The parameters the run was started with (JSON object), if the job takes any.
    #[serde(default)]
    pub params: Option<String>,
    /// Someone cancelled it while it was running: it stays `running` until its node has
    /// stopped the attempt and written it back as cancelled.
    #[serde(default)]
    pub cancel_requested_at: Option<DateTime<Utc>>,
    /// A watched job's run: it ran elsewhere, so it is never re-triggered.
    #[serde(default)]
    pub runs_elsewhere: bool,
    /// The date it stands for in the job's zone (`BULWARK_BUSINESS_DATE`): its tick's, or a
    /// moved or backfilled tick's own day.
    #[serde(default)]
    pub business_date: Option<chrono::NaiveDate>,
    /// The backfill that made it.
    #[serde(default)]
    pub backfill_id: Option<i64>,
    /// The revision of its job it ran (`None` until the engine took it).
    #[serde(default)]
    pub revision: Option<i32>,
    /// A child run's parent: the run of the tick it is a part of.
    #[serde(default)]
    pub parent: Option<i64>,
    /// A child run's place among its siblings.
    #[serde(default)]
    pub shard: Option<crate::domain::job::spread::Shard>,
    /// A parent's children, oldest first (a re-triggered shard's runs each).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<ChildRun>,
}

/// One child of a parent run, as the parent's page lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ChildRun {
    pub id: i64,
    pub shard: crate::domain::job::spread::Shard,
    pub status: RunStatus,
}

impl RunView {
    /// Where a parent's children stand: the latest child of each shard.
    pub fn children_count(&self) -> crate::domain::job::spread::Children {
        let rows: Vec<(i32, i64, RunStatus)> = self
            .children
            .iter()
            .map(|c| (c.shard.index as i32, c.id, c.status))
            .collect();
        crate::domain::job::spread::Children::count(&rows)
    }
}

impl RunView {
    /// Dead and not handled yet: it waits in the failed queue.
    pub fn in_failed_queue(&self) -> bool {
        self.status == RunStatus::Dead && self.resolution.is_none() && !self.is_parent()
    }

    /// A spread job's tick: it ran nothing itself, its children did.
    pub fn is_parent(&self) -> bool {
        self.parent.is_none() && !self.children.is_empty()
    }
}

/// Runs created during one hour, by how they ended so far.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HourBucket {
    pub hour: DateTime<Utc>,
    pub succeeded: u32,
    pub failed: u32,
    /// Still pending, running, waiting to retry, skipped or cancelled.
    pub other: u32,
}

/// Runs the Runs page lists at most (the newest that match its filter).
pub const RUNS_PAGE_LIMIT: u64 = 200;
