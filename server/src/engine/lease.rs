//! This node's leases, and the fence that stops an attempt before its lease can run out.
//!
//! Every run this node claimed and has not written back is *held*: the node renews all of
//! them with one statement every third of the lease ([`Leases::renew`]), and each attempt
//! watches its own fence deadline: the moment, on this node's clock, that lies
//! [`margin`] before the lease expiry the database holds. When renewals fail (the database is
//! unreachable, the node is cut off) the deadline stops moving, and the attempt is stopped at
//! it — its process group killed, its HTTP call dropped, its built-in cancelled — *before*
//! another node may take the run over (a takeover needs `lease_expires_at < now` on that
//! node's clock, which keeps the database's time). A run that a renewal no longer finds under
//! this node's name was taken over: its fence is lost at once.
//!
//! Expiries are written by this node's clock ([`crate::clock::now`]), which keeps the
//! database's time within its measured offset; the margin covers what that measurement and
//! the scheduling of this process can be off by.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use app::domain::run::RunStatus;
use app::services::sql::Binder;
use chrono::{DateTime, Utc};
use sea_orm::{ConnectionTrait, DbErr};
use tokio::sync::watch;
use tokio::time::Instant;

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
}

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

    /// The expiry to write for a lease taken or renewed now.
    pub fn expiry_from(&self, now: DateTime<Utc>) -> DateTime<Utc> {
        now + chrono::Duration::from_std(self.lease).unwrap_or(chrono::Duration::seconds(30))
    }

    /// Starts holding `run` (just claimed, its lease expiring at `expires`); returns its fence.
    pub fn hold(&self, run: i64, attempts: i32, expires: DateTime<Utc>) -> Fence {
        let (tx, rx) = watch::channel(self.deadline(expires));
        self.lock().insert(
            run,
            Held {
                attempts,
                deadline: tx,
            },
        );
        rx
    }

    /// Stops holding `run` (written back, or given up).
    pub fn release(&self, run: i64) {
        self.lock().remove(&run);
    }

    /// The runs held now, with their attempt numbers.
    pub fn held(&self) -> Vec<(i64, i32)> {
        self.lock()
            .iter()
            .map(|(id, h)| (*id, h.attempts))
            .collect()
    }

    /// Renews every lease this node holds, in one statement, and moves the fences of those
    /// the database confirmed. A held run it did not find under this node's name has been
    /// taken over: its fence is lost. A renewal that fails (or takes longer than a third of
    /// the lease) changes no fence, so deadlines run out if the database stays unreachable.
    pub async fn renew(&self, db: &impl ConnectionTrait) -> Result<usize, RenewError> {
        let held: Vec<(i64, i32)> = self.held();
        if held.is_empty() {
            return Ok(0);
        }
        let expires = self.expiry_from(crate::clock::now());
        let ids: Vec<i64> = held.iter().map(|(id, _)| *id).collect();
        let mut b = Binder::new(db.get_database_backend());
        let sql = format!(
            "UPDATE job_runs SET lease_expires_at = {} \
             WHERE {} AND lease_owner = {} AND status = {} RETURNING id, attempts",
            b.bind(expires),
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
                row.try_get::<i32>("", "attempts")?,
            );
        }
        let deadline = self.deadline(expires);
        let held = self.lock();
        for (run, h) in held.iter() {
            match confirmed.get(run) {
                Some(attempts) if *attempts == h.attempts => {
                    h.deadline.send_replace(deadline);
                }
                _ => {
                    h.deadline.send_replace(None);
                }
            }
        }
        Ok(confirmed.len())
    }

    /// The local instant to stop by for a lease expiring at `expires` (by the shared clock).
    fn deadline(&self, expires: DateTime<Utc>) -> Option<Instant> {
        let left = (expires - crate::clock::now())
            .to_std()
            .unwrap_or(Duration::ZERO)
            .saturating_sub(margin(self.lease));
        Some(Instant::now() + left)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<i64, Held>> {
        self.held
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
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
