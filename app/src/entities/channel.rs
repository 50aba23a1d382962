use sea_orm::entity::prelude::*;

use crate::domain::chat::ChannelKind;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "channels")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    #[sea_orm(unique)]
    pub name: String,
    pub kind: ChannelKind,
    /// The URL's host, shown to say where the channel points; the URL itself is sealed.
    pub host: Option<String>,
    /// The sealed URL and signing secret (JSON, see `crate::services::notifications::channels`).
    pub sealed: Option<String>,
    /// For `email`: the addresses, comma-separated.
    pub recipients: String,
    /// The platform's answer to the last delivery or test.
    pub last_answer: Option<String>,
    pub last_delivery_at: Option<DateTimeUtc>,
    /// The sender delivering this channel's messages now, and until when its lease holds.
    pub claimed_by: Option<String>,
    pub claimed_until: Option<DateTimeUtc>,
    /// When the latest messages were sent (JSON array), to keep the platform's rate limit.
    pub sent_window: String,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
    /// The language alerts to this channel are written in; NULL: `default_locale`.
    pub locale: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
