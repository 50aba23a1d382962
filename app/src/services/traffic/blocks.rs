//! Blocks: what keeps a 30- or 90-day range as fast as a day.
//!
//! A range of days is split into [`Segment`]s: aligned runs of 2, 4, … 64 settled days
//! (blocks) and single days. A block row in `traffic_blocks` holds, for one [`Lens`] (a view —
//! `all`, `h`, `b`, `c:<category>`, `b:<source>` — of one site or of all), the union of its days' IP and path bitmaps, their visits, and a list of
//! paths with an upper bound on the views of every path left out of it; the people's view
//! (`h`) also keeps such a list for each of people's facts (referrers, landing pages, browsers,
//! systems, devices). So the distinct counts of 90 days union about a dozen bitmaps, and the
//! top pages and people's lists start from a dozen short lists.
//!
//! Blocks are derived from the daily rollups, built on first use and by [`warm`], never
//! written by a flush. Each keeps the sum of its days' `traffic_daily_sets.revision`, which
//! every write to a day increments: a block whose sum is not the days' current sum is stale and
//! is rebuilt before it is read, so a late flush or an import of old logs can never leave a
//! figure behind. Only days at least two days older than the newest day with traffic form
//! blocks, so today's flushes do not make blocks stale over and over.

use std::collections::{BTreeMap, HashMap};

use roaring::RoaringTreemap;
use sea_orm::ConnectionTrait;

use super::TrafficError;
use super::rollup_write::{FactKind, deserialize, serialize};
use crate::domain::bots::{self, BotCategory};
use crate::domain::traffic_parts::{Part, Parts, View};
use crate::services::sql::Binder;

/// The longest block, in days (a power of two).
pub const MAX_BLOCK_DAYS: i32 = 64;
/// How many paths a block lists (and a day contributes when a block is built).
pub const BLOCK_TOP: usize = 500;

/// A view of one site's traffic, or of every site's: what blocks, day lists and day sets are
/// kept and read for.
#[derive(Debug, Clone, Copy)]
pub struct Lens<'a> {
    pub view: &'a View,
    pub site: Option<&'a str>,
}

/// How `traffic_blocks.site` names all sites (no host is `*`).
const ALL_SITES: &str = "*";

impl Lens<'_> {
    fn site_key(&self) -> &str {
        self.site.unwrap_or(ALL_SITES)
    }

    /// For logs and errors.
    fn label(&self) -> String {
        format!("{}@{}", self.view.code(), self.site_key())
    }

    /// ` AND …` selecting the lens's rows of `traffic_daily_sets`, binding its values.
    fn sets_condition(&self, b: &mut Binder) -> String {
        parts_condition(&self.view.parts(), b) + &site_condition(self.site, b)
    }

    /// Whether its blocks keep people's lists: facts are only counted for people.
    fn keeps_facts(&self) -> bool {
        matches!(self.view, View::Human)
    }
}

/// A piece of a range of days.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Segment {
    Day(i32),
    Block { first: i32, days: i32 },
}

/// Splits the days `from..=to` into the fewest aligned blocks of days up to `settled_through`
/// and single days: a block of `n` days starts on a multiple of `n`, so the same blocks serve
/// every range.
pub fn segments(from: i32, to: i32, settled_through: Option<i32>) -> Vec<Segment> {
    let mut out = Vec::new();
    let mut day = from;
    while day <= to {
        let last_allowed = settled_through.map_or(day - 1, |s| s.min(to));
        let mut size = MAX_BLOCK_DAYS;
        while size > 1 && (day.rem_euclid(size) != 0 || day + size - 1 > last_allowed) {
            size /= 2;
        }
        if size == 1 {
            out.push(Segment::Day(day));
        } else {
            out.push(Segment::Block {
                first: day,
                days: size,
            });
        }
        day += size;
    }
    out
}

/// A path list with a bound: every listed path has at most its listed views in the span, and
/// every other path at most `bound`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TopList {
    pub paths: Vec<(String, i64)>,
    pub bound: i64,
}

