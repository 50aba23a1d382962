use sea_orm::entity::prelude::*;

/// A job's current failure episode. Column meanings are in the migration that creates the
/// table; the rules are in `domain::alerts`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "job_alerts")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub job_id: i64,
    pub episode: i32,
    pub open: bool,
    pub opened_at: Option<DateTimeUtc>,
    pub first_run_id: Option<i64>,
    pub failed_runs: i32,
    pub escalated: bool,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
