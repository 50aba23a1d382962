use sea_orm::entity::prelude::*;

use crate::domain::account::Role;
use crate::domain::api_token::Scope;

/// An API token (`migration/src/m20261201_000021_api_tokens.rs`): its hash, never the token.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "api_tokens")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub name: String,
    /// The role its requests act with: viewer for `read` and `trigger`, admin for `admin`.
    pub role: Role,
    pub scope: Scope,
    /// A trigger token's jobs: those with one of these tags (comma-separated); NULL: all.
    pub tags: Option<String>,
    /// The account it works for; NULL only for tokens the CLI made before tokens had owners.
    pub owner_id: Option<i64>,
    #[sea_orm(unique)]
    pub token_hash: String,
    pub created_by: String,
    pub created_at: DateTimeUtc,
    pub expires_at: Option<DateTimeUtc>,
    pub last_used_at: Option<DateTimeUtc>,
    pub last_used_from: Option<String>,
    pub revoked_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
