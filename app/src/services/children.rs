//! A spread job's parent run and its children (`crate::domain::job::spread`): the children a
//! parent is given, where they stand, and the parent ended once they all have.
//!
//! Every write here runs in a transaction that has locked the job's lane
//! (`super::lanes::lock`): siblings that end at once on two nodes settle their parent one
//! after the other, the second seeing the first's child ended.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect,
};

use crate::domain::job::spread::Children;
use crate::domain::run::RunStatus;
use crate::entities::job_run;

/// The child of `parent` for shard `index` of `total`, meant for `node`, due at once.
pub fn child_of(
    parent: &job_run::Model,
    index: usize,
    total: usize,
    node: Option<&str>,
    now: DateTime<Utc>,
) -> job_run::ActiveModel {
    job_run::ActiveModel {
        job_id: Set(parent.job_id),
        trigger: Set(parent.trigger),
        scheduled_for: Set(parent.scheduled_for),
        status: Set(RunStatus::Pending),
        attempts: Set(0),
        // Each shard does its own part of the work: a key of its own, the same on every
        // attempt and re-trigger of that shard.
        idempotency_key: Set(format!("{}#{index}", parent.idempotency_key)),
        params: Set(parent.params.clone()),
        override_timeout_ms: Set(parent.override_timeout_ms),
        override_retry: Set(parent.override_retry.clone()),
        policy: Set(parent.policy.clone()),
        waits_for_pause: Set(parent.waits_for_pause),
        business_date: Set(parent.business_date),
        backfill_id: Set(parent.backfill_id),
        // Outside the job's lane: the parent holds it while its children run side by side.
        due_at: Set(Some(now)),
        parent_id: Set(Some(parent.id)),
        shard_index: Set(Some(index as i32)),
        shard_total: Set(Some(total as i32)),
        node_hint: Set(node.map(str::to_string)),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
}

/// Where the children of `parent` stand: the latest child of each shard.
pub async fn of(db: &impl ConnectionTrait, parent: i64) -> Result<Children, DbErr> {
    let rows: Vec<(Option<i32>, i64, RunStatus)> = job_run::Entity::find()
        .select_only()
        .column(job_run::Column::ShardIndex)
        .column(job_run::Column::Id)
        .column(job_run::Column::Status)
        .filter(job_run::Column::ParentId.eq(parent))
        .order_by_asc(job_run::Column::Id)
        .into_tuple()
        .all(db)
        .await?;
    let rows: Vec<(i32, i64, RunStatus)> = rows
        .into_iter()
        .map(|(index, id, status)| (index.unwrap_or_default(), id, status))
        .collect();
    Ok(Children::count(&rows))
}

/// A parent that ended, or ended otherwise than it had, because a child of it did.
#[derive(Debug, Clone, PartialEq)]
pub struct ParentEnded {
    pub parent_id: i64,
    pub status: RunStatus,
    pub children: Children,
    /// The latest child that failed, when the parent is dead: what its alert says.
    pub failed_child: Option<job_run::Model>,
}

/// Ends each parent among `parents` whose children have all ended: succeeded, cancelled or
/// dead by [`Children::outcome`]. A parent ended before is written again when the outcome
/// changed (a re-triggered shard succeeded); the same outcome again changes nothing.
pub async fn settle_parents(
    db: &impl ConnectionTrait,
    parents: &[i64],
    now: DateTime<Utc>,
) -> Result<Vec<ParentEnded>, DbErr> {
    let mut ended = Vec::new();
    let mut ids = parents.to_vec();
    ids.sort_unstable();
    ids.dedup();
    for parent_id in ids {
        let children = of(db, parent_id).await?;
        let Some(status) = children.outcome() else {
            continue;
        };
        let written = job_run::Entity::update_many()
            .col_expr(job_run::Column::Status, Expr::value(status))
            .col_expr(job_run::Column::FinishedAt, Expr::value(now))
            .col_expr(job_run::Column::UpdatedAt, Expr::value(now))
            .col_expr(
                job_run::Column::CancelRequestedAt,
                Expr::value(Option::<DateTime<Utc>>::None),
            )
            .filter(job_run::Column::Id.eq(parent_id))
            .filter(job_run::Column::Status.ne(status))
            .exec(db)
            .await?
            .rows_affected;
        if written == 0 {
            continue;
        }
        let failed_child = if status == RunStatus::Dead {
            job_run::Entity::find()
                .filter(job_run::Column::ParentId.eq(parent_id))
                .filter(job_run::Column::Status.eq(RunStatus::Dead))
                .order_by_desc(job_run::Column::Id)
                .one(db)
                .await?
        } else {
            None
        };
        ended.push(ParentEnded {
            parent_id,
            status,
            children,
            failed_child,
        });
    }
    Ok(ended)
}

/// The children of `parent` still going: waiting ones (by id) and running ones.
pub async fn active(
    db: &impl ConnectionTrait,
    parent: i64,
) -> Result<Vec<(i64, RunStatus)>, DbErr> {
    job_run::Entity::find()
        .select_only()
        .column(job_run::Column::Id)
        .column(job_run::Column::Status)
        .filter(job_run::Column::ParentId.eq(parent))
        .filter(job_run::Column::Status.is_in(RunStatus::ACTIVE.iter().copied()))
        .into_tuple()
        .all(db)
        .await
}

/// Whether `run` is a parent: a run of a spread job's tick, given (or to be given) children.
pub fn is_parent(run: &job_run::Model) -> bool {
    run.parent_id.is_none() && run.shard_total.is_some()
}

/// A child as [`family`] reads it: id, parent, shard index and total, status.
type ChildRow = (i64, Option<i64>, Option<i32>, Option<i32>, RunStatus);

/// The children of each parent among `parents`, oldest first, by parent.
pub async fn family(
    db: &impl ConnectionTrait,
    parents: &[i64],
) -> Result<std::collections::HashMap<i64, Vec<crate::views::runs::ChildRun>>, DbErr> {
    let mut family: std::collections::HashMap<i64, Vec<_>> = Default::default();
    for chunk in parents.chunks(500) {
        let rows: Vec<ChildRow> = job_run::Entity::find()
            .select_only()
            .column(job_run::Column::Id)
            .column(job_run::Column::ParentId)
            .column(job_run::Column::ShardIndex)
            .column(job_run::Column::ShardTotal)
            .column(job_run::Column::Status)
            .filter(job_run::Column::ParentId.is_in(chunk.to_vec()))
            .order_by_asc(job_run::Column::Id)
            .into_tuple()
            .all(db)
            .await?;
        for (id, parent, index, total, status) in rows {
            let (Some(parent), Some(shard)) = (parent, shard_of(index, total)) else {
                continue;
            };
            family
                .entry(parent)
                .or_default()
                .push(crate::views::runs::ChildRun { id, shard, status });
        }
    }
    Ok(family)
}

/// A child's shard from its two columns.
pub fn shard_of(
    index: Option<i32>,
    total: Option<i32>,
) -> Option<crate::domain::job::spread::Shard> {
    Some(crate::domain::job::spread::Shard {
        index: u32::try_from(index?).ok()?,
        total: u32::try_from(total?).ok()?,
    })
}
