//! Traffic figures over a range, one query path for the dashboard and `bulwark traffic
//! stats`, so the two cannot disagree.
//!
//! - page views = Σ count; human / bot = Σ count split by is_bot;
//! - visits = distinct (day, ip, user agent), days being the configured zone's calendar days;
//! - visits and pages are a site's: a person on two sites makes two visits, and `/` of two
//!   sites is two pages; unique IPs = distinct ip; unique pages = distinct (site, path);
//! - by source = Σ count per spider_source (bots only);
//! - top pages = the 20 (site, path) with the highest Σ count, with their human/bot split;
//! - people's referrers = Σ count of people's rows per `ref_domain` (rows that arrived from
//!   elsewhere or directly; a step within the site has none), landing pages the same per
//!   (site, path), browsers, systems and devices Σ count per value: the 10 highest of each;
//! - events and goals are people's, and never page views (`super::goals`).
//!
//! [`stats`] and [`series`] read the rollups ([`super::rollup_read`]);
//! [`stats_from_rows`] computes the same figures from the minute rows and is the definition the
//! rollups are tested and benchmarked against.

use chrono::{DateTime, NaiveDate, Utc};
use chrono_tz::Tz;
use sea_orm::{ConnectionTrait, DatabaseBackend, DbErr};

use super::TrafficError;
use super::answers;
use super::goals;
use super::query::Filter;
pub use super::query::StatsQuery;
use super::rollup_read::{self as rollup, Scope};
use crate::domain::traffic_parts::{Part, Parts};
use crate::domain::traffic_range::Bucket;
use crate::views::traffic::{
    AiCrawlers, CampaignViews, LiveMinute, Ranked, SeriesPoint, TopPage, TrafficStats,
};

/// How many top pages are listed.
pub const TOP_PAGES: u64 = 20;

/// The dashboard's figures, from the rollups.
pub async fn stats(
    db: &impl ConnectionTrait,
    query: &StatsQuery,
) -> Result<TrafficStats, TrafficError> {
    if query.reads_rows() {
        return Ok(stats_from_rows(db, query).await?);
    }
    figures(db, query, true).await
}

/// The figures, with the lists (pages, people's, answers, events, goals) or without (a
/// period compared with another needs only its totals). The parts are independent reads, so
/// they are asked at once: each waits on its own pooled connection.
async fn figures(
    db: &impl ConnectionTrait,
    query: &StatsQuery,
    with_lists: bool,
) -> Result<TrafficStats, TrafficError> {
    let scope = query.scope();
    let planned = async {
        let planned = rollup::plan(db, &scope).await?;
        let planned = planned.as_ref();
        tokio::try_join!(rollup::distinct_counts(db, &scope, planned), async {
            match with_lists {
                true => self::lists(db, &scope, planned).await.map(Some),
                false => Ok(None),
            }
        })
    };
    let (parts, ((visits, unique_ips, unique_pages), lists)) =
        tokio::try_join!(rollup::views_by_part(db, &scope), planned)?;
    let mut stats = lists.unwrap_or_default();
    stats.visits = visits;
    stats.unique_ips = unique_ips;
    stats.unique_pages = unique_pages;
    add_parts(&mut stats, parts);
    Ok(stats)
}

/// The scope's lists: top pages, what AI crawlers fetched and which top pages they missed,
/// people's lists, pages not found, events and goals.
async fn lists(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
    planned: Option<&rollup::Planned>,
) -> Result<TrafficStats, TrafficError> {
    let pages = async {
        let top_pages = rollup::top_pages(db, scope, planned, TOP_PAGES as usize).await?;
        let unvisited = answers::unvisited(db, scope, &top_pages).await?;
        Ok::<_, TrafficError>((top_pages, unvisited))
    };
    let ((top_pages, unvisited), crawlers, lists, not_found, events, goals) = tokio::try_join!(
        pages,
        answers::ai_fetches(db, scope),
        rollup::people(db, scope),
        answers::not_found(db, scope),
        goals::events(db, scope),
        goals::goals(db, scope),
    )?;
    let ai_crawlers = AiCrawlers {
        crawlers,
        unvisited,
    };
    Ok(TrafficStats {
        top_pages,
        people: lists.breakdown,
        countries: lists.countries,
        campaigns: lists.campaigns.into_iter().map(campaign_views).collect(),
        channels: lists.channels,
        statuses: answers::statuses(lists.statuses),
        not_found,
        ai_crawlers,
        events,
        goals,
        ..TrafficStats::default()
    })
}

