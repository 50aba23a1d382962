//! The time every node agrees on: this process's wall clock, corrected by its offset from the
//! database server's clock.
//!
//! Nodes compare each other's timestamps — lease expiries, due times, heartbeats — so a node
//! whose clock runs ahead would start cron runs early and see other nodes' leases expire too
//! soon. Each node measures its offset at start and on every heartbeat
//! (the server's `cluster::clock_skew_ms`) and everything that writes or compares a
//! timestamp — the engine, the web app, the command line — reads the time here, so all of
//! them keep time by the one clock they share. Until the first measurement (and in processes
//! that never measure, such as tests and commands) the offset is zero.

use std::sync::atomic::{AtomicI64, Ordering};

use chrono::{DateTime, Utc};

static OFFSET_MS: AtomicI64 = AtomicI64::new(0);

/// Now, by the database's clock.
pub fn now() -> DateTime<Utc> {
    Utc::now() - chrono::Duration::milliseconds(OFFSET_MS.load(Ordering::Relaxed))
}

/// Records this process's clock minus the database's.
pub fn set_offset_ms(offset: i64) {
    OFFSET_MS.store(offset, Ordering::Relaxed);
}
