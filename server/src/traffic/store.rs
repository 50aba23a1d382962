//! Writing buffered hits and deleting old ones.
//!
//! A flush upserts one row per key and adds to the count on conflict
//! (`ON CONFLICT (key_hash) DO UPDATE SET count = count + excluded.count`, the same statement on
//! SQLite and PostgreSQL), so flushes from several nodes, or of the same minute twice, add up
//! instead of overwriting each other. Rows go in statements of [`ROWS_PER_STATEMENT`]; a failed
//! statement changes nothing, and it and everything after it go back into the buffer.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::bots::{self, Verdict};
use super::clients::{self, Client};
use app::entities::{setting, traffic_event, traffic_statistic};
use app::services::traffic::{TrafficError, rebuild, rollup_write as rollup};
use blake2::Blake2sMac256;
use blake2::digest::{KeyInit, Mac};
use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, ExprTrait, OnConflict, Query};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, DatabaseConnection, DatabaseTransaction, DbErr, EntityTrait,
    QueryFilter, TransactionTrait,
};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::buffer::Buffer;
use super::hit::{Event, Hit};

/// Rows per INSERT: 11 values each stays far below SQLite's and PostgreSQL's parameter limits.
pub const ROWS_PER_STATEMENT: usize = 1000;
/// Statements per transaction: fewer commits, without holding SQLite's write lock for long.
pub const STATEMENTS_PER_TRANSACTION: usize = 10;
/// Rows deleted per statement by the retention cleanup.
pub const CLEAN_BATCH: u64 = 1000;

/// How visitors' addresses are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum IpPrivacy {
    /// As they are.
    #[default]
    Raw,
    /// As `h:` and a keyed hash: stable (unique counts still work), not reversible without the
    /// key, which lives in the database's `settings` table.
    Hash,
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "could not write traffic rows ({hits} hits kept in memory for the next flush): {source}"
    )]
    Write { hits: u64, source: TrafficError },
    #[error("could not read or create the IP hashing key: {0}")]
    Key(DbErr),
    #[error(
        "the IP hashing key in settings ({IP_KEY_SETTING}) is malformed; delete that row to make a new one"
    )]
    MalformedKey,
    #[error("could not delete old traffic rows after {deleted} were deleted: {source}")]
    Clean { deleted: u64, source: TrafficError },
}

/// What a flush wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlushReport {
    /// Rows inserted or added to (one per key).
    pub rows: u64,
    /// Hits those rows carry.
    pub hits: u64,
    pub millis: u64,
}

/// Writes everything in `buffer`; on error, what was not written is back in the buffer.
/// Flushes of one buffer go one at a time ([`Buffer::flush_turn`]): when this returns, every
/// hit recorded before it was called has been written or put back.
pub async fn flush(
    db: &DatabaseConnection,
    buffer: &Buffer,
    privacy: IpPrivacy,
) -> Result<FlushReport, StoreError> {
    let _turn = buffer.flush_turn().await;
    let started = Instant::now();
    let mut entries: Vec<(Hit, u64)> = buffer.take().into_iter().collect();
    if entries.is_empty() {
        return Ok(FlushReport::default());
    }
    let hasher = match IpHasher::load(db, privacy).await {
        Ok(hasher) => hasher,
        Err(e) => {
            buffer.restore(entries);
            return Err(e);
        }
    };
    // In key order, so each statement walks the unique index forwards.
    entries.sort_unstable_by_key(|(hit, _)| hit.minute);
    let mut agents = Agents::default();
    let mut known = rollup::KnownIds::default();
    let mut report = FlushReport::default();
    let per_transaction = ROWS_PER_STATEMENT * STATEMENTS_PER_TRANSACTION;
    let mut written = 0;
    while written < entries.len() {
        let group = &entries[written..(written + per_transaction).min(entries.len())];
        let mut rows = Vec::with_capacity(group.len());
        let mut events = Vec::new();
        for (hit, n) in group {
            match &hit.event {
                None => rows.extend(to_row(hit, *n, &hasher, &mut agents)),
                Some(event) => events.extend(to_event_row(hit, event, *n, &hasher, &mut agents)),
            }
        }
        if let Err(source) = write_group(db, rows, events, &mut known).await {
            let unwritten = entries.split_off(written);
            let hits = unwritten.iter().map(|(_, n)| n).sum();
            buffer.restore(unwritten);
            return Err(StoreError::Write { hits, source });
        }
        report.rows += group.len() as u64;
        report.hits += group.iter().map(|(_, n)| n).sum::<u64>();
        written += group.len();
    }
    report.millis = started.elapsed().as_millis() as u64;
    crate::metrics::flushed(report.millis);
    Ok(report)
}

