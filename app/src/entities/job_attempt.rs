use sea_orm::entity::prelude::*;

use crate::domain::run::{ErrorClass, Outcome, TimeoutKind};

/// One attempt of a run; never overwritten once finished.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "job_attempts")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub run_id: i64,
    pub number: i32,
    pub started_at: DateTimeUtc,
    pub finished_at: Option<DateTimeUtc>,
    pub duration_ms: Option<i64>,
    pub timeout_ms: i64,
    pub outcome: Option<Outcome>,
    pub error_class: Option<ErrorClass>,
    pub message: Option<String>,
    pub output_tail: Option<String>,
    pub node: String,
    pub load_avg: Option<f64>,
    pub slow: bool,
    /// For a timed-out attempt: the timeout, or no output for the stall timeout.
    pub timeout_kind: Option<TimeoutKind>,
    /// False for an attempt a graceful shutdown handed back.
    pub spent_retry: bool,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(
        belongs_to = "super::job_run::Entity",
        from = "Column::RunId",
        to = "super::job_run::Column::Id"
    )]
    Run,
}

impl Related<super::job_run::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Run.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
