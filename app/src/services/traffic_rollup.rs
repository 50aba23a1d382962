//! Traffic rollups: what keeps the Traffic page fast over 90 days without changing a figure.
//!
//! `traffic_statistics` (one row per minute and key) stays the record; the rollups are derived
//! from it in the same transaction that writes it ([`Delta`] + [`apply`]), and [`rebuild`]
//! recomputes them from it whenever they may be stale (another time zone, generated traffic
//! removed). Days and hours are local to one zone, kept in `settings` under [`ZONE_SETTING`].
//!
//! | figure (DESIGN.md §5)          | read from                                      |
//! |--------------------------------|------------------------------------------------|
//! | page views, people/bots, by source, generated, the charts | `traffic_hourly` (Σ views) |
//! | visits = distinct (day, ip, ua) | `traffic_daily_sets.visits`, summed over days |
//! | unique IPs, unique pages       | union of the days' bitmaps in `traffic_daily_sets` |
//! | top pages                      | `traffic_daily_pages`, see [`top_pages`]        |
//!
//! Rows are split into *parts*: `h` for people and `b:<source>` for each bot source (`other`
//! for unnamed bots). Every filter the page offers is a set of parts, so a filtered figure is
//! the same sum or union over fewer rows. Distinct counts are exact: IPs, visitors and paths
//! get integer ids (`traffic_ids`, keyed by a 64-bit digest of the value) and each day keeps a
//! roaring bitmap of them.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::{DateTime, Datelike, NaiveDate, Timelike, Utc};
use chrono_tz::Tz;
use roaring::RoaringTreemap;
use sea_orm::{
    ConnectionTrait, DatabaseBackend, DatabaseConnection, DbErr, Statement, TransactionTrait, Value,
};
use sha2::{Digest, Sha256};

use super::traffic_blocks as blocks;
use crate::api::traffic::{SeriesPoint, TopPage};
use crate::domain::traffic_range::{self, Bucket, VisitorType};

/// The `settings` key naming the zone the rollups' days and hours are in.
pub const ZONE_SETTING: &str = "traffic.rollup_zone";
/// The part people's hits are counted in.
pub const HUMAN: &str = "h";
/// Rows per multi-row INSERT (at most 4 values each).
const ROWS_PER_STATEMENT: usize = 250;
/// Raw rows read per step of a rebuild.
const REBUILD_CHUNK: u64 = 20_000;

/// The part a hit is counted in.
pub fn part(is_bot: bool, source: Option<&str>) -> String {
    if is_bot {
        format!("b:{}", source.unwrap_or("other"))
    } else {
        HUMAN.to_string()
    }
}

/// Which parts a filter covers, as an SQL condition on the `part` column (with its value), or
/// `None` when it covers them all. People with a bot source cover nothing.
fn part_condition(visitors: VisitorType, source: Option<&str>) -> Option<(&'static str, String)> {
    match (visitors, source) {
        (VisitorType::All, None) => None,
        (VisitorType::Human, None) => Some(("part = ", HUMAN.into())),
        (VisitorType::Bot, None) => Some(("part <> ", HUMAN.into())),
        (VisitorType::Human, Some(_)) => Some(("part = ", String::new())),
        (_, Some(source)) => Some(("part = ", format!("b:{source}"))),
    }
}

/// The top-pages view a filter reads: `all`, `h`, `b` or `b:<source>`; `None` when nothing
/// can match.
fn page_view(visitors: VisitorType, source: Option<&str>) -> Option<String> {
    match (visitors, source) {
        (VisitorType::All, None) => Some("all".into()),
        (VisitorType::Human, None) => Some(HUMAN.into()),
        (VisitorType::Bot, None) => Some("b".into()),
        (VisitorType::Human, Some(_)) => None,
        (_, Some(source)) => Some(format!("b:{source}")),
    }
}

/// A local date as stored: days from the Common Era.
pub fn day_number(day: NaiveDate) -> i32 {
    day.num_days_from_ce()
}

