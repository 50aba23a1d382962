//! Reading the rollups: every figure of a range from a few rows, exactly.
//!
//! | figure                         | read from                                          |
//! |--------------------------------|----------------------------------------------------|
//! | page views, people/bots, by source, generated, daily charts | `traffic_daily_views` (Σ views) |
//! | hourly charts (a range of one or two days) | `traffic_hourly` (Σ views) |
//! | visits = distinct (day, ip, ua) | `traffic_daily_sets.visits`, summed over days       |
//! | unique IPs, unique pages       | union of the days' bitmaps, through [`super::blocks`] |
//! | top pages                      | `traffic_daily_pages` and blocks, see [`rank`] |
//! | people's referrers, landing pages, browsers, systems, devices | `traffic_daily_facts` and the people's blocks, see [`rank`] |
//!
//! Every figure is of one site or of all (`Scope::site`).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::{DateTime, NaiveDate, Utc};
use chrono_tz::Tz;
use sea_orm::ConnectionTrait;

use super::TrafficError;
use super::blocks::{self, parts_condition, site_condition};
use super::rollup_write::{FactKind, day_number};
use crate::domain::bots::BotCategory;
use crate::domain::sites::split_page_key;
use crate::domain::traffic_parts::{Part, Parts, View, Who};
use crate::domain::traffic_range::{self, Bucket, VisitorType};
use crate::services::sql::Binder;
use crate::views::traffic::{PeopleBreakdown, Ranked, SeriesPoint, TopPage};

/// The filter a figure is computed over: whole local days `from..=to`.
pub struct Scope<'a> {
    pub from: NaiveDate,
    pub to: NaiveDate,
    pub zone: Tz,
    pub visitors: VisitorType,
    pub category: Option<BotCategory>,
    pub source: Option<&'a str>,
    /// One site's host; all sites when `None`.
    pub site: Option<&'a str>,
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

    pub fn who(&self) -> Who<'_> {
        Who {
            visitors: self.visitors,
            category: self.category,
            source: self.source,
        }
    }

    /// ` AND part … AND site …` for the filter, binding its values.
    fn parts(&self, b: &mut Binder) -> String {
        parts_condition(&Parts::for_filter(self.who()), b) + &site_condition(self.site, b)
    }
}

/// Σ views over the scope, per part and generated flag (a row per day and part).
pub async fn views_by_part(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
) -> Result<Vec<(Part, bool, i64)>, TrafficError> {
    let mut b = Binder::new(db.get_database_backend());
    let sql = format!(
        "SELECT part, generated, CAST(SUM(views) AS BIGINT) AS n FROM traffic_daily_views \
         WHERE day >= {} AND day <= {}{} GROUP BY part, generated",
        b.bind(day_number(scope.from)),
        b.bind(day_number(scope.to)),
        scope.parts(&mut b)
    );
    db.query_all_raw(b.statement(sql))
        .await?
        .iter()
        .map(|row| {
            let code: String = row.try_get("", "part")?;
            Ok((
                Part::parse(&code).ok_or(TrafficError::UnknownPart(code))?,
                row.try_get("", "generated")?,
                row.try_get("", "n")?,
            ))
        })
        .collect()
}

/// The scope's view ([`View::for_filter`]; none when the filter counts nobody) and its days
/// as segments whose blocks are current ([`blocks::plan`]): planned once for the distinct
/// counts and the top pages, which read the same blocks.
pub struct Planned {
    view: View,
    segments: Vec<blocks::Segment>,
}

impl Planned {
    fn lens<'a>(&'a self, scope: &'a Scope<'a>) -> blocks::Lens<'a> {
        blocks::Lens {
            view: &self.view,
            site: scope.site,
        }
    }
}

/// Plans the scope's days ([`Planned`]).
pub async fn plan(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
) -> Result<Option<Planned>, TrafficError> {
    let Some(view) = View::for_filter(scope.who()) else {
        return Ok(None);
    };
    let lens = blocks::Lens {
        view: &view,
        site: scope.site,
    };
    let (from, to) = (day_number(scope.from), day_number(scope.to));
    let segments = blocks::plan(db, &lens, from, to).await?;
    Ok(Some(Planned { view, segments }))
}

/// Visits, unique IPs and unique pages over the scope.
pub async fn distinct_counts(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
    planned: Option<&Planned>,
) -> Result<(i64, i64, i64), TrafficError> {
    let Some(planned) = planned else {
        return Ok((0, 0, 0));
    };
    blocks::distinct(db, &planned.lens(scope), &planned.segments).await
}

