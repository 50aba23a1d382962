//! The traffic dashboard's data: the figures for a range and the one before it, and hits over
//! time. `bulwark traffic stats` reads the same service, so the page and the command agree.

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDate, Utc};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use super::AppError;
use crate::domain::traffic_range::Bucket;

/// DESIGN.md §5's figures.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
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
    pub top_pages: Vec<TopPage>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopPage {
    pub path: String,
    pub count: i64,
    pub human: i64,
    pub bot: i64,
}

/// Hits in one hour or day.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeriesPoint {
    pub start: DateTime<Utc>,
    pub human: i64,
    pub bot: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

/// Figures for a range (`range` preset, or `from`–`to`), visitor type and bot source.
#[server(endpoint = "traffic/dashboard")]
pub async fn traffic_dashboard(
    range: Option<String>,
    from: Option<String>,
    to: Option<String>,
    kind: Option<String>,
    source: Option<String>,
) -> Result<Dashboard, AppError> {
    use crate::domain::traffic_range::{self as ranges, VisitorType};
    use crate::services::traffic::{self, StatsQuery};
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            let tz = crate::domain::cron::parse_timezone(&state.timezone)
                .map_err(|e| AppError::Internal(e.to_string()))?;
            let invalid = |e: ranges::RangeError| AppError::invalid("range", e.to_string());
            let spec = ranges::parse_spec(range.as_deref(), from.as_deref(), to.as_deref())
                .map_err(invalid)?;
            let visitors = VisitorType::parse(kind.as_deref().unwrap_or("all"))
                .map_err(|e| AppError::invalid("type", e.to_string()))?;
            let today = ranges::today(Utc::now(), tz);
            let resolved = ranges::resolve(spec, today, tz, ranges::DEFAULT_RETENTION_DAYS)
                .map_err(invalid)?;
            let before = ranges::previous(&resolved, tz);
            let query = |from, to| StatsQuery {
                from,
                to,
                zone: tz,
                visitors,
                source: source.clone().filter(|s| !s.is_empty()),
            };
            let (current, previous, series) = traffic::dashboard(
                &state.db,
                &query(resolved.from, resolved.to),
                &query(before.from, before.to),
                resolved.bucket,
            )
            .await?;
            Ok(Dashboard {
                from: resolved.from,
                to: resolved.to,
                timezone: state.timezone.clone(),
                bucket: resolved.bucket,
                current,
                previous,
                series,
            })
        }
        .await,
    )
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

/// The last 60 minutes, minute by minute, including hits not flushed yet.
#[server(endpoint = "traffic/live")]
pub async fn traffic_live() -> Result<Vec<LiveMinute>, AppError> {
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            let now = Utc::now();
            let since =
                DateTime::<Utc>::from_timestamp((now.timestamp() / 60 - 59) * 60, 0).unwrap_or(now);
            let unflushed = state
                .live
                .as_ref()
                .map(|live| live.unflushed_since(since))
                .unwrap_or_default();
            Ok(crate::services::traffic::last_hour(&state.db, since, &unflushed).await?)
        }
        .await,
    )
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

/// The filters every traffic view shares, as the URL holds them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HitsFilter {
    pub range: Option<String>,
    pub from: Option<String>,
    pub to: Option<String>,
    /// `type` in URLs.
    #[serde(alias = "type")]
    pub kind: Option<String>,
    pub source: Option<String>,
    pub path: Option<String>,
    pub ip: Option<String>,
    /// `newest` (default) or `count`.
    pub sort: Option<String>,
}

/// Resolves the shared filters into a hits query (also used by the CSV export).
#[cfg(feature = "ssr")]
pub fn hits_query(
    filter: &HitsFilter,
    timezone: &str,
    after: Option<&str>,
    limit: u64,
) -> Result<crate::services::traffic::HitsQuery, AppError> {
    use crate::domain::traffic_range::{self as ranges, VisitorType};
    use crate::services::traffic::{HitCursor, HitSort, HitsQuery, StatsQuery};
    let tz = crate::domain::cron::parse_timezone(timezone)
        .map_err(|e| AppError::Internal(e.to_string()))?;
    let invalid = |e: ranges::RangeError| AppError::invalid("range", e.to_string());
    let spec = ranges::parse_spec(
        filter.range.as_deref(),
        filter.from.as_deref(),
        filter.to.as_deref(),
    )
    .map_err(invalid)?;
    let resolved = ranges::resolve(
        spec,
        ranges::today(Utc::now(), tz),
        tz,
        ranges::DEFAULT_RETENTION_DAYS,
    )
    .map_err(invalid)?;
    let sort = match filter.sort.as_deref() {
        None | Some("") | Some("newest") => HitSort::Newest,
        Some("count") => HitSort::MostHits,
        Some(other) => {
            return Err(AppError::invalid(
                "sort",
                format!("'{other}' is not a sort: use newest or count"),
            ));
        }
    };
    let after =
        match after.filter(|a| !a.is_empty()) {
            None => None,
            Some(text) => Some(HitCursor::decode(text).ok_or_else(|| {
                AppError::invalid("after", format!("'{text}' is not a page cursor"))
            })?),
        };
    Ok(HitsQuery {
        stats: StatsQuery {
            from: resolved.from,
            to: resolved.to,
            zone: tz,
            visitors: VisitorType::parse(filter.kind.as_deref().unwrap_or("all"))
                .map_err(|e| AppError::invalid("type", e.to_string()))?,
            source: filter.source.clone().filter(|s| !s.is_empty()),
        },
        path: filter.path.clone(),
        ip: filter.ip.clone(),
        sort,
        after,
        limit,
    })
}

#[cfg(feature = "ssr")]
impl From<crate::entities::traffic_statistic::Model> for HitRow {
    fn from(m: crate::entities::traffic_statistic::Model) -> Self {
        HitRow {
            id: m.id,
            minute: m.stat_date,
            path: m.path,
            method: m.method,
            ip: m.ip,
            user_agent: m.user_agent,
            referer: m.referer,
            locale: m.locale,
            is_bot: m.is_bot,
            source: m.spider_source,
            count: m.count,
        }
    }
}

/// Rows on one page of the hits list.
pub const HITS_PAGE: u64 = 50;

/// One page of stored rows for the filters.
#[server(endpoint = "traffic/hits")]
pub async fn traffic_hits(filter: HitsFilter, after: Option<String>) -> Result<HitsPage, AppError> {
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            let query = hits_query(&filter, &state.timezone, after.as_deref(), HITS_PAGE)?;
            let (rows, next) = crate::services::traffic::hits(&state.db, &query).await?;
            Ok(HitsPage {
                rows: rows.into_iter().map(HitRow::from).collect(),
                next: next.map(|c| c.encode()),
            })
        }
        .await,
    )
}
