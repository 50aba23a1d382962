//! The Overview: everything its first screen shows, in one answer (the page polls it).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::domain::run::{ErrorClass, RunStatus};
use crate::views::runs::HourBucket;

/// A count now and over the period before, for a tile's change.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    pub now: u64,
    pub before: u64,
}

/// The tiles, each the figure behind one filtered list.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Tiles {
    /// Runs created in the last 24 hours and in the 24 before.
    pub runs: Change,
    /// Of those, the ones that ended: succeeded, and dead.
    pub succeeded: Change,
    pub dead: Change,
    pub running: u64,
    pub retry_wait: u64,
    /// Dead runs waiting in the failed queue, the oldest's end, and how many joined it in the
    /// last 24 hours.
    pub failed_queue: u64,
    pub failed_oldest: Option<DateTime<Utc>>,
    pub failed_joined: u64,
    /// Jobs with an open alert episode, and the escalated ones among them.
    pub failing_jobs: u64,
    pub escalated_jobs: u64,
    /// p95 of how late cron runs started after their tick (first attempt's start minus the
    /// tick), last 24 hours and the 24 before; `None` without such runs.
    pub late_p95_ms: Option<u64>,
    pub late_p95_before_ms: Option<u64>,
    /// Mails and chat deliveries that gave up (each resendable), and the ones waiting to go.
    pub mail_failed: u64,
    pub chat_failed: u64,
    pub deliveries_waiting: u64,
    pub nodes_live: u64,
    pub nodes_lost: u64,
    /// Page views today and yesterday (the configured zone), people and bots.
    pub people: Change,
    pub bots: Change,
}

impl Tiles {
    /// Share of the runs that ended in the last 24 hours that succeeded (`None` when none
    /// ended), and the same for the 24 hours before.
    pub fn success_rate(&self) -> (Option<f64>, Option<f64>) {
        let rate = |ok: u64, dead: u64| (ok + dead > 0).then(|| ok as f64 / (ok + dead) as f64);
        (
            rate(self.succeeded.now, self.dead.now),
            rate(self.succeeded.before, self.dead.before),
        )
    }
}

/// A job whose latest run failed or is waiting to retry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attention {
    pub job_id: i64,
    pub job: String,
    pub run_id: i64,
    pub status: RunStatus,
    /// Since when it has been failing: the open alert episode's start, else the run's.
    pub since: DateTime<Utc>,
    pub error_class: Option<ErrorClass>,
    pub error: Option<String>,
    /// The run waits in the failed queue (so it can be re-triggered, unless watched).
    pub in_failed_queue: bool,
    /// A watched job (it runs elsewhere and pings).
    #[serde(default)]
    pub watched: bool,
}

/// An attempt that is running longer, or ran longer, than its job ever should
/// (`crate::domain::watch::Limits`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SlowAttempt {
    pub job: String,
    pub run_id: i64,
    pub attempt: i32,
    pub started_at: DateTime<Utc>,
    /// So far, while it runs.
    pub duration_ms: u64,
    pub running: bool,
}

/// A run that no live node may take (`crate::services::placement`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeWait {
    pub job_id: i64,
    pub job: String,
    pub run_id: i64,
    /// Since when it could have run.
    pub since: DateTime<Utc>,
    /// What its job asks of a node (`role=db`); empty: a command job, and no live node runs
    /// commands.
    pub run_on: String,
}

/// A concurrency pool and what it holds now (`crate::services::pools`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PoolUsage {
    pub name: String,
    pub size: i32,
    /// Runs of its jobs running now.
    pub running: u64,
    /// Runs of its jobs due and waiting for a place.
    pub waiting: u64,
}

/// A job's next tick.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NextFire {
    pub job_id: i64,
    pub job: String,
    pub at: DateTime<Utc>,
}

/// A run that ended dead.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    pub run_id: i64,
    pub job: String,
    pub finished_at: DateTime<Utc>,
    pub error_class: Option<ErrorClass>,
    pub error: Option<String>,
}

/// The whole Overview.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Overview {
    pub now: DateTime<Utc>,
    pub tiles: Tiles,
    pub attention: Vec<Attention>,
    pub slow: Vec<SlowAttempt>,
    /// Runs waiting for a node allowed to run them, oldest first.
    #[serde(default)]
    pub waiting: Vec<NodeWait>,
    /// The concurrency pools, by name.
    #[serde(default)]
    pub pools: Vec<PoolUsage>,
    pub next_fires: Vec<NextFire>,
    pub failures: Vec<Failure>,
    /// Runs per hour over the last 24 hours, oldest first.
    pub per_hour: Vec<HourBucket>,
}
