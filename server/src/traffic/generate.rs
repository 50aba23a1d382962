//! `bulwark traffic generate`: realistic synthetic traffic, marked `generated`, for the demo
//! and for benchmarks; `--remove` deletes it again without touching real hits.

use std::collections::HashMap;

use app::entities::traffic_statistic;
use app::services::traffic::{rebuild, rollup_write::KnownIds};
use chrono::{DateTime, Duration, Utc};
use sea_orm::{ActiveValue::Set, ColumnTrait, DatabaseConnection, EntityTrait};

use super::hit::{self, Hit};
use super::store::{self, IpHasher, StoreError};
use super::synthetic::Synthetic;

/// Rows written per transaction: large, because each transaction also merges the day's
/// visitor sets in the rollups once.
const GROUP: usize = 100_000;

/// Writes `per_day` hits on `site` for each of the last `days` days (today up to `now`);
/// returns the rows.
pub async fn generate(
    db: &DatabaseConnection,
    site: &str,
    days: u32,
    per_day: u64,
    now: DateTime<Utc>,
    seed: u64,
) -> Result<u64, StoreError> {
    let mut synthetic =
        Synthetic::with_visitors(seed, u32::try_from(per_day / 4).unwrap_or(u32::MAX));
    let mut agents = store::Agents::default();
    let mut known = KnownIds::default();
    let today = now
        .date_naive()
        .and_hms_opt(0, 0, 0)
        .unwrap_or_default()
        .and_utc();
    let mut rows = 0;
    for day in (0..i64::from(days)).rev() {
        let start = today - Duration::days(day);
        let span = if day == 0 {
            (now - start).num_seconds().max(1)
        } else {
            86_400
        };
        let mut counts: HashMap<Hit, u64> = HashMap::new();
        for _ in 0..per_day {
            let r = synthetic.request(start, span);
            let locale = hit::locale(&r.path, Some(r.accept_language), &[]);
            let (hit, _) = Hit::new(
                r.at.timestamp(),
                "GET",
                &r.path,
                &r.ip,
                r.user_agent,
                r.referer,
                locale,
            );
            *counts.entry(hit.on(site).answered(r.status)).or_default() += 1;
        }
        let entries: Vec<(Hit, u64)> = counts.into_iter().collect();
        for group in entries.chunks(GROUP) {
            let models: Vec<traffic_statistic::ActiveModel> = group
                .iter()
                .filter_map(|(hit, n)| {
                    let mut row = store::to_row(hit, *n, &IpHasher::Raw, &mut agents)?;
                    // Never merged with a real visitor's row of the same key.
                    row.key_hash = Set(format!("{}g", &store::key_hash(hit, &hit.ip)[..31]));
                    row.generated = Set(true);
                    Some(row)
                })
                .collect();
            store::write_group(db, models, Vec::new(), &mut known)
                .await
                .map_err(|source| StoreError::Write {
                    hits: group.iter().map(|(_, n)| n).sum(),
                    source,
                })?;
            rows += group.len() as u64;
        }
    }
    Ok(rows)
}

/// Whether any traffic row exists (the demo seeds only an empty table).
pub async fn any_traffic(db: &DatabaseConnection) -> Result<bool, sea_orm::DbErr> {
    Ok(traffic_statistic::Entity::find().one(db).await?.is_some())
}

/// Deletes generated rows in batches, then rebuilds the rollups (they cannot subtract a
/// visitor from a day's set); returns how many rows were deleted.
pub async fn remove(db: &DatabaseConnection) -> Result<u64, StoreError> {
    let deleted = store::delete_in_batches::<traffic_statistic::Entity>(
        db,
        traffic_statistic::Column::Generated.eq(true),
    )
    .await?;
    let rebuild = async {
        let zone = rebuild::zone_for_writes(db).await?;
        rebuild::rebuild(db, zone).await
    };
    rebuild
        .await
        .map_err(|source| StoreError::Clean { deleted, source })?;
    Ok(deleted)
}
