use sea_orm::entity::prelude::*;

use crate::domain::chat::DeliveryStatus;

/// One message to one channel, to send or sent. Column meanings are in the migration that
/// creates the table (`migration/src/m20261201_000020_channel_deliveries.rs`).
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "channel_deliveries")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    #[sea_orm(unique)]
    pub dedupe_key: String,
    pub channel_id: i64,
    pub channel_name: String,
    /// The event's type (`job.failed`, …, `summary`).
    pub kind: String,
    pub job_id: Option<i64>,
    pub run_id: Option<i64>,
    pub title: String,
    /// The event as JSON (`crate::domain::chat::ChatEvent`), links relative to `{console}`.
    pub event: String,
    pub status: DeliveryStatus,
    /// Held back by the platform's rate limit: goes out in the next summary.
    pub held: bool,
    /// The summary this message went out in.
    pub merged_into: Option<i64>,
    pub attempts: i32,
    pub next_attempt_at: DateTimeUtc,
    /// The platform's answer to the latest attempt.
    pub answer: Option<String>,
    pub created_at: DateTimeUtc,
    pub sent_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
