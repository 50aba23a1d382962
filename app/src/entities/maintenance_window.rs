use sea_orm::entity::prelude::*;

/// A maintenance window (`migration/src/m20261202_000025_maintenance.rs`): every job, or every
/// job tagged `tag`, is paused from `starts_at` until `ends_at`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "maintenance_windows")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub starts_at: DateTimeUtc,
    /// `None`: until someone resumes.
    pub ends_at: Option<DateTimeUtc>,
    pub reason: String,
    /// `None`: every job.
    pub tag: Option<String>,
    pub created_by: String,
    pub created_at: DateTimeUtc,
    pub ended_by: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
