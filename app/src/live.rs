//! Hits a server process has counted but not yet written: the Traffic page's last-hour strip
//! adds them to the stored rows, so it is current without waiting for the next flush.
//!
//! The web app only knows its own process's buffer; with several instances, hits still in the
//! other nodes' memory appear after their next flush (at most five minutes by default).

use chrono::{DateTime, Utc};

/// Unwritten hits of one minute, by kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LiveHits {
    pub minute: DateTime<Utc>,
    pub is_bot: bool,
    pub count: u64,
}

pub trait LiveTraffic: Send + Sync {
    /// Unwritten hits at or after `since`, grouped however the source finds convenient (the
    /// caller adds them up per minute).
    fn unflushed_since(&self, since: DateTime<Utc>) -> Vec<LiveHits>;

    /// The registered sites or their exclusions changed: reload them now rather than at the
    /// next periodic refresh (other nodes pick the change up at theirs).
    fn sites_changed(&self);
}
