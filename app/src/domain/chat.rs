//! Alerts for chat: what a person on call reads in WeCom, DingTalk, Feishu or Slack, and the
//! event a `webhook` channel receives. Pure: the server's `channels` module wraps these in
//! each platform's envelope, signs and sends them.
//!
//! Messages are worded from the catalogue in the channel's language (`channels.locale`, else `default_locale`).

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use super::mail::FailedRun;
use super::run::{ErrorClass, RunStatus};
use crate::i18n::Locale;
use crate::t;

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

    /// Alerts held back by a rate limit, listed by their titles, said as one message.
    pub fn summary(titles: &[String], at: DateTime<Utc>, l: Locale) -> Self {
        let mut event = ChatEvent::general(
            EventType::Summary,
            t!(in l, "chat-summary", count = titles.len()),
            at,
        );
        event.details = titles.iter().map(|t| Detail::new("", t.clone())).collect();
        event.more_url = Some(format!("{CONSOLE}/notifications"));
        event
    }
}

/// A chat message: a title, a Markdown body for platforms that render it, and the same in plain
/// text as a fallback.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatMessage {
    pub title: String,
    pub markdown: String,
    pub plain: String,
}

/// A failure message is cut to this many characters: enough to see the cause, short enough
/// for a phone's notification.
const MESSAGE_CHARS: usize = 300;

