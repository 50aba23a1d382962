//! Writing the rollups: what a batch of minute rows adds to them ([`Delta`]), applied in the
//! same transaction that writes the rows ([`apply`]), so the record and the rollups never
//! disagree.
//!
//! Every rollup is kept per site; pages are keyed by host and path together
//! ([`crate::domain::sites::page_key`]). Distinct counts stay exact: IPs, visitors and pages
//! get integer ids (`traffic_ids`, keyed by
//! a 64-bit digest of the value) and each day keeps a roaring bitmap of them per part.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::{DateTime, Datelike, NaiveDate, Timelike, Utc};
use chrono_tz::Tz;
use roaring::RoaringTreemap;
use sea_orm::ConnectionTrait;
use sha2::{Digest, Sha256};

use super::TrafficError;
use crate::domain::bots::{BotCategory, category_of};
use crate::domain::sites::page_key;
use crate::domain::traffic_parts::{Part, View};
use crate::services::sql::{self, Binder};

/// The longest referrer kept with a page not found (bytes).
pub const MAX_LISTED_REFERER: usize = 512;

/// Rows per statement writing a rollup table.
const ROWS_PER_STATEMENT: usize = 10_000;

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
pub enum IdKind {
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

/// A visitor's digest: of the address (as stored) and the User-Agent.
pub fn visitor_digest(ip: &str, user_agent: &str) -> i64 {
    digest(&[ip, user_agent])
}

/// One stored row's contribution, as the rollups need it.
pub struct RowFacts<'a> {
    pub minute: DateTime<Utc>,
    pub site: &'a str,
    pub path: &'a str,
    pub ip: &'a str,
    pub user_agent: &'a str,
    pub is_bot: bool,
    pub source: Option<&'a str>,
    pub count: i64,
    pub generated: bool,
    pub ref_domain: Option<&'a str>,
    pub browser: &'a str,
    pub os: &'a str,
    pub device: &'a str,
    /// ISO 3166-1 alpha-2, `""` when unknown.
    pub country: &'a str,
    /// The campaign tags: source, medium, campaign (`""` when absent).
    pub campaign: [&'a str; 3],
    /// An arrival's channel, `""` for a step within the site.
    pub channel: &'a str,
    /// The whole `Referer` (the referrers of pages not found are listed by it).
    pub referer: &'a str,
    /// The response's status code, `0` when unknown.
    pub status: i16,
}

/// One stored event row's contribution (`traffic_events`).
pub struct EventFacts<'a> {
    pub minute: DateTime<Utc>,
    pub site: &'a str,
    pub name: &'a str,
    /// Its properties as stored: a JSON object of texts.
    pub props: &'a str,
    pub ip: &'a str,
    pub user_agent: &'a str,
    pub is_bot: bool,
    pub count: i64,
}

/// How a campaign's three tags are one fact's value: source, medium and campaign joined by
/// U+001F, which no stored tag holds (`server/src/traffic/hit.rs` turns control characters
/// into spaces), so the value splits back into them and sorts as the three would.
pub fn campaign_value(tags: [&str; 3]) -> String {
    joined(&tags)
}

/// The three tags of a campaign fact's value.
pub fn campaign_tags(value: &str) -> [String; 3] {
    let mut parts = value.splitn(3, '\u{1f}').map(str::to_string);
    [
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
    ]
}

/// How a fact's value holds several fields: joined by U+001F. Readers take the leading fields
/// (a source, a status code, a page key matched whole) and keep the rest as the last field, so
/// a U+001F a log line smuggled into a path or referrer moves nothing.
pub fn joined(fields: &[&str]) -> String {
    fields.join("\u{1f}")
}