/// The local hour (as the Unix second it starts at) and local day an instant falls in.
/// Subtracting the local minutes and seconds keeps this right for zones whose offset is not a
/// whole number of hours, and across DST changes.
pub fn place(at: DateTime<Utc>, zone: Tz) -> (i64, i32) {
    let local = at.with_timezone(&zone);
    let hour = at.timestamp() - i64::from(local.minute() * 60 + local.second());
    (hour, day_number(local.date_naive()))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum IdKind {
    Ip = 1,
    Visitor = 2,
    Path = 3,
}

/// 64 bits of SHA-256 over length-prefixed fields: two values collide with a probability far
/// below one in a billion at 90 days of traffic.
fn digest(fields: &[&str]) -> i64 {
    let mut hash = Sha256::new();
    for field in fields {
        hash.update((field.len() as u32).to_le_bytes());
        hash.update(field.as_bytes());
    }
    let bytes: [u8; 8] = hash.finalize()[..8].try_into().unwrap_or_default();
    i64::from_le_bytes(bytes)
}

/// One stored row's contribution, as the rollups need it.
pub struct RowFacts<'a> {
    pub minute: DateTime<Utc>,
    pub path: &'a str,
    pub ip: &'a str,
    pub user_agent: &'a str,
    pub is_bot: bool,
    pub source: Option<&'a str>,
    pub count: i64,
    pub generated: bool,
}

#[derive(Default)]
struct DayMembers {
    ips: BTreeSet<i64>,
    visitors: BTreeSet<i64>,
    paths: BTreeSet<i64>,
}

/// What a batch of rows adds to the rollups.
#[derive(Default)]
pub struct Delta {
    hourly: BTreeMap<(i64, String, bool), i64>,
    pages: BTreeMap<(i32, String, String), i64>,
    /// Digests per (day, part).
    sets: BTreeMap<(i32, String), DayMembers>,
    /// Each digest's last day in this batch.
    last_day: HashMap<(IdKind, i64), i32>,
}

impl Delta {
    pub fn add(&mut self, row: &RowFacts<'_>, zone: Tz) {
        let (hour, day) = place(row.minute, zone);
        let part = part(row.is_bot, row.source);
        *self
            .hourly
            .entry((hour, part.clone(), row.generated))
            .or_default() += row.count;
        let views: &[&str] = if row.is_bot {
            &["all", "b", &part]
        } else {
            &["all", HUMAN]
        };
        for view in views {
            *self
                .pages
                .entry((day, view.to_string(), row.path.to_string()))
                .or_default() += row.count;
        }
        let ip = digest(&[row.ip]);
        let visitor = digest(&[row.ip, row.user_agent]);
        let path = digest(&[row.path]);
        let members = self.sets.entry((day, part)).or_default();
        members.ips.insert(ip);
        members.visitors.insert(visitor);
        members.paths.insert(path);
        for key in [
            (IdKind::Ip, ip),
            (IdKind::Visitor, visitor),
            (IdKind::Path, path),
        ] {
            let last = self.last_day.entry(key).or_insert(day);
            *last = (*last).max(day);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.hourly.is_empty()
    }
}

/// Placeholders `$n` or `?` for a statement being built, with their values in order.
pub(crate) struct Binder {
    backend: DatabaseBackend,
    values: Vec<Value>,
}

impl Binder {
    pub(crate) fn new(backend: DatabaseBackend) -> Binder {
        Binder {
            backend,
            values: Vec::new(),
        }
    }

    pub(crate) fn bind(&mut self, value: impl Into<Value>) -> String {
        self.values.push(value.into());
        match self.backend {
            DatabaseBackend::Postgres => format!("${}", self.values.len()),
            _ => "?".to_string(),
        }
    }

    pub(crate) fn statement(self, sql: String) -> Statement {
        Statement::from_sql_and_values(self.backend, sql, self.values)
    }