fn trimmed(text: &str, max: usize) -> String {
    let text = text.trim();
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// Markdown's special characters in a value escaped, so a job name or an error message cannot
/// turn into links or emphasis.
fn md(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '#' | '|'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The message for `event` in `lang`, its text cut to `limit` bytes (on a character boundary,
/// the links kept).
pub fn compose(event: &ChatEvent, l: Locale, limit: usize) -> ChatMessage {
    let class = event.error_class.map_or("error", ErrorClass::as_str);
    let reason = event
        .message
        .as_deref()
        .map(|m| trimmed(m, MESSAGE_CHARS))
        .unwrap_or_else(|| t!(in l, "mail-no-message"));
    let title = match event.event {
        EventType::FirstFailure => {
            t!(in l, "chat-first-failure", job = event.job.clone(), class = class)
        }
        EventType::Escalation => t!(
            in l,
            "chat-escalation",
            job = event.job.clone(),
            count = event.failed_runs
        ),
        EventType::Recovered => t!(in l, "chat-recovered", job = event.job.clone()),
        EventType::Test => t!(in l, "chat-test"),
        EventType::Digest | EventType::Trend | EventType::Summary => {
            event.headline.clone().unwrap_or_default()
        }
    };
    let mut facts: Vec<(String, String)> = Vec::new();
    match event.event {
        EventType::FirstFailure | EventType::Escalation => {
            facts.push((t!(in l, "mail-fact-job"), event.job.clone()));
            facts.push((t!(in l, "mail-fact-error"), format!("{class}: {reason}")));
            if let Some(attempt) = event.attempt {
                facts.push((t!(in l, "chat-attempts"), attempt.to_string()));
            }
            if let Some(since) = event.since {
                facts.push((
                    t!(in l, "chat-failing-since"),
                    since.format("%Y-%m-%d %H:%M UTC").to_string(),
                ));
            }
            facts.push((
                t!(in l, "chat-failed-in-a-row"),
                event.failed_runs.to_string(),
            ));
            if event.run_status == Some(RunStatus::Dead) {
                facts.push((t!(in l, "chat-now"), t!(in l, "chat-in-queue")));
            }
        }
        EventType::Recovered => {
            facts.push((t!(in l, "mail-fact-job"), event.job.clone()));
            if let Some(down) = event.down_for_s {
                facts.push((
                    t!(in l, "chat-down-for"),
                    l.duration(down.max(0) as f64 * 1000.0),
                ));
            }
            facts.push((t!(in l, "chat-failed-runs"), event.failed_runs.to_string()));
        }
        EventType::Test => {
            facts.push((
                t!(in l, "chat-sent"),
                event.at.format("%Y-%m-%d %H:%M:%S UTC").to_string(),
            ));
        }
        EventType::Digest | EventType::Trend | EventType::Summary => {
            for detail in &event.details {
                facts.push((detail.label.clone(), detail.value.clone()));
            }
        }
    }
    let mut links: Vec<(String, String)> = Vec::new();
    if let Some(url) = &event.run_url {
        links.push((t!(in l, "chat-open-run"), url.clone()));
    }
    if let Some(url) = &event.queue_url {
        links.push((t!(in l, "nav-failed"), url.clone()));
    }
    if let Some(url) = &event.more_url {
        let label = match event.event {
            EventType::Digest => t!(in l, "chat-full-digest"),
            EventType::Summary => t!(in l, "chat-every-message"),
            EventType::Trend => t!(in l, "chat-recent-failures"),
            _ => t!(in l, "chat-open-bulwark"),
        };
        links.push((label, url.clone()));
    }

    let link_md: String = links
        .iter()
        .map(|(label, url)| format!("[{label}]({url})"))
        .collect::<Vec<_>>()
        .join(" · ");
    let link_plain: String = links
        .iter()
        .map(|(label, url)| format!("{label}: {url}"))
        .collect::<Vec<_>>()
        .join("\n");
    // An unlabelled fact is an item of a list (a summary's alerts).
    let body_md: String = facts
        .iter()
        .map(|(k, v)| {
            if k.is_empty() {
                format!("- {}", md(v))
            } else {
                format!("**{k}:** {}", md(v))
            }
        })
        .collect::<Vec<_>>()
        .join(if facts.iter().all(|(k, _)| k.is_empty()) {
            "\n"
        } else {
            "\n\n"
        });
    let body_plain: String = facts
        .iter()
        .map(|(k, v)| {
            if k.is_empty() {
                format!("- {v}")
            } else {
                format!("{k}: {v}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let head_md = format!("### {}\n\n", md(&title));
    let markdown = fit(&head_md, &body_md, &format!("\n\n{link_md}"), limit);
    let plain = fit(
        &format!("{title}\n"),
        &body_plain,
        &format!("\n{link_plain}"),
        limit,
    );
    ChatMessage {
        title,
        markdown,
        plain,
    }
}

/// `head + body + tail` within `limit` bytes: the body is cut first, so the title and the links
/// always arrive.
fn fit(head: &str, body: &str, tail: &str, limit: usize) -> String {
    let room = limit.saturating_sub(head.len() + tail.len());
    let mut body = body.to_string();
    if body.len() > room {
        let mut end = room.saturating_sub('…'.len_utf8());
        while end > 0 && !body.is_char_boundary(end) {
            end -= 1;
        }
        body.truncate(end);
        body.push('…');
    }
    let out = format!("{head}{body}{tail}");
    if out.len() <= limit {
        return out;
    }
    // Even the title and links are too long: a hard cut on a character boundary.
    let mut end = limit;
    while end > 0 && !out.is_char_boundary(end) {
        end -= 1;
    }
    out[..end].to_string()
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

    fn failed(message: &str) -> ChatEvent {
        ChatEvent {
            event: EventType::FirstFailure,
            job: "nightly_export".into(),
            run_id: Some(42),
            run_status: Some(RunStatus::Dead),
            attempt: Some(4),
            error_class: Some(ErrorClass::Transient),
            message: Some(message.into()),
            failed_runs: 1,
            since: Some("2026-12-01T03:00:00Z".parse().unwrap()),
            down_for_s: None,
            run_url: Some("https://bulwark.example/runs/42".into()),
            queue_url: Some("https://bulwark.example/failed".into()),
            at: "2026-12-01T03:00:05Z".parse().unwrap(),
            headline: None,
            details: Vec::new(),
            more_url: None,
        }
    }

    #[test]
    fn a_failure_says_what_on_call_needs() {
        let m = compose(&failed("HTTP 503 from *upstream*"), Locale::english(), 4096);
        assert_eq!(m.title, "nightly_export failed: transient");
        assert!(m.markdown.contains("nightly\\_export"), "{}", m.markdown);
        assert!(m.markdown.contains("HTTP 503 from \\*upstream\\*"));
        assert!(m.markdown.contains("**Attempts:** 4"));
        assert!(m.markdown.contains("in the failed queue"));
        assert!(
            m.markdown
                .contains("[Open the run](https://bulwark.example/runs/42)")
        );
        assert!(
            m.plain
                .contains("Failed queue: https://bulwark.example/failed")
        );
    }

    #[test]
    fn long_messages_are_cut_but_links_arrive() {
        let m = compose(&failed(&"é".repeat(10_000)), Locale::english(), 600);
        assert!(m.markdown.len() <= 600);
        assert!(
            m.markdown.ends_with("(https://bulwark.example/failed)"),
            "{}",
            m.markdown
        );
        assert!(m.plain.len() <= 600);
    }

    #[test]
    fn recovered_says_how_long_it_was_down() {
        let mut e = failed("");
        e.event = EventType::Recovered;
        e.down_for_s = Some(5400);
        e.failed_runs = 3;
        let m = compose(&e, Locale::english(), 4096);
        assert_eq!(m.title, "nightly_export recovered");
        assert!(m.plain.contains("Down for: 1 h 30 min"), "{}", m.plain);
    }

    #[test]
    fn held_back_alerts_become_one_summary() {
        let titles: Vec<String> = (0..5).map(|i| format!("job_{i} failed")).collect();
        let at = "2026-12-01T03:00:05Z".parse().unwrap();
        let e =
            ChatEvent::summary(&titles, at, Locale::english()).with_console("https://b.example/");
        let m = compose(&e, Locale::english(), 4096);
        assert_eq!(
            m.title,
            "5 more alerts while the channel was at its rate limit"
        );
        // The title, five alerts, the link.
        assert_eq!(m.plain.lines().count(), 7, "{}", m.plain);
        assert!(m.markdown.contains("- job\\_4 failed"), "{}", m.markdown);
        assert!(
            m.plain
                .ends_with("Every message: https://b.example/notifications")
        );
        let zh = Locale::parse("zh-CN").expect("zh-CN");
        let m = compose(&ChatEvent::summary(&titles, at, zh), zh, 4096);
        assert_eq!(m.title, "通道达到频率上限期间另有 5 条告警");
    }
}
