//! Goals and custom events: defining a site's goals (a goal added late counts the page views
//! still kept, [`add`]), and reading events and conversions over a range, from the rollups
//! ([`events`], [`goals`]) and from the minute rows ([`from_rows`]).
//!
//! A conversion is a people's page view matching a page goal's pattern, or a people's event of
//! an event goal's name; a goal's visits are the visits (a visitor on a day, per site) with
//! one, and its rate those visits over the site's people's visits.

use std::collections::{BTreeMap, HashMap, HashSet};

use chrono::{DateTime, Utc};
use sea_orm::{ConnectionTrait, DatabaseBackend, DatabaseConnection, DbErr};

use super::TrafficError;
use super::answers::fact_sums;
use super::blocks::{site_condition, sort_top};
use super::query::{Filter, StatsQuery};
use super::rebuild::zone_for_writes;
use super::rollup_read::Scope;
use super::rollup_write::{
    Conversions, FactKind, PageGoal, PageView, assign, day_number, deserialize, place,
    visitor_digest,
};
use crate::domain::goals::{self, GoalTarget, PagePattern};
use crate::domain::traffic_parts::{Part, Parts};
use crate::domain::traffic_range::VisitorType;
use crate::services::audit::{self, Actor};
use crate::services::sql::{Binder, begin_write};
use crate::views::traffic::{EventViews, GoalInfo, GoalViews, PropViews};

/// Events listed at most.
pub const TOP_EVENTS: usize = 20;
/// Property values listed per event at most.
pub const TOP_PROPS: usize = 10;
/// Minute rows read per step of a backfill.
const CHUNK: u64 = 20_000;