    /// The statement, keeping the values for another one over the same placeholders.
    pub(crate) fn statement_cloned(&self, sql: String) -> Statement {
        Statement::from_sql_and_values(self.backend, sql, self.values.clone())
    }
}

/// Adds `delta` to the rollups, inside the caller's transaction (the one writing the rows it
/// came from, so the record and the rollups never disagree).
pub async fn apply(txn: &impl ConnectionTrait, delta: &Delta) -> Result<(), DbErr> {
    if delta.is_empty() {
        return Ok(());
    }
    let backend = txn.get_database_backend();
    // First, so a rebuild holding this table waits for us and we wait for it (see `rebuild`).
    let hourly: Vec<_> = delta.hourly.iter().collect();
    for chunk in hourly.chunks(ROWS_PER_STATEMENT) {
        let mut b = Binder::new(backend);
        let rows: Vec<String> = chunk
            .iter()
            .map(|((hour, part, generated), views)| {
                format!(
                    "({}, {}, {}, {})",
                    b.bind(*hour),
                    b.bind(part.clone()),
                    b.bind(*generated),
                    b.bind(*views)
                )
            })
            .collect();
        txn.execute_raw(b.statement(format!(
            "INSERT INTO traffic_hourly (hour, part, generated, views) VALUES {} \
             ON CONFLICT (hour, part, generated) DO UPDATE SET views = traffic_hourly.views + excluded.views",
            rows.join(", ")
        )))
        .await?;
    }

    let pages: Vec<_> = delta.pages.iter().collect();
    for chunk in pages.chunks(ROWS_PER_STATEMENT) {
        let mut b = Binder::new(backend);
        let rows: Vec<String> = chunk
            .iter()
            .map(|((day, view, path), views)| {
                format!(
                    "({}, {}, {}, {})",
                    b.bind(*day),
                    b.bind(view.clone()),
                    b.bind(path.clone()),
                    b.bind(*views)
                )
            })
            .collect();
        txn.execute_raw(b.statement(format!(
            "INSERT INTO traffic_daily_pages (day, view, path, views) VALUES {} \
             ON CONFLICT (day, view, path) DO UPDATE SET views = traffic_daily_pages.views + excluded.views",
            rows.join(", ")
        )))
        .await?;
    }

    let ids = assign_ids(txn, &delta.last_day).await?;
    let id = |kind: IdKind, digest: &i64| -> Result<u64, DbErr> {
        ids.get(&(kind, *digest))
            .copied()
            .ok_or_else(|| DbErr::Custom(format!("no traffic id for {kind:?} {digest}")))
    };
    let lock = if backend == DatabaseBackend::Postgres {
        " FOR UPDATE"
    } else {
        ""
    };
    let empty = serialize(&RoaringTreemap::new())?;
    for ((day, part), members) in &delta.sets {
        let mut b = Binder::new(backend);
        let sql = format!(
            "INSERT INTO traffic_daily_sets (day, part, visits, ips, visitors, paths) \
             VALUES ({}, {}, 0, {}, {}, {}) ON CONFLICT (day, part) DO NOTHING",
            b.bind(*day),
            b.bind(part.clone()),
            b.bind(empty.clone()),
            b.bind(empty.clone()),
            b.bind(empty.clone())
        );
        txn.execute_raw(b.statement(sql)).await?;
        let mut b = Binder::new(backend);
        let sql = format!(
            "SELECT ips, visitors, paths FROM traffic_daily_sets WHERE day = {} AND part = {}{lock}",
            b.bind(*day),
            b.bind(part.clone())
        );
        let row = txn
            .query_one_raw(b.statement(sql))
            .await?
            .ok_or_else(|| DbErr::RecordNotFound(format!("traffic_daily_sets {day} {part}")))?;
        let mut ips = deserialize(&row.try_get::<Vec<u8>>("", "ips")?)?;
        let mut visitors = deserialize(&row.try_get::<Vec<u8>>("", "visitors")?)?;
        let mut paths = deserialize(&row.try_get::<Vec<u8>>("", "paths")?)?;
        for d in &members.ips {
            ips.insert(id(IdKind::Ip, d)?);
        }
        for d in &members.visitors {
            visitors.insert(id(IdKind::Visitor, d)?);
        }
        for d in &members.paths {
            paths.insert(id(IdKind::Path, d)?);
        }
        let mut b = Binder::new(backend);
        let sql = format!(
            "UPDATE traffic_daily_sets SET visits = {}, ips = {}, visitors = {}, paths = {}, \
             revision = revision + 1 WHERE day = {} AND part = {}",
            b.bind(visitors.len() as i64),
            b.bind(serialize(&ips)?),
            b.bind(serialize(&visitors)?),
            b.bind(serialize(&paths)?),
            b.bind(*day),
            b.bind(part.clone())
        );
        txn.execute_raw(b.statement(sql)).await?;
    }
    Ok(())
}

/// The ids of every digest in the batch, creating those not seen before and moving each one's
/// last day forward.
async fn assign_ids(
    txn: &impl ConnectionTrait,
    last_day: &HashMap<(IdKind, i64), i32>,
) -> Result<HashMap<(IdKind, i64), u64>, DbErr> {
    let backend = txn.get_database_backend();
    let mut keys: Vec<_> = last_day.iter().collect();
    // A fixed order, so two writers lock index entries in the same order.
    keys.sort_unstable();
    let mut ids = HashMap::with_capacity(keys.len());
    for chunk in keys.chunks(ROWS_PER_STATEMENT) {
        let mut b = Binder::new(backend);
        let rows: Vec<String> = chunk
            .iter()
            .map(|((kind, digest), day)| {
                format!(
                    "({}, {}, {})",
                    b.bind(*kind as i16),
                    b.bind(*digest),
                    b.bind(**day)
                )
            })
            .collect();
        let sql = format!(
            "INSERT INTO traffic_ids (kind, digest, last_day) VALUES {} \
             ON CONFLICT (kind, digest) DO UPDATE SET last_day = \
               CASE WHEN excluded.last_day > traffic_ids.last_day \
                    THEN excluded.last_day ELSE traffic_ids.last_day END \
             RETURNING id, kind, digest",
            rows.join(", ")
        );
        for row in txn.query_all_raw(b.statement(sql)).await? {
            let kind = match row.try_get::<i16>("", "kind")? {
                1 => IdKind::Ip,
                2 => IdKind::Visitor,
                _ => IdKind::Path,
            };
            let id: i64 = row.try_get("", "id")?;
            ids.insert(
                (kind, row.try_get::<i64>("", "digest")?),
                u64::try_from(id).unwrap_or_default(),
            );
        }
    }
    Ok(ids)
}

pub(crate) fn serialize(set: &RoaringTreemap) -> Result<Vec<u8>, DbErr> {
    let mut bytes = Vec::with_capacity(set.serialized_size());
    set.serialize_into(&mut bytes)
        .map_err(|e| DbErr::Custom(format!("could not encode a traffic set: {e}")))?;
    Ok(bytes)
}

pub(crate) fn deserialize(bytes: &[u8]) -> Result<RoaringTreemap, DbErr> {
    RoaringTreemap::deserialize_from(bytes)
        .map_err(|e| DbErr::Custom(format!("a stored traffic set is unreadable: {e}")))
}

/// The filter a figure is computed over: whole local days `from..=to`.
pub struct Scope<'a> {
    pub from: NaiveDate,
    pub to: NaiveDate,
    pub zone: Tz,
    pub visitors: VisitorType,
    pub source: Option<&'a str>,
}

