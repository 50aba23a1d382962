//! What the engine would otherwise read or parse again for every attempt: each job's parsed
//! definition (kept while the row's `updated_at` is unchanged) and the durations of its recent
//! successes (for learned timeouts and the slow flag), seeded from the database once and then
//! kept up to date by this node's own write-backs.
//!
//! Durations seen by other nodes reach this cache when the entry is re-read (a claim after
//! [`HISTORY_TTL`] starts that, outside its transaction), so a learned timeout on one node
//! lags others' successes by about that much.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use app::domain::job::JobSpec;
use app::entities::job;
use app::services::jobs::{JobError, to_spec};
use chrono::{DateTime, Utc};
use sea_orm::{ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QuerySelect};

/// How long a job's success history is trusted before it is read again.
pub const HISTORY_TTL: Duration = Duration::from_secs(60);
/// Successes kept per job (the largest timeout window the editor allows).
const HISTORY_MAX: usize = 1000;

/// A job as an attempt needs it.
#[derive(Debug, Clone)]
pub struct CachedJob {
    pub id: i64,
    pub name: String,
    pub updated_at: DateTime<Utc>,
    /// The definition, or why the stored row cannot be read (the attempt then fails
    /// permanently with that message, and the run follows its fate).
    pub spec: Result<Arc<JobSpec>, String>,
    /// Its parameters go in as written (`app::services::held`).
    pub params_as_written: bool,
}

#[derive(Default)]
pub struct Specs {
    jobs: Mutex<HashMap<i64, Arc<CachedJob>>>,
}

