//! Alerts for chat: the channel kinds and their limits, and the event an alert is about — what
//! a `webhook` channel receives as it is. What a person on call reads in WeCom, DingTalk,
//! Feishu or Slack is worded above the domain, in the channel's language, and wrapped in each
//! platform's envelope, signed and sent by the server.

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use super::mail::FailedRun;
use super::run::{ErrorClass, RunStatus};

crate::text_enum! {
    /// Where a channel delivers.
    pub enum ChannelKind {
        Email = "email",
        Wecom = "wecom",
        Dingtalk = "dingtalk",
        Feishu = "feishu",
        Slack = "slack",
        Webhook = "webhook",
    }
}

impl ChannelKind {
    /// Messages a platform accepts per robot per minute, where it says: DingTalk and WeCom
    /// document 20, Feishu's custom bots 100, Slack's incoming webhooks one a second.
    pub fn per_minute(self) -> Option<u32> {
        match self {
            ChannelKind::Wecom | ChannelKind::Dingtalk => Some(20),
            ChannelKind::Feishu => Some(100),
            ChannelKind::Slack => Some(60),
            ChannelKind::Email | ChannelKind::Webhook => None,
        }
    }

    /// The most a message's text may hold, in bytes, by the platform's documented limits
    /// (WeCom markdown 4,096; DingTalk 20,000; Slack's section block 3,000 characters; a
    /// Feishu request body 20 KB, the card around the text included).
    pub fn text_limit(self) -> usize {
        match self {
            ChannelKind::Wecom => 4096,
            ChannelKind::Slack => 3000,
            ChannelKind::Dingtalk => 20_000,
            ChannelKind::Feishu => 18_000,
            ChannelKind::Email | ChannelKind::Webhook => 64 * 1024,
        }
    }
}

crate::text_enum! {
    /// What happened, as the webhook event's `type` names it.
    pub enum EventType {
        FirstFailure = "job.failed",
        Escalation = "job.escalated",
        Recovered = "job.recovered",
        Digest = "digest.daily",
        Trend = "trend.alert",
        /// A site's scheduled traffic report (`super::traffic_report`).
        TrafficReport = "traffic.report",
        /// A site's traffic crossed a spike rule (`super::traffic_alerts`), and its end.
        TrafficAlert = "traffic.alert",
        TrafficRecovered = "traffic.recovered",
        /// A run took longer than its job ever should (`super::watch::Limits`).
        TooSlow = "job.too_slow",
        /// A run has waited long for a node allowed to run it (`super::labels`).
        WaitingForNode = "job.waiting_for_node",
        /// Alerts held back by a rate limit, said together.
        Summary = "channel.summary",
        Test = "channel.test",
    }
}

crate::text_enum! {
    /// Where a message to a channel is.
    pub enum DeliveryStatus {
        /// Waiting for (another) attempt, or for the rate limit's next window.
        Pending = "pending",
        /// The platform accepted it.
        Sent = "sent",
        /// Refused for good (a 4xx, a platform error code, or out of attempts); resendable.
        Failed = "failed",
        /// Went out inside a summary (`merged_into`).
        Summarised = "summarised",
    }
}

/// A label and a value, as the digest, trend and summary messages list them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Detail {
    pub label: String,
    pub value: String,
}

impl Detail {
    pub fn new(label: impl Into<String>, value: impl Into<String>) -> Self {
        Detail {
            label: label.into(),
            value: value.into(),
        }
    }
}

/// Where a stored event's links point until it is sent: the sender puts the configured
/// `public_url` in its place, so messages waiting in the outbox follow a changed address.
pub const CONSOLE: &str = super::mail::CONSOLE;

/// Everything an alert can say. Links are absolute (the console's `public_url`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatEvent {
    #[serde(rename = "type")]
    pub event: EventType,
    pub job: String,
    pub run_id: Option<i64>,
    pub run_status: Option<RunStatus>,
    /// Attempts the run made (the last one's number).
    pub attempt: Option<i32>,
    pub error_class: Option<ErrorClass>,
    pub message: Option<String>,
    /// Failed runs in a row so far.
    pub failed_runs: i32,
    /// When the failing began.
    pub since: Option<DateTime<Utc>>,
    /// For `recovered`: how long it was failing, in seconds.
    pub down_for_s: Option<i64>,
    pub run_url: Option<String>,
    pub queue_url: Option<String>,
    pub at: DateTime<Utc>,
    /// The title of a digest, trend or summary (alerts about a job make their own).
    #[serde(default)]
    pub headline: Option<String>,
    /// The lines of a digest, trend or summary.
    #[serde(default)]
    pub details: Vec<Detail>,
    /// A digest's link to the full one, a trend's to the Overview.
    #[serde(default)]
    pub more_url: Option<String>,
}