impl Scope<'_> {
    fn start(&self) -> i64 {
        traffic_range::midnight(self.from, self.zone).timestamp()
    }

    fn end(&self) -> i64 {
        self.to.succ_opt().map_or(i64::MAX, |d| {
            traffic_range::midnight(d, self.zone).timestamp()
        })
    }

    /// ` AND part …` for the filter, binding its value.
    fn parts(&self, b: &mut Binder) -> String {
        match part_condition(self.visitors, self.source) {
            None => String::new(),
            Some((op, value)) => format!(" AND {op}{}", b.bind(value)),
        }
    }
}

/// Σ views over the scope, per part and generated flag.
pub async fn views_by_part(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
) -> Result<Vec<(String, bool, i64)>, DbErr> {
    let mut b = Binder::new(db.get_database_backend());
    let sql = format!(
        "SELECT part, generated, CAST(SUM(views) AS BIGINT) AS n FROM traffic_hourly \
         WHERE hour >= {} AND hour < {}{} GROUP BY part, generated",
        b.bind(scope.start()),
        b.bind(scope.end()),
        scope.parts(&mut b)
    );
    db.query_all_raw(b.statement(sql))
        .await?
        .iter()
        .map(|row| {
            Ok((
                row.try_get("", "part")?,
                row.try_get("", "generated")?,
                row.try_get("", "n")?,
            ))
        })
        .collect()
}

