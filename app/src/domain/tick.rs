//! The tick a run stands for, as its job sees it: `BULWARK_SCHEDULED_AT` and
//! `BULWARK_BUSINESS_DATE` for a command, `${tick:scheduled_at}`, `${tick:business_date}` and
//! `${tick:business_date:FORMAT}` (chrono's strftime) in an HTTP job. A late run after a
//! misfire, a moved off-day tick and a backfill run all know which day they are for.
//!
//! A child run of a spread job (`super::job::spread`) also knows its shard:
//! `BULWARK_SHARD_INDEX` and `BULWARK_SHARD_TOTAL` for a command, `${shard:index}` and
//! `${shard:total}` in an HTTP job.
//!
//! In an HTTP job a tick (or shard) reference goes in by the parameters' rules
//! (`super::job::placement`): `super::job::tick_refs::as_params` turns each into a parameter of
//! its own, so its value is encoded for where it stands and refused where a parameter may not
//! stand.

use chrono::format::{Item, StrftimeItems};
use chrono::{DateTime, NaiveDate, TimeZone, Utc};

const OPEN: &str = "${tick:";
/// Where a shard reference opens.
pub const SHARD_OPEN: &str = "${shard:";

/// The tick a run stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunTick {
    /// When it was scheduled, RFC 3339 in the job's zone.
    pub scheduled_at: String,
    /// The date it stands for, in the job's zone.
    pub business_date: NaiveDate,
    /// A child run's shard.
    pub shard: Option<super::job::spread::Shard>,
}

impl RunTick {
    pub fn new<Z: TimeZone>(scheduled: DateTime<Utc>, zone: &Z, business_date: NaiveDate) -> Self
    where
        Z::Offset: std::fmt::Display,
    {
        RunTick {
            scheduled_at: scheduled.with_timezone(zone).to_rfc3339(),
            business_date,
            shard: None,
        }
    }

    /// The value `reference` (what stands between `${tick:` and `}`) names, if it names one.
    pub fn value(&self, reference: &str) -> Option<String> {
        match reference.split_once(':') {
            None if reference == "scheduled_at" => Some(self.scheduled_at.clone()),
            None if reference == "business_date" => Some(self.business_date.to_string()),
            Some(("business_date", format)) if valid_format(format) => {
                Some(self.business_date.format(format).to_string())
            }
            _ => None,
        }
    }
}

/// A strftime format with no unknown specifier, and only date fields (a date has no time).
fn valid_format(format: &str) -> bool {
    !format.is_empty()
        && StrftimeItems::new(format).all(|item| match item {
            Item::Error => false,
            Item::Numeric(n, _) => {
                use chrono::format::Numeric::*;
                matches!(
                    n,
                    Year | YearDiv100
                        | YearMod100
                        | IsoYear
                        | IsoYearDiv100
                        | IsoYearMod100
                        | Month
                        | Day
                        | WeekFromSun
                        | WeekFromMon
                        | IsoWeek
                        | NumDaysFromSun
                        | WeekdayFromMon
                        | Ordinal
                )
            }
            Item::Fixed(f) => {
                use chrono::format::Fixed::*;
                matches!(
                    f,
                    ShortMonthName | LongMonthName | ShortWeekdayName | LongWeekdayName
                )
            }
            _ => true,
        })
}

/// The tick references in `text` (what stands between `${tick:` and `}`), in order.
pub fn references(text: &str) -> Vec<&str> {
    spans(text)
        .into_iter()
        .map(|(_, reference)| reference)
        .collect()
}

/// Each tick reference in `text`: the byte range of the whole `${tick:…}`, and what stands
/// inside it, in order.
pub fn spans(text: &str) -> Vec<(std::ops::Range<usize>, &str)> {
    spans_of(text, OPEN)
}

/// Each reference opening with `open` (`${tick:`, [`SHARD_OPEN`]) in `text`, as [`spans`].
pub fn spans_of<'t>(text: &'t str, open: &str) -> Vec<(std::ops::Range<usize>, &'t str)> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(start) = text[from..].find(open).map(|at| from + at) {
        let inner = start + open.len();
        let Some(end) = text[inner..].find('}').map(|at| inner + at) else {
            break;
        };
        found.push((start..end + 1, &text[inner..end]));
        from = end + 1;
    }
    found
}

/// The references among `texts` that name nothing a tick has (a misspelt name, a format with
/// an unknown or a time specifier).
pub fn unknown_references<'a>(texts: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let probe = RunTick {
        scheduled_at: String::new(),
        business_date: NaiveDate::MIN,
        shard: None,
    };
    let mut unknown = Vec::new();
    for text in texts {
        for reference in references(text) {
            if probe.value(reference).is_none() && !unknown.iter().any(|u| u == reference) {
                unknown.push(reference.to_string());
            }
        }
    }
    unknown
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tick() -> RunTick {
        RunTick::new(
            "2026-10-08T01:00:00Z".parse().unwrap(),
            &chrono_tz::Asia::Shanghai,
            NaiveDate::from_ymd_opt(2026, 10, 1).unwrap(),
        )
    }

    #[test]
    fn a_tick_names_its_time_its_date_and_its_date_formatted() {
        let t = tick();
        assert_eq!(
            t.value("scheduled_at").as_deref(),
            Some("2026-10-08T09:00:00+08:00")
        );
        assert_eq!(t.value("business_date").as_deref(), Some("2026-10-01"));
        assert_eq!(t.value("business_date:%Y%m%d").as_deref(), Some("20261001"));
        assert_eq!(
            t.value("business_date:%d/%m/%Y").as_deref(),
            Some("01/10/2026")
        );
        // Unknown names, unknown specifiers and times of day name nothing (and never panic).
        for bad in [
            "date",
            "business_date:",
            "business_date:%Q",
            "business_date:%H",
            "scheduled_at:%Y",
        ] {
            assert_eq!(t.value(bad), None, "{bad}");
        }
        assert_eq!(
            unknown_references(["${tick:business_date:%Q}/${tick:scheduled_at}", "${tick:x}"]),
            ["business_date:%Q", "x"]
        );
    }
}