impl TopList {
    /// The list of the union of two disjoint spans: a path's views there are at most its
    /// views (or the bound) in one plus its views (or the bound) in the other.
    pub fn merge(a: &TopList, b: &TopList, keep: usize) -> TopList {
        let in_a: HashMap<&str, i64> = a.paths.iter().map(|(p, v)| (p.as_str(), *v)).collect();
        let in_b: HashMap<&str, i64> = b.paths.iter().map(|(p, v)| (p.as_str(), *v)).collect();
        let mut merged: BTreeMap<&str, i64> = BTreeMap::new();
        for path in in_a.keys().chain(in_b.keys()) {
            let views = in_a.get(path).copied().unwrap_or(a.bound)
                + in_b.get(path).copied().unwrap_or(b.bound);
            merged.insert(*path, views);
        }
        let mut paths: Vec<(String, i64)> = merged
            .into_iter()
            .map(|(p, v)| (p.to_string(), v))
            .collect();
        sort_top(&mut paths);
        let mut bound = a.bound + b.bound;
        if paths.len() > keep {
            bound = bound.max(paths[keep].1);
            paths.truncate(keep);
        }
        TopList { paths, bound }
    }

    /// The first `k` paths, with the bound that holds for every path after them.
    pub fn head(&self, k: usize) -> (&[(String, i64)], i64) {
        match self.paths.get(k) {
            Some((_, next)) => (&self.paths[..k], self.bound.max(*next)),
            None => (&self.paths, self.bound),
        }
    }
}

/// Most views first, ties by path.
pub fn sort_top(totals: &mut [(String, i64)]) {
    totals.sort_unstable_by(ranked);
}

/// The order of [`sort_top`]: most views first, ties by path (byte-wise).
pub fn ranked(a: &(String, i64), b: &(String, i64)) -> std::cmp::Ordering {
    b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0))
}

/// What a block holds, or what one day of a view holds.
#[derive(Debug, Clone, Default)]
pub struct Span {
    pub visits: i64,
    pub ips: RoaringTreemap,
    pub paths: RoaringTreemap,
    pub top: TopList,
    /// People's lists, one per [`FactKind::ALL`] in its order; only the people's view has them.
    pub facts: Option<Vec<TopList>>,
}

impl Span {
    fn merge(a: &Span, b: &Span) -> Span {
        Span {
            visits: a.visits + b.visits,
            ips: &a.ips | &b.ips,
            paths: &a.paths | &b.paths,
            top: TopList::merge(&a.top, &b.top, BLOCK_TOP),
            facts: match (&a.facts, &b.facts) {
                (Some(a), Some(b)) => Some(
                    a.iter()
                        .zip(b)
                        .map(|(a, b)| TopList::merge(a, b, BLOCK_TOP))
                        .collect(),
                ),
                _ => None,
            },
        }
    }
}

/// Each day's revision (summed over its parts) in `from..=to`, and the newest day with any
/// traffic at all.
pub(super) async fn revisions(
    db: &impl ConnectionTrait,
    from: i32,
    to: i32,
) -> Result<(HashMap<i32, i64>, Option<i32>), TrafficError> {
    let mut b = Binder::new(db.get_database_backend());
    let sql = format!(
        "SELECT day, CAST(SUM(revision) AS BIGINT) AS r FROM traffic_daily_sets \
         WHERE day >= {} AND day <= {} GROUP BY day",
        b.bind(from),
        b.bind(to)
    );
    let mut days = HashMap::new();
    for row in db.query_all_raw(b.statement(sql)).await? {
        days.insert(row.try_get("", "day")?, row.try_get("", "r")?);
    }
    Ok((days, newest_day(db).await?))
}

/// The newest day with any traffic.
pub(super) async fn newest_day(db: &impl ConnectionTrait) -> Result<Option<i32>, TrafficError> {
    let sql = "SELECT MAX(day) AS d FROM traffic_daily_sets".to_string();
    match db
        .query_one_raw(Binder::new(db.get_database_backend()).statement(sql))
        .await?
    {
        Some(row) => Ok(row.try_get::<Option<i32>>("", "d")?),
        None => Ok(None),
    }
}