/// Writes page views' and events' rows and what they add to the rollups, in one transaction;
/// `known` carries the ids of the groups before it (on an error, drop it).
pub(crate) async fn write_group(
    db: &DatabaseConnection,
    rows: Vec<traffic_statistic::ActiveModel>,
    events: Vec<traffic_event::ActiveModel>,
    known: &mut rollup::KnownIds,
) -> Result<(), TrafficError> {
    // Read before the transaction begins: on SQLite a transaction that reads before its first
    // write fails when another writer commits in between ("database is locked").
    let zone = rebuild::zone_for_writes(db).await?;
    let txn = db.begin().await?;
    let mut delta = rollup::Delta::default();
    let page_views: Vec<_> = rows.iter().filter_map(facts).collect();
    for row in &page_views {
        delta.add(row, zone);
    }
    for event in events.iter().filter_map(event_facts) {
        delta.add_event(&event, zone);
    }
    // The hourly views are written first (`rollup::apply`): the page goals are read after.
    let ids = rollup::apply(&txn, &delta, known).await?;
    let goals = rollup::page_goals(&txn).await?;
    if !goals.is_empty() {
        let mut conversions = rollup::Conversions::default();
        for row in &page_views {
            conversions.add(&row.page_view(), &goals, zone);
        }
        conversions.apply(&txn, &ids).await?;
    }
    drop(page_views);
    insert_counted::<traffic_statistic::Entity>(&txn, rows).await?;
    insert_counted::<traffic_event::Entity>(&txn, events).await?;
    txn.commit().await?;
    Ok(())
}

/// Upserts minute rows (page views' or events'), adding counts on conflict.
async fn insert_counted<E: MinuteRows>(
    txn: &DatabaseTransaction,
    rows: Vec<E::ActiveModel>,
) -> Result<(), TrafficError> {
    let mut rows = rows.into_iter().peekable();
    while rows.peek().is_some() {
        let statement: Vec<_> = rows.by_ref().take(ROWS_PER_STATEMENT).collect();
        E::insert_many(statement)
            .on_conflict(
                OnConflict::column(E::key_hash())
                    .value(
                        E::count(),
                        Expr::col((E::default(), E::count())).add(Expr::col((
                            sea_orm::sea_query::Alias::new("excluded"),
                            E::count(),
                        ))),
                    )
                    .to_owned(),
            )
            .exec_without_returning(txn)
            .await?;
    }
    Ok(())
}

/// What the rollups need of an event row about to be written.
fn event_facts(row: &traffic_event::ActiveModel) -> Option<rollup::EventFacts<'_>> {
    Some(rollup::EventFacts {
        minute: *set(&row.stat_date)?,
        site: set(&row.site)?,
        name: set(&row.name)?,
        props: set(&row.props)?,
        ip: set(&row.ip)?,
        user_agent: set(&row.user_agent)?,
        is_bot: *set(&row.is_bot)?,
        count: *set(&row.count)?,
    })
}

fn set<T: Into<sea_orm::Value>>(v: &sea_orm::ActiveValue<T>) -> Option<&T> {
    match v {
        sea_orm::ActiveValue::Set(v) | sea_orm::ActiveValue::Unchanged(v) => Some(v),
        sea_orm::ActiveValue::NotSet => None,
    }
}

