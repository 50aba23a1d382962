//! Notification channels as the Notifications page lists them: never a URL's token or a
//! signing secret, only where the channel points.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::domain::chat::{ChannelKind, DeliveryStatus};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChannelRow {
    pub name: String,
    pub kind: ChannelKind,
    /// The URL's host, or the addresses of an e-mail channel.
    pub target: String,
    pub signed: bool,
    pub last_answer: Option<String>,
    pub last_delivery_at: Option<DateTime<Utc>>,
    /// The language of its messages (a catalogue tag); `None`: the configured default.
    #[serde(default)]
    pub locale: Option<String>,
}

/// What Send test got back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ChannelTest {
    pub name: String,
    pub accepted: bool,
    pub answer: String,
}

/// A message to a channel as the Notifications page lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeliveryRow {
    pub id: i64,
    pub created_at: DateTime<Utc>,
    pub channel: String,
    /// The event's type (`job.failed`, `channel.summary`, …).
    pub kind: String,
    pub title: String,
    pub status: DeliveryStatus,
    pub attempts: i32,
    pub next_attempt_at: DateTime<Utc>,
    pub sent_at: Option<DateTime<Utc>>,
    /// The platform's answer to the latest attempt.
    pub answer: Option<String>,
    /// Held back by the rate limit, to go out in the next summary.
    pub held: bool,
    /// The summary it went out in.
    pub merged_into: Option<i64>,
    pub run_id: Option<i64>,
}