/// The segments of `from..=to` for `view`, every block among them stored and current
/// (built or rebuilt here when it is not).
pub async fn plan(
    db: &impl ConnectionTrait,
    lens: &Lens<'_>,
    from: i32,
    to: i32,
) -> Result<Vec<Segment>, TrafficError> {
    let (revisions, newest) = revisions(db, from, to).await?;
    // The newest day and the one before it are still being written to.
    let segments = segments(from, to, newest.map(|d| d - 2));
    let expected = |first, days| revision_sum(&revisions, first, days);
    let mut stored = stored_revisions(db, lens, from, to).await?;
    let mut planned = Vec::with_capacity(segments.len());
    for segment in segments {
        let Segment::Block { first, days } = segment else {
            planned.push(segment);
            continue;
        };
        if stored.get(&(first, days)) == Some(&expected(first, days)) {
            planned.push(segment);
            continue;
        }
        match build(db, lens, first, days, &expected, &mut stored).await {
            Ok(()) => planned.push(segment),
            // Storing a block can wait for a long write (SQLite's single writer) and give up:
            // the figures are still right, read day by day this time.
            Err(error) => {
                tracing::warn!(%error, lens = %lens.label(), first, days, "traffic block not built; reading its days");
                planned.extend((first..first + days).map(Segment::Day));
            }
        }
    }
    Ok(planned)
}

/// What a current block of `days` days from `first` has stored as its revision.
pub(super) fn revision_sum(revisions: &HashMap<i32, i64>, first: i32, days: i32) -> i64 {
    (first..first + days)
        .map(|d| revisions.get(&d).copied().unwrap_or(0))
        .sum()
}

async fn stored_revisions(
    db: &impl ConnectionTrait,
    lens: &Lens<'_>,
    from: i32,
    to: i32,
) -> Result<HashMap<(i32, i32), i64>, TrafficError> {
    let mut b = Binder::new(db.get_database_backend());
    // A people's block without lists was stored by a build from before they were kept.
    let with_facts = if lens.keeps_facts() {
        " AND facts IS NOT NULL"
    } else {
        ""
    };
    let sql = format!(
        "SELECT first_day, days, revision FROM traffic_blocks \
         WHERE site = {} AND view = {} AND first_day >= {} AND first_day <= {}{with_facts}",
        b.bind(lens.site_key()),
        b.bind(lens.view.code()),
        b.bind(from),
        b.bind(to)
    );
    by_block(db.query_all_raw(b.statement(sql)).await?, "revision")
}

/// `first_day` and `days` are one of `blocks`', binding their values (a row's key is one
/// block).
pub(super) fn any_block(b: &mut Binder, blocks: &[(i32, i32)]) -> String {
    let each: Vec<String> = blocks
        .iter()
        .map(|(first, days)| {
            format!(
                "(first_day = {} AND days = {})",
                b.bind(*first),
                b.bind(*days)
            )
        })
        .collect();
    each.join(" OR ")
}

/// `column` of rows with `first_day` and `days`, by block.
pub(super) fn by_block<T: sea_orm::TryGetable>(
    rows: Vec<sea_orm::QueryResult>,
    column: &str,
) -> Result<HashMap<(i32, i32), T>, TrafficError> {
    rows.iter()
        .map(|row| {
            Ok((
                (row.try_get("", "first_day")?, row.try_get("", "days")?),
                row.try_get("", column)?,
            ))
        })
        .collect()
}

/// Builds the block `first` + `days` from its two halves, bottom up: halves that are stored
/// and current are read, the others built (and stored) first.
async fn build(
    db: &impl ConnectionTrait,
    lens: &Lens<'_>,
    first: i32,
    days: i32,
    expected: &impl Fn(i32, i32) -> i64,
    stored: &mut HashMap<(i32, i32), i64>,
) -> Result<(), TrafficError> {
    let mut built: HashMap<(i32, i32), Span> = HashMap::new();
    let mut size = 2;
    while size <= days {
        for start in (first..first + days).step_by(size as usize) {
            let revision = expected(start, size);
            if stored.get(&(start, size)) == Some(&revision) {
                continue;
            }
            let half = size / 2;
            let mut halves = Vec::with_capacity(2);
            for child in [start, start + half] {
                let span = match built.remove(&(child, half)) {
                    Some(span) => span,
                    None if half == 1 => day_span(db, lens, child).await?,
                    None => read_block(db, lens, child, half).await?,
                };
                halves.push(span);
            }
            let span = Span::merge(&halves[0], &halves[1]);
            store_block(db, lens, start, size, revision, &span).await?;
            stored.insert((start, size), revision);
            built.insert((start, size), span);
        }
        size *= 2;
    }
    Ok(())
}

