//! The rollups' time zone, rebuilding them from the minute rows, and retention.
//!
//! Days and hours are local to one zone, kept in `settings` under [`ZONE_SETTING`]; the codes
//! the rollups are kept under depend on [`traffic_parts::layout`], kept under
//! [`LAYOUT_SETTING`]. When either changes (a new zone configured, a bot source moved to
//! another category, an upgrade), or generated traffic is removed, [`rebuild`] recomputes every
//! rollup from `traffic_statistics` (the record) in one transaction.

use chrono::NaiveDate;
use chrono_tz::Tz;
use sea_orm::{ConnectionTrait, DatabaseBackend, DatabaseConnection, TransactionTrait};

use super::TrafficError;
use super::rollup_write::{
    Conversions, Delta, EventFacts, KnownIds, PageGoal, RowFacts, add_daily, apply, day_number,
    page_goals, place,
};
use crate::domain::{traffic_parts, traffic_range};
use crate::services::sql::Binder;

/// The `settings` key naming the zone the rollups' days and hours are in.
pub const ZONE_SETTING: &str = "traffic.rollup_zone";
/// The `settings` key holding the [`traffic_parts::layout`] the rollups were written with.
pub const LAYOUT_SETTING: &str = "traffic.rollup_layout";
/// Raw rows read per step of a rebuild.
const REBUILD_CHUNK: u64 = 20_000;

/// The zone the stored rollups are in, if any were ever written.
pub async fn stored_zone(db: &impl ConnectionTrait) -> Result<Option<String>, TrafficError> {
    setting(db, ZONE_SETTING).await
}

async fn setting(db: &impl ConnectionTrait, key: &str) -> Result<Option<String>, TrafficError> {
    let mut b = Binder::new(db.get_database_backend());
    let sql = format!("SELECT value FROM settings WHERE key = {}", b.bind(key));
    Ok(db
        .query_one_raw(b.statement(sql))
        .await?
        .map(|row| row.try_get("", "value"))
        .transpose()?)
}

/// The zone writers place rows in: the stored one, or UTC (recorded) on a database that has
/// none yet; [`ensure`] at startup moves it to the configured zone.
pub async fn zone_for_writes(db: &impl ConnectionTrait) -> Result<Tz, TrafficError> {
    if let Some(name) = stored_zone(db).await? {
        return name.parse().map_err(|_| TrafficError::UnknownZone(name));
    }
    set_zone(db, "UTC").await?;
    Ok(Tz::UTC)
}

async fn set_zone(db: &impl ConnectionTrait, name: &str) -> Result<(), TrafficError> {
    set_setting(db, ZONE_SETTING, name).await
}

async fn set_setting(
    db: &impl ConnectionTrait,
    key: &str,
    value: &str,
) -> Result<(), TrafficError> {
    let mut b = Binder::new(db.get_database_backend());
    let sql = format!(
        "INSERT INTO settings (key, value, updated_at) VALUES ({}, {}, {}) \
         ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
        b.bind(key),
        b.bind(value),
        b.bind(crate::clock::now())
    );
    db.execute_raw(b.statement(sql)).await?;
    Ok(())
}

/// Makes sure the rollups are in `zone` and this build's layout, rebuilding them when they are
/// not (the first start after an upgrade, or after the configured zone changed). Returns
/// whether it rebuilt.
pub async fn ensure(db: &DatabaseConnection, zone: Tz) -> Result<bool, TrafficError> {
    if stored_zone(db).await?.as_deref() == Some(zone.name())
        && setting(db, LAYOUT_SETTING).await?.as_deref() == Some(traffic_parts::layout().as_str())
    {
        fill_daily_views(db, zone).await?;
        return Ok(false);
    }
    rebuild(db, zone).await?;
    Ok(true)
}