/// Adds Σ views per part (and generated flag) to the totals, sources and categories.
fn add_parts(stats: &mut TrafficStats, parts: Vec<(Part, bool, i64)>) {
    for (part, generated, n) in parts {
        stats.page_views += n;
        if generated {
            stats.generated += n;
        }
        match part {
            Part::Bot(source) => {
                stats.bot += n;
                *stats
                    .by_category
                    .entry(crate::domain::bots::category_of(&source))
                    .or_default() += n;
                *stats.by_source.entry(source).or_default() += n;
            }
            Part::Human => stats.human += n,
        }
    }
}

/// The figures without any list: totals, visits, unique IPs and pages, sources and
/// categories (what a comparison with another period needs).
pub async fn totals(
    db: &impl ConnectionTrait,
    query: &StatsQuery,
) -> Result<TrafficStats, TrafficError> {
    if query.reads_rows() {
        return Ok(figures_from_rows(db, query, false).await?);
    }
    figures(db, query, false).await
}

/// A campaign fact's views, its value split into the three tags.
fn campaign_views(ranked: Ranked) -> CampaignViews {
    let [source, medium, campaign] = super::rollup_write::campaign_tags(&ranked.name);
    CampaignViews {
        source,
        medium,
        campaign,
        views: ranked.views,
    }
}

/// People's and bots' page views over the local days `from..=to`, every site (the
/// Overview's traffic tile).
pub async fn people_and_bots(
    db: &impl ConnectionTrait,
    from: NaiveDate,
    to: NaiveDate,
    zone: Tz,
) -> Result<(u64, u64), TrafficError> {
    let query = StatsQuery::everyone(from, to, zone);
    let (mut people, mut bots) = (0u64, 0u64);
    for (part, _, n) in rollup::views_by_part(db, &query.scope()).await? {
        match part {
            Part::Human => people += n.max(0) as u64,
            Part::Bot(_) => bots += n.max(0) as u64,
        }
    }
    Ok((people, bots))
}

/// What the Traffic page shows for a range: its figures, those of `previous` (the period of
/// the same length before it, without people's lists) and its chart, read at the same time.
pub async fn dashboard(
    db: &impl ConnectionTrait,
    current: &StatsQuery,
    previous: &StatsQuery,
    bucket: Bucket,
) -> Result<(TrafficStats, TrafficStats, Vec<SeriesPoint>), TrafficError> {
    if current.reads_rows() {
        let (current_stats, previous_stats) = tokio::try_join!(
            stats_from_rows(db, current),
            figures_from_rows(db, previous, false)
        )?;
        let series = series(db, current, bucket).await?;
        return Ok((current_stats, previous_stats, series));
    }
    tokio::try_join!(
        stats(db, current),
        figures(db, previous, false),
        series(db, current, bucket)
    )
}

/// Hits per local hour or day over the range, people and bots apart; every bucket of the range
/// is present, empty ones with zeros.
pub async fn series(
    db: &impl ConnectionTrait,
    query: &StatsQuery,
    bucket: Bucket,
) -> Result<Vec<SeriesPoint>, TrafficError> {
    if query.reads_rows() {
        return series_from_rows(db, query, bucket).await;
    }
    rollup::series(db, &query.scope(), bucket).await
}

/// [`series`] summed from the minute rows: each minute's people and bots, placed in its local
/// hour as the rollups place it (the definition the chart is tested against).
pub async fn series_from_rows(
    db: &impl ConnectionTrait,
    query: &StatsQuery,
    bucket: Bucket,
) -> Result<Vec<SeriesPoint>, TrafficError> {
    let filter = Filter::new(db.get_database_backend(), query.start(), query.end(), query);
    let where_ = &filter.sql;
    let mut hours = std::collections::BTreeMap::new();
    for row in db
        .query_all_raw(filter.statement(format!(
            "SELECT stat_date, \
               CAST(SUM(CASE WHEN is_bot THEN 0 ELSE count END) AS BIGINT) AS human, \
               CAST(SUM(CASE WHEN is_bot THEN count ELSE 0 END) AS BIGINT) AS bot \
             FROM traffic_statistics WHERE {where_} GROUP BY stat_date"
        )))
        .await?
    {
        let minute: DateTime<Utc> = row.try_get("", "stat_date")?;
        let (hour, _) = super::rollup_write::place(minute, query.zone);
        let entry: &mut (i64, i64) = hours.entry(hour).or_default();
        entry.0 += row.try_get::<i64>("", "human")?;
        entry.1 += row.try_get::<i64>("", "bot")?;
    }
    Ok(rollup::buckets(hours, &query.scope(), bucket))
}