/// One day of a view, from the daily rollups.
async fn day_span(
    db: &impl ConnectionTrait,
    lens: &Lens<'_>,
    day: i32,
) -> Result<Span, TrafficError> {
    let mut span = Span::default();
    let mut b = Binder::new(db.get_database_backend());
    let sql = format!(
        "SELECT visits, ips, paths FROM traffic_daily_sets WHERE day = {}{}",
        b.bind(day),
        lens.sets_condition(&mut b)
    );
    for row in db.query_all_raw(b.statement(sql)).await? {
        span.visits += row.try_get::<i64>("", "visits")?;
        span.ips |= deserialize(&row.try_get::<Vec<u8>>("", "ips")?)?;
        span.paths |= deserialize(&row.try_get::<Vec<u8>>("", "paths")?)?;
    }
    span.top = day_top(db, lens, day, BLOCK_TOP).await?;
    if lens.keeps_facts() {
        let mut facts = Vec::with_capacity(FactKind::ALL.len());
        for kind in FactKind::ALL {
            facts.push(day_facts(db, lens.site, kind, day, BLOCK_TOP).await?);
        }
        span.facts = Some(facts);
    }
    Ok(span)
}

/// A day's values of a kind with the most views by people, and the bound for the rest.
///
/// It reads the day's `k` largest rows through `idx_traffic_daily_facts_day` (kind, day, views,
/// …) instead of summing the whole day per value: a day holds tens of thousands of landing
/// pages, and only its head matters. A row is one site's views of a value, so over all sites a
/// value's total is its listed rows plus at most the `k`-th row's views for each site not
/// listed, and a value with no row listed has at most that much per site: the list holds
/// upper bounds, as [`TopList`] allows, and is exact for one site (or a day that fits).
pub async fn day_facts(
    db: &impl ConnectionTrait,
    site: Option<&str>,
    kind: FactKind,
    day: i32,
    k: usize,
) -> Result<TopList, TrafficError> {
    let mut b = Binder::new(db.get_database_backend());
    let sql = format!(
        "SELECT value, views FROM traffic_daily_facts WHERE kind = {} AND day = {}{} \
         ORDER BY views DESC, value DESC LIMIT {k}",
        b.bind(kind.code()),
        b.bind(day),
        site_condition(site, &mut b)
    );
    let rows = db
        .query_all_raw(b.statement(sql))
        .await?
        .iter()
        .map(|row| Ok((row.try_get("", "value")?, row.try_get("", "views")?)))
        .collect::<Result<Vec<(String, i64)>, sea_orm::DbErr>>()?;
    let last = match rows.last() {
        Some((_, last)) if rows.len() == k => *last,
        // Every row of the day is listed: the sums are exact.
        _ => 0,
    };
    let sites = match (site, last) {
        (_, 0) | (Some(_), _) => 1,
        (None, _) => day_sites(db, day).await?,
    };
    let mut per_value: HashMap<String, (i64, i64)> = HashMap::new();
    for (value, views) in rows {
        let entry = per_value.entry(value).or_default();
        entry.0 += views;
        entry.1 += 1;
    }
    let mut paths: Vec<(String, i64)> = per_value
        .into_iter()
        .map(|(value, (views, listed))| (value, views + (sites - listed).max(0) * last))
        .collect();
    sort_top(&mut paths);
    Ok(TopList {
        paths,
        bound: sites * last,
    })
}

/// How many sites have any traffic on `day`: a flush writes a site's `traffic_daily_sets` row
/// for every day it writes the site's facts, so no more sites than this have facts that day.
async fn day_sites(db: &impl ConnectionTrait, day: i32) -> Result<i64, TrafficError> {
    let mut b = Binder::new(db.get_database_backend());
    let sql = format!(
        "SELECT CAST(COUNT(DISTINCT site) AS BIGINT) AS n FROM traffic_daily_sets WHERE day = {}",
        b.bind(day)
    );
    let row = db.query_one_raw(b.statement(sql)).await?;
    Ok(match row {
        Some(row) => row.try_get::<i64>("", "n")?.max(1),
        None => 1,
    })
}

