//! The engine: turns cron ticks into runs and runs into attempts, durably.
//!
//! The database is the queue. Every stage reads and writes rows, so a process that dies loses
//! at most the attempts it was running, and those are found again by their expired leases.
//!
//! - [`trigger`]: cron ticks → `job_runs` rows (each tick once, whatever the number of nodes),
//!   driven by each job's `next_fire_at`.
//! - [`claim`]: due runs → leased to this node, with their attempt rows, in batches.
//! - [`fan_out`]: a spread job's claimed tick → its children, one per node or shard.
//! - [`attempt`]: one attempt under its fence: a panic, a lost lease or the end of the
//!   shutdown grace all end it cleanly.
//! - [`executor`]: what an attempt does — an HTTP call, a command, a built-in task.
//! - [`builtin`]: the built-in tasks.
//! - [`settle`]: attempts written back many at once, each fenced on its lease.
//! - [`write_back`]: the task that writes them, splitting what fails so one row cannot hold
//!   back its neighbours.
//! - [`lease`]: this node's leases, renewed in one statement, and the fences they feed.
//! - [`supervise`]: the engine's own tasks started again when they die, and the engine's
//!   health when one cannot be kept.
//! - [`recovery`]: runs whose node stopped renewing → interrupted, retried.
//! - [`placement`]: due runs no live node may take → `waiting_for_node`, alerted after a while.
//! - [`listen`]: PostgreSQL `LISTEN`, so other nodes' new work wakes this one at once.
//! - [`cache`]: parsed job definitions and recent durations, kept between attempts.
//!
//! [`Engine::run`] drives them until shutdown; tests call the stage functions directly.
//! The guarantee (`docs/operations/several-instances.md`): every tick becomes exactly one run; a run
//! executes at least once, and never twice at the same time while the processes that run it
//! keep running; the idempotency key and the `Bulwark-Attempt` number make repeats harmless.

pub mod attempt;
pub mod builtin;
pub mod cache;
pub mod claim;
pub mod executor;
pub mod fan_out;
pub mod lease;
pub mod listen;
pub mod placement;
pub mod recovery;
pub mod run_log;
pub mod settle;
pub mod supervise;
pub mod trigger;
pub mod write_back;

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use app::services::retention::Retention;
use sea_orm::DatabaseConnection;
use tokio::sync::{Notify, Semaphore, mpsc};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::duties::Duties;
use attempt::Left;
use settle::Finished;
use supervise::{EngineHealth, supervise};

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
    /// Whether `command` jobs may run here: without, they are never claimed here.
    pub allow_commands: bool,
    /// This node's labels: it claims only runs of jobs whose `run_on` they satisfy.
    pub labels: app::domain::labels::Labels,
    /// A run waiting this long for a node allowed to run it is alerted on.
    pub node_wait_alert: Duration,
    /// What the `cleanup` task keeps.
    pub retention: Retention,
    /// When the `traffic-alerts` task alerts (`traffic_alerts`).
    pub traffic_alerts: app::domain::traffic_alerts::Rules,
    /// Opens the secrets jobs refer to; without it such jobs fail with a message.
    pub secret_key: Option<app::services::secrets::SecretKey>,
    /// The language of alert mails and chat messages where the mail setting or the channel
    /// sets none (`default_locale`).
    pub default_locale: app::i18n::Locale,
    /// Where HTTP jobs may not send (`outbound_deny`).
    pub outbound_deny: crate::outbound::Deny,
    /// Kept of an attempt's output at most (`run_log_max_mb`): over it, the first and the
    /// last half (`run_log`).
    pub run_log_max_bytes: u64,
    /// Whether PostgreSQL's `LISTEN` wakes this node when another adds work. Not through a
    /// pooler in transaction mode, which delivers no notification: the poll carries the
    /// wake-ups there.
    pub listen: bool,
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
            labels: Default::default(),
            node_wait_alert: Duration::from_secs(300),
            retention: Retention::default(),
            traffic_alerts: Default::default(),
            secret_key: None,
            default_locale: app::i18n::Locale::english(),
            outbound_deny: crate::outbound::Deny::standard(),
            run_log_max_bytes: 10 << 20,
            listen: true,
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
    /// HTTP clients by the job's redirect policy (`executor::Clients`).
    pub http: executor::Clients,
    pub builtins: builtin::Registry,
    pub leases: lease::Leases,
    pub specs: cache::Specs,
    pub histories: cache::Histories,
    /// What is paused, read again each poll or when a pause changes.
    pub pauses: cache::Pauses,
    /// Woken when an attempt ends (a permit is free again).
    pub finished: Notify,
    /// Rounds of the dispatcher so far: each looks for due runs once. A dispatcher that
    /// spins shows here (the engine tests read it).
    pub dispatch_rounds: AtomicU64,
    /// Claims so far (`claim::shares` turns on it).
    pub claim_rounds: AtomicU64,
    /// Whether the engine's own tasks are running, and a way to kill one (fault tests).
    pub health: Arc<EngineHealth>,
    /// How long this node's recent attempts took, in microseconds (a moving average).
    attempt_us: AtomicU64,
}

