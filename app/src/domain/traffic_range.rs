//! Date ranges and visitor filters for traffic figures, shared by the dashboard (in the
//! browser and on the server) and `bulwark traffic stats`, so both read the same days.
//!
//! Dates are calendar days in the configured time zone, both ends inclusive
//! (`docs/ARCHITECTURE.md` §5). A range resolves to the half-open instant interval
//! `[start, end)` from the first day's midnight to the midnight after the last day, whatever
//! DST does in between.

use chrono::{DateTime, Days, NaiveDate, TimeZone, Utc};
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};

/// How long traffic rows are kept by default.
pub const DEFAULT_RETENTION_DAYS: u32 = 90;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Preset {
    Today,
    Yesterday,
    Last7,
    Last30,
    Last90,
}

impl Preset {
    pub const ALL: [Preset; 5] = [
        Preset::Today,
        Preset::Yesterday,
        Preset::Last7,
        Preset::Last30,
        Preset::Last90,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Preset::Today => "today",
            Preset::Yesterday => "yesterday",
            Preset::Last7 => "7d",
            Preset::Last30 => "30d",
            Preset::Last90 => "90d",
        }
    }

    pub fn parse(text: &str) -> Option<Preset> {
        Preset::ALL.into_iter().find(|p| p.as_str() == text)
    }
}

/// A range as asked for: a preset, or two dates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RangeSpec {
    Preset(Preset),
    Custom { from: NaiveDate, to: NaiveDate },
}

/// Whom the figures count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum VisitorType {
    #[default]
    All,
    Human,
    Bot,
}

impl VisitorType {
    pub fn as_str(self) -> &'static str {
        match self {
            VisitorType::All => "all",
            VisitorType::Human => "human",
            VisitorType::Bot => "bot",
        }
    }

    pub fn parse(text: &str) -> Result<VisitorType, RangeError> {
        match text {
            "all" | "" => Ok(VisitorType::All),
            "human" | "people" => Ok(VisitorType::Human),
            "bot" | "bots" => Ok(VisitorType::Bot),
            other => Err(RangeError::VisitorType(other.to_string())),
        }
    }
}

/// How a chart over the range is bucketed.
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Bucket {
    Hour,
    Day,
}

/// A range resolved against a day and a zone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resolved {
    pub from: NaiveDate,
    pub to: NaiveDate,
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    pub bucket: Bucket,
}

