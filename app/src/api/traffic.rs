//! The traffic dashboard's data: the figures for a range and the one before it, hits over
//! time, the last hour, and the stored rows. `bulwark traffic stats` reads the same services,
//! so the page and the command agree.

use leptos::prelude::*;

use super::AppError;
use crate::views::traffic::{Dashboard, HitsFilter, HitsPage, LiveMinute};

/// Figures for a range (`range` preset, or `from`–`to`), visitor type, bot category and
/// source.
#[server(endpoint = "traffic/dashboard")]
pub async fn traffic_dashboard(
    range: Option<String>,
    from: Option<String>,
    to: Option<String>,
    kind: Option<String>,
    category: Option<String>,
    source: Option<String>,
) -> Result<Dashboard, AppError> {
    use crate::domain::filters::TrafficFilter;
    use crate::domain::traffic_range;
    use crate::services::traffic::{self, StatsQuery};
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            let zone = state.timezone;
            let filter = TrafficFilter::parse(
                range.as_deref(),
                from.as_deref(),
                to.as_deref(),
                kind.as_deref(),
                category.as_deref(),
                source.as_deref(),
            )?;
            let range = filter.resolve(crate::clock::now(), zone)?;
            let before = traffic_range::previous(&range, zone);
            let (current, previous, series) = traffic::dashboard(
                &state.db,
                &StatsQuery::new(&filter, &range, zone),
                &StatsQuery::new(&filter, &before, zone),
                range.bucket,
            )
            .await
            .map_err(|e| AppError::internal(&e))?;
            Ok(Dashboard {
                from: range.from,
                to: range.to,
                timezone: zone.name().to_string(),
                bucket: range.bucket,
                current,
                previous,
                series,
            })
        }
        .await,
    )
}

/// The last 60 minutes, minute by minute, including hits not flushed yet.
#[server(endpoint = "traffic/live")]
pub async fn traffic_live() -> Result<Vec<LiveMinute>, AppError> {
    use chrono::{DateTime, DurationRound, Utc};
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            let now = crate::clock::now();
            let minute = now
                .duration_trunc(chrono::Duration::minutes(1))
                .unwrap_or(now);
            let since: DateTime<Utc> = minute - chrono::Duration::minutes(59);
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

/// The hits list's query for the shared filters (also used by the CSV export): parsed by the
/// same rules as the dashboard's, resolved against the configured zone.
#[cfg(feature = "ssr")]
pub fn hits_query(
    filter: &HitsFilter,
    zone: chrono_tz::Tz,
    after: Option<&str>,
    limit: u64,
) -> Result<crate::services::traffic::HitsQuery, AppError> {
    use crate::domain::filters::{HitsSelection, TrafficFilter};
    let traffic = TrafficFilter::parse(
        filter.range.as_deref(),
        filter.from.as_deref(),
        filter.to.as_deref(),
        filter.kind.as_deref(),
        filter.category.as_deref(),
        filter.source.as_deref(),
    )?;
    let selection = HitsSelection::parse(
        traffic,
        filter.path.as_deref(),
        filter.ip.as_deref(),
        filter.sort.as_deref(),
        after,
    )?;
    let range = selection.traffic.resolve(crate::clock::now(), zone)?;
    Ok(crate::services::traffic::HitsQuery::new(
        &selection, &range, zone, limit,
    ))
}

/// One page of stored rows for the filters.
#[server(endpoint = "traffic/hits")]
pub async fn traffic_hits(filter: HitsFilter, after: Option<String>) -> Result<HitsPage, AppError> {
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            let query = hits_query(
                &filter,
                state.timezone,
                after.as_deref(),
                crate::views::traffic::HITS_PAGE,
            )?;
            let (rows, next) = crate::services::traffic::hits(&state.db, &query).await?;
            Ok(HitsPage {
                rows: rows
                    .into_iter()
                    .map(crate::views::traffic::HitRow::from)
                    .collect(),
                next: next.map(|c| c.encode()),
            })
        }
        .await,
    )
}