/// The same figures as [`stats`], straight from the minute rows: the definitions written as
/// SQL.
/// Too slow for the page over long ranges; the rollups are checked against it.
pub async fn stats_from_rows(
    db: &impl ConnectionTrait,
    query: &StatsQuery,
) -> Result<TrafficStats, DbErr> {
    figures_from_rows(db, query, true).await
}

/// [`stats_from_rows`], with people's lists or without (as [`figures`]).
async fn figures_from_rows(
    db: &impl ConnectionTrait,
    query: &StatsQuery,
    with_people: bool,
) -> Result<TrafficStats, DbErr> {
    let backend = db.get_database_backend();
    let filter = Filter::new(backend, query.start(), query.end(), query);
    let mut stats = TrafficStats::default();
    totals_from_rows(db, &filter, &mut stats).await?;
    stats.visits = visits_from_rows(db, query).await?;
    bots_from_rows(db, &filter, &mut stats).await?;
    if with_people {
        top_pages_from_rows(db, &filter, &mut stats).await?;
    }
    if with_people && Parts::for_filter(query.scope().who()).contains(&Part::Human) {
        people_from_rows(db, &filter, &mut stats).await?;
        stats.campaigns = campaigns_from_rows(db, &filter).await?;
        stats.statuses = answers::statuses_from_rows(db, &filter).await?;
        stats.not_found = answers::not_found_from_rows(db, &filter).await?;
        (stats.events, stats.goals) = goals::from_rows(db, query).await?;
    }
    if with_people {
        stats.ai_crawlers = answers::ai_crawlers_from_rows(db, query, &stats.top_pages).await?;
    }
    Ok(stats)
}

