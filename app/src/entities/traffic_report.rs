use sea_orm::entity::prelude::*;

/// A site's scheduled traffic report; see `app::domain::traffic_report`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "traffic_reports")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The site's host (the console's own or a registered one).
    #[sea_orm(unique)]
    pub site: String,
    pub every: crate::domain::traffic_report::Every,
    /// Addresses, comma-separated.
    pub recipients: String,
    /// Channel names, a JSON array.
    pub channels: String,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