#[derive(Debug, thiserror::Error)]
pub enum GoalError {
    #[error("{0}")]
    Invalid(crate::domain::Problem),
    #[error("{site} is not a registered site")]
    UnknownSite { site: String },
    #[error("{site} already has a goal named {name}")]
    Exists { site: String, name: String },
    #[error("{site} has no goal named {name}")]
    NotFound { site: String, name: String },
    #[error(transparent)]
    Traffic(#[from] TrafficError),
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// What a goal is to be, as typed.
pub struct NewGoal<'a> {
    pub site: &'a str,
    pub name: &'a str,
    pub target: GoalTarget,
}

/// The goals of one site, or of every site, by site and name.
pub async fn list(db: &impl ConnectionTrait, site: Option<&str>) -> Result<Vec<GoalInfo>, DbErr> {
    Ok(stored_goals(db, site)
        .await?
        .into_iter()
        .map(|goal| goal.info)
        .collect())
}

/// Adds a goal to a site (the console's host or a registered one) and records who did. A
/// page goal counts at once the page views still kept: in the same transaction, which holds
/// `traffic_hourly` first, so every flush either committed before (and is counted here) or
/// reads the new goal after (`super::rollup_write::page_goals`) and counts its own.
pub async fn add(
    db: &DatabaseConnection,
    new: NewGoal<'_>,
    console: &str,
    who: &Actor<'_>,
    now: DateTime<Utc>,
) -> Result<GoalInfo, GoalError> {
    let site = known_site(db, new.site, console).await?;
    let name = goals::goal_name(new.name).map_err(GoalError::Invalid)?;
    let txn = begin_write(db).await?;
    lock_hourly(&txn).await?;
    let mut b = Binder::new(txn.get_database_backend());
    let sql = format!(
        "INSERT INTO traffic_goals (site, name, kind, value, created_at) \
         VALUES ({}, {}, {}, {}, {}) ON CONFLICT (site, name) DO NOTHING RETURNING id",
        b.bind(site.as_str()),
        b.bind(name.as_str()),
        b.bind(new.target.kind()),
        b.bind(new.target.value()),
        b.bind(now)
    );
    let Some(row) = txn.query_one_raw(b.statement(sql)).await? else {
        return Err(GoalError::Exists { site, name });
    };
    let id: i64 = row.try_get("", "id")?;
    if let GoalTarget::Page(pattern) = &new.target {
        backfill(&txn, id, &site, pattern).await?;
    }
    let goal = GoalInfo {
        site: site.clone(),
        name: name.clone(),
        kind: new.target.kind().to_string(),
        target: new.target.value().to_string(),
    };
    let detail = serde_json::json!({ "name": name, "kind": goal.kind, "target": goal.target });
    audit::record(&txn, who, "goal.added", &site, detail, now).await?;
    txn.commit().await?;
    Ok(goal)
}

/// Removes a site's goal and its conversions, and records who did.
pub async fn remove(
    db: &DatabaseConnection,
    site: &str,
    name: &str,
    who: &Actor<'_>,
    now: DateTime<Utc>,
) -> Result<(), GoalError> {
    let site = crate::domain::sites::normalise_host(site).map_err(GoalError::Invalid)?;
    let name = name.trim().to_string();
    let txn = begin_write(db).await?;
    // As `add`: a flush that read the goal before it went cannot write after.
    lock_hourly(&txn).await?;
    let mut b = Binder::new(txn.get_database_backend());
    let sql = format!(
        "DELETE FROM traffic_goals WHERE site = {} AND name = {} RETURNING id",
        b.bind(site.as_str()),
        b.bind(name.as_str())
    );
    let Some(row) = txn.query_one_raw(b.statement(sql)).await? else {
        return Err(GoalError::NotFound { site, name });
    };
    let id: i64 = row.try_get("", "id")?;
    let mut b = Binder::new(txn.get_database_backend());
    let sql = format!(
        "DELETE FROM traffic_daily_goals WHERE goal_id = {}",
        b.bind(id)
    );
    txn.execute_raw(b.statement(sql)).await?;
    let detail = serde_json::json!({ "name": name });
    audit::record(&txn, who, "goal.removed", &site, detail, now).await?;
    txn.commit().await?;
    Ok(())
}

/// Holds off flushes until the caller's transaction ends: on PostgreSQL by locking
/// `traffic_hourly`, which a flush writes before it reads the goals; SQLite's write lock,
/// taken by `begin_write`, already does.
async fn lock_hourly(txn: &impl ConnectionTrait) -> Result<(), DbErr> {
    if txn.get_database_backend() == DatabaseBackend::Postgres {
        txn.execute_unprepared("LOCK TABLE traffic_hourly IN EXCLUSIVE MODE")
            .await?;
    }
    Ok(())
}

/// The host as stored, if it is the console's or a registered site's.
async fn known_site(
    db: &impl ConnectionTrait,
    typed: &str,
    console: &str,
) -> Result<String, GoalError> {
    use super::sites::SiteError;
    super::sites::known(db, typed, console)
        .await
        .map_err(|e| match e {
            SiteError::NotFound(site) => GoalError::UnknownSite { site },
            SiteError::Invalid(problem) => GoalError::Invalid(problem),
            SiteError::Db(e) => GoalError::Db(e),
            other => GoalError::Db(DbErr::Custom(other.to_string())),
        })
}

/// Counts a new page goal's conversions in the page views kept, inside the caller's
/// transaction.
async fn backfill(
    txn: &impl ConnectionTrait,
    id: i64,
    site: &str,
    pattern: &str,
) -> Result<(), TrafficError> {
    let Some(pattern) = PagePattern::new(pattern) else {
        return Ok(());
    };
    let zone = zone_for_writes(txn).await?;
    let goal = [PageGoal {
        id,
        site: site.to_string(),
        pattern,
    }];
    let mut conversions = Conversions::default();
    let mut after = 0i64;
    loop {
        let mut b = Binder::new(txn.get_database_backend());
        let sql = format!(
            "SELECT id, stat_date, path, ip, user_agent, count FROM traffic_statistics \
             WHERE site = {} AND NOT is_bot AND id > {} ORDER BY id LIMIT {CHUNK}",
            b.bind(site),
            b.bind(after)
        );
        let rows = txn.query_all_raw(b.statement(sql)).await?;
        for row in &rows {
            let text = |column| row.try_get::<String>("", column);
            let (path, ip, user_agent) = (text("path")?, text("ip")?, text("user_agent")?);
            let view = PageView {
                minute: row.try_get("", "stat_date")?,
                site,
                path: &path,
                visitor: visitor_digest(&ip, &user_agent),
                is_bot: false,
                count: row.try_get("", "count")?,
            };
            conversions.add(&view, &goal, zone);
            after = row.try_get("", "id")?;
        }
        if (rows.len() as u64) < CHUNK {
            break;
        }
    }
    let ids = assign(txn, &conversions.last_days()).await?;
    conversions.apply(txn, &ids).await
}

/// People's events over the scope, most sent first, with their properties' values.
pub async fn events(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
) -> Result<Vec<EventViews>, TrafficError> {
    if !counts_people(scope) {
        return Ok(Vec::new());
    }
    let mut b = Binder::new(db.get_database_backend());
    let sql = format!(
        "SELECT name, count, visitors FROM traffic_daily_events \
         WHERE day >= {} AND day <= {}{}",
        b.bind(day_number(scope.from)),
        b.bind(day_number(scope.to)),
        site_condition(scope.site, &mut b)
    );
    let mut sums: BTreeMap<String, (i64, i64)> = BTreeMap::new();
    for row in db.query_all_raw(b.statement(sql)).await? {
        let visitors = deserialize(&row.try_get::<Vec<u8>>("", "visitors")?)?;
        let sum = sums.entry(row.try_get("", "name")?).or_default();
        sum.0 += row.try_get::<i64>("", "count")?;
        sum.1 += visitors.len() as i64;
    }
    // The properties are only read when there are events to list them for.
    if sums.is_empty() {
        return Ok(Vec::new());
    }
    let props = fact_sums(db, scope, FactKind::EventProp, &[]).await?;
    Ok(listed(sums, props))
}

/// The events to list, with their properties' values (each `name␟key␟value` with a count).
fn listed(sums: BTreeMap<String, (i64, i64)>, props: Vec<(String, i64)>) -> Vec<EventViews> {
    let mut events: Vec<_> = sums
        .into_iter()
        .map(|(name, (count, visits))| EventViews {
            name,
            count,
            visits,
            props: Vec::new(),
        })
        .collect();
    events.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.name.cmp(&b.name)));
    events.truncate(TOP_EVENTS);
    let mut by_event: HashMap<String, Vec<(String, i64)>> = HashMap::new();
    for (value, count) in props {
        let mut parts = value.splitn(2, '\u{1f}');
        let (Some(name), Some(rest)) = (parts.next(), parts.next()) else {
            continue;
        };
        by_event
            .entry(name.to_string())
            .or_default()
            .push((rest.to_string(), count));
    }
    for event in &mut events {
        let mut values = by_event.remove(&event.name).unwrap_or_default();
        sort_top(&mut values);
        event.props = values
            .into_iter()
            .take(TOP_PROPS)
            .map(|(pair, count)| {
                let (key, value) = pair.split_once('\u{1f}').unwrap_or((&pair, ""));
                PropViews {
                    key: key.to_string(),
                    value: value.to_string(),
                    count,
                }
            })
            .collect();
    }
    events
}