impl Specs {
    /// The jobs of `ids`, read from the database where the cached copy is missing or older
    /// than the row (one query for the versions, one for the rows that changed).
    pub async fn get_many(
        &self,
        db: &impl ConnectionTrait,
        ids: &[i64],
    ) -> Result<HashMap<i64, Arc<CachedJob>>, DbErr> {
        let mut ids = ids.to_vec();
        ids.sort_unstable();
        ids.dedup();
        let mut versions: Vec<(i64, DateTime<Utc>)> = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(500) {
            versions.extend(
                job::Entity::find()
                    .select_only()
                    .column(job::Column::Id)
                    .column(job::Column::UpdatedAt)
                    .filter(job::Column::Id.is_in(chunk.to_vec()))
                    .into_tuple::<(i64, DateTime<Utc>)>()
                    .all(db)
                    .await?,
            );
        }
        let stale: Vec<i64> = {
            let cached = self.lock();
            versions
                .iter()
                .filter(|(id, at)| cached.get(id).is_none_or(|c| c.updated_at != *at))
                .map(|(id, _)| *id)
                .collect()
        };
        for chunk in stale.chunks(500) {
            let rows = job::Entity::find()
                .filter(job::Column::Id.is_in(chunk.to_vec()))
                .all(db)
                .await?;
            let mut cached = self.lock();
            for row in rows {
                let spec = to_spec(&row)
                    .map(Arc::new)
                    .map_err(|e: JobError| e.to_string());
                cached.insert(
                    row.id,
                    Arc::new(CachedJob {
                        id: row.id,
                        name: row.name,
                        updated_at: row.updated_at,
                        spec,
                        params_as_written: row.params_as_written,
                    }),
                );
            }
        }
        let cached = self.lock();
        Ok(versions
            .iter()
            .filter_map(|(id, _)| cached.get(id).map(|c| (*id, c.clone())))
            .collect())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<i64, Arc<CachedJob>>> {
        // A panic while the map was held cannot leave it half-written: every change is one
        // insert.
        self.jobs
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

struct History {
    read_at: Instant,
    /// What the last caller asked for (the re-read reads as many).
    window: u32,
    /// A re-read is under way: no other caller starts one.
    reading: bool,
    /// Newest first.
    durations: VecDeque<u64>,
}

/// Each job's recent successful durations. A job's first claim on this node reads them inside
/// the claim's transaction (once per job and process); after that a claim only reads memory,
/// and entries older than [`HISTORY_TTL`] are read again by [`Histories::reread`] on a
/// connection of its own, after the claim has committed. Re-reading inside the transaction
/// made every claim that met a stale entry wait for it: `bulwark bench soak` measured that read
/// at 38–108 ms per job on PostgreSQL, growing with the tables, while the claim held its rows.
pub struct Histories {
    /// How long durations are trusted before a claim starts reading them again.
    ttl: Duration,
    jobs: Mutex<HashMap<i64, History>>,
}

impl Default for Histories {
    fn default() -> Self {
        Histories::with_ttl(HISTORY_TTL)
    }
}

impl Histories {
    /// Histories trusted for `ttl` (the engine uses [`HISTORY_TTL`]; tests a shorter one).
    pub fn with_ttl(ttl: Duration) -> Self {
        Histories {
            ttl,
            jobs: Mutex::default(),
        }
    }

    /// The job's latest successful durations, newest first (at most `window`): from memory
    /// once this node has read them, however old (see [`Histories::take_stale`]).
    pub async fn recent(
        &self,
        db: &impl ConnectionTrait,
        job_id: i64,
        window: u32,
    ) -> Result<Vec<u64>, DbErr> {
        if let Some(h) = self.lock().get_mut(&job_id) {
            h.window = h.window.max(window);
            return Ok(h.durations.iter().copied().take(window as usize).collect());
        }
        let durations = read(db, job_id, window).await?;
        let recent = durations.iter().copied().take(window as usize).collect();
        self.lock().insert(
            job_id,
            History {
                read_at: Instant::now(),
                window,
                reading: false,
                durations,
            },
        );
        Ok(recent)
    }

    /// Which of `job_ids` hold durations older than the TTL, with the window to read
    /// for each; they are marked as being read, so the caller must pass them to
    /// [`Histories::reread`].
    pub fn take_stale(&self, job_ids: &[i64]) -> Vec<(i64, u32)> {
        let mut jobs = self.lock();
        let mut stale = Vec::new();
        for id in job_ids {
            if let Some(h) = jobs.get_mut(id)
                && !h.reading
                && h.read_at.elapsed() >= self.ttl
            {
                h.reading = true;
                stale.push((*id, h.window));
            }
        }
        stale
    }

    /// Reads the histories `take_stale` returned again. One that cannot be read keeps what
    /// it held and is tried again after another TTL.
    pub async fn reread(&self, db: &impl ConnectionTrait, stale: Vec<(i64, u32)>) {
        for (job_id, window) in stale {
            let read = read(db, job_id, window).await;
            let mut jobs = self.lock();
            let Some(h) = jobs.get_mut(&job_id) else {
                continue;
            };
            h.reading = false;
            h.read_at = Instant::now();
            match read {
                Ok(durations) => h.durations = durations,
                Err(e) => {
                    tracing::warn!(job = job_id, error = %e, "could not read a job's recent durations again; the ones held stay")
                }
            }
        }
    }

    /// Records a success this node just wrote.
    pub fn record(&self, job_id: i64, duration_ms: u64) {
        if let Some(h) = self.lock().get_mut(&job_id) {
            h.durations.push_front(duration_ms);
            h.durations.truncate(HISTORY_MAX);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<i64, History>> {
        self.jobs
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

async fn read(db: &impl ConnectionTrait, job_id: i64, window: u32) -> Result<VecDeque<u64>, DbErr> {
    let durations = app::services::runs::recent_success_ms(db, job_id, window.max(20)).await?;
    Ok(durations.into())
}

/// What is paused (`app::services::maintenance::paused`), read again after the poll interval
/// or as soon as a pause changes in this process or, through `NOTIFY`, on another node
/// (`app::wake::jobs`), and never past the moment a window opens or closes. Without it every
/// claim paid one more statement; with it a pause made on this node holds from the next claim,
/// one made elsewhere within a poll — the same bound as a schedule change
/// (`server/src/engine/mod.rs`, the trigger loop) — and a window from its first moment.
pub struct Pauses {
    ttl: Duration,
    state: Mutex<PauseState>,
}

/// The last read and until when it holds, and the schedule-change announcements seen so far.
type PauseState = (
    Option<(app::services::maintenance::Paused, Instant)>,
    tokio::sync::watch::Receiver<u64>,
);

impl Pauses {
    pub fn new(ttl: Duration) -> Self {
        Pauses {
            ttl,
            state: Mutex::new((None, app::wake::jobs())),
        }
    }

    pub async fn get(
        &self,
        db: &impl ConnectionTrait,
        now: DateTime<Utc>,
    ) -> Result<app::services::maintenance::Paused, DbErr> {
        {
            let mut state = self.lock();
            if state.1.has_changed().unwrap_or(true) {
                // Seen now: a change announced while the read below runs is seen next time.
                state.1.borrow_and_update();
                state.0 = None;
            }
            if let Some((paused, until)) = &state.0
                && Instant::now() < *until
                && paused.until.is_none_or(|change| now < change)
            {
                return Ok(paused.clone());
            }
        }
        let paused = app::services::maintenance::paused(db, now).await?;
        // Kept for a poll at most, and never used at or past the moment a window opens or
        // closes (`paused.until`, checked above): a claim a moment into a window sees it.
        self.lock().0 = Some((paused.clone(), Instant::now() + self.ttl));
        Ok(paused)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, PauseState> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