impl ChatEvent {
    /// An event about nothing in particular yet: the fields alerts about a job fill stay empty.
    pub fn general(event: EventType, headline: String, at: DateTime<Utc>) -> Self {
        ChatEvent {
            event,
            job: String::new(),
            run_id: None,
            run_status: None,
            attempt: None,
            error_class: None,
            message: None,
            failed_runs: 0,
            since: None,
            down_for_s: None,
            run_url: None,
            queue_url: None,
            at,
            headline: Some(headline),
            details: Vec::new(),
            more_url: None,
        }
    }

    /// The event with `{console}` in its links replaced by `console`.
    pub fn with_console(mut self, console: &str) -> Self {
        for url in [&mut self.run_url, &mut self.queue_url, &mut self.more_url]
            .into_iter()
            .flatten()
        {
            *url = url.replace(CONSOLE, console.trim_end_matches('/'));
        }
        self
    }

    /// A failed run's first-failure or escalation alert. `failed_runs` and `since` describe
    /// the episode so far.
    pub fn failure(
        event: EventType,
        run: &FailedRun,
        failed_runs: i32,
        since: Option<DateTime<Utc>>,
        at: DateTime<Utc>,
    ) -> Self {
        ChatEvent {
            job: run.job.clone(),
            run_id: Some(run.run_id),
            run_status: Some(run.status),
            attempt: Some(run.attempts),
            error_class: run.error_class,
            message: run.message.clone(),
            failed_runs,
            since,
            run_url: Some(format!("{CONSOLE}/runs/{}", run.run_id)),
            queue_url: Some(format!("{CONSOLE}/failed")),
            headline: None,
            ..ChatEvent::general(event, String::new(), at)
        }
    }

    /// A job's first good run after failing ones.
    pub fn recovered(
        job: &str,
        run_id: i64,
        down_for: Duration,
        failed_runs: i32,
        at: DateTime<Utc>,
    ) -> Self {
        ChatEvent {
            job: job.to_string(),
            run_id: Some(run_id),
            run_status: Some(RunStatus::Succeeded),
            failed_runs,
            since: Some(at - down_for),
            down_for_s: Some(down_for.num_seconds()),
            run_url: Some(format!("{CONSOLE}/runs/{run_id}")),
            headline: None,
            ..ChatEvent::general(EventType::Recovered, String::new(), at)
        }
    }
}

/// Whether a channel limited to `per_minute` messages may send one more at `now`, given when
/// it sent its recent ones: `Ok`, or the earliest moment it may. Any 60 seconds hold at most
/// `per_minute` sends when every send asks first.
pub fn may_send(
    sent: &[DateTime<Utc>],
    per_minute: u32,
    now: DateTime<Utc>,
) -> Result<(), DateTime<Utc>> {
    let window = Duration::seconds(60);
    let mut recent: Vec<DateTime<Utc>> = sent
        .iter()
        .copied()
        .filter(|t| *t > now - window && *t <= now)
        .collect();
    if recent.len() < per_minute as usize {
        return Ok(());
    }
    recent.sort();
    // The slot frees when the oldest of the last `per_minute` sends leaves the window.
    let oldest = recent[recent.len() - per_minute as usize];
    Err(oldest + window + Duration::milliseconds(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn a_rate_limited_channel_never_exceeds_its_minute(arrivals in prop::collection::vec(0i64..120_000, 1..80)) {
            // Alerts arrive at random moments over two minutes; each is sent at once when the
            // channel may, or waits with the others for the next free slot and goes out with
            // them as one summary. Nothing is dropped, and no minute holds more than 20 sends.
            let start: DateTime<Utc> = "2026-12-01T00:00:00Z".parse().unwrap();
            let mut arrivals: Vec<DateTime<Utc>> =
                arrivals.iter().map(|ms| start + Duration::milliseconds(*ms)).collect();
            arrivals.sort();
            let mut sent: Vec<(DateTime<Utc>, usize)> = Vec::new();
            let mut waiting: Vec<DateTime<Utc>> = Vec::new();
            let mut queue = arrivals.clone().into_iter().peekable();
            let mut now = start;
            while queue.peek().is_some() || !waiting.is_empty() {
                // The next moment something can happen: an arrival, or a free slot.
                let times: Vec<DateTime<Utc>> = sent.iter().map(|(t, _)| *t).collect();
                let slot = match may_send(&times, 20, now) { Ok(()) => now, Err(at) => at };
                let next_arrival = queue.peek().copied();
                if !waiting.is_empty() && next_arrival.is_none_or(|a| slot <= a) {
                    now = now.max(slot);
                    sent.push((now, waiting.len()));
                    waiting.clear();
                    continue;
                }
                let Some(arrival) = queue.next() else { break };
                now = now.max(arrival);
                waiting.push(arrival);
            }
            let delivered: usize = sent.iter().map(|(_, n)| n).sum();
            prop_assert_eq!(delivered, arrivals.len(), "none lost");
            for (i, (t, _)) in sent.iter().enumerate() {
                let in_window = sent[i..].iter().filter(|(u, _)| *u < *t + Duration::seconds(60)).count();
                prop_assert!(in_window <= 20, "{} sends in the minute from {}", in_window, t);
            }
        }
    }
}