/// Whether the scope counts people (events and goals are only theirs).
fn counts_people(scope: &Scope<'_>) -> bool {
    Parts::for_filter(scope.who()).contains(&Part::Human)
}

/// A stored goal, as the readers need it.
struct Goal {
    id: i64,
    info: GoalInfo,
}

async fn stored_goals(db: &impl ConnectionTrait, site: Option<&str>) -> Result<Vec<Goal>, DbErr> {
    let mut b = Binder::new(db.get_database_backend());
    let sql = format!(
        "SELECT id, site, name, kind, value FROM traffic_goals WHERE 1 = 1{} \
         ORDER BY site, name",
        site_condition(site, &mut b)
    );
    let mut goals = Vec::new();
    for row in db.query_all_raw(b.statement(sql)).await? {
        goals.push(Goal {
            id: row.try_get("", "id")?,
            info: GoalInfo {
                site: row.try_get("", "site")?,
                name: row.try_get("", "name")?,
                kind: row.try_get("", "kind")?,
                target: row.try_get("", "value")?,
            },
        });
    }
    Ok(goals)
}

/// The goals of the scope's sites over its days, from the rollups.
pub async fn goals(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
) -> Result<Vec<GoalViews>, TrafficError> {
    if !counts_people(scope) {
        return Ok(Vec::new());
    }
    let goals = stored_goals(db, scope.site).await?;
    if goals.is_empty() {
        return Ok(Vec::new());
    }
    let visits = people_visits(db, scope).await?;
    let mut views = Vec::with_capacity(goals.len());
    for goal in goals {
        let (conversions, converted) = match goal.info.kind.as_str() {
            "page" => {
                let mut b = Binder::new(db.get_database_backend());
                let sql = format!(
                    "SELECT conversions AS n, visitors FROM traffic_daily_goals \
                     WHERE goal_id = {} AND day >= {} AND day <= {}",
                    b.bind(goal.id),
                    b.bind(day_number(scope.from)),
                    b.bind(day_number(scope.to))
                );
                summed(db, b, sql).await?
            }
            _ => {
                let mut b = Binder::new(db.get_database_backend());
                let sql = format!(
                    "SELECT count AS n, visitors FROM traffic_daily_events \
                     WHERE site = {} AND name = {} AND day >= {} AND day <= {}",
                    b.bind(goal.info.site.as_str()),
                    b.bind(goal.info.target.as_str()),
                    b.bind(day_number(scope.from)),
                    b.bind(day_number(scope.to))
                );
                summed(db, b, sql).await?
            }
        };
        let of = visits.get(&goal.info.site).copied().unwrap_or(0);
        views.push(goal_views(goal.info, conversions, converted, of));
    }
    Ok(views)
}

