//! Traffic figures over a range (DESIGN.md §5), one query path for the dashboard and
//! `bulwark traffic stats`, so the two cannot disagree.
//!
//! - page views = Σ count; human / bot = Σ count split by is_bot;
//! - visits = distinct (day, ip, user agent), days being the configured zone's calendar days;
//! - unique IPs = distinct ip; unique pages = distinct path;
//! - by source = Σ count per spider_source (bots only);
//! - top pages = the 20 paths with the highest Σ count, with their human/bot split.
//!
//! [`stats`] and [`series`] read the rollups ([`super::traffic_rollup`]);
//! [`stats_from_rows`] computes the same figures from the minute rows and is the definition the
//! rollups are tested and benchmarked against.

use super::traffic_rollup::{self as rollup, Binder, Scope};
pub use crate::api::traffic::{LiveMinute, SeriesPoint, TopPage, TrafficStats};
use crate::domain::traffic_range::{self, Bucket, VisitorType};
use crate::entities::traffic_statistic;
use chrono::{DateTime, NaiveDate, Utc};
use chrono_tz::Tz;
use sea_orm::{ConnectionTrait, DatabaseBackend, DbErr, Statement};

/// Which rows the figures count: whole local days `from..=to` in `zone`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatsQuery {
    pub from: NaiveDate,
    pub to: NaiveDate,
    pub zone: Tz,
    pub visitors: VisitorType,
    /// Only this bot source (`google`, …, `other`).
    pub source: Option<String>,
}

impl StatsQuery {
    /// The first instant of the range.
    pub fn start(&self) -> DateTime<Utc> {
        traffic_range::midnight(self.from, self.zone)
    }

    /// The first instant after the range.
    pub fn end(&self) -> DateTime<Utc> {
        self.to.succ_opt().map_or(DateTime::<Utc>::MAX_UTC, |d| {
            traffic_range::midnight(d, self.zone)
        })
    }

    fn scope(&self) -> Scope<'_> {
        Scope {
            from: self.from,
            to: self.to,
            zone: self.zone,
            visitors: self.visitors,
            source: self.source.as_deref(),
        }
    }
}

/// How many top pages are listed.
pub const TOP_PAGES: u64 = 20;

/// The dashboard's figures, from the rollups.
pub async fn stats(db: &impl ConnectionTrait, query: &StatsQuery) -> Result<TrafficStats, DbErr> {
    let scope = query.scope();
    let parts = rollup::views_by_part(db, &scope).await?;
    let (visits, unique_ips, unique_pages) = rollup::distinct_counts(db, &scope).await?;
    let top_pages = rollup::top_pages(db, &scope, TOP_PAGES as usize).await?;
    let mut stats = TrafficStats {
        visits,
        unique_ips,
        unique_pages,
        top_pages,
        ..TrafficStats::default()
    };
    for (part, generated, n) in parts {
        stats.page_views += n;
        if generated {
            stats.generated += n;
        }
        match part.strip_prefix("b:") {
            Some(source) => {
                stats.bot += n;
                *stats.by_source.entry(source.to_string()).or_default() += n;
            }
            None => stats.human += n,
        }
    }
    Ok(stats)
}

/// What the Traffic page shows for a range: its figures, those of `previous` (the period of
/// the same length before it) and its chart, read at the same time.
pub async fn dashboard(
    db: &impl ConnectionTrait,
    current: &StatsQuery,
    previous: &StatsQuery,
    bucket: Bucket,
) -> Result<(TrafficStats, TrafficStats, Vec<SeriesPoint>), DbErr> {
    tokio::try_join!(
        stats(db, current),
        stats(db, previous),
        series(db, current, bucket)
    )
}

/// Hits per local hour or day over the range, people and bots apart; every bucket of the range
/// is present, empty ones with zeros.
pub async fn series(
    db: &impl ConnectionTrait,
    query: &StatsQuery,
    bucket: Bucket,
) -> Result<Vec<SeriesPoint>, DbErr> {
    rollup::series(db, &query.scope(), bucket).await
}

/// A WHERE clause with its values, numbered for the backend.
struct Filter {
    binder: Binder,
    sql: String,
}

impl Filter {
    fn new(
        backend: DatabaseBackend,
        start: DateTime<Utc>,
        end: DateTime<Utc>,
        visitors: VisitorType,
        source: Option<&str>,
    ) -> Filter {
        let mut binder = Binder::new(backend);
        let mut sql = format!(
            "stat_date >= {} AND stat_date < {}",
            binder.bind(start),
            binder.bind(end)
        );
        match visitors {
            VisitorType::All => {}
            VisitorType::Human => sql.push_str(" AND NOT is_bot"),
            VisitorType::Bot => sql.push_str(" AND is_bot"),
        }
        if let Some(source) = source {
            sql.push_str(&format!(" AND spider_source = {}", binder.bind(source)));
        }
        Filter { binder, sql }
    }

