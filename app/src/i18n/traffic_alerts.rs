//! Traffic spike alerts in words (`crate::domain::traffic_alerts`): the title of a condition
//! that started or ended, what the hour showed, and the mail and chat message carrying them.

use std::fmt::Write;

use chrono::{DateTime, Utc};

use super::Locale;
use crate::domain::chat::{CONSOLE, ChatEvent, Detail, EventType};
use crate::domain::mail::{Composed, escape};
use crate::domain::traffic_alerts::{Finding, Seen};
use crate::t;

/// The hour a finding is about, in the reader's zone: `2026-12-07 14:00–15:00 Europe/Berlin`.
pub struct Hour {
    pub start: DateTime<Utc>,
    pub zone: chrono_tz::Tz,
}

impl Hour {
    fn words(&self) -> String {
        let start = self.start.with_timezone(&self.zone);
        let end = start + chrono::Duration::hours(1);
        format!(
            "{}–{} {}",
            start.format("%Y-%m-%d %H:%M"),
            end.format("%H:%M"),
            self.zone.name()
        )
    }
}

/// What crossed its line (or, `recovered`, is back under it).
pub fn title(finding: &Finding, recovered: bool, l: Locale) -> String {
    let site = finding.site.clone();
    match (&finding.seen, recovered) {
        (Seen::Views { views, .. }, false) => {
            t!(in l, "traffic-alert-views-title", site = site, views = *views)
        }
        (Seen::Bots { bots, hits }, false) => t!(
            in l,
            "traffic-alert-bots-title",
            site = site,
            share = l.percent(*bots as f64 / (*hits).max(1) as f64)
        ),
        (Seen::NotFound { count }, false) => {
            t!(in l, "traffic-alert-not-found-title", site = site, count = *count)
        }
        (Seen::Views { .. }, true) => t!(in l, "traffic-recovered-views-title", site = site),
        (Seen::Bots { .. }, true) => t!(in l, "traffic-recovered-bots-title", site = site),
        (Seen::NotFound { .. }, true) => {
            t!(in l, "traffic-recovered-not-found-title", site = site)
        }
    }
}

/// What the hour showed, next to the usual.
pub fn detail(finding: &Finding, l: Locale) -> String {
    match &finding.seen {
        Seen::Views { views, usual } => t!(
            in l,
            "traffic-alert-views-detail",
            views = *views,
            usual = format!("{usual:.0}")
        ),
        Seen::Bots { bots, hits } => {
            t!(in l, "traffic-alert-bots-detail", bots = *bots, hits = *hits)
        }
        Seen::NotFound { count } => t!(in l, "traffic-alert-not-found-detail", count = *count),
    }
}

/// Where to look: the site's traffic today.
fn dashboard(finding: &Finding) -> String {
    let page = crate::domain::sites::traffic_page(&finding.site, "range=today");
    format!("{CONSOLE}{page}")
}

/// The alert (or its recovery) as a mail.
pub fn compose(finding: &Finding, recovered: bool, hour: &Hour, l: Locale) -> Composed {
    let title = title(finding, recovered, l);
    let (detail, when, link) = (detail(finding, l), hour.words(), dashboard(finding));
    let hour_label = t!(in l, "traffic-alert-hour");
    let open = t!(in l, "report-open-dashboard");
    let mut text = format!("{title}\n\n{detail}\n{hour_label}: {when}\n");
    let _ = writeln!(text, "\n{open}: {link}");
    let html = format!(
        "<!doctype html><html><body style=\"font-family:sans-serif\"><h2>{}</h2><p>{}<br>\
         <b>{}</b>: {}</p><p><a href=\"{}\">{}</a></p></body></html>",
        escape(&title),
        escape(&detail),
        escape(&hour_label),
        escape(&when),
        escape(&link),
        escape(&open)
    );
    Composed {
        subject: format!("[Bulwark] {title}"),
        text,
        html,
    }
}

/// The alert (or its recovery) for chat.
pub fn chat_event(
    finding: &Finding,
    recovered: bool,
    hour: &Hour,
    at: DateTime<Utc>,
    l: Locale,
) -> ChatEvent {
    let kind = if recovered {
        EventType::TrafficRecovered
    } else {
        EventType::TrafficAlert
    };
    let mut event = ChatEvent::general(kind, title(finding, recovered, l), at);
    event
        .details
        .push(Detail::new(t!(in l, "trend-what"), detail(finding, l)));
    event
        .details
        .push(Detail::new(t!(in l, "traffic-alert-hour"), hour.words()));
    event.more_url = Some(dashboard(finding));
    event
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::traffic_alerts::Rule;

    fn spike() -> Finding {
        Finding {
            site: "shop.example".into(),
            rule: Rule::Views,
            holds: true,
            seen: Seen::Views {
                views: 480,
                usual: 120.0,
            },
        }
    }

    #[test]
    fn an_alert_and_its_recovery_say_what_and_when() {
        let hour = Hour {
            start: "2026-12-07T13:00:00Z".parse().unwrap(),
            zone: chrono_tz::Europe::Berlin,
        };
        let mail = compose(&spike(), false, &hour, Locale::english());
        assert_eq!(
            mail.subject,
            "[Bulwark] Traffic spike on shop.example: 480 page views in an hour"
        );
        assert!(
            mail.text
                .contains("480 people's page views, 120 usual for this hour of the week"),
            "{}",
            mail.text
        );
        assert!(
            mail.text.contains("2026-12-07 14:00–15:00 Europe/Berlin"),
            "{}",
            mail.text
        );
        assert!(
            mail.text
                .contains("{console}/traffic?range=today&site=shop.example")
        );
        let back = compose(&spike(), true, &hour, Locale::english());
        assert_eq!(
            back.subject,
            "[Bulwark] Page views on shop.example are back to usual"
        );
        let zh = Locale::parse("zh-CN").expect("zh-CN");
        let event = chat_event(&spike(), false, &hour, Utc::now(), zh);
        assert!(event.headline.unwrap().contains("shop.example"));
    }
}