/// The kinds of facts `traffic_daily_facts` counts page views by: people's, and what AI
/// crawlers fetched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FactKind {
    /// The referring domain of an arrival (`""`: direct).
    Referrer,
    /// The page an arrival landed on (its page key).
    Landing,
    Browser,
    Os,
    Device,
    /// The visitor's country (`""`: unknown).
    Country,
    /// A tagged page view's campaign ([`campaign_value`]).
    Campaign,
    /// An arrival's channel.
    Channel,
    /// The response's status code (people's answered views; `0` is not counted).
    Status,
    /// A page people were answered 404 for (its page key). Not in [`FactKind::ALL`]: pages
    /// not found are a long flat tail of single views, on which the blocks' ranking keeps
    /// widening; every page's sum is kept per block instead ([`super::tails`]).
    NotFound,
    /// A page not found and who linked to it: page key and whole `Referer` ([`joined`];
    /// `""`: none). Not in [`FactKind::ALL`]: read only for the pages [`FactKind::NotFound`]
    /// lists.
    NotFoundReferrer,
    /// What an AI crawler fetched: its source, the status and the page key ([`joined`]).
    /// Not in [`FactKind::ALL`] (those are people's lists, kept in the blocks); every value's
    /// sum is kept per block ([`super::tails`]).
    AiFetch,
    /// A property of people's events: event name, property name and value ([`joined`]);
    /// the views are the events. Not in [`FactKind::ALL`]: read only for the listed events.
    EventProp,
}

impl FactKind {
    /// People's lists, each ranked and kept in the people's blocks.
    pub const ALL: [FactKind; 9] = [
        FactKind::Referrer,
        FactKind::Landing,
        FactKind::Browser,
        FactKind::Os,
        FactKind::Device,
        FactKind::Country,
        FactKind::Campaign,
        FactKind::Channel,
        FactKind::Status,
    ];

    pub fn code(self) -> &'static str {
        match self {
            FactKind::Referrer => "r",
            FactKind::Landing => "l",
            FactKind::Browser => "b",
            FactKind::Os => "o",
            FactKind::Device => "d",
            FactKind::Country => "c",
            FactKind::Campaign => "u",
            FactKind::Channel => "h",
            FactKind::Status => "s",
            FactKind::NotFound => "n",
            FactKind::NotFoundReferrer => "f",
            FactKind::AiFetch => "a",
            FactKind::EventProp => "p",
        }
    }
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
    /// Views per (hour, site, part, generated), each with the local day of its hour (the
    /// daily views are these summed per day, at [`apply`]).
    hourly: BTreeMap<(i64, String, Part, bool), (i32, i64)>,
    /// Views per (day, view, site, path). Hashed, not ordered: a batch adds to them several
    /// times per row, and ordered maps of long shared-prefix strings spent a quarter of a
    /// flush comparing them; [`apply`] sorts the distinct keys once.
    pages: HashMap<(i32, View, String, String), i64>,
    /// Digests per (day, site, part).
    sets: BTreeMap<(i32, String, Part), DayMembers>,
    /// People's views per (day, site, kind, value).
    facts: HashMap<(i32, String, FactKind, String), i64>,
    /// People's events per (day, site, name): how many, and the visitors who sent them.
    events: BTreeMap<(i32, String, String), (i64, BTreeSet<i64>)>,
    /// Each digest's last day in this batch.
    last_day: HashMap<(IdKind, i64), i32>,
}

impl Delta {
    pub fn add(&mut self, row: &RowFacts<'_>, zone: Tz) {
        let (hour, day) = place(row.minute, zone);
        let part = Part::of(row.is_bot, row.source);
        let site = row.site.to_string();
        let page = page_key(row.site, row.path);
        self.hourly
            .entry((hour, site.clone(), part.clone(), row.generated))
            .or_insert((day, 0))
            .1 += row.count;
        for view in View::containing(&part) {
            *self
                .pages
                .entry((day, view, site.clone(), row.path.to_string()))
                .or_default() += row.count;
        }
        if row.is_bot {
            if let Some(source) = row.source.filter(|s| category_of(s) == BotCategory::Ai) {
                let status = row.status.to_string();
                self.fact(
                    day,
                    &site,
                    FactKind::AiFetch,
                    &joined(&[source, &status, &page]),
                    row.count,
                );
            }
        } else {
            self.add_people(day, &site, &page, row);
        }
        let ip = digest(&[row.ip]);
        let visitor = visitor_digest(row.ip, row.user_agent);
        let path = digest(&[&page]);
        let members = self.sets.entry((day, site, part)).or_default();
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
        self.hourly.is_empty() && self.events.is_empty()
    }

