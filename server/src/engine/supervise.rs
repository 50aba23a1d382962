//! Keeping the engine's own tasks alive — the trigger, the write-back, the lease renewal, the
//! listener — and saying so when one cannot be kept.
//!
//! Each runs under [`supervise`]: a task that ends while the engine runs (a panic, an abort, a
//! return it should never make) is logged and started again, and keeps whatever it was
//! working on (the write-back's backlog lives outside its task). A task that dies more than
//! [`RESTARTS`] times within [`WINDOW`] is given up on: the engine stops claiming, hands its
//! running attempts back as on a shutdown, and [`EngineHealth`] says why, on `/readyz` and in
//! the log, until the process is restarted. Nothing is left `running` by a dead task: what it
//! held is written back or its lease let go, for recovery.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;

use tokio::task::AbortHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Restarts tolerated within [`WINDOW`] before a task is given up on.
pub const RESTARTS: usize = 3;
/// The span [`RESTARTS`] are counted over.
pub const WINDOW: Duration = Duration::from_secs(60);

/// Whether the engine is working, and if not, why.
#[derive(Default)]
pub struct EngineHealth {
    failed: Mutex<Option<String>>,
    stop: CancellationToken,
    /// Each task's running instance, and how many times it was started.
    tasks: Mutex<HashMap<&'static str, (AbortHandle, u64)>>,
}

impl EngineHealth {
    /// Why the engine stopped, if a task of it could not be kept running.
    pub fn failure(&self) -> Option<String> {
        self.failed
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// Resolves when the engine has given up on one of its tasks.
    pub async fn failed(&self) {
        self.stop.cancelled().await
    }

    fn give_up(&self, why: String) {
        tracing::error!(reason = %why, "the engine stops claiming and hands its runs back: {why}");
        *self
            .failed
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(why);
        self.stop.cancel();
    }

    /// Ends the running task `name` as a crash would (fault tests). Whether it was running.
    pub fn abort(&self, name: &str) -> bool {
        let tasks = self
            .tasks
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        tasks.get(name).is_some_and(|(task, _)| {
            task.abort();
            true
        })
    }

    /// How many times the task `name` was started (fault tests wait for a restart with it).
    pub fn starts(&self, name: &str) -> u64 {
        self.tasks
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .get(name)
            .map_or(0, |(_, starts)| *starts)
    }

    fn started(&self, name: &'static str, task: AbortHandle) {
        let mut tasks = self
            .tasks
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let starts = tasks.get(name).map_or(0, |(_, n)| *n) + 1;
        tasks.insert(name, (task, starts));
    }
}

/// Runs the task `start` makes until `stop` is cancelled, starting it again whenever it ends
/// before that (see the module's documentation).
pub async fn supervise<F, Fut>(
    name: &'static str,
    health: &EngineHealth,
    stop: &CancellationToken,
    start: F,
) where
    F: Fn() -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let mut deaths: Vec<Instant> = Vec::new();
    loop {
        let task = tokio::spawn(start());
        health.started(name, task.abort_handle());
        let ended = task.await;
        if stop.is_cancelled() {
            return;
        }
        let how = match ended {
            Ok(()) => "returned".to_string(),
            Err(e) if e.is_panic() => format!("panicked: {}", super::attempt::panic_text(e)),
            Err(_) => "was aborted".to_string(),
        };
        let now = Instant::now();
        deaths.retain(|at| now.duration_since(*at) < WINDOW);
        deaths.push(now);
        if deaths.len() > RESTARTS {
            health.give_up(format!(
                "the engine's {name} task died {} times within {} s (last: it {how})",
                deaths.len(),
                WINDOW.as_secs()
            ));
            return;
        }
        tracing::error!(task = name, how = %how, "an engine task ended; starting it again");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