/// What the rollups need of a row about to be written (all of it is set by [`to_row`]).
fn facts(row: &traffic_statistic::ActiveModel) -> Option<rollup::RowFacts<'_>> {
    Some(rollup::RowFacts {
        minute: *set(&row.stat_date)?,
        site: set(&row.site)?,
        path: set(&row.path)?,
        ip: set(&row.ip)?,
        user_agent: set(&row.user_agent)?,
        is_bot: *set(&row.is_bot)?,
        source: set(&row.spider_source)?.as_deref(),
        count: *set(&row.count)?,
        generated: *set(&row.generated)?,
        ref_domain: set(&row.ref_domain)?.as_deref(),
        browser: set(&row.browser)?,
        os: set(&row.os)?,
        device: set(&row.device)?,
        country: set(&row.country)?,
        campaign: [
            set(&row.utm_source)?,
            set(&row.utm_medium)?,
            set(&row.utm_campaign)?,
        ],
        channel: set(&row.channel)?,
        referer: set(&row.referer)?,
        status: *set(&row.status)?,
    })
}

/// What a flush learns of each distinct User-Agent, once: bot or person, and a person's
/// browser, system and device; and of each distinct address, once: its country.
#[derive(Default)]
pub struct Agents {
    agents: HashMap<String, (Verdict, Client)>,
    countries: HashMap<String, String>,
}

impl Agents {
    // Both look up before inserting: a flush asks once per hit, and a key is copied only the
    // first time it is seen.
    pub fn of(&mut self, user_agent: &str) -> &(Verdict, Client) {
        if !self.agents.contains_key(user_agent) {
            self.agents
                .insert(user_agent.to_string(), describe(user_agent));
        }
        &self.agents[user_agent]
    }

    /// The country of an address as the visitor sent it (before any hashing), `""` when
    /// unknown (`super::geo`).
    pub fn country(&mut self, ip: &str) -> &str {
        if !self.countries.contains_key(ip) {
            let country = super::geo::countries().country(ip).unwrap_or_default();
            self.countries.insert(ip.to_string(), country);
        }
        &self.countries[ip]
    }
}

/// Bot or person, and for a person what they browse with.
pub fn describe(user_agent: &str) -> (Verdict, Client) {
    let verdict = bots::classify(user_agent);
    let client = if verdict.is_bot {
        Client {
            browser: String::new(),
            os: String::new(),
            device: clients::BOT_DEVICE,
        }
    } else {
        clients::describe(user_agent)
    };
    (verdict, client)
}

pub(crate) fn to_row(
    hit: &Hit,
    count: u64,
    hasher: &IpHasher,
    agents: &mut Agents,
) -> Option<traffic_statistic::ActiveModel> {
    let Some(minute) = DateTime::<Utc>::from_timestamp(hit.minute, 0) else {
        tracing::warn!(
            minute = hit.minute,
            "hit outside the representable time range skipped"
        );
        return None;
    };
    let country = agents.country(&hit.ip).to_string();
    let ref_domain = app::domain::sites::referrer_domain(&hit.referer, &hit.site);
    let tags = &hit.campaign;
    let channel = ref_domain.as_deref().map_or("", |domain| {
        app::domain::channels::channel(domain, &tags.source, &tags.medium).as_str()
    });
    let (verdict, client) = agents.of(&hit.user_agent);
    let ip = hasher.apply(&hit.ip);
    Some(traffic_statistic::ActiveModel {
        key_hash: Set(key_hash(hit, &ip)),
        stat_date: Set(minute),
        path: Set(hit.path.clone()),
        method: Set(hit.method.clone()),
        ip: Set(ip),
        user_agent: Set(hit.user_agent.clone()),
        referer: Set(hit.referer.clone()),
        locale: Set(hit.locale.clone()),
        is_bot: Set(verdict.is_bot),
        spider_source: Set(verdict.source.map(str::to_string)),
        count: Set(i64::try_from(count).unwrap_or(i64::MAX)),
        generated: Set(false),
        site: Set(hit.site.clone()),
        ref_domain: Set(ref_domain.clone()),
        browser: Set(client.browser.clone()),
        os: Set(client.os.clone()),
        device: Set(client.device.to_string()),
        country: Set(country),
        utm_source: Set(tags.source.clone()),
        utm_medium: Set(tags.medium.clone()),
        utm_campaign: Set(tags.name.clone()),
        channel: Set(channel.to_string()),
        status: Set(i16::try_from(hit.status).unwrap_or(0)),
        ..Default::default()
    })
}

