//! Cron expressions (six fields, seconds first) and time zones, and the fire times they give.
//!
//! Fire times are computed in the job's own time zone, so a job at 07:30 Europe/Berlin fires at
//! 07:30 local time on both sides of a daylight-saving change — unlike a fixed UTC offset taken
//! once at start-up. Any chrono zone will do: the engine passes the tz database's (`Tz`), the
//! job editor's preview in the browser a table of the zone's offsets from the server
//! (`app/src/domain/zone.rs`), which agrees with it to the second. When a day-of-month and a day-of-week
//! are both restricted, either one matching fires the job (as in Vixie cron).

use chrono::{DateTime, TimeZone, Timelike, Utc};
use chrono_tz::Tz;
use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CronError {
    #[error("cron expression is required, e.g. 0 30 7 * * * (07:30:00 every day)")]
    Empty,
    #[error(
        "cron needs 6 fields, seconds first (sec min hour day month weekday); got {0}: \
         e.g. 0 30 7 * * * for 07:30:00 every day"
    )]
    FieldCount(usize),
    #[error("cron expression is invalid: {0}")]
    Invalid(String),
    #[error("cron expression never fires")]
    NeverFires,
    #[error(
        "time zone '{0}' is unknown; use an IANA name such as UTC, Europe/Berlin or Asia/Shanghai"
    )]
    TimeZone(String),
}

impl CronError {
    /// The refusal as the catalogue words it ([`crate::domain::problem`]).
    pub fn problem(&self) -> crate::domain::Problem {
        use crate::problem;
        match self {
            CronError::Empty => problem!("error-cron-empty"),
            CronError::FieldCount(n) => problem!("error-cron-fields", count = *n),
            CronError::Invalid(detail) => problem!("error-cron-invalid", detail = detail),
            CronError::NeverFires => problem!("error-cron-never"),
            CronError::TimeZone(name) => problem!("error-cron-zone", zone = name),
        }
    }
}

/// Fire times over a span: the last few, and how many in all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ticks {
    /// The newest ones asked for, oldest first.
    pub last: Vec<DateTime<Utc>>,
    /// There are more, older than the oldest of `last`.
    pub more: bool,
    /// Fire times looked at to find them: at most one more than asked for, however long the
    /// span.
    pub examined: usize,
}

/// A valid six-field cron expression.
#[derive(Debug, Clone)]
pub struct CronExpr {
    text: String,
    cron: Cron,
}

