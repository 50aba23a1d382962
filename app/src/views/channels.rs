//! Notification channels as the Notifications page lists them: never a URL's token or a
//! signing secret, only where the channel points.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::domain::chat::ChannelKind;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChannelRow {
    pub name: String,
    pub kind: ChannelKind,
    /// The URL's host, or the addresses of an e-mail channel.
    pub target: String,
    pub signed: bool,
    pub last_answer: Option<String>,
    pub last_delivery_at: Option<DateTime<Utc>>,
}

/// What Send test got back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChannelTest {
    pub name: String,
    pub accepted: bool,
    pub answer: String,
}
