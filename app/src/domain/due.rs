//! A due tick of a job: when it fires, the tick it is, and the date it stands for. Made by
//! `super::job::JobSpec::due_between`, planned into runs by `super::ticks::plan`.

use chrono::{DateTime, NaiveDate, Utc};

/// A due tick.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Due {
    /// When it fires (a tick a calendar moved off an off day fires on the next workday).
    pub fire: DateTime<Utc>,
    /// The tick itself: the key its run is recorded by, once per job.
    pub tick: DateTime<Utc>,
    /// The date it stands for, in the job's zone.
    pub business_date: NaiveDate,
    /// It falls on an off day of the job's calendar and is recorded as skipped, for this
    /// reason.
    pub off_day: Option<String>,
}

impl Due {
    /// A tick that fires when it falls.
    pub fn at(tick: DateTime<Utc>, business_date: NaiveDate) -> Self {
        Due {
            fire: tick,
            tick,
            business_date,
            off_day: None,
        }
    }
}
