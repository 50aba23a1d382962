//! What visitors were answered and what AI crawlers fetched: the statuses, the pages not found
//! with who linked to them, and per AI crawler its pages with their status, beside the popular
//! pages none of them fetched.
//!
//! Each is read from the rollups (`traffic_daily_facts` kinds `s`, `n`, `f`, `a`, and the
//! `c:ai` view of `traffic_daily_pages`) and, for filters the rollups do not keep and for the
//! reference test, from the minute rows; both rank the same way ([`super::blocks::sort_top`]).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use sea_orm::{ConnectionTrait, DatabaseBackend, DbErr};

use super::TrafficError;
use super::blocks::{site_condition, sort_top};
use super::query::{Filter, StatsQuery};
use super::rollup_read::{self, Scope};
use super::rollup_write::{FactKind, MAX_LISTED_REFERER, day_number, joined};
use crate::domain::bots::{BotCategory, sources_in};
use crate::domain::sites::{page_key, split_page_key};
use crate::domain::traffic_parts::{Part, Parts, View};
use crate::domain::traffic_range::VisitorType;
use crate::services::sql::{self, Binder};
use crate::views::traffic::{
    AiCrawler, AiCrawlers, AiPage, NotFound, PageViews, Ranked, StatusViews, TopPage,
};

/// Referrers listed per page not found.
pub const NOT_FOUND_REFERRERS: usize = 5;
/// Pages listed per AI crawler.
pub const AI_PAGES: usize = 20;
/// The days, up to the range's last, an AI crawler's fetch counts as a visit.
pub const UNVISITED_DAYS: u64 = 30;

/// People's statuses as ranked by the rollups (a name per code).
pub fn statuses(ranked: Vec<Ranked>) -> Vec<StatusViews> {
    ranked
        .into_iter()
        .filter_map(|r| {
            Some(StatusViews {
                status: r.name.parse().ok()?,
                views: r.views,
            })
        })
        .collect()
}

/// The pages people were answered 404 for most often over the scope, each with its
/// referrers: summed over the days (one row per page and day; a flat tail the blocks' ranking
/// would widen on) and ranked in the database, then the listed pages' referrers.
pub async fn not_found(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
) -> Result<Vec<NotFound>, TrafficError> {
    if !Parts::for_filter(scope.who()).contains(&Part::Human) {
        return Ok(Vec::new());
    }
    let pages = top_sums(db, scope, FactKind::NotFound, rollup_read::PEOPLE_TOP).await?;
    if pages.is_empty() {
        return Ok(Vec::new());
    }
    // A page's referrers are the values starting with its key and the separator.
    let prefixes = prefixes(&pages);
    let referrers = fact_sums(db, scope, FactKind::NotFoundReferrer, &prefixes).await?;
    let mut listed: Vec<Vec<(String, i64)>> = vec![Vec::new(); prefixes.len()];
    for (value, n) in referrers {
        for (prefix, listed) in prefixes.iter().zip(&mut listed) {
            if let Some(referrer) = value.strip_prefix(prefix.as_str()) {
                listed.push((referrer.to_string(), n));
            }
        }
    }
    Ok(pages
        .into_iter()
        .zip(listed)
        .map(|((page, views), listed)| not_found_page(&page, views, listed))
        .collect())
}

/// What each page's referrer facts start with: its key and the separator.
fn prefixes(pages: &[(String, i64)]) -> Vec<String> {
    pages.iter().map(|(page, _)| joined(&[page, ""])).collect()
}

/// `SELECT day, site, value, views` of one kind of fact over the scope, with `more`
/// (` AND …`) for a narrower choice; every call binds the same values again.
fn fact_rows(b: &mut Binder, scope: &Scope<'_>, kind: FactKind, more: &str) -> String {
    format!(
        "SELECT day, site, value, views FROM traffic_daily_facts \
         WHERE kind = {} AND day >= {} AND day <= {}{}{more}",
        b.bind(kind.code()),
        b.bind(day_number(scope.from)),
        b.bind(day_number(scope.to)),
        site_condition(scope.site, b)
    )
}

/// `value` in byte-wise order, as Rust compares strings ([`sort_top`]): SQLite's own order;
/// PostgreSQL's whatever the database's collation.
fn bytewise(backend: DatabaseBackend) -> &'static str {
    match backend {
        DatabaseBackend::Postgres => "value COLLATE \"C\"",
        _ => "value",
    }
}

