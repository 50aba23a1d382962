//! The in-memory count of hits per key, between flushes.
//!
//! Recording is a hash-map update under a `std::sync::Mutex` that is never held across an
//! `.await` or any I/O: the request path pays a few map operations and nothing else.
//!
//! The buffer is bounded by the bytes its keys hold. When a flood of unique keys (a scanner
//! walking random URLs, say) fills it, hits on keys already present still count, new keys are
//! dropped and counted in [`BufferStats::dropped`], and the flusher is woken early so the next
//! minute has room again. Memory stays bounded; what was lost is visible, never silent.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use serde::Serialize;

use super::hit::Hit;

pub struct Buffer {
    state: Mutex<State>,
    max_bytes: usize,
    pub(crate) stats: Counters,
    /// Set when the buffer passes three quarters of its bound; the node's traffic duty takes it
    /// and flushes early.
    nearly_full: AtomicBool,
    /// Held by a flush from taking the counts until they are written (or restored), so flushes
    /// go one at a time: see [`Buffer::flush_turn`].
    flushing: tokio::sync::Mutex<()>,
}

/// aHash rather than SipHash: keys are visitor-controlled, so the hasher must stay randomly
/// keyed (aHash is), and hashing a 100-byte User-Agent per request is most of the layer's cost.
type Counts = HashMap<Hit, u64, ahash::RandomState>;

#[derive(Default)]
struct State {
    counts: Counts,
    bytes: usize,
}

#[derive(Default)]
pub(crate) struct Counters {
    recorded: AtomicU64,
    dropped: AtomicU64,
    truncated: AtomicU64,
    /// Hits not counted because their client was over its rate.
    pub(crate) limited: AtomicU64,
}

/// Totals since the process started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct BufferStats {
    /// Hits counted into the buffer.
    pub recorded: u64,
    /// Hits lost because the buffer was full and their key was new.
    pub dropped: u64,
    /// Hits counted with a field cut to its limit.
    pub truncated: u64,
    /// Hits not counted because their client sent more than `traffic_client_rate_per_minute`.
    pub limited: u64,
    /// Keys and their approximate bytes now in the buffer.
    pub keys: usize,
    pub bytes: usize,
}

/// What happened to one hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    Counted,
    Dropped,
    /// Not counted: the client sent more than its rate.
    Limited,
}

impl Buffer {
    pub fn new(max_bytes: usize) -> Buffer {
        Buffer {
            state: Mutex::new(State::default()),
            max_bytes,
            stats: Counters::default(),
            nearly_full: AtomicBool::new(false),
            flushing: tokio::sync::Mutex::new(()),
        }
    }

    /// Waits until no other flush is between taking the counts and writing them, and holds
    /// off the next one until the guard is dropped.
    ///
    /// Without it, a flush that started while another was writing would find the buffer empty
    /// and return at once, before the other's rows were committed: `bulwark traffic flush`
    /// would then answer while the hits it was asked to write were still on their way (the
    /// scheduled flush, the early flush of a filling buffer and the one on shutdown all take
    /// from the same buffer). With it, when a flush returns, every hit recorded before it
    /// began is in the database, or back in the buffer if writing failed.
    pub async fn flush_turn(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.flushing.lock().await
    }

    // A panic elsewhere while the lock was held leaves only counts behind, which are still
    // valid numbers: keep counting rather than take the web server down with it.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts `n` hits of `hit`; `truncated` says the hit had a field cut to its limit.
    pub fn record(&self, hit: Hit, n: u64, truncated: bool) -> Recorded {
        let weight = hit.weight();
        let (outcome, wake) = {
            let mut state = self.lock();
            if let Some(count) = state.counts.get_mut(&hit) {
                *count += n;
                (Recorded::Counted, false)
            } else if state.bytes + weight > self.max_bytes {
                (Recorded::Dropped, true)
            } else {
                state.bytes += weight;
                state.counts.insert(hit, n);
                (Recorded::Counted, state.bytes > self.max_bytes / 4 * 3)
            }
        };
        if wake {
            self.nearly_full.store(true, Ordering::Relaxed);
        }
        match outcome {
            Recorded::Counted => {
                self.stats.recorded.fetch_add(n, Ordering::Relaxed);
                if truncated {
                    self.stats.truncated.fetch_add(n, Ordering::Relaxed);
                }
            }
            Recorded::Dropped => {
                let before = self.stats.dropped.fetch_add(n, Ordering::Relaxed);
                // Loud but not a log line per hit: at the 1st, 2nd, 4th, 8th … drop.
                if (before + n).is_power_of_two() {
                    tracing::warn!(
                        dropped = before + n,
                        bound_bytes = self.max_bytes,
                        "traffic buffer full: hits with new keys are dropped until the next flush"
                    );
                }
            }
            // Decided by the recorder before a hit reaches the buffer.
            Recorded::Limited => {}
        }
        outcome
    }