    /// A stored event row. Bots' events are stored but counted nowhere: every figure of events
    /// and goals is people's.
    pub fn add_event(&mut self, row: &EventFacts<'_>, zone: Tz) {
        if row.is_bot {
            return;
        }
        let (_, day) = place(row.minute, zone);
        let visitor = visitor_digest(row.ip, row.user_agent);
        let (count, visitors) = self
            .events
            .entry((day, row.site.to_string(), row.name.to_string()))
            .or_default();
        *count += row.count;
        visitors.insert(visitor);
        let last = self
            .last_day
            .entry((IdKind::Visitor, visitor))
            .or_insert(day);
        *last = (*last).max(day);
        let props: BTreeMap<String, String> = serde_json::from_str(row.props).unwrap_or_default();
        for (key, value) in &props {
            let value = joined(&[row.name, key, value]);
            self.fact(day, row.site, FactKind::EventProp, &value, row.count);
        }
    }

    fn fact(&mut self, day: i32, site: &str, kind: FactKind, value: &str, count: i64) {
        *self
            .facts
            .entry((day, site.to_string(), kind, value.to_string()))
            .or_default() += count;
    }

    /// A person's row's facts.
    fn add_people(&mut self, day: i32, site: &str, page: &str, row: &RowFacts<'_>) {
        let mut fact = |kind, value: &str| self.fact(day, site, kind, value, row.count);
        fact(FactKind::Browser, row.browser);
        fact(FactKind::Os, row.os);
        fact(FactKind::Device, row.device);
        fact(FactKind::Country, row.country);
        if row.campaign.iter().any(|t| !t.is_empty()) {
            fact(FactKind::Campaign, &campaign_value(row.campaign));
        }
        if !row.channel.is_empty() {
            fact(FactKind::Channel, row.channel);
        }
        if let Some(domain) = row.ref_domain {
            fact(FactKind::Referrer, domain);
            fact(FactKind::Landing, page);
        }
        if row.status != 0 {
            fact(FactKind::Status, &row.status.to_string());
        }
        if row.status == 404 {
            fact(FactKind::NotFound, page);
            // Bounded, so the value stays within PostgreSQL's index entry size with the page.
            let referer = &row.referer[..row.referer.floor_char_boundary(MAX_LISTED_REFERER)];
            fact(FactKind::NotFoundReferrer, &joined(&[page, referer]));
        }
    }
}

/// Ids of digests, as [`apply`] assigned them.
pub type Ids = HashMap<(IdKind, i64), u64>;

/// The ids a run of transactions (one flush's, one rebuild's) has already assigned, each with
/// the last day it was stored with: a digest seen again, on a day not after that, needs no
/// statement. A flush of an hour's hits meets the same regular visitors and popular pages in
/// every transaction, and re-upserting them was a third of its `traffic_ids` statements.
///
/// Ids are never reused (`traffic_ids.id` is AUTOINCREMENT on SQLite, a sequence on
/// PostgreSQL), so a rebuild, which deletes every id and assigns new ones, leaves the smallest
/// id stored above every id known before it: [`assign_ids`] checks that inside each
/// transaction (after `traffic_hourly` is written, which orders it after any rebuild) and
/// forgets everything when it sees one. Retention deletes only ids whose last day is before
/// the cutoff; a known id it took is used only for days at or before its last day, which
/// retention deletes too.
#[derive(Default)]
pub struct KnownIds {
    ids: HashMap<(IdKind, i64), (u64, i32)>,
    lowest: u64,
}

