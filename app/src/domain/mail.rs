//! Mails as the outbox keeps them: their state, their three parts, the facts of a failed run,
//! and the console's address as a placeholder. What each mail says is worded above the domain,
//! in its reader's language.
//!
//! Links are written as `{console}/runs/42`: the sender replaces [`CONSOLE`] with the
//! configured `public_url` when it delivers ([`with_console`]), so mails waiting in the outbox
//! follow a changed address.

use chrono::{DateTime, Utc};

use super::run::{ErrorClass, RunStatus};

/// Where the console's address goes in a stored mail.
pub const CONSOLE: &str = "{console}";

crate::text_enum! {
    /// Where a mail in the outbox is.
    pub enum MailStatus {
        /// Waiting for (another) delivery attempt.
        Pending = "pending",
        /// The SMTP server accepted it.
        Sent = "sent",
        /// No SMTP server configured: kept in the outbox and written as an .eml file.
        Written = "written",
        /// Refused for good (or out of attempts); a person can resend it.
        Failed = "failed",
    }
}

impl MailStatus {
    /// Delivered as far as Bulwark can tell (sent, or written where it was told to write).
    pub fn is_delivered(self) -> bool {
        matches!(self, MailStatus::Sent | MailStatus::Written)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Composed {
    pub subject: String,
    pub text: String,
    pub html: String,
}

/// A run that ended without success.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedRun {
    pub job: String,
    pub run_id: i64,
    /// `dead` (in the failed queue), `skipped`, or `dead` with a fallback job triggered.
    pub status: RunStatus,
    pub error_class: Option<ErrorClass>,
    pub message: Option<String>,
    pub attempts: i32,
    pub finished_at: DateTime<Utc>,
}

/// The stored text with the console's address in place of [`CONSOLE`].
pub fn with_console(text: &str, public_url: &str) -> String {
    text.replace(CONSOLE, public_url.trim_end_matches('/'))
}

/// `&`, `<`, `>`, `"` and `'` as entities: every value put into the HTML part goes through this.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}
