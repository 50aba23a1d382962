//! The engine: turns cron ticks into runs and runs into attempts, durably.
//!
//! The database is the queue. Every stage reads and writes rows, so a process that dies loses
//! at most the attempt it was running, and that attempt is found again by its expired lease.
//!
//! - [`trigger`]: cron ticks → `job_runs` rows (each tick once, whatever the number of nodes).
//! - [`claim`]: due runs → leased to this node (`FOR UPDATE SKIP LOCKED` on PostgreSQL).
//! - [`attempt`]: one attempt of a claimed run: timeout, lease renewal, the fenced write-back.
//! - [`executor`]: what an attempt does — an HTTP call, a command, a built-in task.
//! - [`builtin`]: the built-in tasks.
//! - [`recovery`]: runs whose lease expired (their node died) → interrupted, retried.
//!
//! [`Engine::run`] drives them until shutdown; tests call the stage functions directly.

pub mod attempt;
pub mod builtin;
pub mod claim;
pub mod executor;
pub mod recovery;
pub mod trigger;

use std::sync::Arc;
use std::time::Duration;

use sea_orm::DatabaseConnection;
use tokio::sync::{Notify, Semaphore};
use tokio::task::JoinSet;

/// How the engine behaves; defaults suit one instance, `config.rs` exposes them.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Who holds leases: unique per process (host, pid, start time).
    pub node_id: String,
    /// How often to look for due work when nothing wakes the engine earlier.
    pub poll: Duration,
    /// How long a claim lasts without renewal; renewed every third of it.
    pub lease: Duration,
    /// On shutdown, how long running attempts may take to finish before they are handed back.
    pub grace: Duration,
    /// Attempts running at once on this node.
    pub concurrency: usize,
    /// Ticks later than this when first seen count as missed (the misfire policy applies).
    pub misfire_after: Duration,
    /// Whether `command` jobs may run here.
    pub allow_commands: bool,
}

impl EngineConfig {
    pub fn new(node_id: String) -> Self {
        EngineConfig {
            node_id,
            poll: Duration::from_millis(500),
            lease: Duration::from_secs(30),
            grace: Duration::from_secs(30),
            concurrency: 16,
            misfire_after: Duration::from_secs(30),
            allow_commands: true,
        }
    }
}

/// A node id that differs between processes and restarts.
pub fn default_node_id() -> String {
    let host = std::fs::read_to_string("/etc/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into());
    format!(
        "{host}-{}-{}",
        std::process::id(),
        chrono::Utc::now().timestamp_millis()
    )
}

/// Everything an attempt needs, shared by the engine's tasks.
pub struct Shared {
    pub db: DatabaseConnection,
    pub config: EngineConfig,
    pub http: reqwest::Client,
    pub builtins: builtin::Registry,
    /// Woken when a run becomes due sooner than the next poll (a new run, a short retry).
    pub wake: Arc<Notify>,
}

pub struct Engine {
    shared: Arc<Shared>,
}

impl Engine {
    pub fn new(db: DatabaseConnection, config: EngineConfig) -> Self {
        let http = reqwest::Client::builder()
            .user_agent(concat!("Bulwark/", env!("CARGO_PKG_VERSION")))
            .build()
            .unwrap_or_default();
        Engine {
            shared: Arc::new(Shared {
                db,
                config,
                http,
                builtins: builtin::Registry::standard(),
                wake: Arc::new(Notify::new()),
            }),
        }
    }

    pub fn shared(&self) -> Arc<Shared> {
        self.shared.clone()
    }

    /// Runs until `shutdown` resolves; then stops claiming, gives running attempts the grace
    /// period, and hands back what is still running so the next process retries it.
    #[tracing::instrument(skip_all, fields(node = %self.shared.config.node_id))]
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        let shared = self.shared;
        tracing::info!("engine started");
        match recovery::recover_expired(&shared.db, crate::clock::now()).await {
            Ok(0) => {}
            Ok(n) => tracing::warn!(runs = n, "recovered runs a previous process left running"),
            Err(e) => tracing::error!(error = %e, "recovery at start failed"),
        }

        let permits = Arc::new(Semaphore::new(shared.config.concurrency));
        let mut running: JoinSet<()> = JoinSet::new();
        let mut last_recovery = tokio::time::Instant::now();
        tokio::pin!(shutdown);

        loop {
            let now = crate::clock::now();
            let next_tick = match trigger::enqueue_due_ticks(
                &shared.db,
                now,
                shared.config.misfire_after,
            )
            .await
            {
                Ok(pass) => pass.next_tick,
                Err(e) => {
                    tracing::error!(error = %e, "could not enqueue cron ticks");
                    None
                }
            };
            if last_recovery.elapsed() >= shared.config.lease / 3 {
                last_recovery = tokio::time::Instant::now();
                if let Err(e) = recovery::recover_expired(&shared.db, now).await {
                    tracing::error!(error = %e, "recovery failed");
                }
            }

            let free = permits.available_permits();
            if free > 0 {
                match claim::claim_due(&shared.db, &shared.config, now, free).await {
                    Ok(claimed) => {
                        for run in claimed {
                            let Ok(permit) = permits.clone().try_acquire_owned() else {
                                break;
                            };
                            let shared = shared.clone();
                            running.spawn(async move {
                                attempt::run(&shared, run).await;
                                drop(permit);
                            });
                        }
                    }
                    Err(e) => tracing::error!(error = %e, "could not claim runs"),
                }
            }
            while running.try_join_next().is_some() {}

            // Sleep until the next retry or cron tick falls due, or the poll interval.
            let now = crate::clock::now();
            let mut sleep_for = match claim::next_due_in(&shared.db, now).await {
                Ok(Some(due)) => due.min(shared.config.poll),
                _ => shared.config.poll,
            };
            if let Some(tick) = next_tick {
                sleep_for = sleep_for.min((tick - now).to_std().unwrap_or_default());
            }
            tracing::debug!(?sleep_for, ?next_tick, "engine idle");
            tokio::select! {
                () = &mut shutdown => break,
                () = shared.wake.notified() => {}
                () = tokio::time::sleep(sleep_for) => {}
                Some(_) = running.join_next(), if !running.is_empty() => {}
            }
        }

        tracing::info!(
            running = running.len(),
            grace_s = shared.config.grace.as_secs(),
            "engine stopping: no new claims"
        );
        let drained = tokio::time::timeout(shared.config.grace, async {
            while running.join_next().await.is_some() {}
        })
        .await;
        if drained.is_err() {
            tracing::warn!(
                running = running.len(),
                "grace period over: handing back running attempts"
            );
            running.abort_all();
            while running.join_next().await.is_some() {}
            match recovery::hand_back(&shared.db, &shared.config.node_id, crate::clock::now()).await
            {
                Ok(n) => tracing::info!(runs = n, "handed back"),
                Err(e) => {
                    tracing::error!(error = %e, "hand-back failed; the leases will expire instead")
                }
            }
        }
        tracing::info!("engine stopped");
    }
}
