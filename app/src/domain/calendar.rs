//! Work calendars: which days are workdays. A calendar is a base rule (the weekdays that are
//! workdays, e.g. Monday–Friday) with dated exceptions both ways — `off` days the base rule
//! would work (a public holiday) and `on` days it would not (a make-up Saturday) — so "every
//! workday at 9:00" is one cron and one calendar.
//!
//! A job following a calendar ([`Schedule`]) takes its cron's times of day on the calendar's
//! workdays. A tick the base rule gives on an off day is either recorded as skipped, or moved
//! to the same time on the next workday as a run of its own ([`OnOffDay`]); either way it
//! keeps the off day as the date it stands for (its business date).

use std::collections::BTreeMap;

use chrono::{DateTime, Datelike, Duration, NaiveDate, TimeZone, Utc, Weekday};
use serde::{Deserialize, Serialize};

use super::cron::{CronError, CronExpr, Ticks};

/// How far a workday is looked for before a calendar is taken to have none.
const MAX_DAYS_WITHOUT_WORK: u32 = 366;

crate::text_enum! {
    /// What becomes of a tick the base rule gives on an off day.
    pub enum OnOffDay {
        /// Recorded as a skipped run, with the day's name as the reason.
        Skip = "skip",
        /// Runs at the same time on the next workday, standing for the off day.
        NextWorkday = "next_workday",
    }
}

#[allow(clippy::derivable_impls)]
impl Default for OnOffDay {
    fn default() -> Self {
        OnOffDay::Skip
    }
}

/// A set of weekdays, as a base rule or a cron's day-of-week field names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Weekdays(u8);

const DAY_NAMES: [&str; 7] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];

impl Weekdays {
    pub const MON_FRI: Weekdays = Weekdays(0b0001_1111);
    pub const ALL: Weekdays = Weekdays(0b0111_1111);

    pub fn contains(self, day: Weekday) -> bool {
        self.0 & (1 << day.num_days_from_monday()) != 0
    }

    fn with(self, day: Weekday) -> Self {
        Weekdays(self.0 | (1 << day.num_days_from_monday()))
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The days in week order, Monday first.
    pub fn days(self) -> impl Iterator<Item = Weekday> {
        (0..7u8)
            .map(|i| Weekday::try_from(i).unwrap_or(Weekday::Mon))
            .filter(move |d| self.contains(*d))
    }

    /// Three-letter names, each on its own (`["mon", "wed"]`).
    pub fn names(self) -> Vec<String> {
        self.days()
            .map(|d| DAY_NAMES[d.num_days_from_monday() as usize].to_string())
            .collect()
    }

    /// `mon-fri`, or the names joined by commas.
    pub fn text(self) -> String {
        if self == Weekdays::MON_FRI {
            "mon-fri".into()
        } else {
            self.names().join(",")
        }
    }

    /// A day-of-week field: names or numbers (0 and 7 are Sunday), ranges and lists, any case
    /// (`MON-FRI`, `1-5`, `mon,wed,fri`, `*`). `None` for what is none of those (a step, `L`,
    /// `#`).
    pub fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        if text == "*" || text == "?" {
            return Some(Weekdays::ALL);
        }
        let mut set = Weekdays::default();
        for part in text.split(',') {
            let (from, to) = match part.split_once('-') {
                Some((a, b)) => (day_number(a)?, day_number(b)?),
                None => (day_number(part)?, day_number(part)?),
            };
            // Numbers count from Sunday = 0; a range wraps past Saturday only if written so.
            let to = if to < from { to + 7 } else { to };
            for n in from..=to {
                set = set.with(Weekday::try_from(((n + 6) % 7) as u8).ok()?);
            }
        }
        (!set.is_empty()).then_some(set)
    }
}

/// A weekday as cron numbers it (Sunday 0, Monday 1 … Saturday 6; 7 is Sunday too).
fn day_number(text: &str) -> Option<u32> {
    let text = text.trim().to_ascii_lowercase();
    if let Ok(n) = text.parse::<u32>() {
        return (n <= 7).then_some(n % 7);
    }
    DAY_NAMES
        .iter()
        .position(|d| *d == text)
        .map(|i| (i as u32 + 1) % 7)
}