/// Visits, unique IPs and unique pages over the scope.
pub async fn distinct_counts(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
) -> Result<(i64, i64, i64), DbErr> {
    let Some(view) = page_view(scope.visitors, scope.source) else {
        return Ok((0, 0, 0));
    };
    let (from, to) = (day_number(scope.from), day_number(scope.to));
    let segments = blocks::plan(db, &view, from, to).await?;
    let (visits, ips, paths) = blocks::distinct(db, &view, &segments).await?;
    Ok((visits, ips.len() as i64, paths.len() as i64))
}

/// The `limit` paths with the most views over the scope (ties by path), exactly.
///
/// Summing every path of 90 days is too slow, so this takes candidates from short lists: each
/// block's stored list and each single day's `k` most viewed paths ([`blocks::plan`] splits
/// the range). A path in no list has at most the list's bound in each segment, so at most their
/// sum `bound` over the range. The candidates' exact totals come from the daily rows; when the
/// last of the top totals is above `bound`, no other path can reach the list. Otherwise `k`
/// grows (past the blocks' lists, every day is listed on its own), and past [`TOP_K_LIMIT`]
/// the full sum is taken.
pub async fn top_pages(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
    limit: usize,
) -> Result<Vec<TopPage>, DbErr> {
    let Some(view) = page_view(scope.visitors, scope.source) else {
        return Ok(Vec::new());
    };
    let (from, to) = (day_number(scope.from), day_number(scope.to));
    let segments = blocks::plan(db, &view, from, to).await?;
    let mut block_tops = blocks::block_tops(db, &view, &segments).await?;
    let mut days: Vec<i32> = segments
        .iter()
        .filter_map(|s| match s {
            blocks::Segment::Day(d) => Some(*d),
            blocks::Segment::Block { .. } => None,
        })
        .collect();
    let mut k = 4 * limit;
    let mut ranked = loop {
        if k > TOP_K_LIMIT {
            break full_totals(db, scope, &view).await?;
        }
        if k > blocks::BLOCK_TOP && !block_tops.is_empty() {
            block_tops.clear();
            days = (from..=to).collect();
        }
        let mut candidates = BTreeSet::new();
        let mut bound = 0i64;
        for top in &block_tops {
            let (head, rest) = top.head(k);
            bound += rest;
            candidates.extend(head.iter().map(|(path, _)| path.clone()));
        }
        for day in &days {
            let top = blocks::day_top(db, &view, *day, k).await?;
            bound += top.bound;
            candidates.extend(top.paths.into_iter().map(|(path, _)| path));
        }
        let mut totals = path_totals(db, scope, &view, &candidates).await?;
        blocks::sort_top(&mut totals);
        let settled = match totals.get(limit.saturating_sub(1)) {
            Some((_, last)) => *last > bound,
            None => bound == 0,
        };
        if settled {
            break totals;
        }
        k *= 4;
    };
    blocks::sort_top(&mut ranked);
    ranked.truncate(limit);
    // The people/bots split of each listed path.
    let paths: BTreeSet<String> = ranked.iter().map(|(p, _)| p.clone()).collect();
    let human: HashMap<String, i64> = match view.as_str() {
        "all" => path_totals(db, scope, HUMAN, &paths)
            .await?
            .into_iter()
            .collect(),
        _ => HashMap::new(),
    };
    Ok(ranked
        .into_iter()
        .map(|(path, count)| {
            let human = match view.as_str() {
                "all" => human.get(&path).copied().unwrap_or(0),
                HUMAN => count,
                _ => 0,
            };
            TopPage {
                path,
                count,
                human,
                bot: count - human,
            }
        })
        .collect())
}