/// The `limit` paths with the most views over the scope (ties by path), exactly, through
/// [`rank`].
pub async fn top_pages(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
    planned: Option<&Planned>,
    limit: usize,
) -> Result<Vec<TopPage>, TrafficError> {
    let Some(planned) = planned else {
        return Ok(Vec::new());
    };
    let (view, segments) = (&planned.view, &planned.segments);
    let lens = planned.lens(scope);
    let block_tops = blocks::block_tops(db, &lens, segments).await?;
    let pages = Pages { scope, view, lens };
    let ranked = rank(db, &pages, segments, block_tops, limit).await?;
    // The people/bots split of each listed path.
    let paths: BTreeSet<String> = ranked.iter().map(|(p, _)| p.clone()).collect();
    let human: HashMap<String, i64> = match view {
        View::All => path_totals(db, scope, &View::Human, &paths)
            .await?
            .into_iter()
            .collect(),
        _ => HashMap::new(),
    };
    Ok(ranked
        .into_iter()
        .map(|(path, count)| {
            let human = match view {
                View::All => human.get(&path).copied().unwrap_or(0),
                View::Human => count,
                View::Bots | View::Category(_) | View::Source(_) => 0,
            };
            let (site, path) = split_page_key(&path);
            TopPage {
                site: site.to_string(),
                path: path.to_string(),
                count,
                human,
                bot: count - human,
            }
        })
        .collect())
}

/// A ranking kept per day: top pages of a view, or people's values of a fact kind.
trait Ranking {
    /// A day's `k` first names, exactly, with the bound for the rest.
    async fn day_top(
        &self,
        db: &impl ConnectionTrait,
        day: i32,
        k: usize,
    ) -> Result<blocks::TopList, TrafficError>;
    /// The exact totals over the scope of `names`.
    async fn totals(
        &self,
        db: &impl ConnectionTrait,
        names: &BTreeSet<String>,
    ) -> Result<Vec<(String, i64)>, TrafficError>;
    /// Every name's total over the scope.
    async fn everything(
        &self,
        db: &impl ConnectionTrait,
    ) -> Result<Vec<(String, i64)>, TrafficError>;
}

/// The `limit` names with the most views over `segments` (ties by name), exactly.
///
/// Summing every name of 90 days is too slow, so this takes candidates from short lists: each
/// block's stored list and each single day's `k` first names ([`blocks::plan`] splits the
/// range). A name in no list has at most the list's bound in each segment, so at most their
/// sum `bound` over the range. The candidates' exact totals come from the daily rows; when the
/// last of the top totals is above `bound`, no other name can reach the list. Otherwise `k`
/// grows (past the blocks' lists, every day is listed on its own), and past [`TOP_K_LIMIT`]
/// the full sum is taken.
async fn rank(
    db: &impl ConnectionTrait,
    ranking: &impl Ranking,
    segments: &[blocks::Segment],
    mut block_tops: Vec<blocks::TopList>,
    limit: usize,
) -> Result<Vec<(String, i64)>, TrafficError> {
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
            break ranking.everything(db).await?;
        }
        if k > blocks::BLOCK_TOP && !block_tops.is_empty() {
            block_tops.clear();
            days = segments
                .iter()
                .flat_map(|s| match *s {
                    blocks::Segment::Day(d) => d..=d,
                    blocks::Segment::Block { first, days } => first..=first + days - 1,
                })
                .collect();
        }
        let mut candidates = BTreeSet::new();
        let mut bound = 0i64;
        for top in &block_tops {
            let (head, rest) = top.head(k);
            bound += rest;
            candidates.extend(head.iter().map(|(name, _)| name.clone()));
        }
        for day in &days {
            let top = ranking.day_top(db, *day, k).await?;
            bound += top.bound;
            candidates.extend(top.paths.into_iter().map(|(name, _)| name));
        }
        let mut totals = ranking.totals(db, &candidates).await?;
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
    Ok(ranked)
}

/// How far [`rank`] widens each day's list before summing everything.
pub const TOP_K_LIMIT: usize = 20_000;

/// The top pages of a view.
struct Pages<'a> {
    scope: &'a Scope<'a>,
    view: &'a View,
    lens: blocks::Lens<'a>,
}