    /// Empties the buffer and returns what it held, for a flush.
    pub fn take(&self) -> Counts {
        let mut state = self.lock();
        state.bytes = 0;
        std::mem::take(&mut state.counts)
    }

    /// Puts back what a failed flush could not write, so it is tried again with the next one.
    /// Hits that no longer fit are counted as dropped.
    pub fn restore(&self, entries: impl IntoIterator<Item = (Hit, u64)>) {
        let mut lost = 0;
        {
            let mut state = self.lock();
            for (hit, n) in entries {
                if let Some(count) = state.counts.get_mut(&hit) {
                    *count += n;
                } else if state.bytes + hit.weight() <= self.max_bytes {
                    state.bytes += hit.weight();
                    state.counts.insert(hit, n);
                } else {
                    lost += n;
                }
            }
        }
        if lost > 0 {
            self.stats.dropped.fetch_add(lost, Ordering::Relaxed);
            tracing::error!(
                hits = lost,
                "traffic buffer full: hits from a failed flush dropped"
            );
        }
    }

    /// Hits in the buffer from `since_minute` on, per User-Agent and minute: the part of the
    /// last hour a flush has not written yet. Counted under the lock every recorded hit takes,
    /// so it copies each User-Agent once, not every buffered hit.
    pub fn pending_since(&self, since_minute: i64) -> HashMap<String, HashMap<i64, u64>> {
        let state = self.lock();
        let mut by_agent: HashMap<String, HashMap<i64, u64>> = HashMap::new();
        for (hit, n) in state
            .counts
            .iter()
            .filter(|(hit, _)| hit.minute >= since_minute)
        {
            let minutes = match by_agent.get_mut(hit.user_agent.as_str()) {
                Some(minutes) => minutes,
                None => by_agent.entry(hit.user_agent.clone()).or_default(),
            };
            *minutes.entry(hit.minute).or_default() += n;
        }
        by_agent
    }

    /// Whether the buffer passed three quarters of its bound since the last call.
    pub fn take_nearly_full(&self) -> bool {
        self.nearly_full.swap(false, Ordering::Relaxed)
    }

    pub fn stats(&self) -> BufferStats {
        let (keys, bytes) = {
            let state = self.lock();
            (state.counts.len(), state.bytes)
        };
        BufferStats {
            recorded: self.stats.recorded.load(Ordering::Relaxed),
            dropped: self.stats.dropped.load(Ordering::Relaxed),
            truncated: self.stats.truncated.load(Ordering::Relaxed),
            limited: self.stats.limited.load(Ordering::Relaxed),
            keys,
            bytes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(path: &str) -> Hit {
        Hit::new(
            60,
            "GET",
            path,
            "10.0.0.1",
            "Mozilla/5.0",
            "",
            String::new(),
        )
        .0
    }

    #[test]
    fn same_key_adds_up_and_take_empties() {
        let buffer = Buffer::new(1 << 20);
        assert_eq!(buffer.record(hit("/a"), 1, false), Recorded::Counted);
        buffer.record(hit("/a"), 2, true);
        buffer.record(hit("/b"), 1, false);
        let stats = buffer.stats();
        assert_eq!((stats.recorded, stats.truncated, stats.keys), (4, 2, 2));
        let taken = buffer.take();
        assert_eq!(taken[&hit("/a")], 3);
        assert_eq!(buffer.stats().keys, 0);
        assert_eq!(buffer.stats().bytes, 0);
    }

    #[test]
    fn a_flood_of_new_keys_is_bounded_and_counted() {
        let bound = 50 * hit("/0000").weight();
        let buffer = Buffer::new(bound);
        for i in 0..10_000 {
            buffer.record(hit(&format!("/{i:04}")), 1, false);
        }
        let stats = buffer.stats();
        assert!(stats.bytes <= bound);
        assert_eq!(stats.keys, 50);
        assert_eq!(stats.dropped, 10_000 - 50);
        // Known keys still count when the buffer is full.
        assert_eq!(buffer.record(hit("/0001"), 1, false), Recorded::Counted);
    }

    #[test]
    fn restore_merges_with_new_hits() {
        let buffer = Buffer::new(1 << 20);
        buffer.record(hit("/a"), 2, false);
        let taken = buffer.take();
        buffer.record(hit("/a"), 1, false);
        buffer.restore(taken);
        assert_eq!(buffer.take()[&hit("/a")], 3);
    }
}