impl Shared {
    /// How long this node's recent attempts took, on average.
    pub fn attempt_time(&self) -> Duration {
        Duration::from_micros(self.attempt_us.load(Ordering::Relaxed))
    }

    /// Folds one attempt's time into the moving average (weight 1/8).
    fn record_attempt_time(&self, took: Duration) {
        let took = took.as_micros().min(u128::from(u64::MAX)) as u64;
        let _ = self
            .attempt_us
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |avg| {
                Some(avg - avg / 8 + took / 8)
            });
    }
}

pub struct Engine {
    shared: Arc<Shared>,
    duties: Option<Duties>,
}

impl Engine {
    pub fn new(db: DatabaseConnection, config: EngineConfig) -> Self {
        let http = executor::Clients::new(&config.outbound_deny);
        let pauses = cache::Pauses::new(config.poll);
        Engine {
            shared: Arc::new(Shared {
                leases: lease::Leases::new(config.node_id.clone(), config.lease),
                db,
                config,
                http,
                builtins: builtin::Registry::standard(),
                specs: cache::Specs::default(),
                histories: cache::Histories::default(),
                pauses,
                finished: Notify::new(),
                dispatch_rounds: AtomicU64::new(0),
                claim_rounds: AtomicU64::new(0),
                health: Arc::new(EngineHealth::default()),
                // Until attempts are measured, assume they are long: no claiming ahead.
                attempt_us: AtomicU64::new(PREFETCH_BELOW.as_micros() as u64),
            }),
            duties: None,
        }
    }

    /// Runs the lease renewal and the recovery sweep on the node's scheduler of duties
    /// (otherwise the engine starts one of its own).
    pub fn with_duties(mut self, duties: Duties) -> Self {
        self.duties = Some(duties);
        self
    }

    pub fn shared(&self) -> Arc<Shared> {
        self.shared.clone()
    }

    /// Whether the engine works (`/readyz` reads it).
    pub fn health(&self) -> Arc<EngineHealth> {
        self.shared.health.clone()
    }

    /// Reports to `health`, made by the caller before the engine (`startup.rs`).
    pub fn with_health(mut self, health: Arc<EngineHealth>) -> Self {
        match Arc::get_mut(&mut self.shared) {
            Some(shared) => shared.health = health,
            None => tracing::error!(
                "the engine's health was set after it was shared; /readyz will not see it"
            ),
        }
        self
    }