async fn totals_from_rows(
    db: &impl ConnectionTrait,
    filter: &Filter,
    stats: &mut TrafficStats,
) -> Result<(), DbErr> {
    let where_ = &filter.sql;
    let totals = db
        .query_one_raw(filter.statement(format!(
            "SELECT CAST(COALESCE(SUM(count), 0) AS BIGINT) AS views, \
                    CAST(COALESCE(SUM(CASE WHEN is_bot THEN count ELSE 0 END), 0) AS BIGINT) AS bots, \
                    CAST(COALESCE(SUM(CASE WHEN generated THEN count ELSE 0 END), 0) AS BIGINT) AS generated, \
                    COUNT(DISTINCT ip) AS ips, COUNT(DISTINCT site || path) AS pages \
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
    Ok(())
}

/// Visits: distinct (ip, user agent) within each local day, summed over the days.
async fn visits_from_rows(db: &impl ConnectionTrait, query: &StatsQuery) -> Result<i64, DbErr> {
    let backend = db.get_database_backend();
    let mut visits = 0;
    for day in query.from.iter_days().take_while(|d| *d <= query.to) {
        let day_query = StatsQuery {
            from: day,
            to: day,
            ..query.clone()
        };
        let filter = Filter::new(backend, day_query.start(), day_query.end(), query);
        let where_ = &filter.sql;
        if let Some(row) = db
            .query_one_raw(filter.statement(format!(
                "SELECT COUNT(*) AS visits FROM \
                   (SELECT DISTINCT site, ip, user_agent FROM traffic_statistics WHERE {where_}) v"
            )))
            .await?
        {
            visits += row.try_get::<i64>("", "visits")?;
        }
    }
    Ok(visits)
}

async fn bots_from_rows(
    db: &impl ConnectionTrait,
    filter: &Filter,
    stats: &mut TrafficStats,
) -> Result<(), DbErr> {
    let where_ = &filter.sql;
    for row in db
        .query_all_raw(filter.statement(format!(
            "SELECT spider_source AS source, CAST(SUM(count) AS BIGINT) AS n \
             FROM traffic_statistics WHERE {where_} AND is_bot GROUP BY spider_source"
        )))
        .await?
    {
        let source: Option<String> = row.try_get("", "source")?;
        let source = source.unwrap_or_else(|| crate::domain::traffic_parts::OTHER_SOURCE.into());
        let n: i64 = row.try_get("", "n")?;
        *stats
            .by_category
            .entry(crate::domain::bots::category_of(&source))
            .or_default() += n;
        *stats.by_source.entry(source).or_default() += n;
    }
    Ok(())
}

async fn top_pages_from_rows(
    db: &impl ConnectionTrait,
    filter: &Filter,
    stats: &mut TrafficStats,
) -> Result<(), DbErr> {
    let where_ = &filter.sql;
    for row in db
        .query_all_raw(filter.statement(format!(
            "SELECT site, path, CAST(SUM(count) AS BIGINT) AS n, \
                    CAST(SUM(CASE WHEN is_bot THEN 0 ELSE count END) AS BIGINT) AS human, \
                    CAST(SUM(CASE WHEN is_bot THEN count ELSE 0 END) AS BIGINT) AS bot \
             FROM traffic_statistics WHERE {where_} \
             GROUP BY site, path ORDER BY n DESC, site || path LIMIT {TOP_PAGES}"
        )))
        .await?
    {
        stats.top_pages.push(TopPage {
            site: row.try_get("", "site")?,
            path: row.try_get("", "path")?,
            count: row.try_get("", "n")?,
            human: row.try_get("", "human")?,
            bot: row.try_get("", "bot")?,
        });
    }
    Ok(())
}

/// People's referrers, landing pages, browsers, systems, devices and countries.
async fn people_from_rows(
    db: &impl ConnectionTrait,
    filter: &Filter,
    stats: &mut TrafficStats,
) -> Result<(), DbErr> {
    let where_ = &filter.sql;
    let people = &mut stats.people;
    // Arrivals are the rows with a referrer's domain (`""`: direct); a channel is only stored
    // on arrivals counted since channels were.
    const ARRIVALS: &str = " AND ref_domain IS NOT NULL";
    for (list, value, arrivals) in [
        (&mut people.referrers, "ref_domain", ARRIVALS),
        (&mut people.landing_pages, "site || path", ARRIVALS),
        (&mut people.browsers, "browser", ""),
        (&mut people.systems, "os", ""),
        (&mut people.devices, "device", ""),
        (&mut stats.countries, "country", ""),
        (&mut stats.channels, "channel", " AND channel <> ''"),
    ] {
        for row in db
            .query_all_raw(filter.statement(format!(
                "SELECT {value} AS value, CAST(SUM(count) AS BIGINT) AS n \
                 FROM traffic_statistics WHERE {where_} AND NOT is_bot{arrivals} \
                 GROUP BY {value} ORDER BY n DESC, value LIMIT {}",
                rollup::PEOPLE_TOP
            )))
            .await?
        {
            list.push(Ranked {
                name: row.try_get("", "value")?,
                views: row.try_get("", "n")?,
            });
        }
    }
    Ok(())
}

/// People's views per campaign: every tagged (source, medium, campaign), ranked here as the
/// rollups rank them (most views first, ties by their joined value), the 10 highest.
async fn campaigns_from_rows(
    db: &impl ConnectionTrait,
    filter: &Filter,
) -> Result<Vec<CampaignViews>, DbErr> {
    let where_ = &filter.sql;
    let mut all = Vec::new();
    for row in db
        .query_all_raw(filter.statement(format!(
            "SELECT utm_source, utm_medium, utm_campaign, CAST(SUM(count) AS BIGINT) AS n \
             FROM traffic_statistics WHERE {where_} AND NOT is_bot \
               AND (utm_source <> '' OR utm_medium <> '' OR utm_campaign <> '') \
             GROUP BY utm_source, utm_medium, utm_campaign"
        )))
        .await?
    {
        let tags: [String; 3] = [
            row.try_get("", "utm_source")?,
            row.try_get("", "utm_medium")?,
            row.try_get("", "utm_campaign")?,
        ];
        all.push((
            super::rollup_write::campaign_value([&tags[0], &tags[1], &tags[2]]),
            row.try_get::<i64>("", "n")?,
        ));
    }
    super::blocks::sort_top(&mut all);
    Ok(all
        .into_iter()
        .take(rollup::PEOPLE_TOP)
        .map(|(name, views)| campaign_views(Ranked { name, views }))
        .collect())
}

/// Sixty minutes from `since`: stored hits per minute plus `unflushed` ones.
pub async fn last_hour(
    db: &impl ConnectionTrait,
    since: DateTime<Utc>,
    unflushed: &[crate::live::LiveHits],
) -> Result<Vec<LiveMinute>, DbErr> {
    let backend = db.get_database_backend();
    let everyone = StatsQuery::everyone(since.date_naive(), since.date_naive(), chrono_tz::UTC);
    let filter = Filter::new(
        backend,
        since,
        since + chrono::Duration::minutes(60),
        &everyone,
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
