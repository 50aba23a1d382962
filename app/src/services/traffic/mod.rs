//! Traffic from the database: the figures of a range, the hits list, and the rollups that keep
//! them fast without changing a figure.
//!
//! - [`stats`]: the dashboard's figures and chart for a range (the page and `bulwark traffic
//!   stats` read the same functions), and [`stats::stats_from_rows`], the same figures from
//!   the minute rows: the definition the rollups are tested against.
//! - [`query`]: which minute rows a figure counts, and their WHERE clause.
//! - [`hits`]: stored rows for the hits list and the CSV export, in keyset pages.
//! - [`rollup_write`]: what a flush adds to the rollups, in the flush's own transaction.
//! - [`rollup_read`]: sums, distinct counts and top pages from the rollups.
//! - [`blocks`]: aligned unions of days, so 30 and 90 days read a dozen rows.
//! - [`answers`]: statuses, pages not found and what AI crawlers fetched.
//! - [`tails`]: whole lists of sums per block, for the long tails [`answers`] ranks.
//! - [`goals`]: goals and custom events: defining goals, reading events and conversions.
//! - [`sites`]: registered sites, their exclusions, and the rules the collectors apply.
//! - [`rebuild`]: the rollups' zone, rebuilding them from the minute rows, retention.
//!
//! The minute rows (`traffic_statistics`) stay the record; everything else is derived. Parts
//! and views (who a row counts for) are [`crate::domain::traffic_parts`].

pub mod alerts;
pub mod answers;
pub mod blocks;
pub mod goals;
pub mod hits;
pub mod query;
pub mod rebuild;
pub mod reports;
pub mod rollup_read;
pub mod rollup_write;
pub mod shares;
pub mod sites;
pub mod stats;
pub mod tails;

pub use hits::{HitsQuery, hits};
pub use stats::{StatsQuery, TOP_PAGES, dashboard, last_hour, series, stats, stats_from_rows};

/// Builds the [`blocks`] and [`tails`] of the last `days` days that are missing or stale, so
/// the first look at a long range is as fast as the next: what the daily `traffic-clean` job
/// and `bulwark bench dashboard` run. Returns how many were built.
pub async fn warm(db: &impl sea_orm::ConnectionTrait, days: i32) -> Result<usize, TrafficError> {
    Ok(blocks::warm(db, days).await? + tails::warm(db, days).await?)
}

/// Why reading or writing traffic failed.
#[derive(Debug, thiserror::Error)]
pub enum TrafficError {
    #[error(transparent)]
    Db(#[from] sea_orm::DbErr),
    #[error(
        "a stored traffic set is unreadable ({0}); rebuild the rollups (change `timezone` and back, or remove generated traffic)"
    )]
    CorruptSet(std::io::Error),
    #[error("could not encode a traffic set: {0}")]
    EncodeSet(std::io::Error),
    #[error("a stored traffic block's list is unreadable: {0}")]
    CorruptList(serde_json::Error),
    #[error("a stored traffic block holds {0} people's lists, not one per kind")]
    FactLists(usize),
    #[error("could not encode a traffic block's list: {0}")]
    EncodeList(serde_json::Error),
    #[error(
        "a stored traffic tail is unreadable ({0}); rebuild the rollups (change `timezone` and back, or remove generated traffic)"
    )]
    CorruptTail(std::io::Error),
    #[error("could not encode a traffic tail: {0}")]
    EncodeTail(std::io::Error),
    #[error("no traffic id was assigned to {kind:?} {digest}")]
    MissingId {
        kind: rollup_write::IdKind,
        digest: i64,
    },
    #[error("traffic_ids holds an unknown kind {0}")]
    UnknownIdKind(i16),
    #[error("traffic_ids holds a negative id {0}")]
    NegativeId(i64),
    #[error("a traffic rollup holds an unknown part '{0}'")]
    UnknownPart(String),
    #[error("the stored rollup zone '{0}' is not a time zone")]
    UnknownZone(String),
    #[error("could not read the rows of a traffic figure: {0}")]
    ReadRows(serde_json::Error),
    #[error("joining traffic sets stopped: {0}")]
    Join(#[from] tokio::task::JoinError),
}