/// A list of at most `k` entries, most first, with its bound: when it is full, anything left
/// out has at most the last entry's views.
fn bounded(paths: Vec<(String, i64)>, k: usize) -> TopList {
    let bound = match paths.last() {
        Some((_, last)) if paths.len() == k => *last,
        _ => 0,
    };
    TopList { paths, bound }
}

/// A day's `k` most viewed paths of a view, exactly, and the bound for the rest (the `k`-th
/// value when there are more).
pub async fn day_top(
    db: &impl ConnectionTrait,
    lens: &Lens<'_>,
    day: i32,
    k: usize,
) -> Result<TopList, TrafficError> {
    let mut b = Binder::new(db.get_database_backend());
    let sql = format!(
        "SELECT path, views FROM traffic_daily_pages WHERE view = {} AND day = {}{} \
         ORDER BY views DESC LIMIT {k}",
        b.bind(lens.view.code()),
        b.bind(day),
        site_condition(lens.site, &mut b)
    );
    let paths = db
        .query_all_raw(b.statement(sql))
        .await?
        .iter()
        .map(|row| Ok((row.try_get("", "path")?, row.try_get("", "views")?)))
        .collect::<Result<Vec<(String, i64)>, sea_orm::DbErr>>()?;
    Ok(bounded(paths, k))
}

async fn read_block(
    db: &impl ConnectionTrait,
    lens: &Lens<'_>,
    first: i32,
    days: i32,
) -> Result<Span, TrafficError> {
    let row = stored_block(
        db,
        "visits, top, top_bound, facts, ips, paths",
        lens,
        first,
        days,
    )
    .await?;
    Ok(Span {
        visits: row.try_get("", "visits")?,
        ips: deserialize(&row.try_get::<Vec<u8>>("", "ips")?)?,
        paths: deserialize(&row.try_get::<Vec<u8>>("", "paths")?)?,
        top: TopList {
            paths: decode_top(&row.try_get::<String>("", "top")?)?,
            bound: row.try_get("", "top_bound")?,
        },
        facts: row
            .try_get::<Option<String>>("", "facts")?
            .map(|json| decode_facts(&json))
            .transpose()?,
    })
}

/// `columns` of a stored block; [`plan`] has made sure it exists.
async fn stored_block(
    db: &impl ConnectionTrait,
    columns: &str,
    lens: &Lens<'_>,
    first: i32,
    days: i32,
) -> Result<sea_orm::QueryResult, TrafficError> {
    let mut b = Binder::new(db.get_database_backend());
    let sql = format!(
        "SELECT {columns} FROM traffic_blocks \
         WHERE site = {} AND view = {} AND first_day = {} AND days = {}",
        b.bind(lens.site_key()),
        b.bind(lens.view.code()),
        b.bind(first),
        b.bind(days)
    );
    Ok(db.query_one_raw(b.statement(sql)).await?.ok_or_else(|| {
        sea_orm::DbErr::RecordNotFound(format!("traffic block {} {first}+{days}", lens.label()))
    })?)
}

fn decode_top(json: &str) -> Result<Vec<(String, i64)>, TrafficError> {
    serde_json::from_str(json).map_err(TrafficError::CorruptList)
}

/// People's lists as stored: `[[[value, views], …], bound]` per kind.
type StoredFacts = Vec<(Vec<(String, i64)>, i64)>;

fn decode_facts(json: &str) -> Result<Vec<TopList>, TrafficError> {
    let stored: StoredFacts = serde_json::from_str(json).map_err(TrafficError::CorruptList)?;
    if stored.len() != FactKind::ALL.len() {
        return Err(TrafficError::FactLists(stored.len()));
    }
    Ok(stored
        .into_iter()
        .map(|(paths, bound)| TopList { paths, bound })
        .collect())
}

fn encode_facts(facts: &[TopList]) -> Result<String, TrafficError> {
    let stored: StoredFacts = facts
        .iter()
        .map(|list| (list.paths.clone(), list.bound))
        .collect();
    serde_json::to_string(&stored).map_err(TrafficError::EncodeList)
}