/// An event's row: its page, properties and visitor, with the visitor's country and whether
/// a bot sent it.
pub(crate) fn to_event_row(
    hit: &Hit,
    event: &Event,
    count: u64,
    hasher: &IpHasher,
    agents: &mut Agents,
) -> Option<traffic_event::ActiveModel> {
    let minute = DateTime::<Utc>::from_timestamp(hit.minute, 0)?;
    let country = agents.country(&hit.ip).to_string();
    let is_bot = agents.of(&hit.user_agent).0.is_bot;
    let ip = hasher.apply(&hit.ip);
    Some(traffic_event::ActiveModel {
        key_hash: Set(key_hash(hit, &ip)),
        stat_date: Set(minute),
        site: Set(hit.site.clone()),
        name: Set(event.name.clone()),
        path: Set(hit.path.clone()),
        props: Set(event.props.clone()),
        ip: Set(ip),
        user_agent: Set(hit.user_agent.clone()),
        is_bot: Set(is_bot),
        country: Set(country),
        count: Set(i64::try_from(count).unwrap_or(i64::MAX)),
        ..Default::default()
    })
}

/// The minute in hex, then 96 bits of SHA-256 over the key's fields (the site's only when it
/// has one, so rows from before sites keep their keys) (each length-prefixed so
/// no two keys share an encoding). Leading with the minute keeps a flush's inserts together at
/// the end of the unique index instead of scattered over all of it: on SQLite that made a
/// flush of a million keys several times faster, since each transaction rewrites far fewer
/// index pages.
pub fn key_hash(hit: &Hit, stored_ip: &str) -> String {
    let mut digest = Sha256::new();
    digest.update(hit.minute.to_le_bytes());
    if !hit.site.is_empty() {
        digest.update(b"site");
        digest.update((hit.site.len() as u32).to_le_bytes());
        digest.update(hit.site.as_bytes());
    }
    // Only a tagged hit's key holds its tags, so untagged keys stay what they were.
    if !hit.campaign.is_empty() {
        digest.update(b"utm");
        for tag in [
            &hit.campaign.source,
            &hit.campaign.medium,
            &hit.campaign.name,
        ] {
            digest.update((tag.len() as u32).to_le_bytes());
            digest.update(tag.as_bytes());
        }
    }
    if let Some(event) = &hit.event {
        digest.update(b"event");
        for field in [&event.name, &event.props] {
            digest.update((field.len() as u32).to_le_bytes());
            digest.update(field.as_bytes());
        }
    }
    // Likewise only an answered hit's key holds its status.
    if hit.status != 0 {
        digest.update(b"status");
        digest.update(hit.status.to_le_bytes());
    }
    for field in [
        &hit.method,
        &hit.path,
        stored_ip,
        &hit.user_agent,
        &hit.referer,
        &hit.locale,
    ] {
        digest.update((field.len() as u32).to_le_bytes());
        digest.update(field.as_bytes());
    }
    format!(
        "{:08x}{}",
        hit.minute.div_euclid(60) & 0xffff_ffff,
        hex::encode(&digest.finalize()[..12])
    )
}