/// How far [`top_pages`] widens each day's list before summing everything.
pub const TOP_K_LIMIT: usize = 20_000;

async fn path_totals(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
    view: &str,
    paths: &BTreeSet<String>,
) -> Result<Vec<(String, i64)>, DbErr> {
    let paths: Vec<&String> = paths.iter().collect();
    let mut totals = Vec::with_capacity(paths.len());
    for chunk in paths.chunks(500) {
        // `?` placeholders are positional: bind in the order they appear.
        let mut b = Binder::new(db.get_database_backend());
        let (view, from, to) = (
            b.bind(view.to_string()),
            b.bind(day_number(scope.from)),
            b.bind(day_number(scope.to)),
        );
        let list: Vec<String> = chunk.iter().map(|p| b.bind((*p).clone())).collect();
        let sql = format!(
            "SELECT path, CAST(SUM(views) AS BIGINT) AS n FROM traffic_daily_pages \
             WHERE view = {view} AND day >= {from} AND day <= {to} AND path IN ({}) GROUP BY path",
            list.join(", ")
        );
        for row in db.query_all_raw(b.statement(sql)).await? {
            totals.push((row.try_get("", "path")?, row.try_get("", "n")?));
        }
    }
    Ok(totals)
}

async fn full_totals(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
    view: &str,
) -> Result<Vec<(String, i64)>, DbErr> {
    let mut b = Binder::new(db.get_database_backend());
    let sql = format!(
        "SELECT path, CAST(SUM(views) AS BIGINT) AS n FROM traffic_daily_pages \
         WHERE view = {} AND day >= {} AND day <= {} GROUP BY path",
        b.bind(view.to_string()),
        b.bind(day_number(scope.from)),
        b.bind(day_number(scope.to))
    );
    db.query_all_raw(b.statement(sql))
        .await?
        .iter()
        .map(|row| Ok((row.try_get("", "path")?, row.try_get("", "n")?)))
        .collect()
}

/// Page views per local hour or per local day of the scope, people and bots apart; every bucket
/// is present, empty ones with zeros.
pub async fn series(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
    bucket: Bucket,
) -> Result<Vec<SeriesPoint>, DbErr> {
    // One row per hour (not per hour and part): 90 days are 2,160 rows, not 30,000.
    // `?` placeholders are positional: bind in the order they appear.
    let mut b = Binder::new(db.get_database_backend());
    let sql = format!(
        "SELECT hour, \
           CAST(SUM(CASE WHEN part = {} THEN views ELSE 0 END) AS BIGINT) AS human, \
           CAST(SUM(CASE WHEN part = {} THEN 0 ELSE views END) AS BIGINT) AS bot \
         FROM traffic_hourly WHERE hour >= {} AND hour < {}{} GROUP BY hour",
        b.bind(HUMAN),
        b.bind(HUMAN),
        b.bind(scope.start()),
        b.bind(scope.end()),
        scope.parts(&mut b)
    );
    let mut hours: BTreeMap<i64, (i64, i64)> = BTreeMap::new();
    for row in db.query_all_raw(b.statement(sql)).await? {
        hours.insert(
            row.try_get("", "hour")?,
            (row.try_get("", "human")?, row.try_get("", "bot")?),
        );
    }
    // Bucket starts: every local hour, or every local midnight, of the scope.
    let starts: Vec<i64> = match bucket {
        Bucket::Hour => (scope.start()..scope.end()).step_by(3600).collect(),
        Bucket::Day => scope
            .from
            .iter_days()
            .take_while(|d| *d <= scope.to)
            .map(|d| traffic_range::midnight(d, scope.zone).timestamp())
            .collect(),
    };
    let mut points: Vec<SeriesPoint> = starts
        .iter()
        .map(|start| SeriesPoint {
            start: DateTime::<Utc>::from_timestamp(*start, 0).unwrap_or_default(),
            human: 0,
            bot: 0,
        })
        .collect();
    for (hour, (human, bot)) in hours {
        let i = starts.partition_point(|start| *start <= hour);
        if let Some(point) = i.checked_sub(1).and_then(|i| points.get_mut(i)) {
            point.human += human;
            point.bot += bot;
        }
    }
    Ok(points)
}