    fn statement(&self, sql: String) -> Statement {
        self.binder.statement_cloned(sql)
    }
}

/// The same figures as [`stats`], straight from the minute rows: DESIGN.md §5 written as SQL.
/// Too slow for the page over long ranges; the rollups are checked against it.
pub async fn stats_from_rows(
    db: &impl ConnectionTrait,
    query: &StatsQuery,
) -> Result<TrafficStats, DbErr> {
    let backend = db.get_database_backend();
    let source = query.source.as_deref();
    let filter = Filter::new(backend, query.start(), query.end(), query.visitors, source);
    let where_ = &filter.sql;
    let mut stats = TrafficStats::default();

    let totals = db
        .query_one_raw(filter.statement(format!(
            "SELECT CAST(COALESCE(SUM(count), 0) AS BIGINT) AS views, \
                    CAST(COALESCE(SUM(CASE WHEN is_bot THEN count ELSE 0 END), 0) AS BIGINT) AS bots, \
                    CAST(COALESCE(SUM(CASE WHEN generated THEN count ELSE 0 END), 0) AS BIGINT) AS generated, \
                    COUNT(DISTINCT ip) AS ips, COUNT(DISTINCT path) AS pages \
             FROM traffic_statistics WHERE {where_}"
        )))
        .await?;
    if let Some(row) = totals {
        stats.page_views = row.try_get("", "views")?;
        stats.bot = row.try_get("", "bots")?;
        stats.generated = row.try_get("", "generated")?;
        stats.human = stats.page_views - stats.bot;
        stats.unique_ips = row.try_get("", "ips")?;
        stats.unique_pages = row.try_get("", "pages")?;
    }

    // Visits: distinct (ip, user agent) within each local day, summed over the days.
    for day in query.from.iter_days().take_while(|d| *d <= query.to) {
        let day_query = StatsQuery {
            from: day,
            to: day,
            ..query.clone()
        };
        let filter = Filter::new(
            backend,
            day_query.start(),
            day_query.end(),
            query.visitors,
            source,
        );
        let where_ = &filter.sql;
        if let Some(row) = db
            .query_one_raw(filter.statement(format!(
                "SELECT COUNT(*) AS visits FROM \
                   (SELECT DISTINCT ip, user_agent FROM traffic_statistics WHERE {where_}) v"
            )))
            .await?
        {
            stats.visits += row.try_get::<i64>("", "visits")?;
        }
    }

    for row in db
        .query_all_raw(filter.statement(format!(
            "SELECT spider_source AS source, CAST(SUM(count) AS BIGINT) AS n \
             FROM traffic_statistics WHERE {where_} AND is_bot GROUP BY spider_source"
        )))
        .await?
    {
        let source: Option<String> = row.try_get("", "source")?;
        stats.by_source.insert(
            source.unwrap_or_else(|| "other".into()),
            row.try_get("", "n")?,
        );
    }

    for row in db
        .query_all_raw(filter.statement(format!(
            "SELECT path, CAST(SUM(count) AS BIGINT) AS n, \
                    CAST(SUM(CASE WHEN is_bot THEN 0 ELSE count END) AS BIGINT) AS human, \
                    CAST(SUM(CASE WHEN is_bot THEN count ELSE 0 END) AS BIGINT) AS bot \
             FROM traffic_statistics WHERE {where_} \
             GROUP BY path ORDER BY n DESC, path LIMIT {TOP_PAGES}"
        )))
        .await?
    {
        stats.top_pages.push(TopPage {
            path: row.try_get("", "path")?,
            count: row.try_get("", "n")?,
            human: row.try_get("", "human")?,
            bot: row.try_get("", "bot")?,
        });
    }
    Ok(stats)
}