impl PartialEq for CronExpr {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl CronExpr {
    pub fn parse(text: &str) -> Result<Self, CronError> {
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if text.is_empty() {
            return Err(CronError::Empty);
        }
        let fields = text.split(' ').count();
        if fields != 6 && !text.starts_with('@') {
            return Err(CronError::FieldCount(fields));
        }
        let cron = CronParser::builder()
            .seconds(Seconds::Required)
            .year(Year::Disallowed)
            .build()
            .parse(&text)
            .map_err(|e| CronError::Invalid(e.to_string()))?;
        Ok(CronExpr { text, cron })
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Every fire time strictly after `after`, in `tz`, in order.
    ///
    /// croner's own `iter_after` (3.0.1) steps one second past each time it yields and then
    /// searches exclusively, so for a schedule firing every second it skips every other tick;
    /// this asks for each next time from the last one instead.
    pub fn fire_times_after<Z: TimeZone>(
        &self,
        tz: &Z,
        after: DateTime<Utc>,
    ) -> impl Iterator<Item = DateTime<Z>> {
        let mut at = whole_second(after).with_timezone(tz);
        std::iter::from_fn(move || {
            let next = self.cron.find_next_occurrence(&at, false).ok()?;
            at = next.clone();
            Some(next)
        })
    }

    /// The next `count` fire times strictly after `after`, in the job's time zone.
    pub fn next_fire_times<Z: TimeZone>(
        &self,
        tz: &Z,
        after: DateTime<Utc>,
        count: usize,
    ) -> Vec<DateTime<Z>> {
        self.fire_times_after(tz, after).take(count).collect()
    }

    /// Fire times strictly after `after` and at or before `until`, at most `limit` of them.
    /// Stops as soon as it passes `until`, so a rare schedule costs nothing.
    pub fn fire_times_between<Z: TimeZone>(
        &self,
        tz: &Z,
        after: DateTime<Utc>,
        until: DateTime<Utc>,
        limit: usize,
    ) -> Vec<DateTime<Utc>> {
        self.fire_times_after(tz, after)
            .map(|t| t.with_timezone(&Utc))
            .take_while(|t| *t <= until)
            .take(limit)
            .collect()
    }

    /// The newest `keep` fire times strictly after `after` and at or before `until`, oldest
    /// first, and whether there are older ones. Found by stepping back from `until`, so the
    /// cost is `keep` steps (plus one) whatever the span: a node back from a day's outage of
    /// an every-second job looks at a hundred-odd ticks, not a hundred thousand, and counts
    /// none of the rest.
    pub fn ticks_between<Z: TimeZone>(
        &self,
        tz: &Z,
        after: DateTime<Utc>,
        until: DateTime<Utc>,
        keep: usize,
    ) -> Ticks {
        let mut last = Vec::with_capacity(keep.min(1024));
        let mut examined = 0;
        let mut at = whole_second(until).with_timezone(tz);
        let mut inclusive = true;
        let more = loop {
            let Ok(tick) = self.cron.find_previous_occurrence(&at, inclusive) else {
                break false;
            };
            examined += 1;
            let utc = tick.with_timezone(&Utc);
            if utc <= after {
                break false;
            }
            if last.len() == keep {
                break true;
            }
            last.push(utc);
            at = tick;
            inclusive = false;
        };
        last.reverse();
        Ticks {
            last,
            more,
            examined,
        }
    }

    /// The next fire time strictly after `after`.
    pub fn next_after<Z: TimeZone>(
        &self,
        tz: &Z,
        after: DateTime<Utc>,
    ) -> Result<DateTime<Z>, CronError> {
        self.cron
            .find_next_occurrence(&whole_second(after).with_timezone(tz), false)
            .map_err(|_| CronError::NeverFires)
    }

    /// The shortest gap between consecutive fire times over the next few runs: the period a
    /// retry schedule must fit in before it overruns the next tick.
    pub fn shortest_gap_ms<Z: TimeZone>(&self, tz: &Z, after: DateTime<Utc>) -> Option<u64> {
        let times = self.next_fire_times(tz, after, 24);
        times
            .windows(2)
            .map(|w| w[1].timestamp_millis() - w[0].timestamp_millis())
            .filter(|ms| *ms > 0)
            .min()
            .map(|ms| ms as u64)
    }
}

/// The newest `keep` ticks of a job watched every `every_ms`: `after` plus whole periods,
/// strictly after `after` and at or before `until`, oldest first.
pub fn periods_between(
    after: DateTime<Utc>,
    until: DateTime<Utc>,
    every_ms: u64,
    keep: usize,
) -> Ticks {
    let every = every_ms.max(1) as i64;
    let span = (until - after).num_milliseconds();
    let count = if span <= 0 { 0 } else { span / every };
    let first = (count - keep as i64).max(0);
    let last: Vec<DateTime<Utc>> = (first + 1..=count)
        .map(|n| after + chrono::Duration::milliseconds(n * every))
        .collect();
    Ticks {
        examined: last.len(),
        more: first > 0,
        last,
    }
}

/// Cron fires on whole seconds; croner keeps the sub-second part of its starting point, so
/// every search starts from the whole second (a tick equal to it is still excluded, because
/// the true start lies after it).
fn whole_second(t: DateTime<Utc>) -> DateTime<Utc> {
    t.with_nanosecond(0).unwrap_or(t)
}

/// An IANA time zone by name.
pub fn parse_timezone(name: &str) -> Result<Tz, CronError> {
    name.trim()
        .parse::<Tz>()
        .map_err(|_| CronError::TimeZone(name.trim().to_string()))
}

/// Every time zone name, for pickers.
pub fn timezone_names() -> impl Iterator<Item = &'static str> {
    chrono_tz::TZ_VARIANTS.iter().map(|tz| tz.name())
}

/// `2026-03-29 07:30:00 CEST` — a fire time as the editor shows it.
pub fn format_fire_time<T: TimeZone>(t: &DateTime<T>) -> String
where
    T::Offset: std::fmt::Display,
{
    t.format("%Y-%m-%d %H:%M:%S %Z").to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_long_span_keeps_its_newest_ticks_in_bounded_steps() {
        let every_second = CronExpr::parse("* * * * * *").unwrap();
        let until = DateTime::parse_from_rfc3339("2026-11-30T12:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let short =
            every_second.ticks_between(&Tz::UTC, until - chrono::Duration::seconds(10), until, 20);
        // Every second of the ten, the last one included (croner's own iterator gave five).
        assert_eq!(short.last.len(), 10);
        assert!(!short.more);
        assert_eq!(short.last.last(), Some(&until));
        assert_eq!(short.last[0], until - chrono::Duration::seconds(9));
        // Thirty hours of every-second ticks (108,000): the newest five, found in six steps.
        let outage =
            every_second.ticks_between(&Tz::UTC, until - chrono::Duration::hours(30), until, 5);
        assert!(outage.more);
        assert_eq!(outage.examined, 6);
        assert_eq!(outage.last.len(), 5);
        assert_eq!(outage.last[4], until);
        assert_eq!(outage.last[0], until - chrono::Duration::seconds(4));
        // Exactly `keep` of them: nothing more.
        let exact =
            every_second.ticks_between(&Tz::UTC, until - chrono::Duration::seconds(5), until, 5);
        assert_eq!((exact.last.len(), exact.more), (5, false));
    }

    #[test]
    fn stepping_back_across_a_change_of_clocks_finds_each_tick_once() {
        // Berlin's clocks went back at 03:00 on 2026-10-25: 02:30 happened twice.
        let half_past = CronExpr::parse("0 30 * * * *").unwrap();
        let berlin: Tz = "Europe/Berlin".parse().unwrap();
        let until = Utc.with_ymd_and_hms(2026, 10, 25, 4, 0, 0).unwrap();
        let after = Utc.with_ymd_and_hms(2026, 10, 24, 22, 0, 0).unwrap();
        let back = half_past.ticks_between(&berlin, after, until, 100);
        let forward = half_past.fire_times_between(&berlin, after, until, 100);
        assert_eq!(back.last, forward);
    }

    use super::*;
    use chrono::{TimeZone, Timelike};

    #[test]
    fn six_fields_seconds_first() {
        assert!(CronExpr::parse("0 30 7 * * *").is_ok());
        assert!(CronExpr::parse("  */5  * * * * * ").is_ok());
        assert_eq!(
            CronExpr::parse("30 7 * * *").unwrap_err(),
            CronError::FieldCount(5)
        );
        assert_eq!(CronExpr::parse("").unwrap_err(), CronError::Empty);
        assert!(matches!(
            CronExpr::parse("0 61 * * * *").unwrap_err(),
            CronError::Invalid(_)
        ));
        assert!(matches!(
            CronExpr::parse("0 0 * * * * 2030").unwrap_err(),
            CronError::FieldCount(7)
        ));
    }

    #[test]
    fn next_five_in_the_jobs_zone() {
        let cron = CronExpr::parse("0 30 7 * * *").unwrap();
        let tz = parse_timezone("Asia/Shanghai").unwrap();
        let now = Utc.with_ymd_and_hms(2026, 11, 30, 0, 0, 0).unwrap(); // 08:00 in Shanghai
        let next = cron.next_fire_times(&tz, now, 5);
        assert_eq!(next.len(), 5);
        assert_eq!(format_fire_time(&next[0]), "2026-12-01 07:30:00 CST");
        assert_eq!(next[0].with_timezone(&Utc).hour(), 23);
    }

    #[test]
    fn local_time_holds_across_daylight_saving() {
        // Europe/Berlin moves from CET (+1) to CEST (+2) on 2026-03-29.
        let cron = CronExpr::parse("0 30 7 * * *").unwrap();
        let tz = parse_timezone("Europe/Berlin").unwrap();
        let before = Utc.with_ymd_and_hms(2026, 3, 27, 12, 0, 0).unwrap();
        let fires = cron.next_fire_times(&tz, before, 3);
        let local: Vec<String> = fires.iter().map(format_fire_time).collect();
        assert_eq!(
            local,
            [
                "2026-03-28 07:30:00 CET",
                "2026-03-29 07:30:00 CEST",
                "2026-03-30 07:30:00 CEST"
            ]
        );
        let utc_hours: Vec<u32> = fires.iter().map(|t| t.with_timezone(&Utc).hour()).collect();
        assert_eq!(utc_hours, [6, 5, 5]);
    }

    /// The job editor previews fire times on a table of the zone's offsets (the browser has no
    /// tz database); it must list what the engine will fire, through the hours daylight saving
    /// skips and repeats.
    #[cfg(feature = "ssr")]
    #[test]
    fn a_zone_table_fires_as_the_tz_database_does() {
        use crate::domain::zone::ZoneTable;
        let start = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
        for zone in [
            "Europe/Berlin",
            "America/New_York",
            "Australia/Lord_Howe",
            "Asia/Kolkata",
        ] {
            let tz = parse_timezone(zone).unwrap();
            let table = ZoneTable::of(tz);
            for cron in [
                "0 30 2 * * *",
                "0 */20 1-3 * * *",
                "0 0 0 * * 0",
                "0 15 * * * *",
            ] {
                let cron = CronExpr::parse(cron).unwrap();
                let ours: Vec<String> = cron
                    .next_fire_times(&table, start, 2_000)
                    .iter()
                    .map(format_fire_time)
                    .collect();
                let theirs: Vec<String> = cron
                    .next_fire_times(&tz, start, 2_000)
                    .iter()
                    .map(format_fire_time)
                    .collect();
                assert_eq!(ours, theirs, "{} in {zone}", cron.as_str());
                assert_eq!(
                    cron.shortest_gap_ms(&table, start),
                    cron.shortest_gap_ms(&tz, start)
                );
            }
        }
    }

    #[test]
    fn ticks_fall_on_whole_seconds_whatever_the_start() {
        let every_second = CronExpr::parse("* * * * * *").unwrap();
        let start = Utc.with_ymd_and_hms(2026, 11, 30, 12, 0, 0).unwrap()
            + chrono::Duration::milliseconds(473);
        let ticks = every_second.next_fire_times(&Tz::UTC, start, 2);
        assert_eq!(
            ticks[0].with_timezone(&Utc),
            Utc.with_ymd_and_hms(2026, 11, 30, 12, 0, 1).unwrap()
        );
        assert_eq!(ticks[1].nanosecond(), 0);
        let next = every_second.next_after(&Tz::UTC, start).unwrap();
        assert_eq!(next.nanosecond(), 0);
    }

    #[test]
    fn fire_times_between_stops_at_the_end() {
        let yearly = CronExpr::parse("0 0 0 1 1 *").unwrap();
        let start = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
        assert!(
            yearly
                .fire_times_between(&Tz::UTC, start, start + chrono::Duration::days(300), 10_000)
                .is_empty()
        );
        let secondly = CronExpr::parse("* * * * * *").unwrap();
        let ticks =
            secondly.fire_times_between(&Tz::UTC, start, start + chrono::Duration::seconds(5), 3);
        assert_eq!(ticks.len(), 3, "the limit holds");
        assert_eq!(ticks[0], start + chrono::Duration::seconds(1));
    }

    #[test]
    fn shortest_gap_is_the_period() {
        let now = Utc.with_ymd_and_hms(2026, 11, 30, 0, 0, 0).unwrap();
        let every_five = CronExpr::parse("0 */5 * * * *").unwrap();
        assert_eq!(every_five.shortest_gap_ms(&Tz::UTC, now), Some(300_000));
        let weekdays = CronExpr::parse("0 0 9 * * MON-FRI").unwrap();
        assert_eq!(weekdays.shortest_gap_ms(&Tz::UTC, now), Some(86_400_000));
    }

    #[test]
    fn unknown_zones_are_named() {
        assert_eq!(
            parse_timezone("Mars/Olympus").unwrap_err().to_string(),
            "time zone 'Mars/Olympus' is unknown; use an IANA name such as UTC, Europe/Berlin or Asia/Shanghai"
        );
        assert_eq!(parse_timezone(" UTC ").unwrap(), Tz::UTC);
    }

    #[test]
    fn periods_count_whole_periods_after_the_anchor() {
        let at = |s: i64| DateTime::from_timestamp(1_800_000_000 + s, 0).unwrap();
        let t = periods_between(at(0), at(3_700), 1_000 * 3_600, 10);
        assert_eq!(t.last, [at(3_600)]);
        let long = periods_between(at(0), at(10_000), 1_000, 3);
        assert_eq!(long.last, [at(9_998), at(9_999), at(10_000)]);
        assert!(long.more);
        assert!(periods_between(at(0), at(0), 1_000, 3).last.is_empty());
    }
}
