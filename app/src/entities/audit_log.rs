use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "audit_log")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub at: DateTimeUtc,
    pub actor_id: Option<i64>,
    /// Username at the time, kept even if the account is later removed.
    pub actor: String,
    pub action: String,
    pub subject: String,
    /// JSON object with action-specific details.
    pub detail: String,
    pub ip: Option<String>,
    /// What a sign-in attempt counts against: the address, or an IPv6 address's /64
    /// (`crate::domain::client_addr::limit_source`).
    pub source: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
