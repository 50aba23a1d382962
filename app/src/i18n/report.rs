//! A site's traffic report in words (`crate::domain::traffic_report`): the mail, with a table
//! per list, and the chat message with the headline figures and a link to the dashboard.

use std::fmt::Write;

use super::Locale;
use crate::domain::chat::{CONSOLE, ChatEvent, Detail, EventType};
use crate::domain::mail::{Composed, escape};
use crate::domain::traffic_report::{Every, Line, Report};
use crate::t;

/// The period as a reader sees it: one day, or its first and last day.
fn period(report: &Report, l: Locale) -> String {
    let p = report.period;
    if p.from == p.to {
        p.from.to_string()
    } else {
        t!(in l, "report-period", from = p.from.to_string(), to = p.to.to_string())
    }
}

/// `1,234 (+12.5 % against the week before)`, or the figure alone when nothing came before.
fn with_change(now: i64, before: i64, every: Every, l: Locale) -> String {
    match Report::change(now, before) {
        Some(change) => {
            let sign = if change < 0.0 { "−" } else { "+" };
            let change = format!("{sign}{}", l.percent(change.abs() / 100.0));
            t!(in l, "report-change", now = now, change = change, every = every.as_str())
        }
        None => now.to_string(),
    }
}

/// A list's lines as a reader sees them: `(direct)` for an empty referrer, `Unknown` for an
/// unknown country.
fn named(line: &Line, empty: &str) -> String {
    if line.name.is_empty() {
        empty.to_string()
    } else {
        line.name.clone()
    }
}

/// The report's lists, each titled, with their lines worded.
fn lists(report: &Report, l: Locale) -> Vec<(String, Vec<(String, i64)>)> {
    let worded = |lines: &[Line], empty: String| {
        lines
            .iter()
            .map(|line| (named(line, &empty), line.count))
            .collect::<Vec<_>>()
    };
    let bots = report
        .bot_categories
        .iter()
        .map(|(c, n)| (super::words::bot_category_in(l, *c), *n))
        .collect();
    vec![
        (
            t!(in l, "report-pages"),
            worded(&report.pages, String::new()),
        ),
        (
            t!(in l, "report-referrers"),
            worded(&report.referrers, t!(in l, "traffic-direct")),
        ),
        (
            t!(in l, "report-campaigns"),
            worded(&report.campaigns, String::new()),
        ),
        (
            t!(in l, "report-countries"),
            worded(&report.countries, t!(in l, "traffic-country-unknown")),
        ),
        (t!(in l, "report-bots", hits = report.bots), bots),
        (
            t!(in l, "report-not-found"),
            worded(&report.not_found, String::new()),
        ),
    ]
}

fn headline(report: &Report, l: Locale) -> String {
    t!(in l, "report-title", site = report.site.clone(), period = period(report, l))
}

/// The figures every version opens with: people and page views against the period before.
fn totals(report: &Report, l: Locale) -> [(String, String); 2] {
    let every = report.every;
    [
        (
            t!(in l, "report-people"),
            with_change(report.now.people, report.before.people, every, l),
        ),
        (
            t!(in l, "report-views"),
            with_change(report.now.views, report.before.views, every, l),
        ),
    ]
}