async fn store_block(
    db: &impl ConnectionTrait,
    lens: &Lens<'_>,
    first: i32,
    days: i32,
    revision: i64,
    span: &Span,
) -> Result<(), TrafficError> {
    let top = serde_json::to_string(&span.top.paths).map_err(TrafficError::EncodeList)?;
    let facts = span.facts.as_deref().map(encode_facts).transpose()?;
    let mut b = Binder::new(db.get_database_backend());
    let sql = format!(
        "INSERT INTO traffic_blocks \
           (site, view, first_day, days, revision, visits, ips, paths, top, top_bound, facts) \
         VALUES ({}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}) \
         ON CONFLICT (site, view, first_day, days) DO UPDATE SET revision = excluded.revision, \
           visits = excluded.visits, ips = excluded.ips, paths = excluded.paths, \
           top = excluded.top, top_bound = excluded.top_bound, facts = excluded.facts",
        b.bind(lens.site_key()),
        b.bind(lens.view.code()),
        b.bind(first),
        b.bind(days),
        b.bind(revision),
        b.bind(span.visits),
        b.bind(serialize(&span.ips)?),
        b.bind(serialize(&span.paths)?),
        b.bind(top),
        b.bind(span.top.bound),
        b.bind(facts)
    );
    db.execute_raw(b.statement(sql)).await?;
    Ok(())
}

/// Visits, unique IPs and unique paths over the segments (as [`plan`] returned them).
///
/// The days' and blocks' rows are read in two statements; their bitmaps are decoded and
/// joined off the async threads, IPs and paths side by side, since that is most of the work
/// over a long range.
pub async fn distinct(
    db: &impl ConnectionTrait,
    lens: &Lens<'_>,
    segments: &[Segment],
) -> Result<(i64, i64, i64), TrafficError> {
    let backend = db.get_database_backend();
    let days: Vec<i32> = segments
        .iter()
        .filter_map(|s| match s {
            Segment::Day(d) => Some(*d),
            Segment::Block { .. } => None,
        })
        .collect();
    let mut rows = Vec::new();
    if !days.is_empty() {
        let mut b = Binder::new(backend);
        let list: Vec<String> = days.iter().map(|d| b.bind(*d)).collect();
        let sql = format!(
            "SELECT visits, ips, paths FROM traffic_daily_sets WHERE day IN ({}){}",
            list.join(", "),
            lens.sets_condition(&mut b)
        );
        rows.extend(db.query_all_raw(b.statement(sql)).await?);
    }
    rows.extend(stored_blocks(db, "visits, ips, paths", lens, segments).await?);
    // A visitor (IP and user agent) is in one part only, so a day's visits add up.
    let mut visits = 0;
    let (mut ips, mut paths) = (Vec::new(), Vec::new());
    for row in rows {
        visits += row.try_get::<i64>("", "visits")?;
        ips.push(row.try_get::<Vec<u8>>("", "ips")?);
        paths.push(row.try_get::<Vec<u8>>("", "paths")?);
    }
    let (ips, paths) = tokio::try_join!(union_len(ips), union_len(paths))?;
    Ok((visits, ips, paths))
}

/// How many members the union of serialized bitmaps has, computed on a blocking thread.
async fn union_len(sets: Vec<Vec<u8>>) -> Result<i64, TrafficError> {
    tokio::task::spawn_blocking(move || {
        let mut union = RoaringTreemap::new();
        for bytes in &sets {
            union |= deserialize(bytes)?;
        }
        Ok(union.len() as i64)
    })
    .await?
}

/// `columns` of the segments' blocks, in the segments' order; [`plan`] has made sure each
/// exists.
async fn stored_blocks(
    db: &impl ConnectionTrait,
    columns: &str,
    lens: &Lens<'_>,
    segments: &[Segment],
) -> Result<Vec<sea_orm::QueryResult>, TrafficError> {
    let wanted: Vec<(i32, i32)> = blocks_of(segments).collect();
    if wanted.is_empty() {
        return Ok(Vec::new());
    }
    let mut b = Binder::new(db.get_database_backend());
    let (site, view) = (b.bind(lens.site_key()), b.bind(lens.view.code()));
    let sql = format!(
        "SELECT first_day, days, {columns} FROM traffic_blocks \
         WHERE site = {site} AND view = {view} AND ({})",
        any_block(&mut b, &wanted)
    );
    let mut found: HashMap<(i32, i32), sea_orm::QueryResult> = HashMap::new();
    for row in db.query_all_raw(b.statement(sql)).await? {
        found.insert(
            (row.try_get("", "first_day")?, row.try_get("", "days")?),
            row,
        );
    }
    wanted
        .into_iter()
        .map(|(first, days)| {
            found.remove(&(first, days)).ok_or_else(|| {
                sea_orm::DbErr::RecordNotFound(format!(
                    "traffic block {} {first}+{days}",
                    lens.label()
                ))
                .into()
            })
        })
        .collect()
}