    /// Runs until `shutdown` resolves; then stops claiming, gives running attempts the grace
    /// period, and hands back what is still running so the next process retries it at once,
    /// without spending a retry.
    #[tracing::instrument(skip_all, fields(node = %self.shared.config.node_id))]
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        let shared = self.shared;
        tracing::info!("engine started");
        let own_duties = self.duties.is_none();
        let duties = match self.duties {
            Some(duties) => Some(duties),
            None => match Duties::start().await {
                Ok(duties) => Some(duties),
                Err(e) => {
                    tracing::error!(error = %e, "could not start the engine's duties; leases will not be renewed");
                    None
                }
            },
        };
        // Runs a previous process of this node left running are taken over at once, not at the
        // first sweep.
        match recovery::recover_expired(
            &shared.db,
            &shared.specs,
            crate::clock::now(),
            shared.config.default_locale,
        )
        .await
        {
            Ok(0) => {}
            Ok(n) => {
                crate::metrics::took_over(n);
                tracing::warn!(runs = n, "recovered runs a stopped node left running")
            }
            Err(e) => tracing::warn!(error = %e, "recovery at start failed; the sweep tries again"),
        }
        let mut duty_ids = Vec::new();
        if let Some(duties) = &duties {
            duty_ids = start_duties(duties, &shared).await;
        }
        // `stop` ends the trigger and the listener when claiming ends; `done` ends the lease
        // renewal and the write-back once everything running has been written.
        let (stop, done) = (CancellationToken::new(), CancellationToken::new());
        // Room for every run held: sending a finished attempt never waits for the writer.
        let (writes, backlog) = write_back::Backlog::channel(max_held(&shared.config));
        let tasks = start_tasks(&shared, &stop, &done, &backlog);
        let permits = Arc::new(Semaphore::new(shared.config.concurrency));
        let hand_back = CancellationToken::new();
        let mut running: JoinSet<()> = JoinSet::new();
        let health = shared.health.clone();
        let shutdown = async move {
            tokio::select! {
                () = shutdown => {}
                () = health.failed() => {}
            }
        };
        dispatch(
            &shared,
            &permits,
            &mut running,
            &writes,
            &hand_back,
            shutdown,
        )
        .await;

        stop.cancel();
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
            hand_back.cancel();
            while running.join_next().await.is_some() {}
        }
        // Everything finished or handed back is queued: let the writer empty its queue.
        drop(writes);
        done.cancel();
        for task in tasks {
            if let Err(e) = task.await {
                tracing::error!(error = %e, "an engine task's supervisor failed");
            }
        }
        finish_writing(&shared, backlog).await;
        if let Some(duties) = duties {
            for id in &duty_ids {
                duties.remove(id).await;
            }
            if own_duties {
                duties.stop().await;
            }
        }
        tracing::info!("engine stopped");
    }
}

/// Starts the engine's own tasks, each under its supervisor.
fn start_tasks(
    shared: &Arc<Shared>,
    stop: &CancellationToken,
    done: &CancellationToken,
    backlog: &Arc<tokio::sync::Mutex<write_back::Backlog>>,
) -> Vec<tokio::task::JoinHandle<()>> {
    let (s, stop, done, backlog) = (shared.clone(), stop.clone(), done.clone(), backlog.clone());
    // SQLite has no LISTEN: one process is the whole cluster.
    let postgres = s.db.get_database_backend() == sea_orm::DatabaseBackend::Postgres;
    let listener = (postgres && s.config.listen).then(|| {
        let (s, stop) = (s.clone(), stop.clone());
        tokio::spawn(async move {
            supervise("listener", &s.health.clone(), &stop.clone(), || {
                listen::run(s.db.clone(), stop.clone())
            })
            .await
        })
    });
    let trigger = tokio::spawn({
        let (s, stop) = (s.clone(), stop.clone());
        async move {
            supervise("trigger", &s.health.clone(), &stop.clone(), || {
                trigger_loop(s.clone(), stop.clone())
            })
            .await
        }
    });
    let renewal = tokio::spawn({
        let (s, done) = (s.clone(), done.clone());
        async move {
            supervise("lease renewal", &s.health.clone(), &done.clone(), || {
                lease::keep_renewed(s.clone(), done.clone())
            })
            .await
        }
    });
    let writer = tokio::spawn(async move {
        supervise("write-back", &s.health.clone(), &done, || {
            write_back::run(s.clone(), backlog.clone())
        })
        .await
    });
    [Some(trigger), Some(renewal), Some(writer), listener]
        .into_iter()
        .flatten()
        .collect()
}

