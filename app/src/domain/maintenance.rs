//! Maintenance: when jobs are paused, and the words for it.
//!
//! A window pauses every job (no tag) or every job with its tag from `starts` until `ends`
//! (open-ended: until someone resumes); a job can also be paused on its own. While a job is
//! paused no cron run of it is recorded and no retry of it starts — its ticks wait, and when
//! the pause ends they follow the job's misfire policy — but a run started by hand (Run now, a
//! re-trigger) still runs, and attempts already running finish. The engine asks
//! [`Pauses::covers`] before each trigger pass, and for claims once per poll or when a pause
//! changes (`server/src/engine/cache.rs`).

use crate::domain::Problem;
use crate::problem;
use std::collections::BTreeSet;

use chrono::{DateTime, NaiveDateTime, Utc};

/// Characters in a reason, at most.
pub const MAX_REASON: usize = 500;

/// When a window pauses, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    pub starts: DateTime<Utc>,
    pub ends: Option<DateTime<Utc>>,
    pub tag: Option<String>,
}

impl Span {
    pub fn is_active(&self, now: DateTime<Utc>) -> bool {
        self.starts <= now && self.ends.is_none_or(|end| now < end)
    }

    /// Has not begun yet.
    pub fn is_ahead(&self, now: DateTime<Utc>) -> bool {
        now < self.starts
    }

    /// The next moment after `now` at which this window opens or closes.
    pub fn next_change(&self, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        [Some(self.starts), self.ends]
            .into_iter()
            .flatten()
            .filter(|at| *at > now)
            .min()
    }
}

/// What is paused at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pauses {
    /// A window for every job is open.
    pub all: bool,
    /// Tags with an open window.
    pub tags: BTreeSet<String>,
}

impl Pauses {
    pub fn at<'a>(spans: impl IntoIterator<Item = &'a Span>, now: DateTime<Utc>) -> Self {
        let mut pauses = Pauses::default();
        for span in spans.into_iter().filter(|s| s.is_active(now)) {
            match &span.tag {
                None => pauses.all = true,
                Some(tag) => {
                    pauses.tags.insert(tag.clone());
                }
            }
        }
        pauses
    }

    /// Whether a job with these tags, paused on its own or not, is paused now.
    pub fn covers(&self, job_paused: bool, tags: &[String]) -> bool {
        self.all || job_paused || tags.iter().any(|t| self.tags.contains(t))
    }

    pub fn is_empty(&self) -> bool {
        !self.all && self.tags.is_empty()
    }
}

/// Checks a reason: required, one line's worth.
pub fn parse_reason(text: &str) -> Result<String, Problem> {
    let reason = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if reason.is_empty() {
        return Err(problem!("error-pause-reason-empty"));
    }
    if reason.chars().count() > MAX_REASON {
        return Err(problem!("error-pause-reason-long", max = MAX_REASON));
    }
    Ok(reason)
}

/// Reads when a pause ends, or a window starts, as people type it: a duration from now
/// (`30m`, `2h`, `1h30m`), an RFC 3339 time (`2026-12-24T18:00:00+01:00`), or a UTC time
/// `2026-12-24 17:00` (the seconds optional, a `T` in place of the space allowed, as a
/// browser's datetime-local field sends it).
pub fn parse_time(text: &str, now: DateTime<Utc>) -> Result<DateTime<Utc>, Problem> {
    let text = text.trim();
    if text.is_empty() {
        return Err(problem!("error-time-empty"));
    }
    if text.starts_with(|c: char| c.is_ascii_digit()) && !text.contains('-') {
        return crate::domain::duration::parse_ms(text)
            .map(|ms| now + chrono::Duration::milliseconds(ms as i64))
            .map_err(|e| e.problem());
    }
    if let Ok(at) = DateTime::parse_from_rfc3339(text) {
        return Ok(at.with_timezone(&Utc));
    }
    for format in [
        "%Y-%m-%d %H:%M",
        "%Y-%m-%d %H:%M:%S",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%dT%H:%M:%S",
    ] {
        if let Ok(at) = NaiveDateTime::parse_from_str(text, format) {
            return Ok(at.and_utc());
        }
    }
    Err(problem!("error-time-malformed", text = text.to_string()))
}