impl KnownIds {
    /// Forgets every id when the smallest stored id shows that ids were deleted under them.
    async fn check(&mut self, txn: &impl ConnectionTrait) -> Result<(), TrafficError> {
        if self.ids.is_empty() {
            return Ok(());
        }
        let row = txn
            .query_one_raw(sea_orm::Statement::from_string(
                txn.get_database_backend(),
                "SELECT MIN(id) AS lowest FROM traffic_ids",
            ))
            .await?;
        let lowest = match row {
            Some(row) => row.try_get::<Option<i64>>("", "lowest")?,
            None => None,
        };
        if lowest.is_none_or(|id| id > self.lowest as i64) {
            *self = KnownIds::default();
        }
        Ok(())
    }

    /// The id of `key` if it is known with a last day of at least `day`.
    fn get(&self, key: &(IdKind, i64), day: i32) -> Option<u64> {
        self.ids
            .get(key)
            .filter(|(_, last)| *last >= day)
            .map(|(id, _)| *id)
    }

    fn note(&mut self, key: (IdKind, i64), id: u64, day: i32) {
        self.lowest = if self.ids.is_empty() {
            id
        } else {
            self.lowest.min(id)
        };
        let entry = self.ids.entry(key).or_insert((id, day));
        *entry = (id, entry.1.max(day));
    }
}

/// Adds `delta` to the rollups, inside the caller's transaction (the one writing the rows it
/// came from, so the record and the rollups never disagree); returns the ids it assigned, for
/// the goals' conversions ([`Conversions::apply`]). `known` carries ids from one transaction
/// of a flush or rebuild to the next; a failed transaction must drop it (its new ids were
/// rolled back).
pub async fn apply(
    txn: &impl ConnectionTrait,
    delta: &Delta,
    known: &mut KnownIds,
) -> Result<Ids, TrafficError> {
    if delta.is_empty() {
        return Ok(Ids::new());
    }
    add_counts(txn, delta).await?;
    let ids = assign_ids(txn, &delta.last_day, known).await?;
    for (key, members) in &delta.sets {
        merge_set(txn, key, members, &ids).await?;
    }
    for ((day, site, name), (count, visitors)) in &delta.events {
        let key = DayKey::Event {
            day: *day,
            site,
            name,
        };
        add_members(txn, &key, *count, &visitor_ids(visitors, &ids)?).await?;
    }
    Ok(ids)
}

/// The ids of visitors' digests.
fn visitor_ids(visitors: &BTreeSet<i64>, ids: &Ids) -> Result<Vec<u64>, TrafficError> {
    visitors
        .iter()
        .map(|d| {
            ids.get(&(IdKind::Visitor, *d))
                .copied()
                .ok_or(TrafficError::MissingId {
                    kind: IdKind::Visitor,
                    digest: *d,
                })
        })
        .collect()
}

/// A row of a daily rollup that counts something and keeps the visitors who did it.
enum DayKey<'a> {
    /// `traffic_daily_events`: people's events of one name.
    Event {
        day: i32,
        site: &'a str,
        name: &'a str,
    },
    /// `traffic_daily_goals`: a page goal's conversions.
    Goal { day: i32, goal: i64 },
}

impl DayKey<'_> {
    /// The table, its counting column, and the key's columns with their values.
    fn parts(
        &self,
    ) -> (
        &'static str,
        &'static str,
        Vec<(&'static str, sea_orm::Value)>,
    ) {
        match self {
            DayKey::Event { day, site, name } => (
                "traffic_daily_events",
                "count",
                vec![
                    ("day", (*day).into()),
                    ("site", (*site).into()),
                    ("name", (*name).into()),
                ],
            ),
            DayKey::Goal { day, goal } => (
                "traffic_daily_goals",
                "conversions",
                vec![("goal_id", (*goal).into()), ("day", (*day).into())],
            ),
        }
    }
}