/// The stored lists of the segments' blocks.
pub async fn block_tops(
    db: &impl ConnectionTrait,
    lens: &Lens<'_>,
    segments: &[Segment],
) -> Result<Vec<TopList>, TrafficError> {
    stored_blocks(db, "top, top_bound", lens, segments)
        .await?
        .iter()
        .map(|row| {
            Ok(TopList {
                paths: decode_top(&row.try_get::<String>("", "top")?)?,
                bound: row.try_get("", "top_bound")?,
            })
        })
        .collect()
}

/// The stored people's lists of the segments' blocks (of the people's view), each with one
/// list per [`FactKind::ALL`].
pub async fn block_facts(
    db: &impl ConnectionTrait,
    lens: &Lens<'_>,
    segments: &[Segment],
) -> Result<Vec<Vec<TopList>>, TrafficError> {
    stored_blocks(db, "facts", lens, segments)
        .await?
        .iter()
        .map(|row| {
            let json: Option<String> = row.try_get("", "facts")?;
            // [`plan`] only keeps people's blocks that have their lists.
            decode_facts(json.as_deref().unwrap_or("[]"))
        })
        .collect()
}

fn blocks_of(segments: &[Segment]) -> impl Iterator<Item = (i32, i32)> + '_ {
    segments.iter().filter_map(|s| match s {
        Segment::Block { first, days } => Some((*first, *days)),
        Segment::Day(_) => None,
    })
}

/// Builds every block the ranges ending at the newest day can use, for every view with
/// traffic in the last `days` days, of all sites and of each site, so the first look at a long
/// range is as fast as the next (`super::tails::warm` does the same for the tails). Returns
/// the blocks built.
pub async fn warm(db: &impl ConnectionTrait, days: i32) -> Result<usize, TrafficError> {
    let backend = db.get_database_backend();
    let Some(newest) = newest_day(db).await? else {
        return Ok(0);
    };
    let from = newest - days + 1;
    let mut b = Binder::new(backend);
    let sql = format!(
        "SELECT DISTINCT site, part FROM traffic_daily_sets WHERE day >= {}",
        b.bind(from)
    );
    let base = [View::All, View::Human, View::Bots];
    let mut lenses: BTreeMap<Option<String>, Vec<View>> = BTreeMap::new();
    lenses.insert(None, base.to_vec());
    for row in db.query_all_raw(b.statement(sql)).await? {
        let site: String = row.try_get("", "site")?;
        let code: String = row.try_get("", "part")?;
        let part = Part::parse(&code).ok_or(TrafficError::UnknownPart(code))?;
        for key in [None, Some(site)] {
            let views = lenses.entry(key).or_insert_with(|| base.to_vec());
            for view in View::containing(&part) {
                if !views.contains(&view) {
                    views.push(view);
                }
            }
        }
    }
    let mut built = 0;
    for (site, views) in &lenses {
        for view in views {
            let lens = Lens {
                view,
                site: site.as_deref(),
            };
            let before = stored_revisions(db, &lens, from, newest).await?;
            // Every block inside the window: a range starting anywhere in it uses only these.
            plan_all(db, &lens, from, newest).await?;
            let after = stored_revisions(db, &lens, from, newest).await?;
            built += after
                .iter()
                .filter(|(key, rev)| before.get(key) != Some(rev))
                .count();
        }
    }
    Ok(built)
}