/// The `limit` values of one kind of fact with the most views over the scope, ranked as
/// [`sort_top`] ranks (most views first, ties in byte-wise order), so only they cross over
/// from the database, not the tail of thousands.
async fn top_sums(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
    kind: FactKind,
    limit: usize,
) -> Result<Vec<(String, i64)>, TrafficError> {
    let mut b = Binder::new(db.get_database_backend());
    let rows = fact_rows(&mut b, scope, kind, "");
    let sql = format!(
        "SELECT value, CAST(SUM(views) AS BIGINT) AS n FROM ({rows}) f GROUP BY value \
         ORDER BY n DESC, {} LIMIT {}",
        bytewise(b.backend()),
        b.bind(i64::try_from(limit).unwrap_or(i64::MAX))
    );
    let mut sums = Vec::with_capacity(limit);
    for row in db.query_all_raw(b.statement(sql)).await? {
        sums.push((row.try_get("", "value")?, row.try_get("", "n")?));
    }
    Ok(sums)
}

/// Σ views per value of one kind of fact over the scope; with `prefixes`, only the values
/// that start with one of them.
pub(super) async fn fact_sums(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
    kind: FactKind,
    prefixes: &[String],
) -> Result<Vec<(String, i64)>, TrafficError> {
    let mut b = Binder::new(db.get_database_backend());
    let source = match (prefixes, b.backend()) {
        ([], _) => fact_rows(&mut b, scope, kind, ""),
        // PostgreSQL cannot seek a byte-wise range in the value index (it is in the
        // database's collation): one pass over the kind's days, each row tested.
        (_, DatabaseBackend::Postgres) => {
            let each: Vec<String> = prefixes.iter().map(|p| starts_with(&mut b, p)).collect();
            fact_rows(
                &mut b,
                scope,
                kind,
                &format!(" AND ({})", each.join(" OR ")),
            )
        }
        // One branch per prefix, so SQLite seeks each range in the value index (under one OR
        // it may read the whole kind); UNION, not UNION ALL, so a row two prefixes share (a
        // page key that is another's prefix) is counted once: the key columns keep other
        // rows apart.
        _ => {
            let each: Vec<String> = prefixes
                .iter()
                .map(|p| {
                    let range = starts_with(&mut b, p);
                    fact_rows(&mut b, scope, kind, &format!(" AND {range}"))
                })
                .collect();
            each.join(" UNION ")
        }
    };
    let sql =
        format!("SELECT value, CAST(SUM(views) AS BIGINT) AS n FROM ({source}) f GROUP BY value");
    if b.backend() == DatabaseBackend::Postgres {
        let mut sums = Vec::new();
        for row in db.query_all_raw(b.statement(sql)).await? {
            sums.push((row.try_get("", "value")?, row.try_get("", "n")?));
        }
        return Ok(sums);
    }
    // A long tail (every property of the events listed) is thousands of rows: on SQLite, one
    // text ([`sql::sqlite_json_rows`]).
    let sql = sql::sqlite_json_rows(&sql, &["value", "n"]);
    let Some(row) = db.query_one_raw(b.statement(sql)).await? else {
        return Ok(Vec::new());
    };
    let json: String = row.try_get("", "rows")?;
    serde_json::from_str(&json).map_err(TrafficError::ReadRows)
}

/// `value` starts with `prefix`, as a range of byte-wise order: the values from `prefix` up
/// to (not including) `prefix` with its last character's successor are exactly those that
/// start with it. SQLite compares text byte-wise and seeks the range in the value index;
/// PostgreSQL is told to compare byte-wise ([`bytewise`]). (Not LIKE, whose wildcards a path
/// may hold.)
fn starts_with(b: &mut Binder, prefix: &str) -> String {
    let mut upper: Vec<char> = prefix.chars().collect();
    match upper
        .pop()
        .and_then(|last| char::from_u32(u32::from(last) + 1))
    {
        Some(next) => upper.push(next),
        // A prefix ending in the last code point: nothing follows it but its extensions.
        None => {
            return format!(
                "substr(value, 1, {}) = {}",
                b.bind(i32::try_from(prefix.chars().count()).unwrap_or(i32::MAX)),
                b.bind(prefix)
            );
        }
    }
    let upper: String = upper.into_iter().collect();
    let value = bytewise(b.backend());
    format!(
        "({value} >= {} AND {value} < {})",
        b.bind(prefix),
        b.bind(upper)
    )
}