/// Checks a window's times: the end after the start and still to come.
pub fn check_span(
    starts: DateTime<Utc>,
    ends: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> Result<(), Problem> {
    match ends {
        Some(end) if end <= now => Err(problem!("error-window-end-passed")),
        Some(end) if end <= starts => Err(problem!("error-window-end-before-start")),
        _ => Ok(()),
    }
}

/// A time field of the forms and the REST API: blank is `None`; anything else a time
/// ([`parse_time`]) or a problem naming the field.
pub fn parse_time_field(
    field: &str,
    text: Option<&str>,
    now: DateTime<Utc>,
) -> Result<Option<DateTime<Utc>>, super::FieldProblem> {
    text.map(str::trim)
        .filter(|t| !t.is_empty())
        .map(|t| parse_time(t, now).map_err(|e| super::FieldProblem::new(field, e)))
        .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(h: u32, m: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 12, 2, h, m, 0).unwrap()
    }

    #[test]
    fn a_window_pauses_from_its_start_until_its_end() {
        let span = Span {
            starts: at(10, 0),
            ends: Some(at(11, 0)),
            tag: None,
        };
        assert!(!span.is_active(at(9, 59)) && span.is_ahead(at(9, 59)));
        assert!(span.is_active(at(10, 0)) && span.is_active(at(10, 59)));
        assert!(!span.is_active(at(11, 0)) && !span.is_ahead(at(11, 0)));
        let open = Span { ends: None, ..span };
        assert!(open.is_active(at(23, 0)));
    }

    #[test]
    fn pauses_cover_every_job_or_a_tag_or_one_job() {
        let spans = [
            Span {
                starts: at(10, 0),
                ends: None,
                tag: Some("billing".into()),
            },
            Span {
                starts: at(12, 0),
                ends: None,
                tag: None,
            },
        ];
        let morning = Pauses::at(&spans, at(11, 0));
        assert!(!morning.all);
        assert!(morning.covers(false, &["billing".into(), "ops".into()]));
        assert!(!morning.covers(false, &["ops".into()]));
        assert!(morning.covers(true, &[]));
        let noon = Pauses::at(&spans, at(12, 0));
        assert!(noon.all && noon.covers(false, &[]));
        assert!(Pauses::at(&spans, at(9, 0)).is_empty());
    }

    #[test]
    fn times_are_read_as_durations_or_utc_times() {
        let now = at(10, 0);
        assert_eq!(parse_time("2h", now).unwrap(), at(12, 0));
        assert_eq!(parse_time("1h30m", now).unwrap(), at(11, 30));
        assert_eq!(parse_time("2026-12-02 17:05", now).unwrap(), at(17, 5));
        assert_eq!(parse_time("2026-12-02T17:05", now).unwrap(), at(17, 5));
        assert_eq!(
            parse_time("2026-12-02T18:05:00+01:00", now).unwrap(),
            at(17, 5)
        );
        assert!(parse_time("", now).is_err());
        assert!(
            parse_time("tomorrow", now)
                .unwrap_err()
                .to_string()
                .contains("tomorrow")
        );
        assert!(parse_time("5", now).is_err());
    }

    #[test]
    fn spans_must_end_after_they_start_and_after_now() {
        assert!(check_span(at(10, 0), Some(at(11, 0)), at(9, 0)).is_ok());
        assert!(check_span(at(10, 0), None, at(9, 0)).is_ok());
        assert!(check_span(at(10, 0), Some(at(10, 0)), at(9, 0)).is_err());
        assert!(check_span(at(8, 0), Some(at(8, 30)), at(9, 0)).is_err());
    }

    #[test]
    fn a_reason_is_required_and_kept_on_one_line() {
        assert_eq!(
            parse_reason("  database\n upgrade ").unwrap(),
            "database upgrade"
        );
        assert!(parse_reason(" \n").is_err());
        assert!(parse_reason(&"x".repeat(MAX_REASON + 1)).is_err());
    }
}
