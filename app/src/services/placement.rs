//! Where runs may go. Each node claims only runs of jobs it may run (`server/src/engine/claim.rs`:
//! its labels satisfy the job's `run_on`, and it runs commands if the job is one); a due run
//! that no live node may take would wait unseen, so the sweep here marks it
//! `waiting_for_node` — shown on the Overview, alerted after a while — and puts it back to
//! `pending` once a node that may take it is live again. Claims take either status.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DbErr, EntityTrait, ExprTrait, QueryFilter, QuerySelect,
    RelationTrait, sea_query::Expr,
};

use crate::domain::job::Kind;
use crate::domain::labels::Labels;
use crate::domain::node::LOST_AFTER_SECONDS;
use crate::domain::run::RunStatus;
use crate::entities::{job, job_run, node};

/// A node that runs jobs, as placement sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Place {
    pub node_id: String,
    pub labels: Labels,
    pub commands: bool,
}

impl Place {
    /// Whether this node may run a job of `kind` that asks for `run_on`.
    pub fn may_run(&self, run_on: &Labels, kind: Kind) -> bool {
        self.labels.satisfy(run_on) && (self.commands || kind != Kind::Command)
    }
}

/// The live nodes that run jobs: heard from within the lost-after window, not stopped, with
/// the engine on. A row whose labels no longer parse (written by a newer version) counts as
/// carrying none.
pub async fn live(db: &impl ConnectionTrait, now: DateTime<Utc>) -> Result<Vec<Place>, DbErr> {
    let since = now - chrono::Duration::seconds(LOST_AFTER_SECONDS);
    let rows = node::Entity::find()
        .filter(node::Column::StoppedAt.is_null())
        .filter(node::Column::HeartbeatAt.gte(since))
        .filter(node::Column::Engine.eq(true))
        .all(db)
        .await?;
    Ok(rows
        .into_iter()
        .map(|row| Place {
            labels: Labels::parse(&row.labels).unwrap_or_default(),
            node_id: row.node_id,
            commands: row.commands,
        })
        .collect())
}

/// A run that no live node may take.
#[derive(Debug, Clone, PartialEq)]
pub struct Waiting {
    pub run_id: i64,
    pub job_id: i64,
    /// Since when it could have run.
    pub due_at: DateTime<Utc>,
}

/// What a sweep did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Swept {
    /// Every run waiting for a node after the sweep.
    pub waiting: Vec<Waiting>,
    /// Runs put back to `pending`: a node that may take them is live.
    pub released: u64,
}

/// A due run of a job that not every node may run.
#[derive(Debug, sea_orm::FromQueryResult)]
struct Due {
    id: i64,
    job_id: i64,
    status: RunStatus,
    due_at: Option<DateTime<Utc>>,
    run_on: String,
    kind: Kind,
}

/// Marks the due runs no node in `places` may take `waiting_for_node`, and puts those one may
/// take back to `pending`. The sweeping node passes itself among `places`: it is live, whether
/// or not its heartbeat has been written yet.
pub async fn sweep(
    db: &impl ConnectionTrait,
    places: &[Place],
    now: DateTime<Utc>,
) -> Result<Swept, DbErr> {
    let due = placed_due(db, now).await?;
    let mut stranded = Vec::new();
    let mut placeable = Vec::new();
    // Jobs share their answer: one judgement per distinct (run_on, kind).
    let mut judged: HashMap<(String, Kind), bool> = HashMap::new();
    for run in &due {
        let may = *judged
            .entry((run.run_on.clone(), run.kind))
            .or_insert_with(|| {
                // Unreadable labels match no node's subsets in a claim either.
                Labels::parse(&run.run_on)
                    .is_ok_and(|run_on| places.iter().any(|p| p.may_run(&run_on, run.kind)))
            });
        if may {
            placeable.push(run);
        } else {
            stranded.push(run);
        }
    }
    let may_wait = [RunStatus::Pending, RunStatus::RetryWait];
    let to_wait: Vec<i64> = stranded
        .iter()
        .filter(|r| may_wait.contains(&r.status))
        .map(|r| r.id)
        .collect();
    set_status(db, &to_wait, &may_wait, RunStatus::WaitingForNode, now).await?;
    let to_release: Vec<i64> = placeable
        .iter()
        .filter(|r| r.status == RunStatus::WaitingForNode)
        .map(|r| r.id)
        .collect();
    let released = set_status(
        db,
        &to_release,
        &[RunStatus::WaitingForNode],
        RunStatus::Pending,
        now,
    )
    .await?;
    Ok(Swept {
        waiting: stranded
            .iter()
            .filter_map(|r| {
                Some(Waiting {
                    run_id: r.id,
                    job_id: r.job_id,
                    due_at: r.due_at?,
                })
            })
            .collect(),
        released,
    })
}

/// The due runs of jobs that ask for labels or run commands: the only ones a node may be
/// unable to take.
async fn placed_due(db: &impl ConnectionTrait, now: DateTime<Utc>) -> Result<Vec<Due>, DbErr> {
    job_run::Entity::find()
        .select_only()
        .column(job_run::Column::Id)
        .column(job_run::Column::JobId)
        .column(job_run::Column::Status)
        .column(job_run::Column::DueAt)
        .column_as(Expr::col((job::Entity, job::Column::RunOn)), "run_on")
        .column_as(Expr::col((job::Entity, job::Column::Kind)), "kind")
        .join(sea_orm::JoinType::InnerJoin, job_run::Relation::Job.def())
        .filter(job_run::Column::DueAt.is_not_null())
        .filter(job_run::Column::DueAt.lte(now))
        .filter(job_run::Column::Status.is_in([
            RunStatus::Pending,
            RunStatus::RetryWait,
            RunStatus::WaitingForNode,
        ]))
        .filter(
            Expr::col((job::Entity, job::Column::RunOn))
                .ne("")
                .or(Expr::col((job::Entity, job::Column::Kind)).eq(Kind::Command)),
        )
        .into_model::<Due>()
        .all(db)
        .await
}

/// Sets `to` on the runs among `ids` still due in one of `from` (a claim may have taken one
/// meanwhile); returns how many changed.
async fn set_status(
    db: &impl ConnectionTrait,
    ids: &[i64],
    from: &[RunStatus],
    to: RunStatus,
    now: DateTime<Utc>,
) -> Result<u64, DbErr> {
    let mut changed = 0;
    for chunk in ids.chunks(500) {
        changed += job_run::Entity::update_many()
            .col_expr(job_run::Column::Status, Expr::value(to))
            .col_expr(job_run::Column::UpdatedAt, Expr::value(now))
            .filter(job_run::Column::Id.is_in(chunk.iter().copied()))
            .filter(job_run::Column::Status.is_in(from.iter().copied()))
            .filter(job_run::Column::DueAt.is_not_null())
            .exec(db)
            .await?
            .rows_affected;
    }
    Ok(changed)
}

/// The live nodes among `places` that may run `spec`'s job, by id: what the editor and the
/// Overview show beside `run_on`.
pub fn matching<'a>(places: &'a [Place], run_on: &Labels, kind: Kind) -> Vec<&'a str> {
    places
        .iter()
        .filter(|p| p.may_run(run_on, kind))
        .map(|p| p.node_id.as_str())
        .collect()
}