/// After the write-back task has ended: whatever it left (it died on its way out, or was
/// given up on) is written here, in a task of its own so a panic stays contained; what even
/// that cannot write has its leases let go, for recovery.
async fn finish_writing(
    shared: &Arc<Shared>,
    backlog: Arc<tokio::sync::Mutex<write_back::Backlog>>,
) {
    let last = tokio::spawn(write_back::run(shared.clone(), backlog));
    if let Err(e) = last.await {
        tracing::error!(error = %e, "the last write-back failed");
    }
    let left = shared.leases.held();
    if !left.is_empty() {
        tracing::error!(
            runs = left.len(),
            "runs this node could not write back: their leases are let go, and recovery retries them"
        );
        for (run, _) in left {
            shared.leases.release(run);
        }
    }
}

/// Runs this node holds at most: the attempts running and queued to start, and a batch and
/// a half of finished ones waiting to be written.
pub fn max_held(config: &EngineConfig) -> usize {
    config.concurrency * (1 + PREFETCH_PER_PERMIT) + write_back::SETTLE_BATCH * 3 / 2
}

/// Runs claimed ahead per permit while attempts are short: claims and write-backs then come
/// in batches large enough that their transactions, not the attempts, stop being the cost.
const PREFETCH_PER_PERMIT: usize = 16;

/// Attempts shorter than this (on average, recently) let the dispatcher claim a batch ahead of
/// its free permits; longer ones never, so a node busy with long attempts does not sit on
/// runs another node could start.
const PREFETCH_BELOW: Duration = Duration::from_millis(20);

