//! Telling the engines that something changed, so they act now instead of at their next poll.
//!
//! Whoever makes a run due (a new run, a re-trigger, a released hold, a retry scheduled soon)
//! calls [`runs_changed`]; whoever changes when a job fires calls [`jobs_changed`]. In this
//! process that bumps a counter the engine's loops wait on; on PostgreSQL it also sends a
//! `NOTIFY`, which every other node's listener turns into the same bump (the server's
//! `engine::listen`). A lost wake-up costs only latency: the engines still poll.

use std::sync::OnceLock;

use sea_orm::{ConnectionTrait, DatabaseBackend, Statement};
use tokio::sync::watch;

/// The channel runs that became due are announced on.
pub const RUNS_CHANNEL: &str = "bulwark_runs";
/// The channel job schedule changes are announced on.
pub const JOBS_CHANNEL: &str = "bulwark_jobs";

fn counter(cell: &'static OnceLock<watch::Sender<u64>>) -> &'static watch::Sender<u64> {
    cell.get_or_init(|| watch::channel(0).0)
}

static RUNS: OnceLock<watch::Sender<u64>> = OnceLock::new();
static JOBS: OnceLock<watch::Sender<u64>> = OnceLock::new();

/// Waits for run changes announced after this call (a loop keeps one and awaits `changed`).
pub fn runs() -> watch::Receiver<u64> {
    counter(&RUNS).subscribe()
}

/// Waits for schedule changes announced after this call.
pub fn jobs() -> watch::Receiver<u64> {
    counter(&JOBS).subscribe()
}

/// Wakes this process's waiters on run changes (no database).
pub fn runs_here() {
    counter(&RUNS).send_modify(|n| *n = n.wrapping_add(1));
}

/// Wakes this process's waiters on schedule changes (no database).
pub fn jobs_here() {
    counter(&JOBS).send_modify(|n| *n = n.wrapping_add(1));
}

/// Runs became due, by a statement already committed: wake the engines here and, on
/// PostgreSQL, on every node. Inside a transaction, use [`runs_changed_in`].
pub async fn runs_changed(db: &impl ConnectionTrait) {
    runs_here();
    notify(db, RUNS_CHANNEL).await;
}

/// A job's schedule changed, by a statement already committed: wake the triggers here and on
/// every node. Inside a transaction, use [`jobs_changed_in`].
pub async fn jobs_changed(db: &impl ConnectionTrait) {
    jobs_here();
    notify(db, JOBS_CHANNEL).await;
}

/// Runs became due inside the caller's transaction `txn`: the other nodes hear of it when it
/// commits (PostgreSQL delivers a `NOTIFY` then), and this process when the returned [`Wake`]
/// is given, after the commit — an engine here woken before it would look, find nothing yet,
/// and sleep a whole poll.
pub async fn runs_changed_in(txn: &impl ConnectionTrait) -> Wake {
    notify(txn, RUNS_CHANNEL).await;
    Wake {
        runs: true,
        jobs: false,
    }
}

/// [`runs_changed_in`] for a change of schedules.
pub async fn jobs_changed_in(txn: &impl ConnectionTrait) -> Wake {
    notify(txn, JOBS_CHANNEL).await;
    Wake {
        runs: false,
        jobs: true,
    }
}

/// This process's wake-up for a change made in a transaction, to give once it has committed.
#[must_use = "give it with `after_commit` once the transaction has committed"]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Wake {
    runs: bool,
    jobs: bool,
}

impl Wake {
    /// Both wake-ups.
    pub fn and(self, other: Wake) -> Wake {
        Wake {
            runs: self.runs || other.runs,
            jobs: self.jobs || other.jobs,
        }
    }

    /// Wakes this process's waiters; call it after the commit.
    pub fn after_commit(self) {
        if self.runs {
            runs_here();
        }
        if self.jobs {
            jobs_here();
        }
    }
}

async fn notify(db: &impl ConnectionTrait, channel: &str) {
    if db.get_database_backend() != DatabaseBackend::Postgres {
        return;
    }
    let statement = Statement::from_sql_and_values(
        DatabaseBackend::Postgres,
        "SELECT pg_notify($1, '')",
        [channel.into()],
    );
    if let Err(e) = db.execute_raw(statement).await {
        // The other nodes find the work at their next poll.
        tracing::warn!(error = %e, channel, "could not notify the other nodes");
    }
}
