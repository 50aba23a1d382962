//! The Notifications page: the outbox, previews, settings, test mails.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::domain::mail::MailStatus;

/// A mail as the outbox table shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutboxRow {
    pub id: i64,
    pub created_at: DateTime<Utc>,
    pub kind: String,
    pub recipients: String,
    pub subject: String,
    pub status: MailStatus,
    pub attempts: i32,
    pub next_attempt_at: DateTime<Utc>,
    pub sent_at: Option<DateTime<Utc>>,
    /// The SMTP server's answer when delivered (or where the .eml file went).
    pub reply: Option<String>,
    pub last_error: Option<String>,
    pub run_id: Option<i64>,
}

/// A mail as it is (or was) sent, links pointing at the console.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MailPreview {
    pub id: i64,
    pub subject: String,
    pub recipients: String,
    pub text: String,
    pub html: Option<String>,
}

/// Who a job's alerts go to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AlertRoute {
    pub job_id: i64,
    pub job: String,
    pub to: String,
    pub escalate_after: i32,
    pub escalate_to: String,
    /// Channel names, comma-separated.
    pub channels: String,
    pub escalate_channels: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MailSettingsView {
    /// Where mail goes (SMTP server or .eml directory).
    pub route: String,
    pub digest_to: String,
    /// The channels the digest and the trend alerts go to, comma-separated.
    pub digest_channels: String,
    /// `HH:MM`, or the digest job's cron when it is not a daily time.
    pub digest_time: String,
    pub digest_timezone: String,
    pub digest_job_id: Option<i64>,
    pub routes: Vec<AlertRoute>,
    /// The language mails are written in when set (a catalogue tag); `None`: the default.
    pub mail_locale: Option<String>,
    /// The configured `default_locale`'s tag.
    pub default_locale: String,
}

/// What became of a test mail: delivered or not, and the server's words either way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestMailResult {
    pub delivered: bool,
    pub status: MailStatus,
    pub answer: String,
}