/// Fills `traffic_daily_views` from `traffic_hourly` when it is empty and the hours are not:
/// once, at the first start after the migration that added it
/// (`migration/src/m20261218_000049_traffic_daily_views.rs`). Returns the days' rows written.
///
/// It holds `traffic_hourly` as [`rebuild`] does, so a flush of another instance is either in
/// the hours read here or waits and writes both tables itself.
pub async fn fill_daily_views(db: &DatabaseConnection, zone: Tz) -> Result<usize, TrafficError> {
    // Looked at before anything is locked: every start and every traffic command passes here,
    // and only the first after the upgrade has anything to do.
    if daily_views_filled(db).await? {
        return Ok(0);
    }
    let txn = db.begin().await?;
    if txn.get_database_backend() == DatabaseBackend::Postgres {
        txn.execute_unprepared("LOCK TABLE traffic_hourly IN EXCLUSIVE MODE")
            .await?;
    }
    // Another instance may have filled it meanwhile.
    if daily_views_filled(&txn).await? {
        return Ok(0);
    }
    let sql = "SELECT hour, site, part, generated, views FROM traffic_hourly";
    let mut daily = std::collections::BTreeMap::new();
    for row in txn
        .query_all_raw(Binder::new(txn.get_database_backend()).statement(sql.into()))
        .await?
    {
        let hour: i64 = row.try_get("", "hour")?;
        let code: String = row.try_get("", "part")?;
        let part = traffic_parts::Part::parse(&code).ok_or(TrafficError::UnknownPart(code))?;
        let at = chrono::DateTime::from_timestamp(hour, 0).unwrap_or_default();
        let key = (
            place(at, zone).1,
            row.try_get("", "site")?,
            part,
            row.try_get("", "generated")?,
        );
        *daily.entry(key).or_insert(0i64) += row.try_get::<i64>("", "views")?;
    }
    add_daily(&txn, &daily).await?;
    txn.commit().await?;
    Ok(daily.len())
}

/// Whether `traffic_daily_views` holds any row.
async fn daily_views_filled(db: &impl ConnectionTrait) -> Result<bool, TrafficError> {
    let sql = "SELECT 1 AS x FROM traffic_daily_views LIMIT 1";
    Ok(db
        .query_one_raw(Binder::new(db.get_database_backend()).statement(sql.into()))
        .await?
        .is_some())
}

/// Recomputes every rollup from `traffic_statistics`, in one transaction, placing days and
/// hours in `zone`; returns the rows read.
///
/// On PostgreSQL the transaction first takes `traffic_hourly` in EXCLUSIVE mode: a flush writes
/// that table before committing its rows, so a flush either committed before the rebuild reads
/// (and is counted by it) or waits and adds its own delta after (and is counted once).
pub async fn rebuild(db: &DatabaseConnection, zone: Tz) -> Result<u64, TrafficError> {
    let txn = db.begin().await?;
    if txn.get_database_backend() == DatabaseBackend::Postgres {
        txn.execute_unprepared("LOCK TABLE traffic_hourly IN EXCLUSIVE MODE")
            .await?;
    }
    for table in [
        "traffic_blocks",
        "traffic_block_tails",
        "traffic_daily_facts",
        "traffic_hourly",
        "traffic_daily_views",
        "traffic_daily_pages",
        "traffic_daily_sets",
        "traffic_daily_events",
        "traffic_daily_goals",
        "traffic_ids",
    ] {
        txn.execute_unprepared(&format!("DELETE FROM {table}"))
            .await?;
    }
    let goals = page_goals(&txn).await?;
    let mut known = KnownIds::default();
    let mut read = rebuild_page_views(&txn, zone, &goals, &mut known).await?;
    read += rebuild_events(&txn, zone, &mut known).await?;
    set_zone(&txn, zone.name()).await?;
    set_setting(&txn, LAYOUT_SETTING, &traffic_parts::layout()).await?;
    txn.commit().await?;
    Ok(read)
}

