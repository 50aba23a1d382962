//! A spread job's tick (`app/src/domain/job/spread.rs`): its parent run is claimed like any run,
//! by a node that may run the job, and given its children here instead of an attempt.
//!
//! The claiming node reads the live nodes that may run the job (itself among them, whether or
//! not its heartbeat is written yet) and plans one child per node for a broadcast, or the
//! shards over those nodes in turn. Each child is due at once and meant for its node
//! (`node_hint`): a claim takes a child meant for another node only once that node is gone
//! (`super::claim`). A child whose node died mid-attempt (its lease taken over) or handed it
//! back at shutdown is meant for no node any more (`super::settle`): the next node that may
//! run the job takes it, never one that may not. An ordinary retry stays with its node.
//!
//! The parent keeps the job's lane, running without a lease (recovery leaves it alone), until
//! its last child ends (`app::services::children::settle_parents`, called where runs settle).

use app::domain::job::spread::Spread;
use app::entities::job_run;
use app::services::children;
use app::services::placement::{self, Place};
use chrono::{DateTime, Utc};
use sea_orm::{ConnectionTrait, DbErr, EntityTrait};

use super::Shared;

/// A claimed parent, with what its job asks of the nodes that run it.
pub struct Parent {
    pub run: job_run::Model,
    pub spread: Spread,
    pub run_on: app::domain::labels::Labels,
    pub kind: app::domain::job::Kind,
}

/// Gives each of `parents` its children and leaves it running without a lease. Returns how
/// many children were made.
pub async fn expand(
    shared: &Shared,
    txn: &impl ConnectionTrait,
    parents: &[Parent],
    now: DateTime<Utc>,
) -> Result<usize, DbErr> {
    if parents.is_empty() {
        return Ok(0);
    }
    let places = with_self(shared, placement::live(txn, now).await?);
    let mut made = 0;
    for parent in parents {
        let mut nodes = placement::matching(&places, &parent.run_on, parent.kind);
        nodes.sort_unstable();
        let plan = parent.spread.plan(&nodes);
        let total = plan.len();
        for (index, node) in plan.into_iter().enumerate() {
            let child = children::child_of(&parent.run, index, total, node, now);
            job_run::Entity::insert(child).exec(txn).await?;
        }
        made += total;
        given(txn, parent.run.id, total, now).await?;
        tracing::info!(
            run = parent.run.id,
            children = total,
            "spread over the nodes"
        );
    }
    Ok(made)
}

/// The live nodes, this one among them as it is configured now.
fn with_self(shared: &Shared, mut places: Vec<Place>) -> Vec<Place> {
    let config = &shared.config;
    places.retain(|p| p.node_id != config.node_id);
    places.push(Place {
        node_id: config.node_id.clone(),
        labels: config.labels.clone(),
        commands: config.allow_commands,
    });
    places
}

/// The parent holds no lease and counts no attempt: it runs nothing itself.
async fn given(
    txn: &impl ConnectionTrait,
    parent: i64,
    total: usize,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    use sea_orm::sea_query::Expr;
    use sea_orm::{ColumnTrait, QueryFilter};
    job_run::Entity::update_many()
        .col_expr(
            job_run::Column::LeaseOwner,
            Expr::value(Option::<String>::None),
        )
        .col_expr(
            job_run::Column::LeaseExpiresAt,
            Expr::value(Option::<DateTime<Utc>>::None),
        )
        .col_expr(job_run::Column::Attempts, Expr::value(0))
        .col_expr(job_run::Column::ShardTotal, Expr::value(total as i32))
        .col_expr(job_run::Column::UpdatedAt, Expr::value(now))
        .filter(job_run::Column::Id.eq(parent))
        .exec(txn)
        .await?;
    Ok(())
}