/// The zone the stored rollups are in, if any were ever written.
pub async fn stored_zone(db: &impl ConnectionTrait) -> Result<Option<String>, DbErr> {
    let mut b = Binder::new(db.get_database_backend());
    let sql = format!(
        "SELECT value FROM settings WHERE key = {}",
        b.bind(ZONE_SETTING)
    );
    db.query_one_raw(b.statement(sql))
        .await?
        .map(|row| row.try_get("", "value"))
        .transpose()
}

/// The zone writers place rows in: the stored one, or UTC (recorded) on a database that has
/// none yet; [`ensure`] at startup moves it to the configured zone.
pub async fn zone_for_writes(db: &impl ConnectionTrait) -> Result<Tz, DbErr> {
    if let Some(name) = stored_zone(db).await? {
        return name
            .parse()
            .map_err(|_| DbErr::Custom(format!("stored rollup zone '{name}' is unknown")));
    }
    set_zone(db, "UTC").await?;
    Ok(Tz::UTC)
}

async fn set_zone(db: &impl ConnectionTrait, name: &str) -> Result<(), DbErr> {
    let mut b = Binder::new(db.get_database_backend());
    let sql = format!(
        "INSERT INTO settings (key, value, updated_at) VALUES ({}, {}, {}) \
         ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
        b.bind(ZONE_SETTING),
        b.bind(name),
        b.bind(Utc::now())
    );
    db.execute_raw(b.statement(sql)).await.map(|_| ())
}

/// Makes sure the rollups are in `zone`, rebuilding them when they are not (the first start
/// after an upgrade, or after the configured zone changed). Returns whether it rebuilt.
pub async fn ensure(db: &DatabaseConnection, zone: Tz) -> Result<bool, DbErr> {
    if stored_zone(db).await?.as_deref() == Some(zone.name()) {
        return Ok(false);
    }
    rebuild(db, zone).await?;
    Ok(true)
}

/// Recomputes every rollup from `traffic_statistics`, in one transaction, placing days and
/// hours in `zone`; returns the rows read.
///
/// On PostgreSQL the transaction first takes `traffic_hourly` in EXCLUSIVE mode: a flush writes
/// that table before committing its rows, so a flush either committed before the rebuild reads
/// (and is counted by it) or waits and adds its own delta after (and is counted once).
pub async fn rebuild(db: &DatabaseConnection, zone: Tz) -> Result<u64, DbErr> {
    let txn = db.begin().await?;
    if txn.get_database_backend() == DatabaseBackend::Postgres {
        txn.execute_unprepared("LOCK TABLE traffic_hourly IN EXCLUSIVE MODE")
            .await?;
    }
    for table in [
        "traffic_blocks",
        "traffic_hourly",
        "traffic_daily_pages",
        "traffic_daily_sets",
        "traffic_ids",
    ] {
        txn.execute_unprepared(&format!("DELETE FROM {table}"))
            .await?;
    }
    let mut after = 0i64;
    let mut read = 0u64;
    loop {
        let mut b = Binder::new(txn.get_database_backend());
        let sql = format!(
            "SELECT id, stat_date, path, ip, user_agent, is_bot, spider_source, count, generated \
             FROM traffic_statistics WHERE id > {} ORDER BY id LIMIT {REBUILD_CHUNK}",
            b.bind(after)
        );
        let rows = txn.query_all_raw(b.statement(sql)).await?;
        let mut delta = Delta::default();
        for row in &rows {
            let path: String = row.try_get("", "path")?;
            let ip: String = row.try_get("", "ip")?;
            let user_agent: String = row.try_get("", "user_agent")?;
            let source: Option<String> = row.try_get("", "spider_source")?;
            delta.add(
                &RowFacts {
                    minute: row.try_get("", "stat_date")?,
                    path: &path,
                    ip: &ip,
                    user_agent: &user_agent,
                    is_bot: row.try_get("", "is_bot")?,
                    source: source.as_deref(),
                    count: row.try_get("", "count")?,
                    generated: row.try_get("", "generated")?,
                },
                zone,
            );
            after = row.try_get("", "id")?;
        }
        apply(&txn, &delta).await?;
        read += rows.len() as u64;
        if (rows.len() as u64) < REBUILD_CHUNK {
            break;
        }
        tracing::info!(rows = read, "rebuilding traffic rollups");
    }
    set_zone(&txn, zone.name()).await?;
    txn.commit().await?;
    Ok(read)
}

