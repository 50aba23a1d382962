//! Tails: every value of a long-tailed fact summed over a block of days, for the lists the
//! Traffic page ranks from every value of the range (pages not found, what AI crawlers
//! fetched; `super::answers`).
//!
//! Those tails are flat (most pages not found are asked for once), so no bound from the
//! blocks' short lists ([`super::blocks::TopList`]) can prove a top list, and summing a 90-day
//! range's daily rows per value (30,000 rows into 20,000 values) is most of the page's time
//! in the database. So `traffic_block_tails` keeps, per site (or all), kind and aligned block
//! of settled days ([`super::blocks::segments`], the same blocks), the whole list of sums; a
//! range adds half a dozen stored lists in Rust and sums only its unsettled days' rows.
//!
//! A list is checked against its days' revisions like a block ([`super::blocks`]): one whose
//! days were written to since is summed again before it is read, so a late flush or an import
//! of old logs never leaves a figure behind.

use std::collections::HashMap;
use std::io::{Error as IoError, ErrorKind};

use sea_orm::{ConnectionTrait, DatabaseBackend};

use super::TrafficError;
use super::blocks::{self, Segment, site_condition};
use super::rollup_write::FactKind;
use crate::services::sql::{self, Binder};

/// zstd's level for the stored lists: the lists are text-like and repetitive (page keys of
/// one site), and a higher level costs a build more than it saves a read.
const LEVEL: i32 = 3;

/// The kinds of facts kept as tails.
pub const KINDS: [FactKind; 2] = [FactKind::NotFound, FactKind::AiFetch];

/// One site's (or all sites') sums of one kind of fact.
#[derive(Debug, Clone, Copy)]
pub struct Tail<'a> {
    pub site: Option<&'a str>,
    pub kind: FactKind,
}

impl Tail<'_> {
    /// How `traffic_block_tails.site` names it: the site, or `*` for all (as
    /// `traffic_blocks` does; no host is `*`).
    fn site_key(&self) -> &str {
        self.site.unwrap_or("*")
    }

    /// ` WHERE …` selecting its rows of `traffic_block_tails`, binding their values.
    fn condition(&self, b: &mut Binder) -> String {
        format!(
            " WHERE site = {} AND kind = {}",
            b.bind(self.site_key()),
            b.bind(self.kind.code())
        )
    }
}

/// Every value of the tail's kind with its views over the days `from..=to`, in no order.
pub async fn sums(
    db: &impl ConnectionTrait,
    tail: Tail<'_>,
    from: i32,
    to: i32,
) -> Result<Vec<(String, i64)>, TrafficError> {
    let (revisions, newest) = blocks::revisions(db, from, to).await?;
    // The newest day and the one before it are still being written to, as for the blocks.
    let segments = blocks::segments(from, to, newest.map(|d| d - 2));
    let stored = if segments.iter().any(|s| matches!(s, Segment::Block { .. })) {
        stored_revisions(db, tail, from, to).await?
    } else {
        HashMap::new()
    };
    let mut totals = Totals::default();
    let (mut current, mut days) = (Vec::new(), Vec::new());
    for segment in segments {
        let (first, size) = match segment {
            Segment::Day(day) => {
                days.push(day);
                continue;
            }
            Segment::Block { first, days } => (first, days),
        };
        let revision = blocks::revision_sum(&revisions, first, size);
        if stored.get(&(first, size)) == Some(&revision) {
            current.push((first, size));
            continue;
        }
        match build(db, tail, first, size, revision).await {
            Ok(sums) => totals.add_owned(sums),
            // Storing can wait for a long write (SQLite's single writer) and give up: the
            // sums are still right, read day by day this time.
            Err(error) => {
                tracing::warn!(%error, kind = tail.kind.code(), site = tail.site_key(), first, size, "traffic tail not stored; reading its days");
                days.extend(first..first + size);
            }
        }
    }
    let mut lists = stored_lists(db, tail, &current).await?;
    for (first, size) in current {
        match lists.remove(&(first, size)) {
            Some(list) => totals.add_stored(&list)?,
            // Dropped since it was checked (retention, a rebuild): its days are still there.
            None => days.extend(first..first + size),
        }
    }
    totals.add_owned(day_rows(db, tail, &days).await?);
    Ok(totals.0.into_iter().collect())
}