/// Adds `count` and the visitors (by id) to a row of a daily rollup, creating it if needed.
async fn add_members(
    txn: &impl ConnectionTrait,
    key: &DayKey<'_>,
    count: i64,
    visitors: &[u64],
) -> Result<(), TrafficError> {
    let backend = txn.get_database_backend();
    let (table, counted, columns) = key.parts();
    let names: Vec<_> = columns.iter().map(|(name, _)| *name).collect();
    let names = names.join(", ");
    let mut b = Binder::new(backend);
    let values: Vec<_> = columns.iter().map(|(_, v)| b.bind(v.clone())).collect();
    let sql = format!(
        "INSERT INTO {table} ({names}, {counted}, visitors) VALUES ({}, {}, {}) \
         ON CONFLICT ({names}) DO UPDATE SET {counted} = {table}.{counted} + excluded.{counted}",
        values.join(", "),
        b.bind(count),
        b.bind(serialize(&RoaringTreemap::new())?)
    );
    txn.execute_raw(b.statement(sql)).await?;
    let where_key = |b: &mut Binder| {
        columns
            .iter()
            .map(|(name, v)| format!("{name} = {}", b.bind(v.clone())))
            .collect::<Vec<_>>()
            .join(" AND ")
    };
    let mut b = Binder::new(backend);
    let sql = format!(
        "SELECT visitors FROM {table} WHERE {}{}",
        where_key(&mut b),
        sql::for_update(backend)
    );
    let row = txn
        .query_one_raw(b.statement(sql))
        .await?
        .ok_or_else(|| sea_orm::DbErr::RecordNotFound(table.to_string()))?;
    let mut set = deserialize(&row.try_get::<Vec<u8>>("", "visitors")?)?;
    set.extend(visitors.iter().copied());
    let mut b = Binder::new(backend);
    let sql = format!(
        "UPDATE {table} SET visitors = {} WHERE {}",
        b.bind(serialize(&set)?),
        where_key(&mut b)
    );
    txn.execute_raw(b.statement(sql)).await?;
    Ok(())
}

/// A site's page goal, as the flush matches page views against it.
pub struct PageGoal {
    pub id: i64,
    pub site: String,
    pub pattern: crate::domain::goals::PagePattern,
}

/// The page goals of every site. A flush reads them inside its transaction after writing
/// `traffic_hourly`, which a goal's backfill holds (`super::goals::add`): every page view is
/// counted for a goal either by the backfill or by its flush, never by both.
pub async fn page_goals(txn: &impl ConnectionTrait) -> Result<Vec<PageGoal>, TrafficError> {
    let rows = txn
        .query_all_raw(sea_orm::Statement::from_string(
            txn.get_database_backend(),
            "SELECT id, site, value FROM traffic_goals WHERE kind = 'page' ORDER BY id",
        ))
        .await?;
    let mut goals = Vec::with_capacity(rows.len());
    for row in rows {
        let value: String = row.try_get("", "value")?;
        if let Some(pattern) = crate::domain::goals::PagePattern::new(&value) {
            goals.push(PageGoal {
                id: row.try_get("", "id")?,
                site: row.try_get("", "site")?,
                pattern,
            });
        }
    }
    Ok(goals)
}

/// A page view, as a page goal counts it.
pub struct PageView<'a> {
    pub minute: DateTime<Utc>,
    pub site: &'a str,
    pub path: &'a str,
    /// [`visitor_digest`].
    pub visitor: i64,
    pub is_bot: bool,
    pub count: i64,
}

impl RowFacts<'_> {
    pub fn page_view(&self) -> PageView<'_> {
        PageView {
            minute: self.minute,
            site: self.site,
            path: self.path,
            visitor: visitor_digest(self.ip, self.user_agent),
            is_bot: self.is_bot,
            count: self.count,
        }
    }
}

/// What a batch of people's page views adds to the page goals: conversions and converting
/// visitors per (goal, day).
#[derive(Default)]
pub struct Conversions {
    days: BTreeMap<(i64, i32), (i64, BTreeSet<i64>)>,
}

impl Conversions {
    pub fn add(&mut self, view: &PageView<'_>, goals: &[PageGoal], zone: Tz) {
        if view.is_bot {
            return;
        }
        let mut day = None;
        for goal in goals {
            if goal.site == view.site && goal.pattern.matches(view.path) {
                let day = *day.get_or_insert_with(|| place(view.minute, zone).1);
                let (count, visitors) = self.days.entry((goal.id, day)).or_default();
                *count += view.count;
                visitors.insert(view.visitor);
            }
        }
    }