/// Claims due runs and starts them, and sleeps until something can change: a run falls due,
/// another node or the web app announces work, or an attempt ends.
///
/// Claims come in batches: while attempts are short, runs claimed ahead of the free permits
/// wait in a local queue (at most [`PREFETCH_PER_PERMIT`] per permit, refilled when it is half
/// empty), so the next attempts start while the next claim is on its way; while they are long,
/// a claim takes only what can start at once. Planned work (ticks, retries) goes to the front
/// of that queue, as the claim itself puts it first. A claim that comes back short means
/// nothing more is due: the dispatcher then waits for a wake-up instead of asking again.
async fn dispatch(
    shared: &Arc<Shared>,
    permits: &Arc<Semaphore>,
    running: &mut JoinSet<()>,
    writes: &mpsc::Sender<Finished>,
    hand_back: &CancellationToken,
    shutdown: impl Future<Output = ()>,
) {
    let mut announced = app::wake::runs();
    let concurrency = shared.config.concurrency;
    let mut queue: VecDeque<(claim::Claimed, lease::Fence)> = VecDeque::new();
    // Whether the last claim came back full: there may be more due right now.
    let mut more_due = true;
    tokio::pin!(shutdown);
    loop {
        shared.dispatch_rounds.fetch_add(1, Ordering::Relaxed);
        start_queued(shared, permits, running, writes, hand_back, &mut queue);

        let prefetch = if shared.attempt_time() < PREFETCH_BELOW {
            concurrency * PREFETCH_PER_PERMIT
        } else {
            0
        };
        let busy = concurrency - permits.available_permits();
        // Back-pressure: runs held (running, queued, or finished and not yet written) stay
        // under `max_held`, so a write-back that falls behind stops the claiming instead of
        // letting held runs — and the one statement that renews them all — grow.
        let room = (concurrency + prefetch)
            .saturating_sub(busy + queue.len())
            .min(max_held(&shared.config).saturating_sub(shared.leases.count()));
        let low = queue.len() <= prefetch / 2;
        if more_due && room > 0 && low {
            match claim::claim_due(shared, crate::clock::now(), room).await {
                Ok(claimed) => {
                    more_due = claimed.len() == room;
                    // Planned work (a tick, a retry) goes before the backlog already queued
                    // here, as the claim itself puts it first.
                    let mut planned = Vec::new();
                    for claimed in claimed {
                        let fence = shared.leases.hold(
                            claimed.run.id,
                            claimed.run.attempts,
                            claimed.lease_sent,
                        );
                        if claimed.run.trigger == app::domain::run::Trigger::Cron
                            || claimed.run.attempts > 1
                        {
                            planned.push((claimed, fence));
                        } else {
                            queue.push_back((claimed, fence));
                        }
                    }
                    for run in planned.into_iter().rev() {
                        queue.push_front(run);
                    }
                    start_queued(shared, permits, running, writes, hand_back, &mut queue);
                }
                Err(e) => {
                    tracing::error!(error = %e, "could not claim runs");
                    more_due = false;
                }
            }
            while running.try_join_next().is_some() {}
            if more_due && queue.len() <= prefetch / 2 && permits.available_permits() > 0 {
                continue;
            }
        }
        while running.try_join_next().is_some() {}

        let sleep_for = if more_due {
            // Waiting for permits to free up (an attempt ending wakes the loop).
            shared.config.poll
        } else {
            match claim::next_due_in(shared, crate::clock::now()).await {
                // Due now but not claimed: another node holds it for the moment.
                Ok(Some(due)) => due.clamp(Duration::from_millis(5), shared.config.poll),
                _ => shared.config.poll,
            }
        };
        // An attempt ending matters only when it frees a permit something waits for.
        let waiting = more_due || !queue.is_empty();
        tokio::select! {
            () = &mut shutdown => break,
            _ = announced.changed() => more_due = true,
            () = shared.finished.notified(), if waiting => {}
            () = tokio::time::sleep(sleep_for) => more_due = true,
        }
    }
    // Claimed but never started: given back at once, without an attempt spent.
    for (claimed, _) in queue {
        let finished = attempt::not_started(&shared.config.node_id, &claimed);
        if writes.send(finished).await.is_err() {
            tracing::error!(
                "the write-back queue is closed; the run's lease will expire and it will be retried"
            );
        }
    }
}

/// Starts queued runs while permits are free.
fn start_queued(
    shared: &Arc<Shared>,
    permits: &Arc<Semaphore>,
    running: &mut JoinSet<()>,
    writes: &mpsc::Sender<Finished>,
    hand_back: &CancellationToken,
    queue: &mut VecDeque<(claim::Claimed, lease::Fence)>,
) {
    while !queue.is_empty() {
        let Ok(permit) = permits.clone().try_acquire_owned() else {
            return;
        };
        let Some((claimed, fence)) = queue.pop_front() else {
            return;
        };
        let shared = shared.clone();
        let writes = writes.clone();
        let hand_back = hand_back.clone();
        running.spawn(async move {
            let started = tokio::time::Instant::now();
            let left = attempt::run(shared.clone(), claimed, fence, hand_back).await;
            // The permit frees as soon as the work is done; the write-back follows in a batch.
            drop(permit);
            shared.record_attempt_time(started.elapsed());
            shared.finished.notify_one();
            match left {
                Left::Finished(finished) => {
                    if writes.send(*finished).await.is_err() {
                        tracing::error!("the write-back queue is closed; the run's lease will expire and it will be retried");
                    }
                }
                Left::Abandoned { run_id } => shared.leases.release(run_id),
            }
        });
    }
}