impl Ranking for Pages<'_> {
    async fn day_top(
        &self,
        db: &impl ConnectionTrait,
        day: i32,
        k: usize,
    ) -> Result<blocks::TopList, TrafficError> {
        blocks::day_top(db, &self.lens, day, k).await
    }

    async fn totals(
        &self,
        db: &impl ConnectionTrait,
        names: &BTreeSet<String>,
    ) -> Result<Vec<(String, i64)>, TrafficError> {
        path_totals(db, self.scope, self.view, names).await
    }

    async fn everything(
        &self,
        db: &impl ConnectionTrait,
    ) -> Result<Vec<(String, i64)>, TrafficError> {
        let scope = self.scope;
        let mut b = Binder::new(db.get_database_backend());
        let sql = format!(
            "SELECT path, CAST(SUM(views) AS BIGINT) AS n FROM traffic_daily_pages \
             WHERE view = {} AND day >= {} AND day <= {}{} GROUP BY path",
            b.bind(self.view.code()),
            b.bind(day_number(scope.from)),
            b.bind(day_number(scope.to)),
            site_condition(scope.site, &mut b)
        );
        db.query_all_raw(b.statement(sql))
            .await?
            .iter()
            .map(|row| Ok((row.try_get("", "path")?, row.try_get("", "n")?)))
            .collect()
    }
}

async fn path_totals(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
    view: &View,
    paths: &BTreeSet<String>,
) -> Result<Vec<(String, i64)>, TrafficError> {
    let paths: Vec<&String> = paths.iter().collect();
    let mut totals = Vec::with_capacity(paths.len());
    for chunk in paths.chunks(500) {
        let mut b = Binder::new(db.get_database_backend());
        let (view, from, to) = (
            b.bind(view.code()),
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

/// People's values of one kind of fact.
struct Facts<'a> {
    scope: &'a Scope<'a>,
    kind: FactKind,
}

impl Facts<'_> {
    /// `SELECT value, Σ views … GROUP BY value` over the scope, with `more` added to the
    /// condition.
    fn sum_sql(&self, b: &mut Binder, more: &str) -> String {
        let scope = self.scope;
        format!(
            "SELECT value, CAST(SUM(views) AS BIGINT) AS n FROM traffic_daily_facts \
             WHERE kind = {} AND day >= {} AND day <= {}{}{more} GROUP BY value",
            b.bind(self.kind.code()),
            b.bind(day_number(scope.from)),
            b.bind(day_number(scope.to)),
            site_condition(scope.site, b)
        )
    }

    async fn read(
        db: &impl ConnectionTrait,
        b: Binder,
        sql: String,
    ) -> Result<Vec<(String, i64)>, TrafficError> {
        db.query_all_raw(b.statement(sql))
            .await?
            .iter()
            .map(|row| Ok((row.try_get("", "value")?, row.try_get("", "n")?)))
            .collect()
    }
}

impl Ranking for Facts<'_> {
    async fn day_top(
        &self,
        db: &impl ConnectionTrait,
        day: i32,
        k: usize,
    ) -> Result<blocks::TopList, TrafficError> {
        blocks::day_facts(db, self.scope.site, self.kind, day, k).await
    }

    async fn totals(
        &self,
        db: &impl ConnectionTrait,
        names: &BTreeSet<String>,
    ) -> Result<Vec<(String, i64)>, TrafficError> {
        let names: Vec<&String> = names.iter().collect();
        let mut totals = Vec::with_capacity(names.len());
        for chunk in names.chunks(500) {
            let mut b = Binder::new(db.get_database_backend());
            let list = b.bind_list(chunk.iter().map(|name| (*name).clone()));
            let sql = self.sum_sql(&mut b, &format!(" AND value IN ({list})"));
            totals.extend(Self::read(db, b, sql).await?);
        }
        Ok(totals)
    }

    async fn everything(
        &self,
        db: &impl ConnectionTrait,
    ) -> Result<Vec<(String, i64)>, TrafficError> {
        let mut b = Binder::new(db.get_database_backend());
        let sql = self.sum_sql(&mut b, "");
        Self::read(db, b, sql).await
    }
}

