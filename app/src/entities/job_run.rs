use sea_orm::entity::prelude::*;

use crate::domain::run::{ErrorClass, Resolution, RunStatus, Trigger};

/// One logical execution of a job; its attempts are rows of `job_attempts`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "job_runs")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub job_id: i64,
    pub trigger: Trigger,
    pub scheduled_for: DateTimeUtc,
    pub cron_tick: Option<DateTimeUtc>,
    pub status: RunStatus,
    pub attempts: i32,
    pub next_attempt_at: Option<DateTimeUtc>,
    pub lease_owner: Option<String>,
    pub lease_expires_at: Option<DateTimeUtc>,
    pub idempotency_key: String,
    /// The caller's `Idempotency-Key`, for runs started through the API or a trigger URL.
    pub request_key: Option<String>,
    /// The parameters the run was started with (JSON object), if the job takes any.
    pub params: Option<String>,
    pub last_error_class: Option<ErrorClass>,
    pub last_error: Option<String>,
    pub previous_delay_ms: Option<i64>,
    pub retrigger_of: Option<i64>,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
    pub finished_at: Option<DateTimeUtc>,
    /// How a dead run left the failed queue.
    pub resolution: Option<Resolution>,
    pub resolved_by: Option<String>,
    pub resolved_at: Option<DateTimeUtc>,
    pub resolution_reason: Option<String>,
    /// One-off overrides a re-trigger may carry.
    pub override_timeout_ms: Option<i64>,
    pub override_retry: Option<String>,
    /// JSON of the retry and timeout policy the run was created under.
    pub policy: Option<String>,
    /// When the run may be claimed: set only on the head of its job's lane
    /// (`services::lanes`), `None` while it waits behind another run, runs, or has ended.
    pub due_at: Option<DateTimeUtc>,
    /// Attempts a graceful shutdown handed back: they spend no retry.
    pub handbacks: i32,
    /// Someone cancelled the run while it was running: it stays `running` (holding its lane)
    /// until the node running it has stopped the attempt and written it back as cancelled.
    pub cancel_requested_at: Option<DateTimeUtc>,
    /// Started by a trigger URL that queues while its job is paused: unlike other runs started
    /// by hand, it is not claimed while the job is paused.
    pub waits_for_pause: bool,
    pub expect_by: Option<DateTimeUtc>,
    pub ping_rid: Option<String>,
    /// The date the run stands for in the job's zone; older runs have none (the date of
    /// `scheduled_for` is theirs, `crate::services::runs::business_date`).
    pub business_date: Option<Date>,
    /// The backfill that made it.
    pub backfill_id: Option<i64>,
    /// The revision of its job it ran (set when the engine takes it); `None` before.
    pub revision: Option<i32>,
    /// A child run's parent: the run of the tick it is a part of
    /// (`crate::domain::job::Spread`).
    pub parent_id: Option<i64>,
    /// A child's place among its siblings, from 0.
    pub shard_index: Option<i32>,
    /// How many children its parent has: on a parent, set once it has them.
    pub shard_total: Option<i32>,
    /// The node a child was meant for; another matching node takes it once that one is gone.
    pub node_hint: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(
        belongs_to = "super::job::Entity",
        from = "Column::JobId",
        to = "super::job::Column::Id"
    )]
    Job,
}

impl Related<super::job::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Job.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