    /// The visitors' digests with their last day, for [`assign`] when the rows' own delta did
    /// not assign them (a backfill).
    pub fn last_days(&self) -> HashMap<(IdKind, i64), i32> {
        let mut last = HashMap::new();
        for ((_, day), (_, visitors)) in &self.days {
            for visitor in visitors {
                let entry = last.entry((IdKind::Visitor, *visitor)).or_insert(*day);
                *entry = (*entry).max(*day);
            }
        }
        last
    }

    /// Adds the conversions to `traffic_daily_goals`; `ids` holds every visitor's id.
    pub async fn apply(&self, txn: &impl ConnectionTrait, ids: &Ids) -> Result<(), TrafficError> {
        for ((goal, day), (count, visitors)) in &self.days {
            let key = DayKey::Goal {
                day: *day,
                goal: *goal,
            };
            add_members(txn, &key, *count, &visitor_ids(visitors, ids)?).await?;
        }
        Ok(())
    }
}

/// Assigns ids to digests outside a [`Delta`] (a goal's backfill).
pub async fn assign(
    txn: &impl ConnectionTrait,
    last_day: &HashMap<(IdKind, i64), i32>,
) -> Result<Ids, TrafficError> {
    assign_ids(txn, last_day, &mut KnownIds::default()).await
}

/// Adds the hourly and daily views, the pages' and the facts' daily views.
async fn add_counts(txn: &impl ConnectionTrait, delta: &Delta) -> Result<(), TrafficError> {
    // First, so a rebuild holding this table waits for us and we wait for it (see `rebuild`).
    add_hourly(txn, delta).await?;
    let mut daily = BTreeMap::new();
    for ((_, site, part, generated), (day, views)) in &delta.hourly {
        *daily
            .entry((*day, site.clone(), part.clone(), *generated))
            .or_default() += views;
    }
    add_daily(txn, &daily).await?;
    add_pages(txn, delta).await?;
    add_facts(txn, delta).await
}

/// The views per hour, site and part.
async fn add_hourly(txn: &impl ConnectionTrait, delta: &Delta) -> Result<(), TrafficError> {
    upsert(
        txn,
        "traffic_hourly",
        &[
            ("hour", "bigint"),
            ("site", "text"),
            ("part", "text"),
            ("generated", "boolean"),
            ("views", "bigint"),
        ],
        delta
            .hourly
            .iter()
            .map(|((hour, site, part, generated), (_, views))| {
                vec![
                    (*hour).into(),
                    site.as_str().into(),
                    part.code().into(),
                    (*generated).into(),
                    (*views).into(),
                ]
            })
            .collect(),
        "hour, site, part, generated",
        "views = traffic_hourly.views + excluded.views",
    )
    .await
}

/// The views per day, site and part (`traffic_daily_views`).
pub(super) async fn add_daily(
    txn: &impl ConnectionTrait,
    daily: &BTreeMap<(i32, String, Part, bool), i64>,
) -> Result<(), TrafficError> {
    upsert(
        txn,
        "traffic_daily_views",
        &[
            ("day", "integer"),
            ("site", "text"),
            ("part", "text"),
            ("generated", "boolean"),
            ("views", "bigint"),
        ],
        daily
            .iter()
            .map(|((day, site, part, generated), views)| {
                vec![
                    (*day).into(),
                    site.as_str().into(),
                    part.code().into(),
                    (*generated).into(),
                    (*views).into(),
                ]
            })
            .collect(),
        "day, site, part, generated",
        "views = traffic_daily_views.views + excluded.views",
    )
    .await
}

/// The views per day and page.
async fn add_pages(txn: &impl ConnectionTrait, delta: &Delta) -> Result<(), TrafficError> {
    upsert(
        txn,
        "traffic_daily_pages",
        &[
            ("day", "integer"),
            ("view", "text"),
            ("path", "text"),
            ("site", "text"),
            ("views", "bigint"),
        ],
        sorted(&delta.pages)
            .map(|((day, view, site, path), views)| {
                vec![
                    (*day).into(),
                    view.code().into(),
                    page_key(site, path).into(),
                    site.as_str().into(),
                    (*views).into(),
                ]
            })
            .collect(),
        "day, view, path",
        "views = traffic_daily_pages.views + excluded.views",
    )
    .await
}

