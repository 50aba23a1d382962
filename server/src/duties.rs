//! The node's own periodic duties — heartbeat and clock offset, the batched lease renewal, the
//! recovery sweep, the early traffic flush when the buffer fills, forgetting old node rows —
//! run by one tokio-cron-scheduler `JobScheduler` per process.
//!
//! Cron *jobs* are not scheduled here: Bulwark's own tables decide when they run (they replay
//! missed ticks, keep their zone across DST and coordinate nodes, which this scheduler does
//! not). A duty is node-local housekeeping that must simply happen every so often.
//!
//! Each duty is guarded: if the previous round is still running (a slow database), the next
//! one is skipped rather than stacked.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio_cron_scheduler::{Job, JobScheduler, JobSchedulerError};
use uuid::Uuid;

/// One round of a duty.
pub type Round = Pin<Box<dyn Future<Output = ()> + Send>>;

struct Clear(Arc<AtomicBool>);

impl Drop for Clear {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

/// The node's scheduler of duties. Cloning shares it.
#[derive(Clone)]
pub struct Duties {
    scheduler: JobScheduler,
}

impl Duties {
    /// A running scheduler with no duties yet.
    pub async fn start() -> Result<Duties, JobSchedulerError> {
        let scheduler = JobScheduler::new().await?;
        scheduler.start().await?;
        Ok(Duties { scheduler })
    }

    /// Runs `round` every `period`, never two rounds at once. Returns the duty's id, for
    /// [`Duties::remove`].
    pub async fn every<F>(
        &self,
        name: &'static str,
        period: Duration,
        round: F,
    ) -> Result<Uuid, JobSchedulerError>
    where
        F: Fn() -> Round + Send + Sync + 'static,
    {
        let busy = Arc::new(AtomicBool::new(false));
        let round = Arc::new(round);
        let job = Job::new_repeated_async(period, move |_id, _scheduler| {
            let busy = busy.clone();
            let round = round.clone();
            Box::pin(async move {
                if busy.swap(true, Ordering::AcqRel) {
                    tracing::debug!(duty = name, "previous round still running: skipped");
                    return;
                }
                // Cleared however the round ends, a panic included.
                let _clear = Clear(busy);
                round().await;
            })
        })?;
        self.scheduler.add(job).await
    }

    /// Stops a duty (rounds already started finish).
    pub async fn remove(&self, id: &Uuid) {
        if let Err(e) = self.scheduler.remove(id).await {
            tracing::warn!(error = %e, "could not remove a duty");
        }
    }

    /// Stops every duty.
    pub async fn stop(mut self) {
        if let Err(e) = self.scheduler.shutdown().await {
            tracing::warn!(error = %e, "the duty scheduler did not stop cleanly");
        }
    }
}