fn not_found_page(key: &str, count: i64, mut referrers: Vec<(String, i64)>) -> NotFound {
    sort_top(&mut referrers);
    let (site, path) = split_page_key(key);
    NotFound {
        site: site.to_string(),
        path: path.to_string(),
        count,
        referrers: referrers
            .into_iter()
            .take(NOT_FOUND_REFERRERS)
            .map(|(name, views)| Ranked { name, views })
            .collect(),
    }
}

/// Whether a filter counts any AI crawler.
fn counts_ai(parts: &Parts) -> bool {
    sources_in(BotCategory::Ai).any(|source| parts.contains(&Part::Bot(source.to_string())))
}

/// One AI crawler's fetches of a page answered with one status.
struct Fetch {
    status: u16,
    page: String,
    count: i64,
}

/// What one AI crawler fetched: its fetches per status, and its pages (every one, or the most
/// fetched as the database ranked them).
#[derive(Default)]
struct Fetched {
    statuses: BTreeMap<u16, i64>,
    pages: Vec<Fetch>,
}

/// AI crawlers over the scope, from the rollups; `top_pages` are the scope's.
pub async fn ai_crawlers(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
    top_pages: &[TopPage],
) -> Result<AiCrawlers, TrafficError> {
    Ok(AiCrawlers {
        crawlers: ai_fetches(db, scope).await?,
        unvisited: unvisited(db, scope, top_pages).await?,
    })
}

/// What each AI crawler the filter counts fetched over the scope (the half of
/// [`ai_crawlers`] that needs no top pages).
pub async fn ai_fetches(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
) -> Result<Vec<AiCrawler>, TrafficError> {
    let parts = Parts::for_filter(scope.who());
    if !counts_ai(&parts) {
        return Ok(Vec::new());
    }
    let mut b = Binder::new(db.get_database_backend());
    let sql = ai_ranked(&mut b, scope);
    let mut by_source: BTreeMap<String, Fetched> = BTreeMap::new();
    for row in db.query_all_raw(b.statement(sql)).await? {
        let value: String = row.try_get("", "value")?;
        let count: i64 = row.try_get("", "n")?;
        let mut fields = value.splitn(3, '\u{1f}');
        let (Some(source), Some(status)) = (fields.next(), fields.next()) else {
            continue;
        };
        if !parts.contains(&Part::Bot(source.to_string())) {
            continue;
        }
        let fetched = by_source.entry(source.to_string()).or_default();
        let status = status.parse().unwrap_or(0);
        match fields.next() {
            Some(page) => fetched.pages.push(Fetch {
                status,
                page: page.to_string(),
                count,
            }),
            None => *fetched.statuses.entry(status).or_default() += count,
        }
    }
    Ok(crawlers(by_source))
}

/// The AI crawlers' fetches over the scope, ranked in the database so that a few hundred rows
/// cross over instead of every (crawler, status, page) of the range: per crawler its
/// [`AI_PAGES`] most fetched `source␟status␟page` values (ranked as [`crawlers`] ranks: most
/// fetches first, then byte-wise, which is by status, then page), and its fetches per status
/// as `source␟status` (the prefix up to the second separator).
fn ai_ranked(b: &mut Binder, scope: &Scope<'_>) -> String {
    let rows = fact_rows(b, scope, FactKind::AiFetch, "");
    let sep = b.bind("\u{1f}");
    let find = match b.backend() {
        DatabaseBackend::Postgres => "strpos",
        _ => "instr",
    };
    let first = format!("{find}(value, {sep})");
    let source = format!("substr(value, 1, {first} - 1)");
    let source_status =
        format!("substr(value, 1, {first} + {find}(substr(value, {first} + 1), {sep}) - 1)");
    format!(
        "WITH sums AS (SELECT value, CAST(SUM(views) AS BIGINT) AS n FROM ({rows}) f \
         GROUP BY value) \
         SELECT value, n FROM (SELECT value, n, ROW_NUMBER() OVER \
         (PARTITION BY {source} ORDER BY n DESC, {}) AS r FROM sums) ranked WHERE r <= {} \
         UNION ALL SELECT {source_status}, CAST(SUM(n) AS BIGINT) FROM sums GROUP BY 1",
        bytewise(b.backend()),
        b.bind(i64::try_from(AI_PAGES).unwrap_or(i64::MAX))
    )
}