/// The views per day, site and fact.
async fn add_facts(txn: &impl ConnectionTrait, delta: &Delta) -> Result<(), TrafficError> {
    upsert(
        txn,
        "traffic_daily_facts",
        &[
            ("day", "integer"),
            ("site", "text"),
            ("kind", "text"),
            ("value", "text"),
            ("views", "bigint"),
        ],
        sorted(&delta.facts)
            .map(|((day, site, kind, value), views)| {
                vec![
                    (*day).into(),
                    site.as_str().into(),
                    kind.code().into(),
                    value.as_str().into(),
                    (*views).into(),
                ]
            })
            .collect(),
        "day, site, kind, value",
        "views = traffic_daily_facts.views + excluded.views",
    )
    .await
}

/// Adds a day's new members (addresses, visitors, paths, by their ids) to its stored sets.
async fn merge_set(
    txn: &impl ConnectionTrait,
    (day, site, part): &(i32, String, Part),
    members: &DayMembers,
    ids: &HashMap<(IdKind, i64), u64>,
) -> Result<(), TrafficError> {
    let backend = txn.get_database_backend();
    let id = |kind: IdKind, digest: &i64| -> Result<u64, TrafficError> {
        ids.get(&(kind, *digest))
            .copied()
            .ok_or(TrafficError::MissingId {
                kind,
                digest: *digest,
            })
    };
    let lock = sql::for_update(backend);
    let empty = serialize(&RoaringTreemap::new())?;
    let mut b = Binder::new(backend);
    let sql = format!(
        "INSERT INTO traffic_daily_sets (day, site, part, visits, ips, visitors, paths) \
         VALUES ({}, {}, {}, 0, {}, {}, {}) ON CONFLICT (day, site, part) DO NOTHING",
        b.bind(*day),
        b.bind(site.clone()),
        b.bind(part.code()),
        b.bind(empty.clone()),
        b.bind(empty.clone()),
        b.bind(empty.clone())
    );
    txn.execute_raw(b.statement(sql)).await?;
    let mut b = Binder::new(backend);
    let sql = format!(
        "SELECT ips, visitors, paths FROM traffic_daily_sets \
         WHERE day = {} AND site = {} AND part = {}{lock}",
        b.bind(*day),
        b.bind(site.clone()),
        b.bind(part.code())
    );
    let row = txn.query_one_raw(b.statement(sql)).await?.ok_or_else(|| {
        sea_orm::DbErr::RecordNotFound(format!("traffic_daily_sets {day} {}", part.code()))
    })?;
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
         revision = revision + 1 WHERE day = {} AND site = {} AND part = {}",
        b.bind(visitors.len() as i64),
        b.bind(serialize(&ips)?),
        b.bind(serialize(&visitors)?),
        b.bind(serialize(&paths)?),
        b.bind(*day),
        b.bind(site.clone()),
        b.bind(part.code())
    );
    txn.execute_raw(b.statement(sql)).await?;
    Ok(())
}

/// The entries in key order: concurrent writers (nodes flushing at once) then take the rows'
/// locks in the same order and never deadlock.
fn sorted<K: Ord, V>(map: &HashMap<K, V>) -> impl Iterator<Item = (&K, &V)> {
    let mut entries: Vec<_> = map.iter().collect();
    entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
    entries.into_iter()
}

