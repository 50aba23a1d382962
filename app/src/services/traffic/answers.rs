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
use super::blocks::{ranked, site_condition, sort_top};
use super::query::{Filter, StatsQuery};
use super::rollup_read::{self, Scope};
use super::rollup_write::{FactKind, MAX_LISTED_REFERER, day_number, joined};
use super::tails::{self, value_sums};
use crate::domain::bots::{BotCategory, sources_in};
use crate::domain::sites::{page_key, split_page_key};
use crate::domain::traffic_parts::{Part, Parts, View};
use crate::domain::traffic_range::VisitorType;
use crate::services::sql::Binder;
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
/// referrers: every page's sum ([`tails`], a flat tail no short list can rank) ranked as
/// [`sort_top`] ranks, then the listed pages' referrers.
pub async fn not_found(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
) -> Result<Vec<NotFound>, TrafficError> {
    if !Parts::for_filter(scope.who()).contains(&Part::Human) {
        return Ok(Vec::new());
    }
    let pages = top(
        tail_sums(db, scope, FactKind::NotFound).await?,
        rollup_read::PEOPLE_TOP,
    );
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

/// Every value of one kind of fact with its views over the scope.
async fn tail_sums(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
    kind: FactKind,
) -> Result<Vec<(String, i64)>, TrafficError> {
    let tail = tails::Tail {
        site: scope.site,
        kind,
    };
    tails::sums(db, tail, day_number(scope.from), day_number(scope.to)).await
}

/// The first `k` of `sums` as [`sort_top`] ranks them, without sorting the rest.
fn top(mut sums: Vec<(String, i64)>, k: usize) -> Vec<(String, i64)> {
    if sums.len() > k {
        sums.select_nth_unstable_by(k, ranked);
        sums.truncate(k);
    }
    sums.sort_unstable_by(ranked);
    sums
}

/// What each page's referrer facts start with: its key and the separator.
fn prefixes(pages: &[(String, i64)]) -> Vec<String> {
    pages.iter().map(|(page, _)| joined(&[page, ""])).collect()
}

/// `SELECT day, site, value, views` of one kind of fact over the scope, with `more`
/// (` AND …`) for a narrower choice; every call binds the scope's values again.
fn fact_rows(b: &mut Binder, scope: &Scope<'_>, kind: FactKind, more: &str) -> String {
    // The kind is written out, not bound: a code of ours, and PostgreSQL picks a partial index
    // (`WHERE kind = 'f'`) only for a statement that names its kind.
    format!(
        "SELECT day, site, value, views FROM traffic_daily_facts \
         WHERE kind = '{}' AND day >= {} AND day <= {}{}{more}",
        kind.code(),
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

/// Σ views per value of one kind of fact over the scope; with `prefixes`, only the values
/// that start with one of them.
pub(super) async fn fact_sums(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
    kind: FactKind,
    prefixes: &[String],
) -> Result<Vec<(String, i64)>, TrafficError> {
    let mut b = Binder::new(db.get_database_backend());
    // One branch per prefix, so each range is a seek: SQLite's value index compares byte-wise,
    // PostgreSQL has one in byte-wise order for referrers (`idx_traffic_daily_facts_prefix`;
    // under one OR either may read the whole kind). UNION, not UNION ALL, so a row two
    // prefixes share (a page key that is another's prefix) is counted once: the key columns
    // keep other rows apart.
    let source = match prefixes {
        [] => fact_rows(&mut b, scope, kind, ""),
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
    value_sums(db, b, sql).await
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
    source: String,
    status: u16,
    page: String,
    count: i64,
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
    let mut fetches = Vec::new();
    // Whether the filter counts a crawler, asked once per crawler, not per fetch.
    let mut counted: HashMap<String, bool> = HashMap::new();
    for (value, count) in tail_sums(db, scope, FactKind::AiFetch).await? {
        let mut fields = value.splitn(3, '\u{1f}');
        let (Some(source), Some(status), Some(page)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let counts = match counted.get(source) {
            Some(counts) => *counts,
            None => *counted
                .entry(source.to_string())
                .or_insert_with(|| parts.contains(&Part::Bot(source.to_string()))),
        };
        if counts {
            fetches.push(Fetch {
                source: source.to_string(),
                status: status.parse().unwrap_or(0),
                page: page.to_string(),
                count,
            });
        }
    }
    Ok(crawlers(fetches))
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

/// One crawler's fetches: its statuses and its most fetched pages.
fn crawler(source: String, mut fetches: Vec<Fetch>) -> AiCrawler {
    let mut statuses: BTreeMap<u16, i64> = BTreeMap::new();
    for f in &fetches {
        *statuses.entry(f.status).or_default() += f.count;
    }
    let total = fetches.iter().map(|f| f.count).sum();
    // Only the first pages are listed: picked, then sorted, not the whole tail sorted.
    let order =
        |a: &Fetch, b: &Fetch| (b.count, &a.page, a.status).cmp(&(a.count, &b.page, b.status));
    if fetches.len() > AI_PAGES {
        fetches.select_nth_unstable_by(AI_PAGES, order);
        fetches.truncate(AI_PAGES);
    }
    fetches.sort_unstable_by(order);
    AiCrawler {
        fetches: total,
        source,
        statuses: statuses
            .into_iter()
            .map(|(status, views)| StatusViews { status, views })
            .collect(),
        pages: fetches
            .into_iter()
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
}

/// Fetches gathered per crawler: most fetches first (ties by name), each with its statuses
/// and its most fetched pages (ties by page key, then status).
fn crawlers(fetches: Vec<Fetch>) -> Vec<AiCrawler> {
    let mut by_source: BTreeMap<String, Vec<Fetch>> = BTreeMap::new();
    for fetch in fetches {
        match by_source.get_mut(&fetch.source) {
            Some(listed) => listed.push(fetch),
            None => {
                by_source.insert(fetch.source.clone(), vec![fetch]);
            }
        }
    }
    let mut crawlers: Vec<AiCrawler> = by_source
        .into_iter()
        .map(|(source, fetches)| crawler(source, fetches))
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
    let mut fetches = Vec::new();
    for row in db
        .query_all_raw(filter.statement(format!(
            "SELECT spider_source AS source, status, site, path, CAST(SUM(count) AS BIGINT) AS n \
             FROM traffic_statistics WHERE {}{ai} GROUP BY spider_source, status, site, path",
            filter.sql
        )))
        .await?
    {
        let status: i16 = row.try_get("", "status")?;
        let site: String = row.try_get("", "site")?;
        let path: String = row.try_get("", "path")?;
        fetches.push(Fetch {
            source: row.try_get("", "source")?,
            status: u16::try_from(status).unwrap_or(0),
            page: page_key(&site, &path),
            count: row.try_get("", "n")?,
        });
    }
    Ok(AiCrawlers {
        crawlers: crawlers(fetches),
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