/// Places rows written before sites existed (an empty `device`, which every row written since
/// has) under `console`, where they were counted, and describes them as a flush would: the
/// referrer's domain and a person's browser, system and device. Run at start, before the
/// rollups are rebuilt from the rows; returns the rows described.
pub async fn describe_old_rows(db: &DatabaseConnection, console: &str) -> Result<u64, DbErr> {
    use app::services::sql::Binder;
    use sea_orm::ConnectionTrait;
    let mut agents = Agents::default();
    let mut described = 0u64;
    loop {
        let rows = db
            .query_all_raw(Binder::new(db.get_database_backend()).statement(format!(
                "SELECT id, site, user_agent, referer FROM traffic_statistics \
                 WHERE device = '' ORDER BY id LIMIT {CLEAN_BATCH}"
            )))
            .await?;
        if rows.is_empty() {
            return Ok(described);
        }
        // Rows of one (site, agent, referrer) get the same values: one statement for them.
        let mut groups: HashMap<(String, String, String), Vec<i64>> = HashMap::new();
        for row in &rows {
            let site: String = row.try_get("", "site")?;
            let site = if site.is_empty() {
                console.to_string()
            } else {
                site
            };
            groups
                .entry((
                    site,
                    row.try_get("", "user_agent")?,
                    row.try_get("", "referer")?,
                ))
                .or_default()
                .push(row.try_get("", "id")?);
        }
        let txn = db.begin().await?;
        for ((site, user_agent, referer), ids) in groups {
            let (_, client) = agents.of(&user_agent);
            let mut b = Binder::new(txn.get_database_backend());
            let sql = format!(
                "UPDATE traffic_statistics SET site = {}, ref_domain = {}, browser = {}, os = {}, \
                   device = {} WHERE id IN ({})",
                b.bind(site.clone()),
                b.bind(app::domain::sites::referrer_domain(&referer, &site)),
                b.bind(client.browser.clone()),
                b.bind(client.os.clone()),
                b.bind(client.device),
                b.bind_list(ids)
            );
            txn.execute_raw(b.statement(sql)).await?;
        }
        txn.commit().await?;
        described += rows.len() as u64;
        if described % 100_000 < CLEAN_BATCH {
            tracing::info!(
                rows = described,
                "describing traffic rows from before sites"
            );
        }
    }
}

const IP_KEY_SETTING: &str = "traffic.ip_hash_key";

/// Turns addresses into what is stored.
pub enum IpHasher {
    Raw,
    Keyed(Blake2sMac256),
}

impl IpHasher {
    /// With privacy on, reads the key from `settings`, creating it on first use. Several nodes
    /// may race to create it: the insert ignores conflicts and everyone reads the winner's.
    pub async fn load(db: &DatabaseConnection, privacy: IpPrivacy) -> Result<IpHasher, StoreError> {
        if privacy == IpPrivacy::Raw {
            return Ok(IpHasher::Raw);
        }
        // The key keeps hashed addresses from being reversed by hashing every address: it
        // comes from the operating system's generator, not a fast one seeded from the clock.
        let fresh = app::services::sessions::random_key();
        let row = setting::ActiveModel {
            key: Set(IP_KEY_SETTING.into()),
            value: Set(hex::encode(fresh)),
            updated_at: Set(crate::clock::now()),
        };
        setting::Entity::insert(row)
            .on_conflict(
                OnConflict::column(setting::Column::Key)
                    .do_nothing()
                    .to_owned(),
            )
            .exec_without_returning(db)
            .await
            .map_err(StoreError::Key)?;
        let stored = setting::Entity::find_by_id(IP_KEY_SETTING)
            .one(db)
            .await
            .map_err(StoreError::Key)?
            .ok_or_else(|| StoreError::Key(DbErr::RecordNotFound(IP_KEY_SETTING.into())))?;
        let stored = hex::decode(stored.value).map_err(|_| StoreError::MalformedKey)?;
        let mac = <Blake2sMac256 as KeyInit>::new_from_slice(&stored)
            .map_err(|_| StoreError::MalformedKey)?;
        Ok(IpHasher::Keyed(mac))
    }

    pub fn apply(&self, ip: &str) -> String {
        match self {
            IpHasher::Raw => ip.to_string(),
            IpHasher::Keyed(mac) => {
                let mut mac = mac.clone();
                mac.update(ip.as_bytes());
                format!("h:{}", hex::encode(&mac.finalize().into_bytes()[..12]))
            }
        }
    }
}