/// Stores every list the ranges ending at the newest day can use, of every kind, for all
/// sites and each site with traffic in the last `days` days, as [`super::blocks::warm`] does
/// for the blocks; returns how many it stored.
pub async fn warm(db: &impl ConnectionTrait, days: i32) -> Result<usize, TrafficError> {
    let Some(newest) = blocks::newest_day(db).await? else {
        return Ok(0);
    };
    let from = newest - days + 1;
    let mut b = Binder::new(db.get_database_backend());
    let sql = format!(
        "SELECT DISTINCT site FROM traffic_daily_sets WHERE day >= {}",
        b.bind(from)
    );
    let mut sites: Vec<Option<String>> = vec![None];
    for row in db.query_all_raw(b.statement(sql)).await? {
        sites.push(Some(row.try_get("", "site")?));
    }
    let mut built = 0;
    for site in &sites {
        for kind in KINDS {
            let tail = Tail {
                site: site.as_deref(),
                kind,
            };
            built += warm_tail(db, tail, from, newest).await?;
        }
    }
    Ok(built)
}

/// Stores every aligned block of the tail inside `from..=to` that is missing or stale;
/// returns how many it stored.
async fn warm_tail(
    db: &impl ConnectionTrait,
    tail: Tail<'_>,
    from: i32,
    to: i32,
) -> Result<usize, TrafficError> {
    let (revisions, newest) = blocks::revisions(db, from, to).await?;
    let Some(settled) = newest.map(|d| d - 2) else {
        return Ok(0);
    };
    let stored = stored_revisions(db, tail, from, to).await?;
    let mut built = 0;
    for (first, days) in blocks::aligned(from, settled.min(to)) {
        let revision = blocks::revision_sum(&revisions, first, days);
        if stored.get(&(first, days)) != Some(&revision) {
            build(db, tail, first, days, revision).await?;
            built += 1;
        }
    }
    Ok(built)
}

/// Sums per value, added up from lists: tens of thousands of lookups per range, hashed with
/// aHash, faster than the standard library's SipHash on short keys and, keyed at random per
/// map as well, as hard for visitors choosing paths to make collide.
#[derive(Default)]
struct Totals(HashMap<String, i64, ahash::RandomState>);

impl Totals {
    fn add(&mut self, value: &str, views: i64) {
        match self.0.get_mut(value) {
            Some(total) => *total += views,
            None => {
                self.0.insert(value.to_string(), views);
            }
        }
    }

    fn add_owned(&mut self, sums: Vec<(String, i64)>) {
        for (value, views) in sums {
            *self.0.entry(value).or_default() += views;
        }
    }

    /// Adds a stored list ([`encode`]) without copying the values it already holds.
    fn add_stored(&mut self, stored: &[u8]) -> Result<(), TrafficError> {
        let bytes = zstd::stream::decode_all(stored).map_err(TrafficError::CorruptTail)?;
        let mut rest = bytes.as_slice();
        while !rest.is_empty() {
            let (value, views, after) = entry(rest).map_err(TrafficError::CorruptTail)?;
            self.add(value, views);
            rest = after;
        }
        Ok(())
    }
}