/// A dated exception and what people call it ("国庆节", "make-up workday"), if anything.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dated {
    pub date: NaiveDate,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
}

/// A calendar as a file or a form writes it: `base = "mon-fri"` or a list of weekday names,
/// `off` and `on` as ISO dates or `{ date = "…", name = "…" }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CalendarInput {
    pub name: String,
    #[serde(default = "default_base")]
    pub base: BaseInput,
    #[serde(default)]
    pub off: Vec<DateInput>,
    #[serde(default)]
    pub on: Vec<DateInput>,
}

/// `"mon-fri"`, or weekday names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
#[serde(untagged)]
pub enum BaseInput {
    Text(String),
    Days(Vec<String>),
}

fn default_base() -> BaseInput {
    BaseInput::Text("mon-fri".into())
}

/// An ISO date, or one with its name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
#[serde(untagged)]
pub enum DateInput {
    Date(String),
    Named { date: String, name: String },
}

/// Dates one a line, each `YYYY-MM-DD` and then its name if it has one (as the Settings page's
/// boxes hold them); blank lines are passed over, what is not a date is checked by
/// [`CalendarInput::parse`].
pub fn dates_from_lines(text: &str) -> Vec<DateInput> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .map(|line| match line.split_once(char::is_whitespace) {
            Some((date, name)) => DateInput::Named {
                date: date.to_string(),
                name: name.trim().to_string(),
            },
            None => DateInput::Date(line.to_string()),
        })
        .collect()
}

