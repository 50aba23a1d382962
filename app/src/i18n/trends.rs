//! Trend alerts in words: a finding's title and what it measured
//! (`crate::domain::trends`), and the chat message that carries them.

use super::Locale;
use crate::domain::chat::{CONSOLE, ChatEvent, Detail, EventType};
use crate::domain::trends::{Finding, RATE_LIMIT_PERCENT, Seen};
use crate::t;

/// The trend's title: what crossed its line.
pub fn title(finding: &Finding, l: Locale) -> String {
    match &finding.seen {
        Seen::Spike { recent, .. } => t!(in l, "trend-spike-title", recent = *recent),
        Seen::Rate { percent, .. } => {
            t!(in l, "trend-rate-title", percent = format!("{percent:.1}%"))
        }
        Seen::Burst { class, .. } => t!(in l, "trend-burst-title", class = *class),
    }
}

/// What the trend measured, next to the usual.
pub fn detail(finding: &Finding, l: Locale) -> String {
    match &finding.seen {
        Seen::Spike { recent, usual } => t!(
            in l,
            "trend-spike-detail",
            recent = *recent,
            usual = format!("{usual:.1}")
        ),
        Seen::Rate {
            failed,
            attempts,
            percent,
        } => t!(
            in l,
            "trend-rate-detail",
            failed = *failed,
            attempts = *attempts,
            percent = format!("{percent:.1}%"),
            limit = format!("{RATE_LIMIT_PERCENT}%")
        ),
        Seen::Burst {
            class,
            count,
            recent,
            usual,
        } => t!(
            in l,
            "trend-burst-detail",
            class = *class,
            count = *count,
            recent = *recent,
            usual = format!("{usual:.1}")
        ),
    }
}

/// The trend for chat, in `l`: its title, what it measured, and where to look.
pub fn chat_event(finding: &Finding, at: chrono::DateTime<chrono::Utc>, l: Locale) -> ChatEvent {
    let mut event = ChatEvent::general(
        EventType::Trend,
        t!(in l, "trend-headline", title = title(finding, l)),
        at,
    );
    event
        .details
        .push(Detail::new(t!(in l, "trend-what"), detail(finding, l)));
    event.queue_url = Some(format!("{CONSOLE}/failed"));
    event.more_url = Some(format!("{CONSOLE}/runs?status=dead"));
    event
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trend_in_chat_says_what_and_where_to_look() {
        let finding = Finding {
            key: "spike".into(),
            seen: Seen::Spike {
                recent: 12,
                usual: 1.0,
            },
        };
        let at = "2026-12-01T03:00:00Z".parse().unwrap();
        let event = chat_event(&finding, at, Locale::english()).with_console("https://b.example");
        let m = super::super::chat::compose(&event, crate::i18n::Locale::english(), 4096);
        assert_eq!(m.title, "Trend: 12 failed attempts in 5 minutes");
        assert!(
            m.plain
                .contains("What: 12 attempts failed in the last 5 minutes"),
            "{}",
            m.plain
        );
        assert!(
            m.plain
                .contains("Recent failures: https://b.example/runs?status=dead")
        );
        let zh = crate::i18n::Locale::parse("zh-CN").expect("zh-CN");
        let event = chat_event(&finding, at, zh).with_console("https://b.example");
        let m = super::super::chat::compose(&event, zh, 4096);
        assert_eq!(m.title, "趋势：5 分钟内 12 次尝试失败");
        assert!(m.plain.contains("平均每 5 分钟 1.0 次"), "{}", m.plain);
    }
}