/// Σ `n` and Σ the visitors' counts of the days a statement selects.
async fn summed(
    db: &impl ConnectionTrait,
    b: Binder,
    sql: String,
) -> Result<(i64, i64), TrafficError> {
    let (mut n, mut visits) = (0, 0);
    for row in db.query_all_raw(b.statement(sql)).await? {
        n += row.try_get::<i64>("", "n")?;
        visits += deserialize(&row.try_get::<Vec<u8>>("", "visitors")?)?.len() as i64;
    }
    Ok((n, visits))
}

fn goal_views(info: GoalInfo, conversions: i64, visits: i64, of: i64) -> GoalViews {
    GoalViews {
        site: info.site,
        name: info.name,
        kind: info.kind,
        target: info.target,
        conversions,
        visits,
        rate: if of > 0 {
            visits as f64 / of as f64
        } else {
            0.0
        },
    }
}

/// People's visits per site over the scope's days.
async fn people_visits(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
) -> Result<HashMap<String, i64>, TrafficError> {
    let mut b = Binder::new(db.get_database_backend());
    let sql = format!(
        "SELECT site, CAST(SUM(visits) AS BIGINT) AS n FROM traffic_daily_sets \
         WHERE part = {} AND day >= {} AND day <= {}{} GROUP BY site",
        b.bind(Part::Human.code()),
        b.bind(day_number(scope.from)),
        b.bind(day_number(scope.to)),
        site_condition(scope.site, &mut b)
    );
    let mut visits = HashMap::new();
    for row in db.query_all_raw(b.statement(sql)).await? {
        visits.insert(row.try_get("", "site")?, row.try_get("", "n")?);
    }
    Ok(visits)
}

/// A visit: a site, a local day and a visitor's digest.
type Visit = (String, i32, i64);