/// A stored list, before compression: per value, its length in bytes (`u32`), its UTF-8
/// bytes and its views (`i64`), both little-endian.
fn encode(sums: &[(String, i64)]) -> Result<Vec<u8>, TrafficError> {
    let mut bytes = Vec::with_capacity(sums.iter().map(|(v, _)| v.len() + 12).sum());
    for (value, views) in sums {
        let len = u32::try_from(value.len())
            .map_err(|_| TrafficError::EncodeTail(IoError::from(ErrorKind::InvalidInput)))?;
        bytes.extend_from_slice(&len.to_le_bytes());
        bytes.extend_from_slice(value.as_bytes());
        bytes.extend_from_slice(&views.to_le_bytes());
    }
    zstd::bulk::compress(&bytes, LEVEL).map_err(TrafficError::EncodeTail)
}

/// The first entry of a decompressed list and what follows it.
fn entry(bytes: &[u8]) -> Result<(&str, i64, &[u8]), IoError> {
    let cut = |what: &str| IoError::new(ErrorKind::UnexpectedEof, format!("cut short in {what}"));
    let (len, rest) = bytes
        .split_first_chunk::<4>()
        .ok_or_else(|| cut("a length"))?;
    let len = usize::try_from(u32::from_le_bytes(*len))
        .map_err(|e| IoError::new(ErrorKind::InvalidData, e))?;
    let (value, rest) = rest.split_at_checked(len).ok_or_else(|| cut("a value"))?;
    let value = std::str::from_utf8(value).map_err(|e| IoError::new(ErrorKind::InvalidData, e))?;
    let (views, rest) = rest
        .split_first_chunk::<8>()
        .ok_or_else(|| cut("a count"))?;
    Ok((value, i64::from_le_bytes(*views), rest))
}

/// The tail's rows of single days, for [`Totals`] to add up: a few days' rows are few, and
/// without a `GROUP BY value` SQLite seeks them in the day index instead of walking every row
/// of the kind in value order (2 ms against 0.1 for two days of 404s at 30,000 hits a day).
async fn day_rows(
    db: &impl ConnectionTrait,
    tail: Tail<'_>,
    days: &[i32],
) -> Result<Vec<(String, i64)>, TrafficError> {
    if days.is_empty() {
        return Ok(Vec::new());
    }
    let mut b = Binder::new(db.get_database_backend());
    let sql = format!(
        "SELECT value, views AS n FROM traffic_daily_facts WHERE kind = {} AND day IN ({}){}",
        b.bind(tail.kind.code()),
        b.bind_list(days.iter().copied()),
        site_condition(tail.site, &mut b)
    );
    value_sums(db, b, sql).await
}

/// Sums the block `first` + `days` from the daily rows and stores it as current for
/// `revision`; returns the sums.
async fn build(
    db: &impl ConnectionTrait,
    tail: Tail<'_>,
    first: i32,
    days: i32,
    revision: i64,
) -> Result<Vec<(String, i64)>, TrafficError> {
    let mut b = Binder::new(db.get_database_backend());
    let sql = format!(
        "SELECT value, CAST(SUM(views) AS BIGINT) AS n FROM traffic_daily_facts \
         WHERE kind = {} AND day >= {} AND day <= {}{} GROUP BY value",
        b.bind(tail.kind.code()),
        b.bind(first),
        b.bind(first + days - 1),
        site_condition(tail.site, &mut b)
    );
    let sums = value_sums(db, b, sql).await?;
    let mut b = Binder::new(db.get_database_backend());
    let sql = format!(
        "INSERT INTO traffic_block_tails (site, kind, first_day, days, revision, sums) \
         VALUES ({}, {}, {}, {}, {}, {}) \
         ON CONFLICT (site, kind, first_day, days) DO UPDATE \
           SET revision = excluded.revision, sums = excluded.sums",
        b.bind(tail.site_key()),
        b.bind(tail.kind.code()),
        b.bind(first),
        b.bind(days),
        b.bind(revision),
        b.bind(encode(&sums)?)
    );
    db.execute_raw(b.statement(sql)).await?;
    Ok(sums)
}