/// Of the scope's top pages, those no AI crawler fetched in the [`UNVISITED_DAYS`] up to the
/// scope's last day (none when the filter counts no AI crawler).
pub async fn unvisited(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
    top_pages: &[TopPage],
) -> Result<Vec<PageViews>, TrafficError> {
    if top_pages.is_empty() || !counts_ai(&Parts::for_filter(scope.who())) {
        return Ok(Vec::new());
    }
    let mut b = Binder::new(db.get_database_backend());
    let sql = format!(
        "SELECT DISTINCT path FROM traffic_daily_pages \
         WHERE view = {} AND day >= {} AND day <= {} AND path IN ({})",
        b.bind(View::Category(BotCategory::Ai).code()),
        b.bind(day_number(unvisited_from(scope.to))),
        b.bind(day_number(scope.to)),
        b.bind_list(top_pages.iter().map(|p| page_key(&p.site, &p.path)))
    );
    let mut fetched = BTreeSet::new();
    for row in db.query_all_raw(b.statement(sql)).await? {
        fetched.insert(row.try_get::<String>("", "path")?);
    }
    Ok(never_fetched(top_pages, &fetched))
}

fn unvisited_from(to: chrono::NaiveDate) -> chrono::NaiveDate {
    to.checked_sub_days(chrono::Days::new(UNVISITED_DAYS - 1))
        .unwrap_or(to)
}

/// The top pages not among `fetched` (page keys).
fn never_fetched(top_pages: &[TopPage], fetched: &BTreeSet<String>) -> Vec<PageViews> {
    top_pages
        .iter()
        .filter(|p| !fetched.contains(&page_key(&p.site, &p.path)))
        .map(|p| PageViews {
            site: p.site.clone(),
            path: p.path.clone(),
            views: p.count,
        })
        .collect()
}

/// The crawlers, most fetches first (ties by name), each with its statuses and its most
/// fetched pages (ties by status, then page key: the byte-wise order of [`ai_ranked`]'s
/// values).
fn crawlers(by_source: BTreeMap<String, Fetched>) -> Vec<AiCrawler> {
    let mut crawlers: Vec<AiCrawler> = by_source
        .into_iter()
        .map(|(source, mut fetched)| {
            fetched.pages.sort_by_cached_key(|f| {
                (
                    std::cmp::Reverse(f.count),
                    f.status.to_string(),
                    f.page.clone(),
                )
            });
            AiCrawler {
                fetches: fetched.statuses.values().sum(),
                source,
                statuses: fetched
                    .statuses
                    .into_iter()
                    .map(|(status, views)| StatusViews { status, views })
                    .collect(),
                pages: fetched
                    .pages
                    .into_iter()
                    .take(AI_PAGES)
                    .map(|f| {
                        let (site, path) = split_page_key(&f.page);
                        AiPage {
                            site: site.to_string(),
                            path: path.to_string(),
                            status: f.status,
                            count: f.count,
                        }
                    })
                    .collect(),
            }
        })
        .collect();
    crawlers.sort_by(|a, b| {
        b.fetches
            .cmp(&a.fetches)
            .then_with(|| a.source.cmp(&b.source))
    });
    crawlers
}

/// People's answered views by status, from the minute rows.
pub(super) async fn statuses_from_rows(
    db: &impl ConnectionTrait,
    filter: &Filter,
) -> Result<Vec<StatusViews>, DbErr> {
    let where_ = &filter.sql;
    let mut all = Vec::new();
    for row in db
        .query_all_raw(filter.statement(format!(
            "SELECT status, CAST(SUM(count) AS BIGINT) AS n FROM traffic_statistics \
             WHERE {where_} AND NOT is_bot AND status <> 0 GROUP BY status"
        )))
        .await?
    {
        let status: i16 = row.try_get("", "status")?;
        all.push((status.to_string(), row.try_get::<i64>("", "n")?));
    }
    sort_top(&mut all);
    all.truncate(rollup_read::PEOPLE_TOP);
    Ok(statuses(
        all.into_iter()
            .map(|(name, views)| Ranked { name, views })
            .collect(),
    ))
}

