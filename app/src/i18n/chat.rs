//! Alerts as chat messages: what a person on call reads in WeCom, DingTalk, Feishu or Slack,
//! worded in the channel's language (`channels.locale`, else `default_locale`) from the event
//! (`crate::domain::chat`). Pure: the server's `channels` module wraps these in each
//! platform's envelope, signs and sends them.

use chrono::{DateTime, Utc};

use super::Locale;
use crate::domain::chat::{CONSOLE, ChatEvent, Detail, EventType};
use crate::domain::run::{ErrorClass, RunStatus};
use crate::t;

/// Alerts held back by a rate limit, listed by their titles, said as one message.
pub fn summary(titles: &[String], at: DateTime<Utc>, l: Locale) -> ChatEvent {
    let mut event = ChatEvent::general(
        EventType::Summary,
        t!(in l, "chat-summary", count = titles.len()),
        at,
    );
    event.details = titles.iter().map(|t| Detail::new("", t.clone())).collect();
    event.more_url = Some(format!("{CONSOLE}/notifications"));
    event
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
    let title = title(event, l);
    let facts = facts(event, l);
    let links = links(event, l);
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
    let (body_md, body_plain) = bodies(&facts);
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

fn class(event: &ChatEvent) -> &'static str {
    event.error_class.map_or("error", ErrorClass::as_str)
}

fn title(event: &ChatEvent, l: Locale) -> String {
    let job = event.job.clone();
    match event.event {
        EventType::FirstFailure => t!(in l, "chat-first-failure", job = job, class = class(event)),
        EventType::Escalation => {
            t!(in l, "chat-escalation", job = job, count = event.failed_runs)
        }
        EventType::Recovered => t!(in l, "chat-recovered", job = job),
        EventType::Test => t!(in l, "chat-test"),
        EventType::Digest
        | EventType::Trend
        | EventType::TrafficReport
        | EventType::TrafficAlert
        | EventType::TrafficRecovered
        | EventType::Summary
        | EventType::TooSlow
        | EventType::WaitingForNode => event.headline.clone().unwrap_or_default(),
    }
}

/// What the message lists, label and value; an unlabelled fact is an item of a list (a
/// summary's alerts).
fn facts(event: &ChatEvent, l: Locale) -> Vec<(String, String)> {
    let mut facts: Vec<(String, String)> = Vec::new();
    match event.event {
        EventType::FirstFailure | EventType::Escalation => failure_facts(event, l, &mut facts),
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
        EventType::Digest
        | EventType::Trend
        | EventType::TrafficReport
        | EventType::TrafficAlert
        | EventType::TrafficRecovered
        | EventType::Summary
        | EventType::TooSlow
        | EventType::WaitingForNode => {
            for detail in &event.details {
                facts.push((detail.label.clone(), detail.value.clone()));
            }
        }
    }
    facts
}

fn failure_facts(event: &ChatEvent, l: Locale, facts: &mut Vec<(String, String)>) {
    let reason = event
        .message
        .as_deref()
        .map(|m| trimmed(m, MESSAGE_CHARS))
        .unwrap_or_else(|| t!(in l, "mail-no-message"));
    facts.push((t!(in l, "mail-fact-job"), event.job.clone()));
    facts.push((
        t!(in l, "mail-fact-error"),
        format!("{}: {reason}", class(event)),
    ));
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

fn links(event: &ChatEvent, l: Locale) -> Vec<(String, String)> {
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
            EventType::TrafficReport | EventType::TrafficAlert | EventType::TrafficRecovered => {
                t!(in l, "report-open-dashboard")
            }
            _ => t!(in l, "chat-open-bulwark"),
        };
        links.push((label, url.clone()));
    }
    links
}

/// The facts as Markdown and as plain text.
fn bodies(facts: &[(String, String)]) -> (String, String) {
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
    (body_md, body_plain)
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

#[cfg(test)]
mod tests {
    use super::*;

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
        let e = summary(&titles, at, Locale::english()).with_console("https://b.example/");
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
        let m = compose(&summary(&titles, at, zh), zh, 4096);
        assert_eq!(m.title, "通道达到频率上限期间另有 5 条告警");
    }
}