/// [`dates_from_lines`]'s lines for `dates`.
pub fn lines_of(dates: &[DateInput]) -> String {
    dates
        .iter()
        .map(|d| match d {
            DateInput::Date(date) => date.clone(),
            DateInput::Named { date, name } if name.is_empty() => date.clone(),
            DateInput::Named { date, name } => format!("{date} {name}"),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

impl CalendarInput {
    /// The calendar it writes, or every problem in it.
    pub fn parse(&self) -> Result<Calendar, Vec<super::Problem>> {
        use crate::problem;
        let mut problems = Vec::new();
        let base = match &self.base {
            BaseInput::Text(text) => Weekdays::parse(text),
            BaseInput::Days(days) => Weekdays::parse(&days.join(",")),
        }
        .unwrap_or_else(|| {
            problems.push(problem!("calendar-error-base"));
            Weekdays::default()
        });
        let mut dates = |list: &[DateInput]| -> BTreeMap<NaiveDate, String> {
            let mut out = BTreeMap::new();
            for entry in list {
                let (text, name) = match entry {
                    DateInput::Date(text) => (text, ""),
                    DateInput::Named { date, name } => (date, name.as_str()),
                };
                match NaiveDate::parse_from_str(text.trim(), "%Y-%m-%d") {
                    Ok(date) => {
                        out.insert(date, name.trim().to_string());
                    }
                    Err(_) => problems.push(problem!("calendar-error-date", text = text.clone())),
                }
            }
            out
        };
        let calendar = Calendar {
            name: self.name.trim().to_string(),
            base,
            off: dates(&self.off),
            on: dates(&self.on),
        };
        match calendar.validate() {
            Err(CalendarError::Base) if !problems.is_empty() => {}
            Err(e) => problems.push(e.problem()),
            Ok(()) => {}
        }
        if problems.is_empty() {
            Ok(calendar)
        } else {
            Err(problems)
        }
    }
}

/// A named work calendar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Calendar {
    pub name: String,
    pub base: Weekdays,
    /// Days the base rule would work that are off, by date.
    pub off: BTreeMap<NaiveDate, String>,
    /// Days the base rule would not work that are workdays (make-up days), by date.
    pub on: BTreeMap<NaiveDate, String>,
}

/// What a date is in a calendar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DayKind<'a> {
    /// A workday by the base rule.
    Workday,
    /// A workday the base rule would not give (its name, if it has one).
    MakeUp(&'a str),
    /// An off day the base rule would work (its name).
    Off(&'a str),
    /// Neither the base rule nor an exception makes it a workday (a weekend).
    Rest,
}

impl DayKind<'_> {
    pub fn is_workday(self) -> bool {
        matches!(self, DayKind::Workday | DayKind::MakeUp(_))
    }
}

/// Why a calendar cannot be kept.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CalendarError {
    #[error("a calendar needs a name: letters, digits, '-', '_' or '.', at most 64")]
    Name,
    #[error("base must be \"mon-fri\" or a list of weekdays such as [\"mon\", \"tue\"]")]
    Base,
    #[error("{0} is both off and on")]
    Both(NaiveDate),
}

/// A calendar's name: letters, digits, `-`, `_` or `.`, at most 64.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

impl CalendarError {
    /// The refusal as the catalogue words it ([`crate::domain::problem`]).
    pub fn problem(&self) -> super::Problem {
        use crate::problem;
        match self {
            CalendarError::Name => problem!("calendar-error-name"),
            CalendarError::Base => problem!("calendar-error-base"),
            CalendarError::Both(date) => problem!("calendar-error-both", date = date.to_string()),
        }
    }
}

impl FollowError {
    /// The refusal as the catalogue words it ([`crate::domain::problem`]).
    pub fn problem(&self) -> super::Problem {
        use crate::problem;
        match self {
            FollowError::DayOfMonth(field) => {
                problem!("job-error-calendar-dom", field = field.clone())
            }
            FollowError::DayOfWeek { field, base } => problem!(
                "job-error-calendar-dow",
                field = field.clone(),
                base = base.clone()
            ),
            FollowError::Cron(e) => e.problem(),
        }
    }
}

impl Calendar {
    /// The calendar as a file writes it: named dates as `{ date, name }`, others bare.
    pub fn to_input(&self) -> CalendarInput {
        let dates = |map: &BTreeMap<NaiveDate, String>| {
            map.iter()
                .map(|(date, name)| match name.is_empty() {
                    true => DateInput::Date(date.to_string()),
                    false => DateInput::Named {
                        date: date.to_string(),
                        name: name.clone(),
                    },
                })
                .collect()
        };
        CalendarInput {
            name: self.name.clone(),
            base: match self.base {
                Weekdays::MON_FRI => BaseInput::Text("mon-fri".into()),
                other => BaseInput::Days(other.names()),
            },
            off: dates(&self.off),
            on: dates(&self.on),
        }
    }

    /// Checks what a calendar must be: a name, at least one workday in its week, no date both
    /// off and on.
    pub fn validate(&self) -> Result<(), CalendarError> {
        if !valid_name(&self.name) {
            return Err(CalendarError::Name);
        }
        if self.base.is_empty() {
            return Err(CalendarError::Base);
        }
        match self.off.keys().find(|d| self.on.contains_key(d)) {
            Some(date) => Err(CalendarError::Both(*date)),
            None => Ok(()),
        }
    }

    pub fn day(&self, date: NaiveDate) -> DayKind<'_> {
        if let Some(name) = self.on.get(&date) {
            return DayKind::MakeUp(name);
        }
        if let Some(name) = self.off.get(&date) {
            return if self.base.contains(date.weekday()) {
                DayKind::Off(name)
            } else {
                DayKind::Rest
            };
        }
        if self.base.contains(date.weekday()) {
            DayKind::Workday
        } else {
            DayKind::Rest
        }
    }

    pub fn is_workday(&self, date: NaiveDate) -> bool {
        self.day(date).is_workday()
    }

    /// The first workday after `date`, if one comes within a year.
    pub fn next_workday(&self, date: NaiveDate) -> Option<NaiveDate> {
        date.iter_days()
            .skip(1)
            .take(MAX_DAYS_WITHOUT_WORK as usize)
            .find(|d| self.is_workday(*d))
    }

    /// The last workday before `date`, if one came within a year.
    pub fn previous_workday(&self, date: NaiveDate) -> Option<NaiveDate> {
        let mut day = date;
        for _ in 0..MAX_DAYS_WITHOUT_WORK {
            day = day.pred_opt()?;
            if self.is_workday(day) {
                return Some(day);
            }
        }
        None
    }

    /// Why a tick on off day `date` was skipped, as its run records it.
    pub fn off_day_note(&self, date: NaiveDate) -> String {
        match self.off.get(&date).filter(|name| !name.is_empty()) {
            Some(name) => format!(
                "{date} is an off day ({name}) in calendar {} (on_off_day: skip)",
                self.name
            ),
            None => format!(
                "{date} is an off day in calendar {} (on_off_day: skip)",
                self.name
            ),
        }
    }

    /// The years the calendar has exceptions for.
    pub fn years(&self) -> Vec<i32> {
        let mut years: Vec<i32> = self
            .off
            .keys()
            .chain(self.on.keys())
            .map(|d| d.year())
            .collect();
        years.sort_unstable();
        years.dedup();
        years
    }
}