/// The pages people were answered 404 for, with their referrers, from the minute rows.
pub(super) async fn not_found_from_rows(
    db: &impl ConnectionTrait,
    filter: &Filter,
) -> Result<Vec<NotFound>, DbErr> {
    let where_ = &filter.sql;
    let mut pages: HashMap<String, HashMap<String, i64>> = HashMap::new();
    for row in db
        .query_all_raw(filter.statement(format!(
            "SELECT site, path, referer, CAST(SUM(count) AS BIGINT) AS n \
             FROM traffic_statistics WHERE {where_} AND NOT is_bot AND status = 404 \
             GROUP BY site, path, referer"
        )))
        .await?
    {
        let site: String = row.try_get("", "site")?;
        let path: String = row.try_get("", "path")?;
        let referer: String = row.try_get("", "referer")?;
        let referer = &referer[..referer.floor_char_boundary(MAX_LISTED_REFERER)];
        *pages
            .entry(page_key(&site, &path))
            .or_default()
            .entry(referer.to_string())
            .or_default() += row.try_get::<i64>("", "n")?;
    }
    let mut totals: Vec<(String, i64)> = pages
        .iter()
        .map(|(key, referrers)| (key.clone(), referrers.values().sum()))
        .collect();
    sort_top(&mut totals);
    Ok(totals
        .into_iter()
        .take(rollup_read::PEOPLE_TOP)
        .map(|(key, count)| {
            let referrers = pages.remove(&key).unwrap_or_default().into_iter().collect();
            not_found_page(&key, count, referrers)
        })
        .collect())
}

/// [`ai_crawlers`] from the minute rows, narrowed by every filter of `query`.
pub(super) async fn ai_crawlers_from_rows(
    db: &impl ConnectionTrait,
    query: &StatsQuery,
    top_pages: &[TopPage],
) -> Result<AiCrawlers, DbErr> {
    if !counts_ai(&Parts::for_filter(query.scope().who())) {
        return Ok(AiCrawlers::default());
    }
    let mut filter = Filter::new(db.get_database_backend(), query.start(), query.end(), query);
    let ai = ai_rows(&mut filter);
    let mut by_source: BTreeMap<String, Fetched> = BTreeMap::new();
    for row in db
        .query_all_raw(filter.statement(format!(
            "SELECT spider_source AS source, status, site, path, CAST(SUM(count) AS BIGINT) AS n \
             FROM traffic_statistics WHERE {}{ai} GROUP BY spider_source, status, site, path",
            filter.sql
        )))
        .await?
    {
        let status: i16 = row.try_get("", "status")?;
        let status = u16::try_from(status).unwrap_or(0);
        let site: String = row.try_get("", "site")?;
        let path: String = row.try_get("", "path")?;
        let count: i64 = row.try_get("", "n")?;
        let fetched = by_source.entry(row.try_get("", "source")?).or_default();
        *fetched.statuses.entry(status).or_default() += count;
        fetched.pages.push(Fetch {
            status,
            page: page_key(&site, &path),
            count,
        });
    }
    Ok(AiCrawlers {
        crawlers: crawlers(by_source),
        unvisited: unvisited_from_rows(db, query, top_pages).await?,
    })
}

/// ` AND …` selecting AI crawlers' rows, binding their names into `filter`.
fn ai_rows(filter: &mut Filter) -> String {
    format!(
        " AND is_bot AND spider_source IN ({})",
        filter.binder.bind_list(sources_in(BotCategory::Ai))
    )
}

async fn unvisited_from_rows(
    db: &impl ConnectionTrait,
    query: &StatsQuery,
    top_pages: &[TopPage],
) -> Result<Vec<PageViews>, DbErr> {
    // Every AI crawler, whoever the figures count.
    let window = StatsQuery {
        from: unvisited_from(query.to),
        visitors: VisitorType::All,
        category: None,
        source: None,
        ..query.clone()
    };
    let mut filter = Filter::new(
        db.get_database_backend(),
        window.start(),
        window.end(),
        &window,
    );
    let ai = ai_rows(&mut filter);
    let mut fetched = BTreeSet::new();
    for row in db
        .query_all_raw(filter.statement(format!(
            "SELECT DISTINCT site, path FROM traffic_statistics WHERE {}{ai}",
            filter.sql
        )))
        .await?
    {
        let (site, path): (String, String) = (row.try_get("", "site")?, row.try_get("", "path")?);
        fetched.insert(page_key(&site, &path));
    }
    Ok(never_fetched(top_pages, &fetched))
}
