use sea_orm::entity::prelude::*;

/// One node's answer to a [`super::node_command`].
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "node_command_results")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub command_id: i64,
    #[sea_orm(primary_key, auto_increment = false)]
    pub node_id: String,
    pub finished_at: DateTimeUtc,
    pub ok: bool,
    pub detail: String,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