/// Like [`plan`] for every aligned block inside `from..=to`, not only the fewest.
async fn plan_all(
    db: &impl ConnectionTrait,
    lens: &Lens<'_>,
    from: i32,
    to: i32,
) -> Result<(), TrafficError> {
    let (revisions, newest) = revisions(db, from, to).await?;
    let Some(settled) = newest.map(|d| d - 2) else {
        return Ok(());
    };
    let expected = |first, days| revision_sum(&revisions, first, days);
    let mut stored = stored_revisions(db, lens, from, to).await?;
    for (start, size) in aligned(from, settled.min(to)) {
        if stored.get(&(start, size)) != Some(&expected(start, size)) {
            build(db, lens, start, size, &expected, &mut stored).await?;
        }
    }
    Ok(())
}

/// Every aligned block (of 2 days and more) inside `from..=last`, largest first: building a
/// big block builds (and stores) the smaller ones inside it.
pub(super) fn aligned(from: i32, last: i32) -> Vec<(i32, i32)> {
    let mut all = Vec::new();
    let mut size = MAX_BLOCK_DAYS;
    while size >= 2 {
        let mut start = from.div_euclid(size) * size;
        if start < from {
            start += size;
        }
        while start + size - 1 <= last {
            all.push((start, size));
            start += size;
        }
        size /= 2;
    }
    all
}

/// ` AND site = …` for one site; nothing for all.
pub(super) fn site_condition(site: Option<&str>, b: &mut Binder) -> String {
    match site {
        Some(site) => format!(" AND site = {}", b.bind(site)),
        None => String::new(),
    }
}

/// ` AND part …` selecting `parts`, binding its value (for `traffic_hourly` and
/// `traffic_daily_sets`, which are kept per part).
pub(super) fn parts_condition(parts: &Parts, b: &mut Binder) -> String {
    match parts {
        Parts::Every => String::new(),
        Parts::Only(part) => format!(" AND part = {}", b.bind(part.code())),
        Parts::AllBut(part) => format!(" AND part <> {}", b.bind(part.code())),
        // `other` holds the unnamed bots and any source this build does not know.
        Parts::Category(BotCategory::Other) => format!(
            " AND part <> {} AND part NOT IN ({})",
            b.bind(Part::Human.code()),
            b.bind_list(bots::named_outside_other().map(|s| Part::Bot(s.to_string()).code()))
        ),
        Parts::Category(category) => format!(
            " AND part IN ({})",
            b.bind_list(bots::sources_in(*category).map(|s| Part::Bot(s.to_string()).code()))
        ),
        Parts::Nothing => " AND 1 = 0".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_split_into_aligned_blocks_of_settled_days() {
        // 90 days ending at the newest: the last two days stay single.
        let segs = segments(100, 189, Some(187));
        let covered: i32 = segs
            .iter()
            .map(|s| match s {
                Segment::Day(_) => 1,
                Segment::Block { days, .. } => *days,
            })
            .sum();
        assert_eq!(covered, 90);
        assert!(segs.len() <= 14, "{segs:?}");
        assert_eq!(segs.last(), Some(&Segment::Day(189)));
        assert!(segs.contains(&Segment::Day(188)));
        for s in &segs {
            if let Segment::Block { first, days } = s {
                assert_eq!(first % days, 0);
                assert!(first + days - 1 <= 187);
            }
        }
        // Nothing settled: every day alone.
        assert_eq!(
            segments(5, 7, None),
            vec![Segment::Day(5), Segment::Day(6), Segment::Day(7)]
        );
        assert_eq!(
            segments(64, 127, Some(500)),
            vec![Segment::Block {
                first: 64,
                days: 64
            }]
        );
    }

    #[test]
    fn merged_lists_bound_every_path_left_out() {
        let a = TopList {
            paths: vec![("/a".into(), 10), ("/b".into(), 6)],
            bound: 5,
        };
        let b = TopList {
            paths: vec![("/b".into(), 9), ("/c".into(), 8)],
            bound: 4,
        };
        let merged = TopList::merge(&a, &b, 2);
        // /a ≤ 10 + 4, /b ≤ 6 + 9, /c ≤ 5 + 8: /c is dropped, so the bound is 13.
        assert_eq!(
            merged.paths,
            vec![("/b".to_string(), 15), ("/a".to_string(), 14)]
        );
        assert_eq!(merged.bound, 13);
        let (head, bound) = merged.head(1);
        assert_eq!(head.len(), 1);
        assert_eq!(bound, 14);
    }
}
