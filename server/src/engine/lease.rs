//! This node's leases, and the fence that stops an attempt before its lease can run out.
//!
//! Every run this node claimed and has not written back is *held*: the node renews all of
//! them with one statement every third of the lease ([`keep_renewed`], on a monotonic timer),
//! and each attempt watches its own fence deadline. When renewals fail (the database is
//! unreachable, the node is cut off) the deadline stops moving, and the attempt is stopped at
//! it — its process group killed, its HTTP call dropped, its built-in cancelled — *before*
//! another node may take the run over. A run that a renewal no longer finds under this node's
//! name was taken over: its fence is lost at once.
//!
//! Two clocks, each used for what it can promise:
//!
//! - The **expiry** in the database is written by the database's own clock (`now()` on
//!   PostgreSQL, [`app::services::sql::Binder::db_now_plus`]) and compared by it when another
//!   node looks for expired leases, so no node's clock, and no measurement of its offset, can
//!   make a lease expire early.
//! - The **deadline** an attempt stops at is on this process's monotonic clock: the instant
//!   the claim or renewal was *sent*, plus the lease, minus [`margin`]. The statement reaches
//!   the database after it was sent, so the expiry it writes is later than that instant plus
//!   the lease: the attempt stops at least a margin before anyone may take its run.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;

use app::domain::run::RunStatus;
use app::services::sql::Binder;
use sea_orm::{ConnectionTrait, DbErr};
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// How long before the lease's expiry an attempt that could not renew stops.
pub fn margin(lease: Duration) -> Duration {
    (lease / 5).max(Duration::from_millis(500))
}

/// What an attempt watches: the deadline it must stop by, moved forward by each renewal;
/// `None` once the lease is known to be lost.
pub type Fence = watch::Receiver<Option<Instant>>;

struct Held {
    attempts: i32,
    deadline: watch::Sender<Option<Instant>>,
    /// A renewal found that someone asked to cancel the run: its fence is lost, and the
    /// attempt is written back as cancelled rather than abandoned.
    cancel: bool,
}

/// What a renewal's statement found of a run it asked about: its attempt number, and whether
/// someone asked to cancel it.
pub type Confirmed = HashMap<i64, (i32, bool)>;

/// Why a renewal did not happen.
#[derive(Debug, thiserror::Error)]
pub enum RenewError {
    #[error("could not renew the leases: {0}")]
    Db(#[from] DbErr),
    #[error("the lease renewal took longer than a third of the lease")]
    TooSlow,
}

pub struct Leases {
    node: String,
    lease: Duration,
    held: Mutex<HashMap<i64, Held>>,
}

impl Leases {
    pub fn new(node: String, lease: Duration) -> Self {
        Leases {
            node,
            lease,
            held: Mutex::new(HashMap::new()),
        }
    }

    pub fn node(&self) -> &str {
        &self.node
    }

    pub fn lease(&self) -> Duration {
        self.lease
    }

    /// The deadline for a lease taken or renewed by a statement sent at `sent`.
    pub fn deadline_after(&self, sent: Instant) -> Instant {
        sent + self.lease.saturating_sub(margin(self.lease))
    }

    /// Starts holding `run` (just claimed, with the claim sent at `sent`); returns its fence.
    pub fn hold(&self, run: i64, attempts: i32, sent: Instant) -> Fence {
        let (tx, rx) = watch::channel(Some(self.deadline_after(sent)));
        self.lock().insert(
            run,
            Held {
                attempts,
                deadline: tx,
                cancel: false,
            },
        );
        rx
    }

    /// Whether a renewal found that someone asked to cancel `run`.
    pub fn cancel_requested(&self, run: i64) -> bool {
        self.lock().get(&run).is_some_and(|h| h.cancel)
    }

    /// Stops holding `run` (written back, or given up).
    pub fn release(&self, run: i64) {
        self.lock().remove(&run);
    }