/// What retention deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cleaned {
    /// Minute rows deleted (page views' and events').
    pub rows: u64,
    /// Everything before this instant is gone: the start of a local day, so the rollups (kept
    /// per day) and the rows end at the same place.
    pub before: DateTime<Utc>,
}

/// Keeps today and the `days` days before it (local days in the rollups' zone) and deletes
/// older rows, [`CLEAN_BATCH`] at a time, and their rollups.
pub async fn clean(
    db: &DatabaseConnection,
    now: DateTime<Utc>,
    days: u32,
) -> Result<Cleaned, StoreError> {
    let rollup_error = |source| StoreError::Clean { deleted: 0, source };
    let zone = rebuild::zone_for_writes(db).await.map_err(rollup_error)?;
    let first_kept =
        app::domain::traffic_range::today(now, zone) - chrono::Days::new(u64::from(days));
    let before = app::domain::traffic_range::midnight(first_kept, zone);
    let rows = delete_in_batches::<traffic_statistic::Entity>(
        db,
        traffic_statistic::Column::StatDate.lt(before),
    )
    .await?;
    let events =
        delete_in_batches::<traffic_event::Entity>(db, traffic_event::Column::StatDate.lt(before))
            .await?;
    rebuild::clean(db, first_kept)
        .await
        .map_err(|source| StoreError::Clean {
            deleted: rows,
            source,
        })?;
    Ok(Cleaned {
        rows: rows + events,
        before,
    })
}

/// Deletes the rows of a traffic table (`traffic_statistics`, `traffic_events`) matching
/// `which`, [`CLEAN_BATCH`] per statement with a pause between, so other writers get the
/// database in between; returns how many were deleted.
pub(crate) async fn delete_in_batches<E: MinuteRows>(
    db: &DatabaseConnection,
    which: sea_orm::sea_query::SimpleExpr,
) -> Result<u64, StoreError> {
    let mut deleted = 0;
    loop {
        let batch = Query::select()
            .column(E::id())
            .from(E::default())
            .and_where(which.clone())
            .limit(CLEAN_BATCH)
            .to_owned();
        let result = E::delete_many()
            .filter(E::id().in_subquery(batch))
            .exec(db)
            .await
            .map_err(|source| StoreError::Clean {
                deleted,
                source: source.into(),
            })?;
        deleted += result.rows_affected;
        if result.rows_affected < CLEAN_BATCH {
            return Ok(deleted);
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// A table of counted minute rows: an `id` key, and a `count` the upsert on `key_hash` adds to.
pub(crate) trait MinuteRows: EntityTrait + Default {
    fn id() -> Self::Column;
    fn key_hash() -> Self::Column;
    fn count() -> Self::Column;
}

macro_rules! minute_rows {
    ($entity:ident) => {
        impl MinuteRows for $entity::Entity {
            fn id() -> $entity::Column {
                $entity::Column::Id
            }
            fn key_hash() -> $entity::Column {
                $entity::Column::KeyHash
            }
            fn count() -> $entity::Column {
                $entity::Column::Count
            }
        }
    };
}

minute_rows!(traffic_statistic);
minute_rows!(traffic_event);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_hash_separates_fields() {
        let a = Hit::new(0, "GET", "/ab", "ip", "c", "", String::new()).0;
        let b = Hit::new(0, "GET", "/a", "ip", "bc", "", String::new()).0;
        assert_ne!(key_hash(&a, "ip"), key_hash(&b, "ip"));
        assert_eq!(key_hash(&a, "ip").len(), 32);
    }

    #[test]
    fn hashed_ips_are_stable_and_not_the_address() {
        let hasher = IpHasher::Keyed(<Blake2sMac256 as KeyInit>::new_from_slice(&[7; 32]).unwrap());
        let once = hasher.apply("192.0.2.1");
        assert_eq!(once, hasher.apply("192.0.2.1"));
        assert_ne!(once, hasher.apply("192.0.2.2"));
        assert!(once.starts_with("h:") && !once.contains("192"));
        assert_eq!(IpHasher::Raw.apply("192.0.2.1"), "192.0.2.1");
    }
}
