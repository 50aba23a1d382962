use sea_orm::entity::prelude::*;

/// A work calendar (`crate::domain::calendar`). Column meanings are in the migration that
/// creates the table.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "calendars")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    #[sea_orm(unique)]
    pub name: String,
    /// `mon-fri`, or weekday names separated by commas.
    pub base: String,
    /// JSON array of `{date, name}`: days the base rule works that are off.
    pub off: String,
    /// JSON array of `{date, name}`: make-up workdays.
    pub on: String,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