/// Why a job's cron cannot follow a calendar.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FollowError {
    /// The day-of-month field is not `*` (the calendar decides the days).
    #[error("with a calendar, the cron's day-of-month must be * (it is {0})")]
    DayOfMonth(String),
    /// The day-of-week field is neither `*` nor the calendar's base rule.
    #[error(
        "with a calendar, the cron's day-of-week must be * or the calendar's base {base} (it is {field})"
    )]
    DayOfWeek { field: String, base: String },
    /// The cron with its day fields opened does not parse (its month never has such a day).
    #[error(transparent)]
    Cron(CronError),
}

/// The cron a job following `calendar` fires by: its own, with the day fields opened to every
/// day (the calendar then picks the days). Refused, naming the field, when the cron restricts
/// the days otherwise than the calendar's base rule does.
pub fn days_from_calendar(cron: &CronExpr, calendar: &Calendar) -> Result<CronExpr, FollowError> {
    let fields: Vec<&str> = cron.as_str().split(' ').collect();
    let [sec, min, hour, dom, month, dow] = fields[..] else {
        // `@daily` and the like: every day at one time, the calendar picks the days.
        return Ok(cron.clone());
    };
    if dom != "*" && dom != "?" {
        return Err(FollowError::DayOfMonth(dom.to_string()));
    }
    if Weekdays::parse(dow).is_none_or(|days| days != Weekdays::ALL && days != calendar.base) {
        return Err(FollowError::DayOfWeek {
            field: dow.to_string(),
            base: calendar.base.text(),
        });
    }
    CronExpr::parse(&format!("{sec} {min} {hour} * {month} *")).map_err(FollowError::Cron)
}

/// A tick of a job that follows a calendar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CalendarTick {
    /// When it fires: its own time, or for a tick moved off an off day, the same time on the
    /// next workday.
    pub fire: DateTime<Utc>,
    /// The tick itself (a moved tick's is on its off day): the key its run is recorded by.
    pub tick: DateTime<Utc>,
    /// The date it stands for, in the job's zone.
    pub business_date: NaiveDate,
    /// It falls on an off day and `on_off_day = skip`: recorded as skipped.
    pub skipped: bool,
}

/// The first instant of `date` in `zone` (its first valid hour across a DST gap).
pub fn start_of_day<Z: TimeZone>(zone: &Z, date: NaiveDate) -> Option<DateTime<Utc>> {
    (0..24).find_map(|hour| {
        zone.from_local_datetime(&date.and_hms_opt(hour, 0, 0)?)
            .earliest()
            .map(|t| t.with_timezone(&Utc))
    })
}

/// A tick as the editor's preview shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PreviewRow<'a> {
    pub at: DateTime<Utc>,
    pub kind: PreviewKind<'a>,
}

/// What a previewed tick's day is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreviewKind<'a> {
    Workday,
    /// A make-up workday (its name).
    MakeUp(&'a str),
    /// An off day whose tick is recorded as skipped (its name).
    Skipped(&'a str),
    /// An off day whose tick runs on the next workday (its name, and that day, if one comes
    /// within a year).
    Moved {
        name: &'a str,
        to: Option<NaiveDate>,
    },
}

/// A job's cron (its day fields opened, [`days_from_calendar`]) with the calendar it follows.
#[derive(Debug, Clone, Copy)]
pub struct Schedule<'a, Z: TimeZone> {
    pub cron: &'a CronExpr,
    pub zone: &'a Z,
    pub calendar: &'a Calendar,
    pub on_off_day: OnOffDay,
}

