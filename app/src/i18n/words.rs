//! The names of the domain's states and kinds as people read them, in the page's language.
//! The stored and wire names (`retry_wait`, `builtin`) stay as they are: filters, the API and
//! the command line use those.

use crate::domain::account::Role;
use crate::domain::bots::BotCategory;
use crate::domain::chat::{ChannelKind, DeliveryStatus};
use crate::domain::job::{JobState, Kind};
use crate::domain::mail::MailStatus;
use crate::domain::retry::Jitter;
use crate::domain::run::{ErrorClass, Outcome, RunStatus, Trigger};
use crate::domain::traffic_range::Preset;
use crate::key;

use super::current;

pub fn run_status(status: RunStatus) -> String {
    run_status_in(current(), status)
}

/// [`run_status`] in a given language (mails, chat).
pub fn run_status_in(locale: super::Locale, status: RunStatus) -> String {
    locale.text(match status {
        RunStatus::Pending => key!("run-status-pending"),
        RunStatus::Running => key!("run-status-running"),
        RunStatus::RetryWait => key!("run-status-retry_wait"),
        RunStatus::Succeeded => key!("run-status-succeeded"),
        RunStatus::Dead => key!("run-status-dead"),
        RunStatus::Skipped => key!("run-status-skipped"),
        RunStatus::Cancelled => key!("run-status-cancelled"),
        RunStatus::Blocked => key!("run-status-blocked"),
        RunStatus::AwaitingPing => key!("run-status-awaiting_ping"),
        RunStatus::WaitingForNode => key!("run-status-waiting_for_node"),
    })
}

pub fn outcome(outcome: Outcome) -> String {
    current().text(match outcome {
        Outcome::Succeeded => key!("outcome-succeeded"),
        Outcome::Failed => key!("outcome-failed"),
        Outcome::TimedOut => key!("outcome-timed_out"),
        Outcome::Interrupted => key!("outcome-interrupted"),
    })
}

pub fn job_kind(kind: Kind) -> String {
    current().text(match kind {
        Kind::Http => key!("job-kind-http"),
        Kind::Command => key!("job-kind-command"),
        Kind::Builtin => key!("job-kind-builtin"),
        Kind::Watch => key!("job-kind-watch"),
    })
}

pub fn job_state(state: JobState) -> String {
    current().text(match state {
        JobState::Enabled => key!("job-state-enabled"),
        JobState::Disabled => key!("job-state-disabled"),
        JobState::Paused => key!("job-state-paused"),
        JobState::Failing => key!("job-state-failing"),
    })
}

pub fn trigger(trigger: Trigger) -> String {
    current().text(match trigger {
        Trigger::Cron => key!("trigger-cron"),
        Trigger::Manual => key!("trigger-manual"),
        Trigger::Retrigger => key!("trigger-retrigger"),
        Trigger::Recovery => key!("trigger-recovery"),
        Trigger::Fallback => key!("trigger-fallback"),
        Trigger::Ping => key!("trigger-ping"),
        Trigger::Backfill => key!("trigger-backfill"),
    })
}

pub fn error_class(class: ErrorClass) -> String {
    current().text(match class {
        ErrorClass::Transient => key!("error-class-transient"),
        ErrorClass::Permanent => key!("error-class-permanent"),
        ErrorClass::Timeout => key!("error-class-timeout"),
        ErrorClass::Interrupted => key!("error-class-interrupted"),
        ErrorClass::Missed => key!("error-class-missed"),
        ErrorClass::TooFast => key!("error-class-too_fast"),
    })
}

pub fn role_name(role: Role) -> String {
    current().text(match role {
        Role::Admin => key!("role-admin"),
        Role::Viewer => key!("role-viewer"),
    })
}

pub fn channel_kind(kind: ChannelKind) -> String {
    current().text(match kind {
        ChannelKind::Email => key!("channel-kind-email"),
        ChannelKind::Wecom => key!("channel-kind-wecom"),
        ChannelKind::Dingtalk => key!("channel-kind-dingtalk"),
        ChannelKind::Feishu => key!("channel-kind-feishu"),
        ChannelKind::Slack => key!("channel-kind-slack"),
        ChannelKind::Webhook => key!("channel-kind-webhook"),
    })
}

pub fn delivery_status(status: DeliveryStatus) -> String {
    current().text(match status {
        DeliveryStatus::Pending => key!("delivery-status-pending"),
        DeliveryStatus::Sent => key!("delivery-status-sent"),
        DeliveryStatus::Failed => key!("delivery-status-failed"),
        DeliveryStatus::Summarised => key!("delivery-status-summarised"),
    })
}

pub fn mail_status(status: MailStatus) -> String {
    current().text(match status {
        MailStatus::Pending => key!("mail-status-pending"),
        MailStatus::Sent => key!("mail-status-sent"),
        MailStatus::Written => key!("mail-status-written"),
        MailStatus::Failed => key!("mail-status-failed"),
    })
}

pub fn bot_category(category: BotCategory) -> String {
    bot_category_in(current(), category)
}

pub fn bot_category_in(locale: super::Locale, category: BotCategory) -> String {
    locale.text(match category {
        BotCategory::Search => key!("bot-category-search"),
        BotCategory::Ai => key!("bot-category-ai"),
        BotCategory::Social => key!("bot-category-social"),
        BotCategory::Seo => key!("bot-category-seo"),
        BotCategory::Archive => key!("bot-category-archive"),
        BotCategory::Monitoring => key!("bot-category-monitoring"),
        BotCategory::Tool => key!("bot-category-tool"),
        BotCategory::Other => key!("bot-category-other"),
    })
}

/// What a goal counts: `pages /signup/*` or `event Signup` (`kind` as stored).
pub fn goal_target(kind: &str, target: &str) -> String {
    if kind == "page" {
        crate::t!("traffic-goal-page", pattern = target)
    } else {
        crate::t!("traffic-goal-event", name = target)
    }
}

pub fn range_preset(preset: Preset) -> String {
    current().text(match preset {
        Preset::Today => key!("traffic-preset-today"),
        Preset::Yesterday => key!("traffic-preset-yesterday"),
        Preset::Last7 => key!("traffic-preset-7d"),
        Preset::Last30 => key!("traffic-preset-30d"),
        Preset::Last90 => key!("traffic-preset-90d"),
    })
}

pub fn jitter_name(jitter: Jitter) -> String {
    jitter_name_in(current(), jitter)
}

/// [`jitter_name`] in a given language.
pub fn jitter_name_in(locale: super::Locale, jitter: Jitter) -> String {
    locale.text(match jitter {
        Jitter::None => key!("jitter-none"),
        Jitter::Full => key!("jitter-full"),
        Jitter::Equal => key!("jitter-equal"),
        Jitter::Decorrelated => key!("jitter-decorrelated"),
    })
}

/// A retry preset's short name and its description, by its key in
/// [`crate::domain::retry::presets`].
pub fn retry_preset(key: &str) -> (String, String) {
    let (short, long) = match key {
        "fast" => (key!("retry-preset-fast"), key!("retry-preset-fast-long")),
        "important" => (
            key!("retry-preset-important"),
            key!("retry-preset-important-long"),
        ),
        "realtime" => (
            key!("retry-preset-realtime"),
            key!("retry-preset-realtime-long"),
        ),
        _ => (
            key!("retry-preset-standard"),
            key!("retry-preset-standard-long"),
        ),
    };
    (current().text(short), current().text(long))
}
