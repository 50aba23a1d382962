use sea_orm::entity::prelude::*;

/// A site whose pages are counted, by host; see `app::domain::sites`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "traffic_sites")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    #[sea_orm(unique)]
    pub host: String,
    /// Addresses and networks whose visits are not counted, one per line.
    pub excluded: String,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