/// Sixty minutes from `since`: stored hits per minute plus `unflushed` ones.
pub async fn last_hour(
    db: &impl ConnectionTrait,
    since: DateTime<Utc>,
    unflushed: &[crate::live::LiveHits],
) -> Result<Vec<LiveMinute>, DbErr> {
    let backend = db.get_database_backend();
    let filter = Filter::new(
        backend,
        since,
        since + chrono::Duration::minutes(60),
        VisitorType::All,
        None,
    );
    let index = match backend {
        DatabaseBackend::Postgres => {
            "CAST(FLOOR(EXTRACT(EPOCH FROM stat_date) / 60) AS BIGINT)".to_string()
        }
        _ => "CAST(strftime('%s', stat_date) AS INTEGER) / 60".to_string(),
    };
    let where_ = &filter.sql;
    let first = since.timestamp() / 60;
    let mut minutes: Vec<LiveMinute> = (0..60)
        .map(|i| LiveMinute {
            minute: DateTime::<Utc>::from_timestamp((first + i) * 60, 0).unwrap_or(since),
            human: 0,
            bot: 0,
            unflushed: 0,
        })
        .collect();
    for row in db
        .query_all_raw(filter.statement(format!(
            "SELECT {index} AS m, \
                    CAST(SUM(CASE WHEN is_bot THEN 0 ELSE count END) AS BIGINT) AS human, \
                    CAST(SUM(CASE WHEN is_bot THEN count ELSE 0 END) AS BIGINT) AS bot \
             FROM traffic_statistics WHERE {where_} GROUP BY 1"
        )))
        .await?
    {
        let m: i64 = row.try_get("", "m")?;
        if let Some(slot) = usize::try_from(m - first)
            .ok()
            .and_then(|i| minutes.get_mut(i))
        {
            slot.human += row.try_get::<i64>("", "human")?;
            slot.bot += row.try_get::<i64>("", "bot")?;
        }
    }
    for hit in unflushed {
        let i = hit.minute.timestamp() / 60 - first;
        if let Some(slot) = usize::try_from(i).ok().and_then(|i| minutes.get_mut(i)) {
            let n = i64::try_from(hit.count).unwrap_or(i64::MAX);
            if hit.is_bot {
                slot.bot += n;
            } else {
                slot.human += n;
            }
            slot.unflushed += n;
        }
    }
    Ok(minutes)
}

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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HitSort {
    #[default]
    Newest,
    MostHits,
}

/// Where a page ends: the sort key and id of its last row (keyset paging, so page 500 costs
/// what page 1 costs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HitCursor {
    Newest { at: DateTime<Utc>, id: i64 },
    MostHits { count: i64, id: i64 },
}

impl HitCursor {
    pub fn encode(&self) -> String {
        match self {
            HitCursor::Newest { at, id } => format!("t{}.{id}", at.timestamp()),
            HitCursor::MostHits { count, id } => format!("c{count}.{id}"),
        }
    }

    pub fn decode(text: &str) -> Option<HitCursor> {
        let (kind, rest) = text.split_at_checked(1)?;
        let (value, id) = rest.split_once('.')?;
        let (value, id): (i64, i64) = (value.parse().ok()?, id.parse().ok()?);
        match kind {
            "t" => Some(HitCursor::Newest {
                at: DateTime::<Utc>::from_timestamp(value, 0)?,
                id,
            }),
            "c" => Some(HitCursor::MostHits { count: value, id }),
            _ => None,
        }
    }
}

/// One page of stored rows, and the cursor of the next page when there is one.
pub async fn hits(
    db: &impl ConnectionTrait,
    query: &HitsQuery,
) -> Result<(Vec<traffic_statistic::Model>, Option<HitCursor>), DbErr> {
    use sea_orm::{ColumnTrait, Condition, EntityTrait, QueryFilter, QueryOrder, QuerySelect};
    use traffic_statistic::{Column, Entity};
    let s = &query.stats;
    let mut condition = Condition::all()
        .add(Column::StatDate.gte(s.start()))
        .add(Column::StatDate.lt(s.end()));
    match s.visitors {
        VisitorType::All => {}
        VisitorType::Human => condition = condition.add(Column::IsBot.eq(false)),
        VisitorType::Bot => condition = condition.add(Column::IsBot.eq(true)),
    }
    if let Some(source) = &s.source {
        condition = condition.add(Column::SpiderSource.eq(source.as_str()));
    }
    if let Some(path) = query.path.as_deref().filter(|p| !p.is_empty()) {
        condition = condition.add(Column::Path.contains(path));
    }
    if let Some(ip) = query.ip.as_deref().filter(|p| !p.is_empty()) {
        condition = condition.add(Column::Ip.eq(ip));
    }
    let mut select = Entity::find();
    select = match (&query.after, query.sort) {
        (Some(HitCursor::Newest { at, id }), HitSort::Newest) => select.filter(
            Condition::any().add(Column::StatDate.lt(*at)).add(
                Condition::all()
                    .add(Column::StatDate.eq(*at))
                    .add(Column::Id.lt(*id)),
            ),
        ),
        (Some(HitCursor::MostHits { count, id }), HitSort::MostHits) => select.filter(
            Condition::any().add(Column::Count.lt(*count)).add(
                Condition::all()
                    .add(Column::Count.eq(*count))
                    .add(Column::Id.lt(*id)),
            ),
        ),
        _ => select,
    };
    select = match query.sort {
        HitSort::Newest => select.order_by_desc(Column::StatDate),
        HitSort::MostHits => select.order_by_desc(Column::Count),
    };
    let mut rows = select
        .filter(condition)
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
