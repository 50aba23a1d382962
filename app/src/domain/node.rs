//! The instances sharing a database, as their heartbeats describe them.
//!
//! Nodes compare each other's timestamps (lease expiries, due times, heartbeats), so each keeps
//! time by the database server's clock: it measures its own clock's offset at start and on
//! every heartbeat, and the engine subtracts it (`server/src/clock.rs`). A skewed node clock is
//! therefore corrected rather than trusted; what remains is a clock that *jumps* between two
//! heartbeats, which shifts that node's timing by the jump for up to [`HEARTBEAT_SECONDS`]
//! (runs it creates start early or late by that much; a jump beyond a lease could make it
//! take over a run another node is still running — fenced, so nothing is overwritten, but the
//! work runs twice). The Settings page shows each node's offset and warns above
//! [`SKEW_WARNING_MS`], since a skewed clock is worth fixing (NTP) all the same.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Heartbeat interval.
pub const HEARTBEAT_SECONDS: i64 = 5;
/// A node silent this long is lost: not asked, not waited for.
pub const LOST_AFTER_SECONDS: i64 = 20;
/// The lease a claim on a run lasts without renewal, unless configured otherwise.
pub const DEFAULT_LEASE_SECONDS: i64 = 30;
/// Clock offsets beyond this are shown as a warning.
pub const SKEW_WARNING_MS: i64 = 1000;

#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeState {
    /// Heart-beating.
    Live,
    /// Stopped heart-beating without saying goodbye (killed, crashed, cut off).
    Lost,
    /// Shut down gracefully.
    Stopped,
}

impl NodeState {
    pub fn of(
        stopped_at: Option<DateTime<Utc>>,
        heartbeat_at: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> NodeState {
        if stopped_at.is_some() {
            NodeState::Stopped
        } else if now - heartbeat_at > chrono::Duration::seconds(LOST_AFTER_SECONDS) {
            NodeState::Lost
        } else {
            NodeState::Live
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            NodeState::Live => "live",
            NodeState::Lost => "lost",
            NodeState::Stopped => "stopped",
        }
    }
}

/// What a node's clock offset means, or `None` when it is within tolerance.
pub fn skew_warning(skew_ms: i64, lease_seconds: i64) -> Option<SkewWarning> {
    let abs = skew_ms.unsigned_abs() as i64;
    if abs <= SKEW_WARNING_MS {
        return None;
    }
    Some(SkewWarning {
        seconds: abs as f64 / 1000.0,
        ahead: skew_ms > 0,
        // A clock off by a lease or more may jump by as much when it is fixed: runs could then
        // be taken over while still running (fenced, but run twice).
        may_jump: abs >= lease_seconds * 1000,
    })
}

/// A node's clock is off from the database's by more than [`SKEW_WARNING_MS`]: corrected
/// (Bulwark keeps time by the database), but worth fixing with NTP.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SkewWarning {
    pub seconds: f64,
    /// Ahead of the database (else behind).
    pub ahead: bool,
    pub may_jump: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn states_follow_heartbeats() {
        let now = Utc.with_ymd_and_hms(2026, 11, 30, 12, 0, 0).unwrap();
        let beat = |s| now - chrono::Duration::seconds(s);
        assert_eq!(NodeState::of(None, beat(3), now), NodeState::Live);
        assert_eq!(NodeState::of(None, beat(20), now), NodeState::Live);
        assert_eq!(NodeState::of(None, beat(21), now), NodeState::Lost);
        assert_eq!(NodeState::of(Some(now), beat(0), now), NodeState::Stopped);
    }

    #[test]
    fn skew_is_explained_beyond_a_second() {
        assert_eq!(skew_warning(900, 30), None);
        assert_eq!(skew_warning(-1000, 30), None);
        let ahead = skew_warning(2500, 30).unwrap();
        assert!(ahead.ahead && !ahead.may_jump && (ahead.seconds - 2.5).abs() < 1e-9);
        assert!(!skew_warning(-4000, 30).unwrap().ahead);
        assert!(skew_warning(45_000, 30).unwrap().may_jump);
    }
}