/// Adds rows to a rollup table: one statement per [`ROWS_PER_STATEMENT`] rows, the rows
/// travelling as one parameter ([`sql::insert_from`]). Numbered placeholders, one per value,
/// cost SQLite time that grows with the square of their number (it looks each one up in a
/// list when preparing and binding): that was half a flush's time.
async fn upsert(
    txn: &impl ConnectionTrait,
    table: &str,
    columns: &'static [(&'static str, &'static str)],
    rows: Vec<Vec<sea_orm::Value>>,
    key: &str,
    add: &str,
) -> Result<(), TrafficError> {
    let names: Vec<_> = columns.iter().map(|(name, _)| *name).collect();
    let select: Vec<_> = names.iter().map(|name| format!("v.v_{name}")).collect();
    let mut rows = rows.into_iter().peekable();
    while rows.peek().is_some() {
        let values = sql::Values {
            columns,
            rows: rows.by_ref().take(ROWS_PER_STATEMENT).collect(),
        };
        let mut b = Binder::new(txn.get_database_backend());
        let statement = sql::insert_from(
            &mut b,
            table,
            &names.join(", "),
            &values,
            &select.join(", "),
            &format!("ON CONFLICT ({key}) DO UPDATE SET {add}"),
            "",
        );
        txn.execute_raw(b.statement(statement)).await?;
    }
    Ok(())
}

/// The ids of every digest in the batch, creating those not seen before and moving each one's
/// last day forward; digests `known` holds for their day need no statement.
async fn assign_ids(
    txn: &impl ConnectionTrait,
    last_day: &HashMap<(IdKind, i64), i32>,
    known: &mut KnownIds,
) -> Result<Ids, TrafficError> {
    known.check(txn).await?;
    let backend = txn.get_database_backend();
    let mut ids = HashMap::with_capacity(last_day.len());
    let mut keys = Vec::new();
    for (key, day) in last_day {
        match known.get(key, *day) {
            Some(id) => {
                ids.insert(*key, id);
            }
            None => keys.push((key, day)),
        }
    }
    // A fixed order, so two writers lock index entries in the same order.
    keys.sort_unstable();
    for chunk in keys.chunks(ROWS_PER_STATEMENT) {
        let mut b = Binder::new(backend);
        let values = sql::Values {
            columns: &[
                ("kind", "smallint"),
                ("digest", "bigint"),
                ("day", "integer"),
            ],
            rows: chunk
                .iter()
                .map(|((kind, digest), day)| {
                    vec![(*kind as i16).into(), (*digest).into(), (**day).into()]
                })
                .collect(),
        };
        let sql = sql::insert_from(
            &mut b,
            "traffic_ids",
            "kind, digest, last_day",
            &values,
            "v.v_kind, v.v_digest, v.v_day",
            "ON CONFLICT (kind, digest) DO UPDATE SET last_day = \
               CASE WHEN excluded.last_day > traffic_ids.last_day \
                    THEN excluded.last_day ELSE traffic_ids.last_day END",
            "id, kind, digest",
        );
        for row in txn.query_all_raw(b.statement(sql)).await? {
            let kind = match row.try_get::<i16>("", "kind")? {
                1 => IdKind::Ip,
                2 => IdKind::Visitor,
                3 => IdKind::Path,
                other => return Err(TrafficError::UnknownIdKind(other)),
            };
            let id: i64 = row.try_get("", "id")?;
            let id = u64::try_from(id).map_err(|_| TrafficError::NegativeId(id))?;
            let key = (kind, row.try_get::<i64>("", "digest")?);
            if let Some(day) = last_day.get(&key) {
                known.note(key, id, *day);
            }
            ids.insert(key, id);
        }
    }
    Ok(ids)
}

pub(super) fn serialize(set: &RoaringTreemap) -> Result<Vec<u8>, TrafficError> {
    let mut bytes = Vec::with_capacity(set.serialized_size());
    set.serialize_into(&mut bytes)
        .map_err(TrafficError::EncodeSet)?;
    Ok(bytes)
}

pub(super) fn deserialize(bytes: &[u8]) -> Result<RoaringTreemap, TrafficError> {
    RoaringTreemap::deserialize_from(bytes).map_err(TrafficError::CorruptSet)
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
    fn digests_separate_fields() {
        assert_ne!(digest(&["ab", "c"]), digest(&["a", "bc"]));
        assert_eq!(digest(&["x"]), digest(&["x"]));
    }
}