    /// How many runs are held: running, queued to start, or waiting to be written back.
    pub fn count(&self) -> usize {
        self.lock().len()
    }

    /// The runs held now, with their attempt numbers.
    pub fn held(&self) -> Vec<(i64, i32)> {
        self.lock()
            .iter()
            .map(|(id, h)| (*id, h.attempts))
            .collect()
    }

    /// Renews every lease this node holds, in one statement, and moves the fences of those
    /// the database confirmed ([`Leases::confirm`], then [`Leases::apply`]). A renewal that
    /// fails (or takes longer than a third of the lease) changes no fence, so deadlines run
    /// out if the database stays unreachable.
    pub async fn renew(&self, db: &impl ConnectionTrait) -> Result<usize, RenewError> {
        let asked = self.held();
        if asked.is_empty() {
            return Ok(0);
        }
        let sent = Instant::now();
        let confirmed = self.confirm(db, &asked).await?;
        Ok(self.apply(&asked, &confirmed, sent))
    }

    /// The statement of a renewal: extends the leases of `asked` that are still this node's,
    /// and returns those with their attempt numbers and cancel requests.
    pub async fn confirm(
        &self,
        db: &impl ConnectionTrait,
        asked: &[(i64, i32)],
    ) -> Result<Confirmed, RenewError> {
        let ids: Vec<i64> = asked.iter().map(|(id, _)| *id).collect();
        let mut b = Binder::new(db.get_database_backend());
        let sql = format!(
            "UPDATE job_runs SET lease_expires_at = {} \
             WHERE {} AND lease_owner = {} AND status = {} \
             RETURNING id, attempts, CASE WHEN cancel_requested_at IS NULL THEN 0 ELSE 1 END AS cancel",
            b.db_now_plus(self.lease),
            b.in_ids("id", &ids),
            b.bind(self.node.clone()),
            b.bind(RunStatus::Running.as_str()),
        );
        let renewed = tokio::time::timeout(self.lease / 3, db.query_all_raw(b.statement(sql)))
            .await
            .map_err(|_| RenewError::TooSlow)??;
        let mut confirmed = HashMap::with_capacity(renewed.len());
        for row in renewed {
            confirmed.insert(
                row.try_get::<i64>("", "id")?,
                (
                    row.try_get::<i32>("", "attempts")?,
                    row.try_get::<i32>("", "cancel")? == 1,
                ),
            );
        }
        Ok(confirmed)
    }