/// The revision each stored block of the tail starting in `from..=to` was summed at.
async fn stored_revisions(
    db: &impl ConnectionTrait,
    tail: Tail<'_>,
    from: i32,
    to: i32,
) -> Result<HashMap<(i32, i32), i64>, TrafficError> {
    let mut b = Binder::new(db.get_database_backend());
    let sql = format!(
        "SELECT first_day, days, revision FROM traffic_block_tails{} \
         AND first_day >= {} AND first_day <= {}",
        tail.condition(&mut b),
        b.bind(from),
        b.bind(to)
    );
    blocks::by_block(db.query_all_raw(b.statement(sql)).await?, "revision")
}

/// The stored lists of the blocks `wanted`, by first day and length.
async fn stored_lists(
    db: &impl ConnectionTrait,
    tail: Tail<'_>,
    wanted: &[(i32, i32)],
) -> Result<HashMap<(i32, i32), Vec<u8>>, TrafficError> {
    if wanted.is_empty() {
        return Ok(HashMap::new());
    }
    let mut b = Binder::new(db.get_database_backend());
    let condition = tail.condition(&mut b);
    let sql = format!(
        "SELECT first_day, days, sums FROM traffic_block_tails{condition} AND ({})",
        blocks::any_block(&mut b, wanted)
    );
    blocks::by_block(db.query_all_raw(b.statement(sql)).await?, "sums")
}

/// The `(value, n)` rows of `sql` read as one row. A long tail (every AI fetch of the range,
/// every property of the events listed) is thousands of rows, and either driver hands rows
/// over one by one at several times the query's cost: they come back as two arrays on
/// PostgreSQL (`array_agg` costs it next to nothing and they travel in binary), one JSON text
/// on SQLite ([`sql::sqlite_json_rows`]).
pub(super) async fn value_sums(
    db: &impl ConnectionTrait,
    b: Binder,
    sql: String,
) -> Result<Vec<(String, i64)>, TrafficError> {
    if b.backend() == DatabaseBackend::Postgres {
        // Both aggregates read the same rows in the same order: the arrays pair up.
        let sql = format!("SELECT array_agg(value) AS vs, array_agg(n) AS ns FROM ({sql}) s");
        let Some(row) = db.query_one_raw(b.statement(sql)).await? else {
            return Ok(Vec::new());
        };
        let values: Option<Vec<String>> = row.try_get("", "vs")?;
        let counts: Option<Vec<i64>> = row.try_get("", "ns")?;
        return Ok(values
            .unwrap_or_default()
            .into_iter()
            .zip(counts.unwrap_or_default())
            .collect());
    }
    let sql = sql::sqlite_json_rows(&sql, &["value", "n"]);
    let Some(row) = db.query_one_raw(b.statement(sql)).await? else {
        return Ok(Vec::new());
    };
    let json: String = row.try_get("", "rows")?;
    serde_json::from_str(&json).map_err(TrafficError::ReadRows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_lists_add_up_exactly() {
        let a = vec![("/x".to_string(), 3), ("/ü\u{1f}y".to_string(), 1)];
        let b = vec![("/x".to_string(), 4), (String::new(), 2)];
        let mut totals = Totals::default();
        totals.add_stored(&encode(&a).unwrap()).unwrap();
        totals.add_stored(&encode(&b).unwrap()).unwrap();
        totals.add_owned(vec![("/x".to_string(), 1)]);
        let mut all: Vec<(String, i64)> = totals.0.into_iter().collect();
        all.sort();
        assert_eq!(
            all,
            vec![
                (String::new(), 2),
                ("/x".to_string(), 8),
                ("/ü\u{1f}y".to_string(), 1)
            ]
        );
    }

    #[test]
    fn a_cut_list_is_an_error_not_a_short_sum() {
        let bytes = encode(&[("/page".to_string(), 7)]).unwrap();
        let mut raw = zstd::stream::decode_all(bytes.as_slice()).unwrap();
        raw.pop();
        let cut = zstd::bulk::compress(&raw, LEVEL).unwrap();
        assert!(Totals::default().add_stored(&cut).is_err());
    }
}
