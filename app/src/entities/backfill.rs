use sea_orm::entity::prelude::*;

use crate::domain::backfill::BackfillState;

/// A range of a job's ticks run again as a whole. Column meanings are in the migration that
/// creates the table.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "backfills")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub job_id: i64,
    pub from_date: Date,
    pub to_date: Date,
    /// Runs started per minute, at most; `None`: as fast as they end.
    pub per_minute: Option<i32>,
    /// Runs going at once, at most.
    pub parallel: i32,
    /// Ticks whose run ended dead get a new run.
    pub rerun: bool,
    pub state: BackfillState,
    /// Runs it made.
    pub total: i32,
    /// When the current minute of `per_minute` began, and how many runs it started in it.
    pub window_start: Option<DateTimeUtc>,
    pub window_started: i32,
    pub created_by: String,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