/// Events and goals from the minute rows: the definition the rollups are tested against.
/// Under a filter the rollups do not keep (country, campaign, status), they count what the
/// visits the filter keeps did: an event, or a page view matching a goal, counts when its
/// visitor had a page view the filter keeps that day on that site (a campaign's visitors who
/// went on to sign up, though the sign-up page itself carries no campaign tags).
pub async fn from_rows(
    db: &impl ConnectionTrait,
    query: &StatsQuery,
) -> Result<(Vec<EventViews>, Vec<GoalViews>), DbErr> {
    if !counts_people(&query.scope()) {
        return Ok(Default::default());
    }
    // Only a filter the rollups do not keep chooses visits; without one, every people's visit
    // counts and only their number per site is needed.
    let kept = if query.reads_rows() {
        Some(people_visits_from_rows(db, query).await?)
    } else {
        None
    };
    let visits = match &kept {
        Some(kept) => {
            let mut visits: HashMap<String, i64> = HashMap::new();
            for (site, _, _) in kept {
                *visits.entry(site.clone()).or_default() += 1;
            }
            visits
        }
        None => visits_per_site_from_rows(db, query).await?,
    };
    let only = kept.as_ref();
    let events = events_from_rows(db, query, only).await?;
    let mut goals = Vec::new();
    for goal in stored_goals(db, query.site.as_deref()).await? {
        let (conversions, converted) = match GoalTarget::stored(&goal.info.kind, &goal.info.target)
        {
            Some(GoalTarget::Page(pattern)) => {
                page_goal_from_rows(db, query, &goal.info.site, &pattern, only).await?
            }
            Some(GoalTarget::Event(name)) => events
                .1
                .get(&(goal.info.site.clone(), name))
                .map_or((0, 0), |(n, visits)| (*n, visits.len() as i64)),
            None => (0, 0),
        };
        let of = visits.get(goal.info.site.as_str()).copied().unwrap_or(0);
        goals.push(goal_views(goal.info, conversions, converted, of));
    }
    Ok((events.0, goals))
}

/// People's visits per site, counted by the database day by day (as `super::stats` counts
/// visits).
async fn visits_per_site_from_rows(
    db: &impl ConnectionTrait,
    query: &StatsQuery,
) -> Result<HashMap<String, i64>, DbErr> {
    let mut visits: HashMap<String, i64> = HashMap::new();
    for day in query.from.iter_days().take_while(|d| *d <= query.to) {
        let one_day = StatsQuery {
            from: day,
            to: day,
            ..query.clone()
        };
        let filter = people_rows(db, &one_day, false);
        let sql = format!(
            "SELECT site, COUNT(*) AS n FROM \
               (SELECT DISTINCT site, ip, user_agent FROM traffic_statistics WHERE {}) v \
             GROUP BY site",
            filter.sql
        );
        for row in db.query_all_raw(filter.statement(sql)).await? {
            *visits.entry(row.try_get("", "site")?).or_default() += row.try_get::<i64>("", "n")?;
        }
    }
    Ok(visits)
}

/// The minute rows' filter for people's rows of the query's site and days, without the
/// filters the rollups do not keep (those choose visits, not rows).
fn people_rows(db: &impl ConnectionTrait, query: &StatsQuery, narrowed: bool) -> Filter {
    let mut people = query.clone();
    people.visitors = VisitorType::Human;
    if !narrowed {
        people.country = None;
        people.campaign = None;
        people.status = None;
    }
    Filter::new(
        db.get_database_backend(),
        query.start(),
        query.end(),
        &people,
    )
}

/// The visits of people's page views the query keeps.
async fn people_visits_from_rows(
    db: &impl ConnectionTrait,
    query: &StatsQuery,
) -> Result<HashSet<Visit>, DbErr> {
    let filter = people_rows(db, query, true);
    let sql = format!(
        "SELECT DISTINCT stat_date, site, ip, user_agent FROM traffic_statistics WHERE {}",
        filter.sql
    );
    let mut visits = HashSet::new();
    for row in db.query_all_raw(filter.statement(sql)).await? {
        let minute: DateTime<Utc> = row.try_get("", "stat_date")?;
        let (ip, agent): (String, String) =
            (row.try_get("", "ip")?, row.try_get("", "user_agent")?);
        let day = place(minute, query.zone).1;
        visits.insert((row.try_get("", "site")?, day, visitor_digest(&ip, &agent)));
    }
    Ok(visits)
}

/// Events per (site, name), with their visits.
type EventSums = HashMap<(String, String), (i64, HashSet<(i32, i64)>)>;

