use sea_orm::entity::prelude::*;

/// A sign-in sent to an OpenID provider and not yet back (`migration` 36 says why each column).
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "oidc_logins")]
pub struct Model {
    /// Hex SHA-256 of the `state` sent to the provider.
    #[sea_orm(primary_key, auto_increment = false)]
    pub state_hash: String,
    /// Hex SHA-256 of the cookie the browser was given when it set out.
    pub browser_hash: String,
    pub provider: String,
    pub pkce_verifier: String,
    pub nonce: String,
    /// The console page to return to.
    pub next: String,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
