//! The traffic dashboard and hits list as the browser sees them.

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

use crate::domain::traffic_range::Bucket;

/// The dashboard's figures for one range (how each is defined: `docs/ARCHITECTURE.md`,
/// "Traffic").
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct TrafficStats {
    pub visits: i64,
    pub page_views: i64,
    pub unique_ips: i64,
    pub unique_pages: i64,
    pub human: i64,
    pub bot: i64,
    /// Of the page views, how many are synthetic (`bulwark traffic generate`).
    pub generated: i64,
    pub by_source: BTreeMap<String, i64>,
    /// Bots' page views per category of their source.
    pub by_category: BTreeMap<crate::domain::bots::BotCategory, i64>,
    pub top_pages: Vec<TopPage>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct TopPage {
    pub path: String,
    pub count: i64,
    pub human: i64,
    pub bot: i64,
}

/// Hits in one hour or day.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct SeriesPoint {
    pub start: DateTime<Utc>,
    pub human: i64,
    pub bot: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct Dashboard {
    pub from: NaiveDate,
    pub to: NaiveDate,
    pub timezone: String,
    pub bucket: Bucket,
    pub current: TrafficStats,
    /// The same figures for the period of the same length just before.
    pub previous: TrafficStats,
    pub series: Vec<SeriesPoint>,
}

/// One minute of the last hour: stored hits and those still in this server's memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LiveMinute {
    pub minute: DateTime<Utc>,
    pub human: i64,
    pub bot: i64,
    /// Of those, not yet written to the database.
    pub unflushed: i64,
}

/// A stored row of the hits list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HitRow {
    pub id: i64,
    pub minute: DateTime<Utc>,
    pub path: String,
    pub method: String,
    pub ip: String,
    pub user_agent: String,
    pub referer: String,
    pub locale: String,
    pub is_bot: bool,
    pub source: Option<String>,
    pub count: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HitsPage {
    pub rows: Vec<HitRow>,
    /// Cursor of the next page, if there is one.
    pub next: Option<String>,
}

/// The filters every traffic view shares, as the URL holds them (text, parsed by the server).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HitsFilter {
    pub range: Option<String>,
    pub from: Option<String>,
    pub to: Option<String>,
    /// `type` in URLs.
    #[serde(alias = "type")]
    pub kind: Option<String>,
    pub category: Option<String>,
    pub source: Option<String>,
    pub path: Option<String>,
    pub ip: Option<String>,
    /// `newest` (default) or `count`.
    pub sort: Option<String>,
}

/// Rows on one page of the hits list.
pub const HITS_PAGE: u64 = 50;
