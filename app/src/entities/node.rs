use sea_orm::entity::prelude::*;

/// One `bulwark serve` process, known by its heartbeat.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "nodes")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub node_id: String,
    pub host: String,
    pub pid: i32,
    pub version: String,
    /// The address it serves on.
    pub addr: String,
    pub started_at: DateTimeUtc,
    pub heartbeat_at: DateTimeUtc,
    /// Set when it stopped gracefully; a node without it and without a recent heartbeat is lost.
    pub stopped_at: Option<DateTimeUtc>,
    /// This node's clock minus the database's at its last heartbeat (ms).
    pub clock_skew_ms: Option<i64>,
    /// Its `node_labels`, as `dc=sh,role=db` (`crate::domain::labels`); empty for none.
    pub labels: String,
    /// Whether it runs command jobs (`allow_commands`).
    pub commands: bool,
    /// Whether it serves the console (not with `bulwark serve --no-web`).
    pub web: bool,
    /// Whether it runs jobs at all (not with `engine = false`).
    pub engine: bool,
    /// How it reaches PostgreSQL: `none` (directly) or `transaction` (through a pooler in
    /// transaction mode: no `LISTEN`, the poll carries the wake-ups).
    pub database_pooler: String,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
