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

/// Runs became due: wake the engines here and, on PostgreSQL, on every node (delivered when the
/// caller's transaction commits, if it is in one).
pub async fn runs_changed(db: &impl ConnectionTrait) {
    runs_here();
    notify(db, RUNS_CHANNEL).await;
}

/// A job's schedule changed: wake the triggers here and on every node.
pub async fn jobs_changed(db: &impl ConnectionTrait) {
    jobs_here();
    notify(db, JOBS_CHANNEL).await;
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
