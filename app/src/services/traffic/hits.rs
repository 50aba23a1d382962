//! The hits list: stored minute rows for the dashboard's filters plus path and IP, newest or
//! most hits first, in keyset pages (page 500 costs what page 1 costs).

use sea_orm::{ConnectionTrait, DbErr};

use super::StatsQuery;
use crate::domain::filters::{HitCursor, HitSort, HitsSelection};
use crate::domain::traffic_range::{Resolved, VisitorType};
use crate::entities::traffic_statistic;
use crate::views::traffic::HitRow;

/// Which stored rows the hits list shows, and in what order.
#[derive(Debug, Clone)]
pub struct HitsQuery {
    pub stats: StatsQuery,
    /// Text the path contains.
    pub path: Option<String>,
    pub ip: Option<String>,
    pub sort: HitSort,
    /// The last row of the previous page.
    pub after: Option<HitCursor>,
    pub limit: u64,
}

impl HitsQuery {
    /// The query for a parsed selection over its resolved range, `limit` rows a page.
    pub fn new(
        selection: &HitsSelection,
        range: &Resolved,
        zone: chrono_tz::Tz,
        limit: u64,
    ) -> HitsQuery {
        HitsQuery {
            stats: StatsQuery::new(&selection.traffic, range, zone),
            path: selection.path.clone(),
            ip: selection.ip.clone(),
            sort: selection.sort,
            after: selection.after.clone(),
            limit,
        }
    }

    /// The hits list's query for the shared filters (the page and the CSV export): parsed by
    /// the same rules as the dashboard's, resolved against the configured zone at `now`.
    pub fn from_filter(
        filter: &crate::views::traffic::HitsFilter,
        zone: chrono_tz::Tz,
        after: Option<&str>,
        limit: u64,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<HitsQuery, crate::domain::FieldProblem> {
        let traffic = crate::domain::filters::TrafficFilter::parse(
            filter.range.as_deref(),
            filter.from.as_deref(),
            filter.to.as_deref(),
            filter.kind.as_deref(),
            filter.category.as_deref(),
            filter.source.as_deref(),
        )?
        .with_site(filter.site.as_deref())?;
        let selection = HitsSelection::parse(
            traffic,
            filter.path.as_deref(),
            filter.ip.as_deref(),
            filter.sort.as_deref(),
            after,
        )?;
        let range = selection.traffic.resolve(now, zone)?;
        Ok(HitsQuery::new(&selection, &range, zone, limit))
    }
}

impl From<traffic_statistic::Model> for HitRow {
    fn from(m: traffic_statistic::Model) -> Self {
        HitRow {
            id: m.id,
            minute: m.stat_date,
            site: m.site,
            path: m.path,
            method: m.method,
            ip: m.ip,
            user_agent: m.user_agent,
            referer: m.referer,
            locale: m.locale,
            is_bot: m.is_bot,
            source: m.spider_source,
            count: m.count,
            country: m.country,
            status: u16::try_from(m.status).unwrap_or(0),
        }
    }
}

/// One page of stored rows, and the cursor of the next page when there is one.
pub async fn hits(
    db: &impl ConnectionTrait,
    query: &HitsQuery,
) -> Result<(Vec<traffic_statistic::Model>, Option<HitCursor>), DbErr> {
    use sea_orm::{EntityTrait, QueryFilter, QueryOrder, QuerySelect};
    use traffic_statistic::{Column, Entity};
    let mut select = Entity::find().filter(hits_condition(query));
    if let Some(after) = query
        .after
        .as_ref()
        .and_then(|a| after_cursor(a, query.sort))
    {
        select = select.filter(after);
    }
    select = match query.sort {
        HitSort::Newest => select.order_by_desc(Column::StatDate),
        HitSort::MostHits => select.order_by_desc(Column::Count),
    };
    let mut rows = select
        .order_by_desc(Column::Id)
        .limit(query.limit + 1)
        .all(db)
        .await?;
    let more = rows.len() as u64 > query.limit;
    rows.truncate(query.limit as usize);
    let next = more
        .then(|| rows.last())
        .flatten()
        .map(|last| match query.sort {
            HitSort::Newest => HitCursor::Newest {
                at: last.stat_date,
                id: last.id,
            },
            HitSort::MostHits => HitCursor::MostHits {
                count: last.count,
                id: last.id,
            },
        });
    Ok((rows, next))
}

/// The rows the query asks for: its range, visitors, bot category or source, site, path and
/// address.
fn hits_condition(query: &HitsQuery) -> sea_orm::Condition {
    use crate::domain::bots::{self, BotCategory};
    use sea_orm::{ColumnTrait, Condition};
    use traffic_statistic::Column;
    let s = &query.stats;
    let mut condition = Condition::all()
        .add(Column::StatDate.gte(s.start()))
        .add(Column::StatDate.lt(s.end()));
    match s.visitors {
        VisitorType::All => {}
        VisitorType::Human => condition = condition.add(Column::IsBot.eq(false)),
        VisitorType::Bot => condition = condition.add(Column::IsBot.eq(true)),
    }
    match s.category {
        None => {}
        // Unnamed bots and sources this build does not know.
        Some(BotCategory::Other) => {
            condition = condition.add(Column::IsBot.eq(true)).add(
                Condition::any()
                    .add(Column::SpiderSource.is_null())
                    .add(Column::SpiderSource.is_not_in(bots::named_outside_other())),
            );
        }
        Some(category) => {
            condition = condition
                .add(Column::IsBot.eq(true))
                .add(Column::SpiderSource.is_in(bots::sources_in(category)));
        }
    }
    if let Some(source) = &s.source {
        condition = condition.add(Column::SpiderSource.eq(source.as_str()));
    }
    if let Some(site) = &s.site {
        condition = condition.add(Column::Site.eq(site.as_str()));
    }
    if let Some(path) = query.path.as_deref().filter(|p| !p.is_empty()) {
        condition = condition.add(Column::Path.contains(path));
    }
    if let Some(ip) = query.ip.as_deref().filter(|p| !p.is_empty()) {
        condition = condition.add(Column::Ip.eq(ip));
    }
    condition
}

/// The rows after `cursor` in the `sort` order (a cursor of the other order is ignored).
fn after_cursor(cursor: &HitCursor, sort: HitSort) -> Option<sea_orm::Condition> {
    use sea_orm::{ColumnTrait, Condition};
    use traffic_statistic::Column;
    Some(match (cursor, sort) {
        (HitCursor::Newest { at, id }, HitSort::Newest) => {
            Condition::any().add(Column::StatDate.lt(*at)).add(
                Condition::all()
                    .add(Column::StatDate.eq(*at))
                    .add(Column::Id.lt(*id)),
            )
        }
        (HitCursor::MostHits { count, id }, HitSort::MostHits) => {
            Condition::any().add(Column::Count.lt(*count)).add(
                Condition::all()
                    .add(Column::Count.eq(*count))
                    .add(Column::Id.lt(*id)),
            )
        }
        _ => return None,
    })
}