impl<Z: TimeZone> Schedule<'_, Z> {
    fn date(&self, t: DateTime<Utc>) -> NaiveDate {
        t.with_timezone(self.zone).date_naive()
    }

    /// Whether a tick on `date` fires on that date: a workday's always; an off day's only to be
    /// recorded as skipped.
    fn fires_on(&self, date: NaiveDate) -> bool {
        match self.calendar.day(date) {
            DayKind::Workday | DayKind::MakeUp(_) => true,
            DayKind::Off(_) => self.on_off_day == OnOffDay::Skip,
            DayKind::Rest => false,
        }
    }

    /// The first fire time strictly after `after`, if one comes within a year.
    pub fn next_after(&self, after: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let mut from = after;
        for _ in 0..=MAX_DAYS_WITHOUT_WORK {
            let next = self
                .cron
                .next_after(self.zone, from)
                .ok()?
                .with_timezone(&Utc);
            let date = self.date(next);
            if self.fires_on(date) {
                return Some(next);
            }
            from = self.start_of(date.succ_opt()?)? - Duration::milliseconds(1);
        }
        None
    }

    /// The next `count` ticks after `after` as the editor shows them: each workday's, make-up
    /// days marked, and the off days' with their names and what becomes of them.
    pub fn preview(&self, after: DateTime<Utc>, count: usize) -> Vec<PreviewRow<'_>> {
        let mut rows = Vec::new();
        let mut from = after;
        // Each step is a tick or a day passed over: a year of rest days at most between two.
        for _ in 0..count * 8 + MAX_DAYS_WITHOUT_WORK as usize {
            if rows.len() >= count {
                break;
            }
            let Ok(next) = self.cron.next_after(self.zone, from) else {
                break;
            };
            let at = next.with_timezone(&Utc);
            let date = self.date(at);
            let kind = match self.calendar.day(date) {
                DayKind::Workday => Some(PreviewKind::Workday),
                DayKind::MakeUp(name) => Some(PreviewKind::MakeUp(name)),
                DayKind::Off(name) => Some(match self.on_off_day {
                    OnOffDay::Skip => PreviewKind::Skipped(name),
                    OnOffDay::NextWorkday => PreviewKind::Moved {
                        name,
                        to: self.calendar.next_workday(date),
                    },
                }),
                DayKind::Rest => None,
            };
            match kind {
                Some(kind) => {
                    rows.push(PreviewRow { at, kind });
                    from = at;
                }
                None => match date.succ_opt().and_then(|d| self.start_of(d)) {
                    Some(start) => from = start - Duration::milliseconds(1),
                    None => break,
                },
            }
        }
        rows
    }

    /// The first instant of `date` in the zone (its first valid time across a DST gap).
    fn start_of(&self, date: NaiveDate) -> Option<DateTime<Utc>> {
        start_of_day(self.zone, date)
    }

    /// What fires in (`after`, `until`], by fire time, oldest first: the newest `keep` of the
    /// cron's ticks looked at, as [`CronExpr::ticks_between`] looks (`more`: older were not).
    pub fn ticks_between(
        &self,
        after: DateTime<Utc>,
        until: DateTime<Utc>,
        keep: usize,
    ) -> (Vec<CalendarTick>, bool) {
        let Ticks { last, more, .. } = self.cron.ticks_between(self.zone, after, until, keep);
        let mut out = Vec::new();
        for t in last {
            let date = self.date(t);
            match self.calendar.day(date) {
                DayKind::Workday | DayKind::MakeUp(_) => {
                    if self.on_off_day == OnOffDay::NextWorkday {
                        out.extend(self.moved_onto(t, date));
                    }
                    out.push(CalendarTick {
                        fire: t,
                        tick: t,
                        business_date: date,
                        skipped: false,
                    });
                }
                DayKind::Off(_) if self.on_off_day == OnOffDay::Skip => out.push(CalendarTick {
                    fire: t,
                    tick: t,
                    business_date: date,
                    skipped: true,
                }),
                DayKind::Off(_) | DayKind::Rest => {}
            }
        }
        (out, more)
    }

    /// The ticks moved onto `fire` (on workday `date`): the same time of day on each off day
    /// since the previous workday on which the cron fires, oldest first.
    fn moved_onto(&self, fire: DateTime<Utc>, date: NaiveDate) -> Vec<CalendarTick> {
        let Some(previous) = self.calendar.previous_workday(date) else {
            return Vec::new();
        };
        let time = fire.with_timezone(self.zone).time();
        previous
            .iter_days()
            .skip(1)
            .take_while(|d| *d < date)
            .filter(|d| matches!(self.calendar.day(*d), DayKind::Off(_)))
            .filter_map(|d| {
                let tick = self
                    .zone
                    .from_local_datetime(&d.and_time(time))
                    .earliest()?
                    .with_timezone(&Utc);
                // The cron must fire then too (its month field, say).
                let fires = self
                    .cron
                    .next_after(self.zone, tick - Duration::milliseconds(1));
                (fires.ok()?.with_timezone(&Utc) == tick).then_some(CalendarTick {
                    fire,
                    tick,
                    business_date: d,
                    skipped: false,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono_tz::Asia::Shanghai;

    fn date(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    /// The Done-when calendar of the work-calendar issue: the mid-autumn day and the national
    /// holiday off, two make-up days on.
    fn golden_week() -> Calendar {
        let off = [
            "2026-09-25",
            "2026-10-01",
            "2026-10-02",
            "2026-10-03",
            "2026-10-04",
        ]
        .into_iter()
        .chain(["2026-10-05", "2026-10-06", "2026-10-07"])
        .map(|d| (date(d), "holiday".to_string()))
        .collect();
        let on = ["2026-09-20", "2026-10-10"]
            .into_iter()
            .map(|d| (date(d), "make-up".to_string()))
            .collect();
        Calendar {
            name: "cn-workdays".into(),
            base: Weekdays::MON_FRI,
            off,
            on,
        }
    }

    fn at(local: &str) -> DateTime<Utc> {
        let naive = chrono::NaiveDateTime::parse_from_str(local, "%Y-%m-%d %H:%M").unwrap();
        Shanghai
            .from_local_datetime(&naive)
            .unwrap()
            .with_timezone(&Utc)
    }

    fn dates(ticks: &[CalendarTick]) -> Vec<String> {
        ticks
            .iter()
            .map(|t| {
                let fire = t.fire.with_timezone(&Shanghai).format("%m-%d");
                format!(
                    "{fire}:{}{}",
                    t.business_date.format("%m-%d"),
                    if t.skipped { " skipped" } else { "" }
                )
            })
            .collect()
    }

    #[test]
    fn weekday_fields_parse_as_cron_writes_them() {
        for text in ["MON-FRI", "1-5", "mon,tue,wed,thu,fri", "Mon-Fri"] {
            assert_eq!(Weekdays::parse(text), Some(Weekdays::MON_FRI), "{text}");
        }
        assert_eq!(Weekdays::parse("*"), Some(Weekdays::ALL));
        assert_eq!(Weekdays::parse("0-6"), Some(Weekdays::ALL));
        assert_eq!(
            Weekdays::parse("7").map(Weekdays::names),
            Some(vec!["sun".to_string()])
        );
        assert_eq!(
            Weekdays::parse("SAT-SUN").map(Weekdays::text),
            Some("sat,sun".into())
        );
        assert_eq!(Weekdays::parse("*/2"), None);
        assert_eq!(Weekdays::parse("5L"), None);
        assert_eq!(Weekdays::MON_FRI.text(), "mon-fri");
    }

    #[test]
    fn days_are_workdays_off_days_make_up_days_or_rest() {
        let c = golden_week();
        assert_eq!(c.day(date("2026-09-24")), DayKind::Workday);
        assert_eq!(c.day(date("2026-09-25")), DayKind::Off("holiday"));
        assert_eq!(c.day(date("2026-09-20")), DayKind::MakeUp("make-up"));
        assert_eq!(c.day(date("2026-09-26")), DayKind::Rest);
        // An off date on a weekend is rest: the base rule gave no work there.
        assert_eq!(c.day(date("2026-10-03")), DayKind::Rest);
        assert_eq!(c.next_workday(date("2026-09-30")), Some(date("2026-10-08")));
        assert_eq!(
            c.previous_workday(date("2026-10-08")),
            Some(date("2026-09-30"))
        );
        assert_eq!(c.years(), vec![2026]);
    }

    #[test]
    fn a_calendar_reads_as_a_file_writes_it_and_back() {
        let c = golden_week();
        assert_eq!(c.to_input().parse(), Ok(c.clone()));
        let input: CalendarInput = serde_json::from_value(serde_json::json!({
            "name": "x", "base": ["sat", "sun"],
            "off": ["2026-01-03", {"date": "2026-01-04", "name": "New Year"}],
            "on": ["2026-13-01"]
        }))
        .unwrap();
        let problems = input.parse().unwrap_err();
        assert_eq!(problems.len(), 1, "{problems:?}");
        let mut ok = input.clone();
        ok.on.clear();
        let parsed = ok.parse().unwrap();
        assert_eq!(parsed.base.text(), "sat,sun");
        assert_eq!(
            parsed.off.get(&date("2026-01-04")).map(String::as_str),
            Some("New Year")
        );
    }

    #[test]
    fn a_form_writes_dates_one_a_line() {
        let dates =
            dates_from_lines("2026-10-01 国庆节\n\n 2026-10-02 \n2026-10-03 National Day\n");
        assert_eq!(
            lines_of(&dates),
            "2026-10-01 国庆节\n2026-10-02\n2026-10-03 National Day"
        );
    }

    #[test]
    fn a_calendar_needs_a_name_a_workday_and_no_date_both_ways() {
        let mut c = golden_week();
        assert_eq!(c.validate(), Ok(()));
        c.on.insert(date("2026-09-25"), String::new());
        assert_eq!(c.validate(), Err(CalendarError::Both(date("2026-09-25"))));
        c.on.remove(&date("2026-09-25"));
        c.name = "cn workdays".into();
        assert_eq!(c.validate(), Err(CalendarError::Name));
        c.name = "cn".into();
        c.base = Weekdays::default();
        assert_eq!(c.validate(), Err(CalendarError::Base));
    }

    #[test]
    fn a_cron_follows_a_calendar_only_with_open_or_matching_day_fields() {
        let c = golden_week();
        let open = |cron: &str| days_from_calendar(&CronExpr::parse(cron).unwrap(), &c);
        assert_eq!(open("0 0 9 * * MON-FRI").unwrap().as_str(), "0 0 9 * * *");
        assert_eq!(open("0 0 9 * * *").unwrap().as_str(), "0 0 9 * * *");
        assert_eq!(open("0 0 9 * 1-6 1-5").unwrap().as_str(), "0 0 9 * 1-6 *");
        assert_eq!(
            open("0 0 9 1 * *"),
            Err(FollowError::DayOfMonth("1".into()))
        );
        assert!(matches!(
            open("0 0 9 * * MON-SAT"),
            Err(FollowError::DayOfWeek { .. })
        ));
    }

    fn schedule(c: &Calendar, cron: &CronExpr, on_off_day: OnOffDay) -> Vec<CalendarTick> {
        let s = Schedule {
            cron,
            zone: &Shanghai,
            calendar: c,
            on_off_day,
        };
        s.ticks_between(at("2026-09-18 00:00"), at("2026-10-12 23:00"), 1_000)
            .0
    }

    #[test]
    fn workdays_fire_off_days_are_skipped_and_make_up_days_fire() {
        let c = golden_week();
        let cron = days_from_calendar(&CronExpr::parse("0 0 9 * * MON-FRI").unwrap(), &c).unwrap();
        let ticks = schedule(&c, &cron, OnOffDay::Skip);
        let fired: Vec<String> = dates(&ticks)
            .into_iter()
            .filter(|d| !d.ends_with("skipped"))
            .collect();
        assert_eq!(
            fired.iter().map(|d| &d[..5]).collect::<Vec<_>>(),
            [
                "09-18", "09-20", "09-21", "09-22", "09-23", "09-24", "09-28", "09-29", "09-30",
                "10-08", "10-09", "10-10", "10-12"
            ]
        );
        let skipped: Vec<String> = dates(&ticks)
            .into_iter()
            .filter(|d| d.ends_with("skipped"))
            .collect();
        assert_eq!(
            skipped,
            [
                "09-25:09-25 skipped",
                "10-01:10-01 skipped",
                "10-02:10-02 skipped",
                "10-05:10-05 skipped",
                "10-06:10-06 skipped",
                "10-07:10-07 skipped"
            ]
        );
    }

    #[test]
    fn off_day_ticks_move_to_the_next_workday_keeping_their_dates() {
        let c = golden_week();
        let cron = days_from_calendar(&CronExpr::parse("0 0 9 * * *").unwrap(), &c).unwrap();
        let ticks = schedule(&c, &cron, OnOffDay::NextWorkday);
        let on_10_08: Vec<String> = dates(&ticks)
            .into_iter()
            .filter(|d| d.starts_with("10-08"))
            .collect();
        assert_eq!(
            on_10_08,
            [
                "10-08:10-01",
                "10-08:10-02",
                "10-08:10-05",
                "10-08:10-06",
                "10-08:10-07",
                "10-08:10-08"
            ]
        );
        let moved = ticks
            .iter()
            .find(|t| t.business_date == date("2026-10-01"))
            .unwrap();
        assert_eq!(moved.tick, at("2026-10-01 09:00"));
        assert_eq!(moved.fire, at("2026-10-08 09:00"));
        assert!(dates(&ticks).contains(&"09-28:09-25".to_string()));
    }

    #[test]
    fn the_preview_marks_holidays_and_make_up_days() {
        let c = golden_week();
        let cron = days_from_calendar(&CronExpr::parse("0 0 9 * * MON-FRI").unwrap(), &c).unwrap();
        let s = Schedule {
            cron: &cron,
            zone: &Shanghai,
            calendar: &c,
            on_off_day: OnOffDay::Skip,
        };
        let rows = s.preview(at("2026-09-24 00:00"), 14);
        let seen: Vec<(String, PreviewKind<'_>)> = rows
            .iter()
            .map(|r| {
                (
                    r.at.with_timezone(&Shanghai).format("%m-%d").to_string(),
                    r.kind,
                )
            })
            .collect();
        assert_eq!(seen[0], ("09-24".into(), PreviewKind::Workday));
        assert_eq!(seen[1], ("09-25".into(), PreviewKind::Skipped("holiday")));
        assert_eq!(seen[2], ("09-28".into(), PreviewKind::Workday));
        assert!(
            seen.contains(&("10-10".into(), PreviewKind::MakeUp("make-up"))),
            "{seen:?}"
        );
        let moved = Schedule {
            on_off_day: OnOffDay::NextWorkday,
            ..s
        };
        let rows = moved.preview(at("2026-09-24 00:00"), 2);
        assert_eq!(
            rows[1].kind,
            PreviewKind::Moved {
                name: "holiday",
                to: Some(date("2026-09-28"))
            }
        );
    }

    #[test]
    fn the_next_fire_time_passes_over_rest_and_moved_days() {
        let c = golden_week();
        let cron = days_from_calendar(&CronExpr::parse("0 0 9 * * MON-FRI").unwrap(), &c).unwrap();
        let s = |on_off_day| Schedule {
            cron: &cron,
            zone: &Shanghai,
            calendar: &c,
            on_off_day,
        };
        assert_eq!(
            s(OnOffDay::Skip).next_after(at("2026-09-30 10:00")),
            Some(at("2026-10-01 09:00"))
        );
        assert_eq!(
            s(OnOffDay::NextWorkday).next_after(at("2026-09-30 10:00")),
            Some(at("2026-10-08 09:00"))
        );
        assert_eq!(
            s(OnOffDay::Skip).next_after(at("2026-09-18 10:00")),
            Some(at("2026-09-20 09:00"))
        );
    }
}
