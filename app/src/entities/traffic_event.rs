use sea_orm::entity::prelude::*;

/// Custom events of one (minute, site, name, page, properties, ip, user agent), counted; kept
/// apart from page views (`traffic_statistics`), so no page-view figure counts one.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "traffic_events")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    /// A digest of the key columns: the upsert's conflict target.
    pub key_hash: String,
    /// The minute the events fell in.
    pub stat_date: DateTimeUtc,
    pub site: String,
    /// The event's name (`app::domain::goals::event_name`).
    pub name: String,
    /// The page it was sent from.
    pub path: String,
    /// Its properties as a JSON object of texts, names sorted (`{}`: none).
    pub props: String,
    /// The address, or `h:` and its keyed hash when IP privacy is on.
    pub ip: String,
    pub user_agent: String,
    pub is_bot: bool,
    /// ISO 3166-1 alpha-2, `""` when unknown.
    pub country: String,
    pub count: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
