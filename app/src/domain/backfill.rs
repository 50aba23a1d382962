//! Backfill: a job's past ticks over a range of business dates, run again as one piece of work.
//! Which ticks ([`ticks`]): every tick the job's calendar lets run whose date lies in the
//! range — off days' ticks moved to a workday count for their own date, skipped ones not at all.

use chrono::{DateTime, Duration, NaiveDate, Utc};

use super::calendar::Calendar;
use super::due::Due;
use super::job::JobSpec;

/// The most ticks one backfill takes (a year of a job every hour is 8,760).
pub const MAX_TICKS: usize = 10_000;

/// The most runs a backfill keeps going at once.
pub const MAX_PARALLEL: u32 = 16;

crate::text_enum! {
    /// Where a backfill stands.
    pub enum BackfillState {
        /// Starting its runs as they end (and as `per_minute` allows).
        Running = "running",
        /// Starting none until resumed; the runs going finish.
        Paused = "paused",
        /// Ended by someone: the runs not yet started were cancelled.
        Cancelled = "cancelled",
        /// Every run it made has ended.
        Done = "done",
    }
}

/// Why a backfill cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BackfillError {
    #[error("--from {from} is after --to {to}")]
    Reversed { from: NaiveDate, to: NaiveDate },
    #[error("{to} is in the future (today is {today} in the job's zone)")]
    Future { to: NaiveDate, today: NaiveDate },
    #[error("the range holds more than {MAX_TICKS} ticks: backfill it in parts")]
    TooMany,
    #[error("the job has no cron to backfill (it is watched every so long)")]
    NoCron,
    #[error("a watched job runs elsewhere: there is nothing to backfill")]
    Watched,
    #[error("parallel must be 1 to {MAX_PARALLEL}, per-minute at least 1")]
    Pace,
}

impl BackfillError {
    /// The refusal as the catalogue words it ([`crate::domain::problem`]).
    pub fn problem(&self) -> crate::domain::Problem {
        use crate::problem;
        match self {
            BackfillError::Reversed { from, to } => problem!(
                "backfill-error-reversed",
                from = from.to_string(),
                to = to.to_string()
            ),
            BackfillError::Future { to, today } => problem!(
                "backfill-error-future",
                to = to.to_string(),
                today = today.to_string()
            ),
            BackfillError::TooMany => problem!("backfill-error-too-many", max = MAX_TICKS),
            BackfillError::NoCron => problem!("backfill-error-no-cron"),
            BackfillError::Watched => problem!("backfill-error-watched"),
            BackfillError::Pace => problem!("backfill-error-pace", max = MAX_PARALLEL),
        }
    }
}

/// How fast a backfill goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pace {
    /// Runs started at once (1: one after another; a job's runs still execute one at a time).
    pub parallel: u32,
    /// Runs started per minute, at most.
    pub per_minute: Option<u32>,
}

impl Pace {
    pub fn check(self) -> Result<Self, BackfillError> {
        let ok = (1..=MAX_PARALLEL).contains(&self.parallel) && self.per_minute != Some(0);
        if ok {
            Ok(self)
        } else {
            Err(BackfillError::Pace)
        }
    }
}

/// The ticks a backfill of `spec` over business dates `from`..=`to` runs, oldest first: the
/// ones its calendar lets run, each fired by `now`.
pub fn ticks(
    spec: &JobSpec,
    calendar: Option<&Calendar>,
    from: NaiveDate,
    to: NaiveDate,
    now: DateTime<Utc>,
) -> Result<Vec<Due>, BackfillError> {
    if spec.kind.watch().is_some() {
        return Err(BackfillError::Watched);
    }
    if spec.cron.is_none() {
        return Err(BackfillError::NoCron);
    }
    if from > to {
        return Err(BackfillError::Reversed { from, to });
    }
    let today = spec.date_of(now);
    if to > today {
        return Err(BackfillError::Future { to, today });
    }
    let start = super::calendar::start_of_day(&spec.timezone, from)
        .unwrap_or_else(|| from.and_time(chrono::NaiveTime::MIN).and_utc())
        - Duration::milliseconds(1);
    // A tick moved off an off day fires on a later workday: look as far as now.
    let (due, more) = spec.due_between(calendar, start, now, MAX_TICKS * 4);
    if more {
        return Err(BackfillError::TooMany);
    }
    let ticks: Vec<Due> = due
        .into_iter()
        .filter(|d| d.off_day.is_none() && (from..=to).contains(&d.business_date))
        .collect();
    if ticks.len() > MAX_TICKS {
        return Err(BackfillError::TooMany);
    }
    Ok(ticks)
}

/// A dry run's line for a tick: when it runs, in RFC 3339 in the job's zone, then the date it
/// stands for (another day's for a tick moved off an off day).
pub fn line(spec: &JobSpec, due: &Due) -> String {
    let fire = due.fire.with_timezone(&spec.timezone).to_rfc3339();
    format!("{fire} {}", due.business_date)
}