/// Drops the rollups of days before `first_kept` (a local date in the rollups' zone), and the
/// ids last seen before it; returns the rollup rows deleted.
pub async fn clean(db: &impl ConnectionTrait, first_kept: NaiveDate) -> Result<u64, DbErr> {
    let day = day_number(first_kept);
    let mut deleted = 0;
    for sql in [
        "DELETE FROM traffic_blocks WHERE first_day < {}",
        "DELETE FROM traffic_daily_pages WHERE day < {}",
        "DELETE FROM traffic_daily_sets WHERE day < {}",
        "DELETE FROM traffic_ids WHERE last_day < {}",
    ] {
        let mut b = Binder::new(db.get_database_backend());
        let sql = sql.replace("{}", &b.bind(day));
        deleted += db.execute_raw(b.statement(sql)).await?.rows_affected();
    }
    let zone = zone_for_writes(db).await?;
    let mut b = Binder::new(db.get_database_backend());
    let sql = format!(
        "DELETE FROM traffic_hourly WHERE hour < {}",
        b.bind(traffic_range::midnight(first_kept, zone).timestamp())
    );
    deleted += db.execute_raw(b.statement(sql)).await?.rows_affected();
    Ok(deleted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hours_and_days_are_local() {
        let at = DateTime::parse_from_rfc3339("2026-11-30T20:45:00Z")
            .unwrap()
            .with_timezone(&Utc);
        // Kolkata is UTC+05:30: 20:45 UTC is 02:15 on the 1st, in the hour from 20:30 UTC.
        let (hour, day) = place(at, chrono_tz::Asia::Kolkata);
        assert_eq!(hour, at.timestamp() - 15 * 60);
        assert_eq!(
            day,
            day_number(NaiveDate::from_ymd_opt(2026, 12, 1).unwrap())
        );
        let (hour, day) = place(at, Tz::UTC);
        assert_eq!(hour, at.timestamp() - 45 * 60);
        assert_eq!(
            day,
            day_number(NaiveDate::from_ymd_opt(2026, 11, 30).unwrap())
        );
    }

    #[test]
    fn every_filter_is_a_set_of_parts() {
        assert_eq!(part(false, Some("google")), "h");
        assert_eq!(part(true, None), "b:other");
        assert_eq!(part_condition(VisitorType::All, None), None);
        assert_eq!(
            part_condition(VisitorType::Bot, Some("bing")),
            Some(("part = ", "b:bing".to_string()))
        );
        assert_eq!(page_view(VisitorType::Human, Some("bing")), None);
        assert_eq!(page_view(VisitorType::Bot, None).as_deref(), Some("b"));
    }

    #[test]
    fn digests_separate_fields() {
        assert_ne!(digest(&["ab", "c"]), digest(&["a", "bc"]));
        assert_eq!(digest(&["x"]), digest(&["x"]));
    }
}