impl Resolved {
    pub fn days(&self) -> u64 {
        (self.to - self.from).num_days() as u64 + 1
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
pub enum RangeError {
    #[error("'{0}' is not a date like 2026-11-30")]
    Date(String),
    #[error("'{0}' is not a range: use today, yesterday, 7d, 30d or 90d, or from and to dates")]
    Preset(String),
    #[error("a custom range needs both a from and a to date")]
    HalfOpen,
    #[error("the from date {from} is after the to date {to}")]
    Reversed { from: NaiveDate, to: NaiveDate },
    #[error("the range ends on {to}, which is after today ({today})")]
    Future { to: NaiveDate, today: NaiveDate },
    #[error("traffic is kept {days} days: the range must start on or after {earliest}, not {from}")]
    PastRetention {
        from: NaiveDate,
        earliest: NaiveDate,
        days: u32,
    },
    #[error("'{0}' is not a visitor type: use all, human or bot")]
    VisitorType(String),
}

impl RangeError {
    /// The refusal as the catalogue words it ([`crate::domain::problem`]).
    pub fn problem(&self) -> crate::domain::Problem {
        use crate::problem;
        match self {
            RangeError::Date(text) => problem!("error-range-date", text = text),
            RangeError::Preset(text) => problem!("error-range-preset", text = text),
            RangeError::HalfOpen => problem!("error-range-half-open"),
            RangeError::Reversed { from, to } => problem!(
                "error-range-reversed",
                from = from.to_string(),
                to = to.to_string()
            ),
            RangeError::Future { to, today } => problem!(
                "error-range-future",
                to = to.to_string(),
                today = today.to_string()
            ),
            RangeError::PastRetention {
                from,
                earliest,
                days,
            } => problem!(
                "error-range-retention",
                from = from.to_string(),
                earliest = earliest.to_string(),
                days = *days
            ),
            RangeError::VisitorType(text) => problem!("error-range-type", text = text),
        }
    }
}

/// Reads a range from the URL's or command line's words: `range` alone, or `from` and `to`.
pub fn parse_spec(
    range: Option<&str>,
    from: Option<&str>,
    to: Option<&str>,
) -> Result<RangeSpec, RangeError> {
    let date = |text: &str| parse_day(text).ok_or_else(|| RangeError::Date(text.to_string()));
    match (from.filter(|f| !f.is_empty()), to.filter(|t| !t.is_empty())) {
        (Some(from), Some(to)) => Ok(RangeSpec::Custom {
            from: date(from)?,
            to: date(to)?,
        }),
        (Some(_), None) | (None, Some(_)) => Err(RangeError::HalfOpen),
        (None, None) => match range.filter(|r| !r.is_empty()) {
            None => Ok(RangeSpec::Preset(Preset::Last7)),
            Some(text) => Preset::parse(text)
                .map(RangeSpec::Preset)
                .ok_or_else(|| RangeError::Preset(text.to_string())),
        },
    }
}

/// The days and instants of `spec` for someone whose today is `today` in `tz`.
pub fn resolve(
    spec: RangeSpec,
    today: NaiveDate,
    tz: Tz,
    retention_days: u32,
) -> Result<Resolved, RangeError> {
    let back = |n: u64| today.checked_sub_days(Days::new(n)).unwrap_or(today);
    let (from, to) = match spec {
        RangeSpec::Preset(Preset::Today) => (today, today),
        RangeSpec::Preset(Preset::Yesterday) => (back(1), back(1)),
        RangeSpec::Preset(Preset::Last7) => (back(6), today),
        RangeSpec::Preset(Preset::Last30) => (back(29), today),
        RangeSpec::Preset(Preset::Last90) => (back(89), today),
        RangeSpec::Custom { from, to } => (from, to),
    };
    if from > to {
        return Err(RangeError::Reversed { from, to });
    }
    if to > today {
        return Err(RangeError::Future { to, today });
    }
    let earliest = back(u64::from(retention_days.saturating_sub(1)));
    if from < earliest {
        return Err(RangeError::PastRetention {
            from,
            earliest,
            days: retention_days,
        });
    }
    let days = (to - from).num_days() + 1;
    Ok(Resolved {
        from,
        to,
        start: midnight(from, tz),
        end: midnight(to.checked_add_days(Days::new(1)).unwrap_or(to), tz),
        bucket: if days <= 2 { Bucket::Hour } else { Bucket::Day },
    })
}

/// The range of the same length just before `range` (for comparisons); it may reach past
/// retention, where it simply has no data.
pub fn previous(range: &Resolved, tz: Tz) -> Resolved {
    let days = Days::new(range.days());
    let from = range.from.checked_sub_days(days).unwrap_or(range.from);
    let to = range.from.pred_opt().unwrap_or(range.from);
    Resolved {
        from,
        to,
        start: midnight(from, tz),
        end: range.start,
        bucket: range.bucket,
    }
}

/// The first instant of `day` in `tz` (01:00 or later where midnight does not exist).
pub fn midnight(day: NaiveDate, tz: Tz) -> DateTime<Utc> {
    (0..24)
        .find_map(|hour| {
            tz.from_local_datetime(&day.and_hms_opt(hour, 0, 0)?)
                .earliest()
        })
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_else(|| day.and_hms_opt(0, 0, 0).unwrap_or_default().and_utc())
}

/// Today's date in `tz`.
pub fn today(now: DateTime<Utc>, tz: Tz) -> NaiveDate {
    now.with_timezone(&tz).date_naive()
}

/// A calendar day as typed: `YYYY-MM-DD`, blanks around it ignored.
pub fn parse_day(text: &str) -> Option<NaiveDate> {
    NaiveDate::parse_from_str(text.trim(), "%Y-%m-%d").ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(text: &str) -> NaiveDate {
        NaiveDate::parse_from_str(text, "%Y-%m-%d").unwrap()
    }

    const BERLIN: Tz = chrono_tz::Europe::Berlin;

    #[test]
    fn presets_count_back_from_today_inclusive() {
        let today = d("2026-11-30");
        let r = |p| resolve(RangeSpec::Preset(p), today, BERLIN, 90).unwrap();
        assert_eq!((r(Preset::Today).from, r(Preset::Today).to), (today, today));
        assert_eq!(r(Preset::Yesterday).from, d("2026-11-29"));
        assert_eq!(r(Preset::Last7).from, d("2026-11-24"));
        assert_eq!(r(Preset::Last7).days(), 7);
        assert_eq!(r(Preset::Last90).days(), 90);
        assert_eq!(r(Preset::Today).bucket, Bucket::Hour);
        assert_eq!(r(Preset::Last7).bucket, Bucket::Day);
        // Berlin is UTC+1 in winter: the day starts at 23:00 UTC the day before.
        assert_eq!(
            r(Preset::Today).start,
            Utc.with_ymd_and_hms(2026, 11, 29, 23, 0, 0).unwrap()
        );
        assert_eq!(
            r(Preset::Today).end,
            Utc.with_ymd_and_hms(2026, 11, 30, 23, 0, 0).unwrap()
        );
    }

    #[test]
    fn a_dst_day_is_23_hours_long() {
        let r = resolve(
            RangeSpec::Custom {
                from: d("2026-03-29"),
                to: d("2026-03-29"),
            },
            d("2026-04-01"),
            BERLIN,
            90,
        )
        .unwrap();
        assert_eq!((r.end - r.start).num_hours(), 23);
    }

    #[test]
    fn bad_ranges_say_what_is_wrong() {
        let today = d("2026-11-30");
        let custom = |from, to| RangeSpec::Custom {
            from: d(from),
            to: d(to),
        };
        assert_eq!(
            resolve(custom("2026-11-20", "2026-11-10"), today, BERLIN, 90),
            Err(RangeError::Reversed {
                from: d("2026-11-20"),
                to: d("2026-11-10")
            })
        );
        let past = resolve(custom("2026-01-01", "2026-01-31"), today, BERLIN, 90).unwrap_err();
        assert!(past.to_string().contains("kept 90 days"), "{past}");
        assert!(past.to_string().contains("2026-09-02"), "{past}");
        assert!(matches!(
            resolve(custom("2026-11-30", "2026-12-01"), today, BERLIN, 90),
            Err(RangeError::Future { .. })
        ));
        assert_eq!(
            parse_spec(None, Some("2026-13-01"), Some("2026-11-30")),
            Err(RangeError::Date("2026-13-01".into()))
        );
        assert_eq!(
            parse_spec(None, Some("2026-11-01"), None),
            Err(RangeError::HalfOpen)
        );
        assert_eq!(
            parse_spec(Some("week"), None, None),
            Err(RangeError::Preset("week".into()))
        );
        assert_eq!(
            parse_spec(None, None, None),
            Ok(RangeSpec::Preset(Preset::Last7))
        );
        assert!(VisitorType::parse("robots").is_err());
    }

    #[test]
    fn the_previous_period_has_the_same_length_and_touches() {
        let r = resolve(
            RangeSpec::Preset(Preset::Last7),
            d("2026-11-30"),
            BERLIN,
            90,
        )
        .unwrap();
        let p = previous(&r, BERLIN);
        assert_eq!((p.from, p.to), (d("2026-11-17"), d("2026-11-23")));
        assert_eq!(p.end, r.start);
        assert_eq!(p.days(), 7);
    }
}