/// Creates runs for due cron ticks and ends watched runs past their wait, then sleeps until
/// the next tick or until a job's schedule changes.
async fn trigger_loop(shared: Arc<Shared>, stop: CancellationToken) {
    let mut changed = app::wake::jobs();
    loop {
        let now = crate::clock::now();
        let next =
            match trigger::enqueue_due_ticks(&shared.db, now, shared.config.misfire_after).await {
                Ok(pass) => pass.next_tick,
                Err(e) => {
                    tracing::error!(error = %e, "could not enqueue cron ticks");
                    None
                }
            };
        // Watched ticks nobody pinged in time end here, as ticks begin here.
        match app::services::watch::sweep(&shared.db, now, shared.config.default_locale).await {
            Ok(ended) if ended.is_empty() => {}
            Ok(ended) => {
                ended.iter().for_each(crate::metrics::watched_ended);
                tracing::info!(runs = ended.len(), "watched runs ended without their ping")
            }
            Err(e) => tracing::error!(error = %e, "could not end watched runs past their wait"),
        }
        // Until the next tick, but no longer than the poll: a job enabled or changed by another
        // process that could not announce it (SQLite has no NOTIFY; the command line; a lost
        // PostgreSQL notification) is seen within one poll. A pass that finds nothing due is
        // one indexed read.
        let sleep_for = next
            .map(|at| {
                (at - crate::clock::now())
                    .to_std()
                    .unwrap_or(Duration::ZERO)
            })
            .unwrap_or(shared.config.poll)
            .min(shared.config.poll)
            // Another node may be recording this tick right now: look again shortly.
            .max(Duration::from_millis(2));
        tokio::select! {
            () = stop.cancelled() => return,
            _ = changed.changed() => {}
            () = tokio::time::sleep(sleep_for) => {}
        }
    }
}

/// The engine's periodic duty: the recovery sweep (the lease renewal is a task of its own, on
/// a monotonic timer: `lease::keep_renewed`).
async fn start_duties(duties: &Duties, shared: &Arc<Shared>) -> Vec<uuid::Uuid> {
    let mut ids = Vec::new();
    let sweep = {
        let shared = shared.clone();
        duties
            .every(
                "recovery sweep",
                (shared.config.lease / 3).max(Duration::from_secs(1)),
                move || {
                    let shared = shared.clone();
                    Box::pin(async move {
                        match recovery::recover_expired(
                            &shared.db,
                            &shared.specs,
                            crate::clock::now(),
                            shared.config.default_locale,
                        )
                        .await
                        {
                            Ok(0) => {}
                            Ok(n) => {
                                crate::metrics::took_over(n);
                                tracing::warn!(runs = n, "took over runs whose node stopped")
                            }
                            Err(e) => tracing::warn!(error = %e, "recovery sweep failed; the next one tries again"),
                        }
                    })
                },
            )
            .await
    };
    match sweep {
        Ok(id) => ids.push(id),
        Err(e) => tracing::error!(error = %e, duty = "recovery sweep", "could not start a duty"),
    }
    match start_placement(duties, shared).await {
        Ok(id) => ids.push(id),
        Err(e) => tracing::error!(error = %e, duty = "placement sweep", "could not start a duty"),
    }
    ids
}

/// The placement sweep, once a heartbeat: a node that stops or starts changes where runs may
/// go no faster than that.
async fn start_placement(
    duties: &Duties,
    shared: &Arc<Shared>,
) -> Result<uuid::Uuid, tokio_cron_scheduler::JobSchedulerError> {
    let shared = shared.clone();
    let alerted = Arc::new(placement::Alerted::default());
    duties
        .every("placement sweep", crate::cluster::HEARTBEAT, move || {
            let (shared, alerted) = (shared.clone(), alerted.clone());
            Box::pin(async move {
                if let Err(e) = placement::sweep(&shared, &alerted, crate::clock::now()).await {
                    tracing::warn!(error = %e, "placement sweep failed; the next one tries again");
                }
            })
        })
        .await
}