/// People's events over the query's days (of the `only` visits, when given): listed, and
/// summed per site and name for the event goals.
async fn events_from_rows(
    db: &impl ConnectionTrait,
    query: &StatsQuery,
    only: Option<&HashSet<Visit>>,
) -> Result<(Vec<EventViews>, EventSums), DbErr> {
    let mut b = Binder::new(db.get_database_backend());
    let sql = format!(
        "SELECT stat_date, site, name, props, ip, user_agent, count FROM traffic_events \
         WHERE NOT is_bot AND stat_date >= {} AND stat_date < {}{}",
        b.bind(query.start()),
        b.bind(query.end()),
        site_condition(query.site.as_deref(), &mut b)
    );
    let mut sums = EventSums::new();
    let mut props: HashMap<String, i64> = HashMap::new();
    for row in db.query_all_raw(b.statement(sql)).await? {
        let minute: DateTime<Utc> = row.try_get("", "stat_date")?;
        let text = |column| row.try_get::<String>("", column);
        let (site, name) = (text("site")?, text("name")?);
        let visit = (
            site.clone(),
            place(minute, query.zone).1,
            visitor_digest(&text("ip")?, &text("user_agent")?),
        );
        if only.is_some_and(|kept| !kept.contains(&visit)) {
            continue;
        }
        let count: i64 = row.try_get("", "count")?;
        let stored: BTreeMap<String, String> =
            serde_json::from_str(&text("props")?).unwrap_or_default();
        for (key, value) in stored {
            *props
                .entry(super::rollup_write::joined(&[&name, &key, &value]))
                .or_default() += count;
        }
        let sum = sums.entry((site, name)).or_default();
        sum.0 += count;
        sum.1.insert((visit.1, visit.2));
    }
    let mut by_name: BTreeMap<String, (i64, i64)> = BTreeMap::new();
    for ((_, name), (count, visits)) in &sums {
        let sum = by_name.entry(name.clone()).or_default();
        sum.0 += count;
        sum.1 += visits.len() as i64;
    }
    Ok((listed(by_name, props.into_iter().collect()), sums))
}

/// What every path a pattern matches starts with: the pattern up to its first `*`.
fn pattern_prefix(pattern: &str) -> &str {
    pattern.split('*').next().unwrap_or("")
}

/// A page goal's conversions and converting visits from the minute rows.
async fn page_goal_from_rows(
    db: &impl ConnectionTrait,
    query: &StatsQuery,
    site: &str,
    pattern_text: &str,
    only: Option<&HashSet<Visit>>,
) -> Result<(i64, i64), DbErr> {
    let Some(pattern) = PagePattern::new(pattern_text) else {
        return Ok((0, 0));
    };
    let Filter {
        binder: mut b,
        sql: rows,
    } = people_rows(db, query, false);
    // Only the paths that start as the pattern does (compared whole: LIKE's wildcards may be
    // in a path).
    let prefix = pattern_prefix(pattern_text);
    let sql = format!(
        "SELECT stat_date, path, ip, user_agent, count FROM traffic_statistics \
         WHERE {rows} AND site = {} AND substr(path, 1, {}) = {}",
        b.bind(site),
        b.bind(i32::try_from(prefix.chars().count()).unwrap_or(i32::MAX)),
        b.bind(prefix)
    );
    let (mut conversions, mut visits) = (0, HashSet::new());
    for row in db.query_all_raw(b.statement(sql)).await? {
        let path: String = row.try_get("", "path")?;
        if !pattern.matches(&path) {
            continue;
        }
        let minute: DateTime<Utc> = row.try_get("", "stat_date")?;
        let (ip, agent): (String, String) =
            (row.try_get("", "ip")?, row.try_get("", "user_agent")?);
        let visit = (
            site.to_string(),
            place(minute, query.zone).1,
            visitor_digest(&ip, &agent),
        );
        if only.is_some_and(|kept| !kept.contains(&visit)) {
            continue;
        }
        conversions += row.try_get::<i64>("", "count")?;
        visits.insert(visit);
    }
    Ok((conversions, visits.len() as i64))
}
