//! Concurrency pools as stored (`crate::domain::pool`): kept by a jobs file's `[[pool]]`, read
//! by the claim (`server/src/engine/claim.rs`), shown with what each holds on the Overview and
//! in `/metrics`.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DbErr, EntityTrait, ExprTrait, QueryFilter,
    QueryOrder, QuerySelect, RelationTrait, Set,
};

use crate::domain::pool::Pool;
use crate::domain::run::RunStatus;
use crate::entities::{job, job_run, pool};
use crate::views::overview::PoolUsage;

/// Creates or resizes `pool`; `true` when that changed something.
pub async fn store(
    db: &impl ConnectionTrait,
    pool: &Pool,
    now: DateTime<Utc>,
) -> Result<bool, DbErr> {
    let existing = pool::Entity::find_by_id(pool.name.clone()).one(db).await?;
    if existing.as_ref().is_some_and(|p| p.size == pool.size) {
        return Ok(false);
    }
    pool::Entity::insert(pool::ActiveModel {
        name: Set(pool.name.clone()),
        size: Set(pool.size),
        updated_at: Set(now),
    })
    .on_conflict(
        OnConflict::column(pool::Column::Name)
            .update_columns([pool::Column::Size, pool::Column::UpdatedAt])
            .to_owned(),
    )
    .exec_without_returning(db)
    .await?;
    Ok(true)
}

/// Every pool with its running and waiting runs, by name.
pub async fn usage(db: &impl ConnectionTrait, now: DateTime<Utc>) -> Result<Vec<PoolUsage>, DbErr> {
    let pools = pool::Entity::find()
        .order_by_asc(pool::Column::Name)
        .all(db)
        .await?;
    if pools.is_empty() {
        return Ok(Vec::new());
    }
    // A spread job's parent runs nothing itself: its children take the places.
    let takes_a_place = Condition::any()
        .add(job_run::Column::ParentId.is_not_null())
        .add(job_run::Column::ShardTotal.is_null());
    let running = counted(
        db,
        Condition::all()
            .add(job_run::Column::Status.eq(RunStatus::Running))
            .add(takes_a_place),
    )
    .await?;
    let waiting = counted(
        db,
        Condition::all()
            .add(job_run::Column::DueAt.lte(now))
            .add(job_run::Column::Status.ne(RunStatus::Running)),
    )
    .await?;
    let of = |counts: &[(String, i64)], name: &str| {
        counts
            .iter()
            .find(|(p, _)| p == name)
            .map_or(0, |(_, n)| u64::try_from(*n).unwrap_or(0))
    };
    Ok(pools
        .into_iter()
        .map(|p| PoolUsage {
            running: of(&running, &p.name),
            waiting: of(&waiting, &p.name),
            name: p.name,
            size: p.size,
        })
        .collect())
}

/// Runs of pool jobs meeting `condition`, counted by pool.
async fn counted(
    db: &impl ConnectionTrait,
    condition: Condition,
) -> Result<Vec<(String, i64)>, DbErr> {
    job_run::Entity::find()
        .select_only()
        .column_as(Expr::col((job::Entity, job::Column::Pool)), "pool")
        .column_as(job_run::Column::Id.count(), "n")
        .join(sea_orm::JoinType::InnerJoin, job_run::Relation::Job.def())
        .filter(Expr::col((job::Entity, job::Column::Pool)).ne(""))
        .filter(condition)
        .group_by(Expr::col((job::Entity, job::Column::Pool)))
        .into_tuple()
        .all(db)
        .await
}