/// The report as a mail.
pub fn compose(report: &Report, l: Locale) -> Composed {
    let subject = t!(
        in l,
        "report-subject",
        site = report.site.clone(),
        period = period(report, l),
        people = report.now.people,
        views = report.now.views
    );
    let url = format!("{CONSOLE}{}", report.period.dashboard_path(&report.site));
    let (totals, lists) = (totals(report, l), lists(report, l));
    let none = t!(in l, "report-none");
    let mut text = format!("{}\n\n", headline(report, l));
    let mut html = format!(
        "<!doctype html><html><body style=\"font-family:sans-serif\"><h2>{}</h2><p>",
        escape(&headline(report, l))
    );
    for (label, value) in &totals {
        let _ = writeln!(text, "{label}: {value}");
        let _ = write!(html, "<b>{}</b>: {}<br>", escape(label), escape(value));
    }
    html.push_str("</p>");
    for (title, lines) in &lists {
        let _ = writeln!(text, "\n{title}");
        let _ = write!(
            html,
            "<h3>{}</h3><table cellpadding=\"4\" cellspacing=\"0\" border=\"1\" \
             style=\"border-collapse:collapse\">",
            escape(title)
        );
        if lines.is_empty() {
            let _ = writeln!(text, "  {none}");
            let _ = write!(html, "<tr><td>{}</td></tr>", escape(&none));
        }
        for (name, count) in lines {
            let _ = writeln!(text, "  {count:>8}  {name}");
            let _ = write!(
                html,
                "<tr><td>{}</td><td align=\"right\">{count}</td></tr>",
                escape(name)
            );
        }
        html.push_str("</table>");
    }
    let link = t!(in l, "report-open-dashboard");
    let _ = writeln!(text, "\n{link}: {url}");
    let _ = write!(
        html,
        "<p><a href=\"{}\">{}</a></p></body></html>",
        escape(&url),
        escape(&link)
    );
    Composed {
        subject,
        text,
        html,
    }
}

/// The report for chat: the headline figures, each list's first line, and the dashboard.
pub fn chat_event(report: &Report, at: chrono::DateTime<chrono::Utc>, l: Locale) -> ChatEvent {
    let mut event = ChatEvent::general(EventType::TrafficReport, headline(report, l), at);
    for (label, value) in totals(report, l) {
        event.details.push(Detail::new(label, value));
    }
    for (title, lines) in lists(report, l) {
        if lines.is_empty() {
            continue;
        }
        let top: Vec<String> = lines
            .iter()
            .take(3)
            .map(|(name, count)| format!("{name} ({count})"))
            .collect();
        event.details.push(Detail::new(title, top.join(", ")));
    }
    event.more_url = Some(format!(
        "{CONSOLE}{}",
        report.period.dashboard_path(&report.site)
    ));
    event
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::bots::BotCategory;
    use crate::domain::traffic_report::{Period, Totals};

    fn report() -> Report {
        let line = |name: &str, count| Line {
            name: name.into(),
            count,
        };
        Report {
            site: "shop.example".into(),
            every: Every::Week,
            period: Period {
                from: "2026-11-30".parse().unwrap(),
                to: "2026-12-06".parse().unwrap(),
            },
            now: Totals {
                people: 150,
                views: 400,
            },
            before: Totals {
                people: 100,
                views: 0,
            },
            pages: vec![line("/", 300), line("/<b>", 100)],
            referrers: vec![line("", 90)],
            campaigns: vec![],
            countries: vec![line("DE", 80), line("", 20)],
            bots: 70,
            bot_categories: vec![(BotCategory::Search, 70)],
            not_found: vec![line("/old", 3)],
        }
    }

    #[test]
    fn the_mail_says_the_figures_their_change_and_where_to_look() {
        let mail = compose(&report(), Locale::english());
        assert_eq!(
            mail.subject,
            "[Bulwark] shop.example, 2026-11-30 to 2026-12-06: 150 people, 400 page views"
        );
        assert!(
            mail.text
                .contains("People: 150 (+50.0 % against the week before)"),
            "{}",
            mail.text
        );
        assert!(mail.text.contains("Page views: 400\n"), "{}", mail.text);
        assert!(mail.text.contains("(direct)") && mail.text.contains("Unknown"));
        assert!(
            mail.text
                .contains("{console}/traffic?from=2026-11-30&to=2026-12-06&site=shop.example")
        );
        assert!(mail.html.contains("/&lt;b&gt;"), "names are escaped");
    }

    #[test]
    fn chat_gets_the_headline_figures_in_its_language() {
        let zh = Locale::parse("zh-CN").expect("zh-CN");
        let event = chat_event(&report(), chrono::Utc::now(), zh).with_console("https://b.example");
        let m = super::super::chat::compose(&event, zh, 4096);
        assert!(m.title.contains("shop.example"), "{}", m.title);
        assert!(m.plain.contains("150"), "{}", m.plain);
        assert!(
            m.plain.contains(
                "https://b.example/traffic?from=2026-11-30&to=2026-12-06&site=shop.example"
            ),
            "{}",
            m.plain
        );
    }
}
