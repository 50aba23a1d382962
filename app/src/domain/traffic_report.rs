//! Scheduled traffic reports: which period a report covers, and what it says of it.
//!
//! A report covers the last *whole* period before the day it is made: a daily report
//! yesterday, a weekly one the Monday-to-Sunday week before the current one. Sending it is
//! idempotent per site and period, so a missed morning catches up later the same period and a
//! second look sends nothing. Its figures are those of `bulwark traffic stats --site SITE --from
//! FROM --to TO` (people's with `--type human`, bots' with `--type bot`), so a reader can check
//! them; the comparison is with the period of the same length just before.

use chrono::{Datelike, Duration, NaiveDate};

use super::bots::BotCategory;
use super::email::EmailAddress;
use super::problem::Problem;
use crate::problem;

/// How many lines each list of a report has, at most.
pub const TOP: usize = 5;

crate::text_enum! {
    /// How often a site's report goes out.
    pub enum Every {
        Day = "day",
        Week = "week",
    }
}

/// A run of whole local days, both ends included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Period {
    pub from: NaiveDate,
    pub to: NaiveDate,
}

impl Period {
    /// The last whole period before `today`: yesterday, or last Monday-to-Sunday week.
    pub fn last_before(every: Every, today: NaiveDate) -> Period {
        match every {
            Every::Day => {
                let day = today - Duration::days(1);
                Period { from: day, to: day }
            }
            Every::Week => {
                let monday =
                    today - Duration::days(i64::from(today.weekday().num_days_from_monday()));
                Period {
                    from: monday - Duration::days(7),
                    to: monday - Duration::days(1),
                }
            }
        }
    }

    /// The period of the same length just before this one.
    pub fn before(self) -> Period {
        let days = (self.to - self.from).num_days() + 1;
        Period {
            from: self.from - Duration::days(days),
            to: self.to - Duration::days(days),
        }
    }

    /// The Traffic page for this period and site, relative to the console's address.
    pub fn dashboard_path(self, site: &str) -> String {
        let range = format!("from={}&to={}", self.from, self.to);
        super::sites::traffic_page(site, &range)
    }
}

/// One line of a report's list: a page, referrer, campaign or country, and its count.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Line {
    pub name: String,
    pub count: i64,
}

/// People's visits and page views over a period.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Totals {
    pub people: i64,
    pub views: i64,
}

/// What a report says: figures only, worded above the domain in the reader's language.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Report {
    pub site: String,
    pub every: Every,
    pub period: Period,
    pub now: Totals,
    pub before: Totals,
    /// People's page views per page (path), most first.
    pub pages: Vec<Line>,
    /// Where people came from (a referring host; `""` typed or bookmarked).
    pub referrers: Vec<Line>,
    /// Campaigns by `utm_campaign` (with source and medium: `spring (mail / news)`).
    pub campaigns: Vec<Line>,
    /// Country codes (`""`: unknown).
    pub countries: Vec<Line>,
    /// Bots' hits, all of them and per category.
    pub bots: i64,
    pub bot_categories: Vec<(BotCategory, i64)>,
    /// Paths answered 404, most first.
    pub not_found: Vec<Line>,
}

impl Report {
    /// The change of `now` against `before` in per cent; `None` when there was nothing before.
    pub fn change(now: i64, before: i64) -> Option<f64> {
        (before > 0).then(|| (now - before) as f64 * 100.0 / before as f64)
    }

    /// The dedupe key of this report's messages: one per site and period, whatever the reader.
    pub fn key(&self) -> String {
        format!(
            "report:{}:{}:{}",
            self.site,
            self.every.as_str(),
            self.period.from
        )
    }
}

/// Who a report goes to, checked: at least one address or channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Audience {
    pub to: Vec<EmailAddress>,
    pub channels: Vec<String>,
}

impl Audience {
    /// Addresses and channel names as typed (each may hold several, comma-separated); every
    /// address must parse, and there must be someone to send to.
    pub fn parse(to: &[String], channels: &[String]) -> Result<Audience, Problem> {
        let mut addresses = Vec::new();
        for text in to.iter().flat_map(|t| t.split(',')).map(str::trim) {
            if text.is_empty() {
                continue;
            }
            let address = EmailAddress::parse(text)
                .map_err(|_| problem!("error-report-address", text = text.to_string()))?;
            if !addresses.contains(&address) {
                addresses.push(address);
            }
        }
        let mut names: Vec<String> = Vec::new();
        for name in channels.iter().flat_map(|c| c.split(',')).map(str::trim) {
            if !name.is_empty() && !names.iter().any(|n| n == name) {
                names.push(name.to_string());
            }
        }
        if addresses.is_empty() && names.is_empty() {
            return Err(problem!("error-report-nobody"));
        }
        Ok(Audience {
            to: addresses,
            channels: names,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(text: &str) -> NaiveDate {
        text.parse().unwrap()
    }

    #[test]
    fn a_report_covers_the_last_whole_period() {
        // 2026-12-09 is a Wednesday.
        let wednesday = day("2026-12-09");
        assert_eq!(
            Period::last_before(Every::Day, wednesday),
            Period {
                from: day("2026-12-08"),
                to: day("2026-12-08")
            }
        );
        let week = Period::last_before(Every::Week, wednesday);
        assert_eq!((week.from, week.to), (day("2026-11-30"), day("2026-12-06")));
        // On a Monday, the week that just ended.
        assert_eq!(Period::last_before(Every::Week, day("2026-12-07")), week);
        assert_eq!(
            week.before(),
            Period {
                from: day("2026-11-23"),
                to: day("2026-11-29")
            }
        );
    }

    #[test]
    fn changes_are_against_the_period_before() {
        assert_eq!(Report::change(150, 100), Some(50.0));
        assert_eq!(Report::change(50, 100), Some(-50.0));
        assert_eq!(Report::change(10, 0), None);
    }

    #[test]
    fn the_dashboard_link_encodes_the_site() {
        let p = Period {
            from: day("2026-11-30"),
            to: day("2026-12-06"),
        };
        assert_eq!(
            p.dashboard_path("shop.example"),
            "/traffic?from=2026-11-30&to=2026-12-06&site=shop.example"
        );
    }

    #[test]
    fn an_audience_needs_someone_and_good_addresses() {
        let s = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let a = Audience::parse(
            &s(&["a@example.com, b@example.com", "a@example.com"]),
            &s(&["ops"]),
        )
        .unwrap();
        assert_eq!(a.to.len(), 2);
        assert_eq!(a.channels, ["ops"]);
        assert_eq!(
            Audience::parse(&[], &[]).unwrap_err().id(),
            "error-report-nobody"
        );
        assert_eq!(
            Audience::parse(&s(&["nobody"]), &[]).unwrap_err().id(),
            "error-report-address"
        );
    }
}