/// Page views per local hour or per local day of the scope, people and bots apart; every bucket
/// is present, empty ones with zeros.
pub async fn series(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
    bucket: Bucket,
) -> Result<Vec<SeriesPoint>, TrafficError> {
    let mut b = Binder::new(db.get_database_backend());
    let human = b.bind(Part::Human.code());
    let sums = format!(
        "CAST(SUM(CASE WHEN part = {human} THEN views ELSE 0 END) AS BIGINT) AS human, \
         CAST(SUM(CASE WHEN part = {human} THEN 0 ELSE views END) AS BIGINT) AS bot"
    );
    // One row per bucket (not per bucket and part): 90 days are 90 rows.
    let sql = match bucket {
        Bucket::Hour => format!(
            "SELECT hour AS start, {sums} FROM traffic_hourly \
             WHERE hour >= {} AND hour < {}{} GROUP BY hour",
            b.bind(scope.start()),
            b.bind(scope.end()),
            scope.parts(&mut b)
        ),
        Bucket::Day => format!(
            "SELECT day, {sums} FROM traffic_daily_views \
             WHERE day >= {} AND day <= {}{} GROUP BY day",
            b.bind(day_number(scope.from)),
            b.bind(day_number(scope.to)),
            scope.parts(&mut b)
        ),
    };
    let mut starts: BTreeMap<i64, (i64, i64)> = BTreeMap::new();
    for row in db.query_all_raw(b.statement(sql)).await? {
        let start = match bucket {
            Bucket::Hour => row.try_get("", "start")?,
            Bucket::Day => day_start(row.try_get("", "day")?, scope.zone),
        };
        starts.insert(start, (row.try_get("", "human")?, row.try_get("", "bot")?));
    }
    Ok(buckets(starts, scope, bucket))
}

/// The first instant of a local day, by its number ([`day_number`]).
fn day_start(day: i32, zone: Tz) -> i64 {
    let date = NaiveDate::from_num_days_from_ce_opt(day).unwrap_or_default();
    traffic_range::midnight(date, zone).timestamp()
}

/// People's and bots' views per hour or day (its first instant, in Unix seconds) summed into
/// the scope's buckets; every bucket is present, empty ones with zeros.
pub fn buckets(
    hours: BTreeMap<i64, (i64, i64)>,
    scope: &Scope<'_>,
    bucket: Bucket,
) -> Vec<SeriesPoint> {
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
            start: DateTime::<Utc>::from_timestamp(*start, 0).unwrap_or(DateTime::<Utc>::MIN_UTC),
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
    points
}

/// How many names each of people's lists holds.
pub const PEOPLE_TOP: usize = 10;

/// People's lists: where they came from and what they used, and their countries.
#[derive(Debug, Default)]
pub struct PeopleLists {
    pub breakdown: PeopleBreakdown,
    pub countries: Vec<Ranked>,
    /// Named by [`super::rollup_write::campaign_value`].
    pub campaigns: Vec<Ranked>,
    pub channels: Vec<Ranked>,
    /// Named by the status code.
    pub statuses: Vec<Ranked>,
}

/// People's page views by referrer, landing page, browser, system, device and country over
/// the scope, exactly, through [`rank`] from the people's blocks; empty when the filter counts
/// bots only.
pub async fn people(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
) -> Result<PeopleLists, TrafficError> {
    if !Parts::for_filter(scope.who()).contains(&Part::Human) {
        return Ok(PeopleLists::default());
    }
    let (from, to) = (day_number(scope.from), day_number(scope.to));
    let lens = blocks::Lens {
        view: &View::Human,
        site: scope.site,
    };
    let segments = blocks::plan(db, &lens, from, to).await?;
    let mut block_lists = blocks::block_facts(db, &lens, &segments).await?;
    // Each kind's ranking reads its own days and totals: all of them at once.
    let rankings = FactKind::ALL.into_iter().enumerate().map(|(i, kind)| {
        let tops = block_lists
            .iter_mut()
            .map(|kinds| std::mem::take(&mut kinds[i]))
            .collect();
        let segments = &segments;
        async move {
            let ranked = rank(db, &Facts { scope, kind }, segments, tops, PEOPLE_TOP).await?;
            Ok::<Vec<Ranked>, TrafficError>(
                ranked
                    .into_iter()
                    .map(|(name, views)| Ranked { name, views })
                    .collect(),
            )
        }
    });
    let lists = futures_util::future::try_join_all(rankings).await?;
    let mut lists = lists.into_iter();
    let mut next = || lists.next().unwrap_or_default();
    let breakdown = PeopleBreakdown {
        referrers: next(),
        landing_pages: next(),
        browsers: next(),
        systems: next(),
        devices: next(),
    };
    Ok(PeopleLists {
        breakdown,
        countries: next(),
        campaigns: next(),
        channels: next(),
        statuses: next(),
    })
}