    /// Moves the fences of the runs a renewal sent at `sent` asked about: forward for those
    /// the database `confirmed` at the same attempt, to lost for the others and for those
    /// someone asked to cancel. Only runs it asked about, still held at the attempt it asked
    /// about: a run claimed (or claimed again) while the renewal was on its way was not in its
    /// statement, and its fence is not this renewal's to judge. Returns how many fences moved
    /// forward.
    pub fn apply(&self, asked: &[(i64, i32)], confirmed: &Confirmed, sent: Instant) -> usize {
        let deadline = self.deadline_after(sent);
        let mut held = self.lock();
        let mut moved = 0;
        for (run, attempts) in asked {
            let Some(h) = held.get_mut(run).filter(|h| h.attempts == *attempts) else {
                continue;
            };
            match confirmed.get(run) {
                Some((found, cancel)) if found == attempts => {
                    if *cancel {
                        h.cancel = true;
                        h.deadline.send_replace(None);
                    } else {
                        h.deadline.send_modify(|d| *d = d.map(|d| d.max(deadline)));
                        moved += 1;
                    }
                }
                _ => {
                    h.deadline.send_replace(None);
                }
            }
        }
        moved
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<i64, Held>> {
        self.held
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Renews this node's leases every third of the lease until `stop`, on a monotonic timer: a
/// wall clock stepped back or forward moves no renewal.
pub async fn keep_renewed(shared: Arc<super::Shared>, stop: CancellationToken) {
    let mut every = tokio::time::interval(shared.config.lease / 3);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            _ = every.tick() => {}
        }
        if let Err(e) = shared.leases.renew(&shared.db).await {
            tracing::warn!(error = %e, "lease renewal failed; attempts stop before their leases run out");
        }
    }
}

/// Whether the fence already says to stop.
pub fn expired(fence: &Fence) -> bool {
    fence
        .borrow()
        .is_none_or(|deadline| deadline <= Instant::now())
}

/// Resolves when the fence says to stop: the deadline passed without a renewal moving it, or
/// the lease was lost.
pub async fn lost(fence: &mut Fence) {
    loop {
        let deadline = *fence.borrow_and_update();
        let Some(deadline) = deadline else { return };
        tokio::select! {
            () = tokio::time::sleep_until(deadline) => {
                // A renewal may have landed at the same instant.
                if *fence.borrow() == Some(deadline) {
                    return;
                }
            }
            changed = fence.changed() => {
                if changed.is_err() {
                    // The node stopped holding the run: nothing will renew it any more.
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leases() -> Leases {
        Leases::new("node-a".into(), Duration::from_secs(10))
    }

    #[test]
    fn a_renewal_leaves_alone_a_run_claimed_while_it_was_on_its_way() {
        let leases = leases();
        let claimed_at = Instant::now();
        let earlier = leases.hold(1, 1, claimed_at);
        let asked = leases.held();
        // Claimed after the renewal's statement was written: not in it, not confirmed by it.
        let later = leases.hold(2, 1, claimed_at);
        let confirmed = HashMap::from([(1, (1, false))]);
        assert_eq!(
            leases.apply(&asked, &confirmed, claimed_at + Duration::from_secs(3)),
            1
        );
        assert_eq!(
            *earlier.borrow(),
            Some(claimed_at + Duration::from_secs(3) + Duration::from_secs(8))
        );
        assert_eq!(
            *later.borrow(),
            Some(leases.deadline_after(claimed_at)),
            "untouched"
        );
    }

    #[test]
    fn a_renewal_judges_only_the_attempt_it_asked_about() {
        let leases = leases();
        let now = Instant::now();
        let _first = leases.hold(1, 1, now);
        let asked = leases.held();
        // Written back and claimed again for its next attempt while the renewal was away: the
        // renewal did not find attempt 1 running, which says nothing about attempt 2.
        let second = leases.hold(1, 2, now);
        assert_eq!(leases.apply(&asked, &HashMap::new(), now), 0);
        assert!(second.borrow().is_some());
    }

    #[test]
    fn a_run_the_renewal_did_not_find_is_lost_and_stays_lost() {
        let leases = leases();
        let now = Instant::now();
        let fence = leases.hold(1, 1, now);
        let asked = leases.held();
        leases.apply(&asked, &HashMap::new(), now);
        assert!(expired(&fence));
        leases.apply(
            &asked,
            &HashMap::from([(1, (1, false))]),
            now + Duration::from_secs(1),
        );
        assert!(fence.borrow().is_none(), "a lost lease is not found again");
    }

    #[test]
    fn deadlines_keep_a_margin_before_the_expiry_and_never_move_back() {
        let leases = leases();
        let now = Instant::now();
        assert_eq!(leases.deadline_after(now), now + Duration::from_secs(8));
        let fence = leases.hold(1, 1, now + Duration::from_secs(5));
        let asked = leases.held();
        leases.apply(&asked, &HashMap::from([(1, (1, false))]), now);
        assert_eq!(*fence.borrow(), Some(now + Duration::from_secs(13)));
    }

    #[test]
    fn a_cancel_request_stops_the_attempt_and_is_remembered() {
        let leases = leases();
        let now = Instant::now();
        let fence = leases.hold(1, 1, now);
        let asked = leases.held();
        leases.apply(&asked, &HashMap::from([(1, (1, true))]), now);
        assert!(fence.borrow().is_none());
        assert!(leases.cancel_requested(1));
    }
}
