//! The write-back task: finished attempts written to the database many at once
//! ([`super::settle`]), without ever letting one attempt that cannot be written take its
//! neighbours down with it, and without losing what it holds when the task itself dies.
//!
//! Attempts queue in a channel; the task takes what has queued, up to [`SETTLE_BATCH`], as
//! one batch. A batch that fails is split in halves and each half written on its own, down to
//! single attempts, so the rows that can be written are. A single attempt that still fails
//! while the database answers is the row's own fault (a text the database refuses, say): it is
//! written again without its texts — its outcome is what counts, and letting it go would run
//! the job again. While the database does not answer, the attempt is tried again with a
//! growing pause for up to a lease; after that the leases of everything still unwritten are
//! let go, and recovery retries those runs (on this node or another) once they expire.
//!
//! The channel and the parts not yet written live in a [`Backlog`] outside the task, so a task
//! that panics or is aborted is started again by its supervisor ([`super::supervise`]) and
//! carries on where it stopped.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Mutex, mpsc};
use tokio::time::Instant;

use super::Shared;
use super::settle::{self, Finished, Written};

/// Write-backs taken in one transaction, at most.
pub const SETTLE_BATCH: usize = 256;

/// Finished attempts waiting to be written, and the parts of a batch not written yet (the last
/// part is written next).
pub struct Backlog {
    queue: mpsc::Receiver<Finished>,
    parts: Vec<Vec<Finished>>,
}

impl Backlog {
    /// The sending end attempts queue on (room for `capacity`), and the backlog the task
    /// writes from.
    pub fn channel(capacity: usize) -> (mpsc::Sender<Finished>, Arc<Mutex<Backlog>>) {
        let (sender, queue) = mpsc::channel(capacity.max(1));
        let backlog = Backlog {
            queue,
            parts: Vec::new(),
        };
        (sender, Arc::new(Mutex::new(backlog)))
    }
}

/// Writes what queues until every sender is gone and the backlog is empty.
pub async fn run(shared: Arc<Shared>, backlog: Arc<Mutex<Backlog>>) {
    // Held for the task's whole life: a task started again after this one died waits here
    // until the guard is dropped with it, then finds the backlog as it was left.
    let mut backlog = backlog.lock().await;
    loop {
        if backlog.parts.is_empty() {
            let Some(first) = backlog.queue.recv().await else {
                return;
            };
            let mut batch = vec![first];
            while batch.len() < SETTLE_BATCH {
                match backlog.queue.try_recv() {
                    Ok(next) => batch.push(next),
                    Err(_) => break,
                }
            }
            backlog.parts.push(batch);
        }
        write(&shared, &mut backlog.parts).await;
    }
}

/// What to do with a single attempt that could not be written.
enum Single {
    /// Its row is at fault: write it again without its texts.
    Strip,
    /// The database is away: try again after a pause.
    Wait,
    /// Even the bare row is refused: let this one go.
    LetGo,
    /// The database stayed away for a lease: let everything still unwritten go.
    GiveUp,
}

/// Writes `parts` (the last first), splitting any that fails, until none is left.
pub async fn write(shared: &Shared, parts: &mut Vec<Vec<Finished>>) {
    let give_up_at = Instant::now() + shared.config.lease;
    let mut pause = Duration::from_millis(50);
    let mut stripped: Option<i64> = None;
    while let Some(part) = parts.last() {
        let error = match settle::settle(
            &shared.db,
            part,
            crate::clock::now(),
            shared.config.default_locale,
        )
        .await
        {
            Ok(written) => {
                let part = parts.pop().unwrap_or_default();
                recorded(shared, &part, &written);
                pause = Duration::from_millis(50);
                continue;
            }
            Err(error) => error,
        };
        if part.len() > 1 {
            tracing::warn!(%error, runs = part.len(), "write-back failed; writing the batch in halves");
            let mut first = parts.pop().unwrap_or_default();
            let second = first.split_off(first.len() / 2);
            parts.push(second);
            parts.push(first);
            continue;
        }
        let run = part.first().map_or(0, |f| f.run.id);
        match single(shared, stripped == Some(run), give_up_at).await {
            Single::Strip => {
                tracing::error!(%error, run, "the database refuses this attempt's write-back: writing its outcome without its output and message");
                if let Some(f) = parts.last_mut().and_then(|p| p.first_mut()) {
                    f.execution.strip(&error.to_string());
                }
                stripped = Some(run);
            }
            Single::Wait => {
                tracing::warn!(%error, run, "write-back failed; trying again");
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(2));
            }
            Single::LetGo => {
                parts.pop();
                tracing::error!(%error, run, "the database refuses this attempt's write-back even without its texts; letting its lease go: recovery retries the run");
                shared.leases.release(run);
            }
            Single::GiveUp => {
                let unwritten: Vec<Finished> = parts.drain(..).flatten().collect();
                tracing::error!(%error, runs = unwritten.len(), "write-back failed for a whole lease; letting the leases go: the runs will be recovered and retried");
                for f in &unwritten {
                    shared.leases.release(f.run.id);
                }
            }
        }
    }
}

async fn single(shared: &Shared, stripped: bool, give_up_at: Instant) -> Single {
    let answers = shared.db.ping().await.is_ok();
    match (answers, stripped) {
        (true, false) => Single::Strip,
        (true, true) => Single::LetGo,
        (false, _) if Instant::now() < give_up_at => Single::Wait,
        (false, _) => Single::GiveUp,
    }
}

/// After a part was written: its runs are no longer held, learned durations grow, and the
/// dispatcher may have a retry due before its planned wake-up.
fn recorded(shared: &Shared, part: &[Finished], written: &[Written]) {
    for (f, w) in part.iter().zip(written) {
        shared.leases.release(w.run_id);
        if !w.settled {
            tracing::warn!(job = %f.job_name, run = w.run_id, "lease lost before the write-back: another node owns this run; nothing written");
            continue;
        }
        if f.execution.report.class.is_none() {
            let ms = (f.finished_at - f.started_at).num_milliseconds().max(0);
            shared.histories.record(f.run.job_id, ms as u64);
        }
        tracing::info!(job = %f.job_name, run = w.run_id, outcome = %f.execution.report.outcome, next = ?w.next, "attempt recorded");
    }
    app::wake::runs_here();
}
