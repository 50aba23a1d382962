use sea_orm::entity::prelude::*;

/// A request to every live node (for example `traffic_flush`).
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "node_commands")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub command: String,
    pub requested_by: String,
    pub requested_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
