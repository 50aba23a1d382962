//! Notification channels: chat robots (WeCom, DingTalk, Feishu, Slack) and signed webhooks,
//! beside mail.
//!
//! [`sender`] works the channel outbox (`app::services::notifications::channel_outbox`): every message is a row
//! first, sent in order per channel within the platform's rate limit, retried with backoff.
//! [`platform`] is each platform's envelope, signature and answer, by its documentation:
//! what one delivery sends and how to read what came back. The messages themselves are
//! composed in `app::domain::chat`.

pub mod deliver;
pub mod platform;
pub mod sender;
