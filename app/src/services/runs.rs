//! Read-side queries over runs for the home page.

use chrono::{DateTime, Duration, DurationRound, Utc};
use sea_orm::{ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QuerySelect};

use crate::api::dashboard::HourBucket;
use crate::entities::job_run;

/// Runs created in each of the last `hours` whole hours (the current one included), split by
/// how they ended. Hours without runs are present with zeros, oldest first.
pub async fn per_hour(
    db: &impl ConnectionTrait,
    now: DateTime<Utc>,
    hours: u32,
) -> Result<Vec<HourBucket>, DbErr> {
    let current_hour = now
        .duration_trunc(Duration::hours(1))
        .map_err(|e| DbErr::Custom(format!("cannot truncate {now} to the hour: {e}")))?;
    let start = current_hour - Duration::hours(i64::from(hours.saturating_sub(1)));

    let rows: Vec<(DateTime<Utc>, String)> = job_run::Entity::find()
        .select_only()
        .column(job_run::Column::CreatedAt)
        .column(job_run::Column::Status)
        .filter(job_run::Column::CreatedAt.gte(start))
        .into_tuple()
        .all(db)
        .await?;

    let mut buckets: Vec<HourBucket> = (0..hours)
        .map(|i| HourBucket {
            hour: start + Duration::hours(i64::from(i)),
            ..HourBucket::default()
        })
        .collect();
    for (created_at, status) in rows {
        let index = (created_at - start).num_hours();
        let Some(bucket) = usize::try_from(index).ok().and_then(|i| buckets.get_mut(i)) else {
            continue;
        };
        match status.as_str() {
            "succeeded" => bucket.succeeded += 1,
            "dead" => bucket.failed += 1,
            _ => bucket.other += 1,
        }
    }
    Ok(buckets)
}
