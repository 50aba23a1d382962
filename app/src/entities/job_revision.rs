use sea_orm::entity::prelude::*;

/// One saved definition of a job (`crate::services::revisions`).
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "job_revisions")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub job_id: i64,
    /// 1, 2, … per job.
    pub revision: i32,
    /// The definition (a `JobInput` as JSON), sealed with the secret key.
    pub sealed: String,
    /// The same with credentials hidden, for history and diffs without the key.
    pub shown: String,
    /// SHA-256 of the definition: a save that changes nothing makes no revision.
    pub digest: String,
    /// A person's name or `token:NAME`.
    pub actor: String,
    pub at: DateTimeUtc,
    pub note: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
