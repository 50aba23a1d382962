use sea_orm::entity::prelude::*;

/// A site's read-only public link; see `app::services::traffic::shares`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "traffic_shares")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    #[sea_orm(unique)]
    pub site: String,
    /// SHA-256 of the link's token, hex.
    #[sea_orm(unique)]
    pub token_hash: String,
    /// The password's Argon2 hash (PHC string), when the link has one.
    pub password_hash: Option<String>,
    pub expires_at: Option<DateTimeUtc>,
    pub created_by: String,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