/// The rollups of page views, and the page goals' conversions, from `traffic_statistics`.
async fn rebuild_page_views(
    txn: &impl ConnectionTrait,
    zone: Tz,
    goals: &[PageGoal],
    known: &mut KnownIds,
) -> Result<u64, TrafficError> {
    let mut after = 0i64;
    let mut read = 0u64;
    loop {
        let mut b = Binder::new(txn.get_database_backend());
        let sql = format!(
            "SELECT id, stat_date, site, path, ip, user_agent, is_bot, spider_source, count, \
                    generated, ref_domain, browser, os, device, country, \
                    utm_source, utm_medium, utm_campaign, channel, referer, status \
             FROM traffic_statistics WHERE id > {} ORDER BY id LIMIT {REBUILD_CHUNK}",
            b.bind(after)
        );
        let rows = txn.query_all_raw(b.statement(sql)).await?;
        let mut delta = Delta::default();
        let mut conversions = Conversions::default();
        for row in &rows {
            let path: String = row.try_get("", "path")?;
            let ip: String = row.try_get("", "ip")?;
            let user_agent: String = row.try_get("", "user_agent")?;
            let source: Option<String> = row.try_get("", "spider_source")?;
            let site: String = row.try_get("", "site")?;
            let ref_domain: Option<String> = row.try_get("", "ref_domain")?;
            let browser: String = row.try_get("", "browser")?;
            let os: String = row.try_get("", "os")?;
            let device: String = row.try_get("", "device")?;
            let country: String = row.try_get("", "country")?;
            let tags: [String; 3] = [
                row.try_get("", "utm_source")?,
                row.try_get("", "utm_medium")?,
                row.try_get("", "utm_campaign")?,
            ];
            let channel: String = row.try_get("", "channel")?;
            let referer: String = row.try_get("", "referer")?;
            let facts = RowFacts {
                minute: row.try_get("", "stat_date")?,
                site: &site,
                path: &path,
                ip: &ip,
                user_agent: &user_agent,
                is_bot: row.try_get("", "is_bot")?,
                source: source.as_deref(),
                count: row.try_get("", "count")?,
                generated: row.try_get("", "generated")?,
                ref_domain: ref_domain.as_deref(),
                browser: &browser,
                os: &os,
                device: &device,
                country: &country,
                campaign: [&tags[0], &tags[1], &tags[2]],
                channel: &channel,
                referer: &referer,
                status: row.try_get("", "status")?,
            };
            delta.add(&facts, zone);
            conversions.add(&facts.page_view(), goals, zone);
            after = row.try_get("", "id")?;
        }
        let ids = apply(txn, &delta, known).await?;
        conversions.apply(txn, &ids).await?;
        read += rows.len() as u64;
        if (rows.len() as u64) < REBUILD_CHUNK {
            return Ok(read);
        }
        tracing::info!(rows = read, "rebuilding traffic rollups");
    }
}

/// The rollups of people's events, from `traffic_events`.
async fn rebuild_events(
    txn: &impl ConnectionTrait,
    zone: Tz,
    known: &mut KnownIds,
) -> Result<u64, TrafficError> {
    let mut after = 0i64;
    let mut read = 0u64;
    loop {
        let mut b = Binder::new(txn.get_database_backend());
        let sql = format!(
            "SELECT id, stat_date, site, name, props, ip, user_agent, is_bot, count \
             FROM traffic_events WHERE id > {} ORDER BY id LIMIT {REBUILD_CHUNK}",
            b.bind(after)
        );
        let rows = txn.query_all_raw(b.statement(sql)).await?;
        let mut delta = Delta::default();
        for row in &rows {
            let text = |column| row.try_get::<String>("", column);
            let (site, name, props) = (text("site")?, text("name")?, text("props")?);
            let (ip, user_agent) = (text("ip")?, text("user_agent")?);
            let facts = EventFacts {
                minute: row.try_get("", "stat_date")?,
                site: &site,
                name: &name,
                props: &props,
                ip: &ip,
                user_agent: &user_agent,
                is_bot: row.try_get("", "is_bot")?,
                count: row.try_get("", "count")?,
            };
            delta.add_event(&facts, zone);
            after = row.try_get("", "id")?;
        }
        apply(txn, &delta, known).await?;
        read += rows.len() as u64;
        if (rows.len() as u64) < REBUILD_CHUNK {
            return Ok(read);
        }
    }
}

/// Drops the rollups of days before `first_kept` (a local date in the rollups' zone), and the
/// ids last seen before it; returns the rollup rows deleted.
pub async fn clean(db: &impl ConnectionTrait, first_kept: NaiveDate) -> Result<u64, TrafficError> {
    let day = day_number(first_kept);
    let mut deleted = 0;
    for sql in [
        "DELETE FROM traffic_blocks WHERE first_day < {}",
        "DELETE FROM traffic_block_tails WHERE first_day < {}",
        "DELETE FROM traffic_daily_views WHERE day < {}",
        "DELETE FROM traffic_daily_pages WHERE day < {}",
        "DELETE FROM traffic_daily_facts WHERE day < {}",
        "DELETE FROM traffic_daily_sets WHERE day < {}",
        "DELETE FROM traffic_daily_events WHERE day < {}",
        "DELETE FROM traffic_daily_goals WHERE day < {}",
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
