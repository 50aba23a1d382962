//! A job definition: what runs, when, how it retries, how long it may take, what happens when
//! it cannot succeed, and who hears about it.
//!
//! - [`input`]: [`JobInput`], the definition as typed into the editor or a jobs file (text).
//! - [`parse`]: [`JobSpec::parse`], which turns it into a [`JobSpec`] or names every bad field.
//! - [`redact`]: credentials hidden for display and kept when a form is saved back.
//! - [`diff`]: two revisions compared field by field, credentials hidden.
//! - [`outcomes`]: what each revision's runs did, and whether a change made things worse.
//! - [`placement`]: where a run's parameter may stand, and how its value is written there.
//! - [`spread`]: how many runs a tick makes across the nodes (a broadcast, shards).
//!
//! A [`JobSpec`] holds parsed values only (a [`CronExpr`], a [`Tz`], [`EmailAddress`]es), so
//! nothing downstream parses again.

pub mod diff;
pub mod input;
pub mod outcomes;
pub mod params;
pub mod parse;
pub mod placement;
pub mod redact;
pub mod spread;
pub mod tags;
pub mod tick_refs;

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};

use super::calendar::{Calendar, OnOffDay, Schedule, days_from_calendar};
use super::cron::CronExpr;
use super::due::Due;
use super::email::EmailAddress;
use super::retry::RetryPolicy;

pub use super::FieldProblem;
pub use input::JobInput;
pub use redact::{HIDDEN, is_secret_header};

/// The built-in tasks a `builtin` job may name: (name, what it does).
pub const BUILTIN_TASKS: &[(&str, &str)] = &[
    (
        "demo",
        "A demonstration task: waits `sleep` (default 200ms), then fails transiently with \
         probability `failure_rate` (default 0.3)",
    ),
    (
        "noop",
        "Does nothing and succeeds: for checking the engine itself",
    ),
    (
        "traffic-flush",
        "Makes every running server write its buffered traffic hits to the database",
    ),
    (
        "traffic-clean",
        "Deletes traffic rows older than `days` (default 90), 1000 at a time, then builds the blocks long Traffic ranges read",
    ),
    (
        "mail-digest",
        "Mails the daily health digest of the last 24 hours to the digest recipients",
    ),
    (
        "mail-trends",
        "Mails the digest recipients when failures across all jobs spike, pass a 5% rate, or burst in one error class",
    ),
    (
        "traffic-reports",
        "Queues each site's scheduled traffic report (daily or weekly) for its last whole period, once per period",
    ),
    (
        "traffic-alerts",
        "Alerts the digest recipients when a site's last hour has a spike of page views, mostly bots or many 404s (traffic_alerts), and when it ends",
    ),
    (
        "cleanup",
        "Deletes runs older than run_retention_days (never the failed queue's), audit entries after a year, delivered mails and channel messages after 30 days, expired sessions",
    ),
];

crate::text_enum! {
    /// Where a job stands, as the Jobs page filters by it.
    pub enum JobState {
        Enabled = "enabled",
        Disabled = "disabled",
        Paused = "paused",
        /// An alert episode is open.
        Failing = "failing",
    }
}

crate::text_enum! {
    /// What a job runs.
    pub enum Kind {
        Http = "http",
        Command = "command",
        Builtin = "builtin",
        /// Runs elsewhere and reports by pinging (`super::watch`): Bulwark only watches.
        Watch = "watch",
    }
}

crate::text_enum! {
    /// Which redirects an HTTP job follows (`server/src/engine/executor.rs`): never from https
    /// to http, never re-sending a body to another origin, whichever is chosen.
    pub enum Redirects {
        /// Within the URL's own scheme, host and port (the default).
        SameOrigin = "same-origin",
        /// Anywhere (the job's own headers go along).
        Any = "any",
        /// None: a 3xx answer is the result.
        None = "none",
    }
}

// Written out: `text_enum!` declares the enum, and a derive cannot reach it.
#[allow(clippy::derivable_impls)]
impl Default for Redirects {
    fn default() -> Self {
        Redirects::SameOrigin
    }
}

/// What a job runs, with what it needs. Stored as JSON in `jobs.config`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum JobKind {
    Http {
        method: String,
        url: String,
        headers: Vec<(String, String)>,
        body: String,
        /// Inclusive ranges of statuses that count as success.
        expected: Vec<(u16, u16)>,
        /// Which redirects it follows; saved before there was a choice: the default.
        #[serde(default)]
        follow_redirects: Redirects,
    },
    Command {
        program: String,
        args: Vec<String>,
        /// Exit codes that mean "try again later" (default: 75, EX_TEMPFAIL).
        #[serde(default = "default_transient_codes")]
        transient_codes: Vec<i32>,
    },
    Builtin {
        task: String,
        /// Task-specific settings, e.g. the demo task's `failure_rate`.
        #[serde(default)]
        params: BTreeMap<String, String>,
    },
    /// Run somewhere else; each expected tick waits for a ping (`super::watch`).
    Watch(Watch),
}

impl JobKind {
    /// Every text a secret may be referred to in (`${secret:NAME}`): the URL, headers and
    /// body of a call, a command's program and arguments, a built-in's parameters.
    fn texts(&self) -> Vec<&str> {
        match self {
            JobKind::Http {
                url, headers, body, ..
            } => std::iter::once(url.as_str())
                .chain(headers.iter().flat_map(|(n, v)| [n.as_str(), v.as_str()]))
                .chain(std::iter::once(body.as_str()))
                .collect(),
            JobKind::Command { program, args, .. } => std::iter::once(program.as_str())
                .chain(args.iter().map(String::as_str))
                .collect(),
            JobKind::Builtin { params, .. } => params.values().map(String::as_str).collect(),
            JobKind::Watch(_) => Vec::new(),
        }
    }

    /// The secrets this definition refers to, each once.
    pub fn secret_references(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for text in self.texts() {
            for name in crate::domain::secrets::references(text) {
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        }
        names
    }

    /// The parameters this definition refers to (`${param:NAME}`), each once.
    pub fn param_references(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for text in self.texts() {
            for name in crate::domain::secrets::param_references(text) {
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        }
        names
    }

    /// The definition with every reference filled in by `lookup`; the names it lacks are the
    /// error.
    pub fn with_secrets(
        &self,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<JobKind, Vec<String>> {
        self.with_values(lookup, None)
    }

    /// The definition with secrets filled in by `lookup` and, given a run's `params`, its
    /// parameters, in one pass per text (a value is never read for references again). The
    /// missing names are the error (`param:NAME` for a parameter).
    pub fn with_values(
        &self,
        lookup: impl Fn(&str) -> Option<String>,
        params: Option<&std::collections::BTreeMap<String, serde_json::Value>>,
    ) -> Result<JobKind, Vec<String>> {
        use crate::domain::secrets::substitute_with_params;
        let param = params.map(|values| move |name: &str| values.get(name).map(params::as_text));
        let mut missing: Vec<String> = Vec::new();
        let mut fill = |text: &str| match substitute_with_params(text, &lookup, param.as_ref()) {
            Ok(filled) => filled,
            Err(names) => {
                for name in names {
                    if !missing.contains(&name) {
                        missing.push(name);
                    }
                }
                text.to_string()
            }
        };
        let filled = match self {
            JobKind::Http {
                method,
                url,
                headers,
                body,
                expected,
                follow_redirects,
            } => JobKind::Http {
                method: method.clone(),
                url: fill(url),
                headers: headers.iter().map(|(n, v)| (fill(n), fill(v))).collect(),
                body: fill(body),
                expected: expected.clone(),
                follow_redirects: *follow_redirects,
            },
            JobKind::Command {
                program,
                args,
                transient_codes,
            } => JobKind::Command {
                program: fill(program),
                args: args.iter().map(|a| fill(a)).collect(),
                transient_codes: transient_codes.clone(),
            },
            JobKind::Builtin { task, params } => JobKind::Builtin {
                task: task.clone(),
                params: params.iter().map(|(k, v)| (k.clone(), fill(v))).collect(),
            },
            JobKind::Watch(watch) => JobKind::Watch(*watch),
        };
        if missing.is_empty() {
            Ok(filled)
        } else {
            Err(missing)
        }
    }
}

fn default_transient_codes() -> Vec<i32> {
    vec![super::run::EX_TEMPFAIL]
}

impl JobKind {
    pub fn kind(&self) -> Kind {
        match self {
            JobKind::Http { .. } => Kind::Http,
            JobKind::Command { .. } => Kind::Command,
            JobKind::Builtin { .. } => Kind::Builtin,
            JobKind::Watch(_) => Kind::Watch,
        }
    }

    /// What a watched job expects, if this is one.
    pub fn watch(&self) -> Option<&Watch> {
        match self {
            JobKind::Watch(watch) => Some(watch),
            _ => None,
        }
    }
}

/// Which percentile of recent successes a learned timeout reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Percentile {
    P95,
    P99,
}

impl Percentile {
    pub fn quantile(self) -> f64 {
        match self {
            Percentile::P95 => 0.95,
            Percentile::P99 => 0.99,
        }
    }
}

crate::text_enum! {
    /// Where an attempt's timeout comes from.
    pub enum TimeoutMode {
        Static = "static",
        P95 = "p95",
        P99 = "p99",
    }
}

impl TimeoutMode {
    /// The percentile a learned timeout reads; `None` for a static one.
    pub fn percentile(self) -> Option<Percentile> {
        match self {
            TimeoutMode::Static => None,
            TimeoutMode::P95 => Some(Percentile::P95),
            TimeoutMode::P99 => Some(Percentile::P99),
        }
    }
}

/// How long one attempt may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeoutPolicy {
    /// Used alone in static mode, and in a learned mode until enough samples exist.
    pub static_ms: u64,
    pub mode: TimeoutMode,
    /// How many recent successful durations the percentile reads.
    pub window: u32,
    /// The percentile is multiplied by this, in tenths (15 = ×1.5).
    pub factor_x10: u32,
    pub floor_ms: u64,
    pub hard_cap_ms: u64,
    /// End an attempt that shows no progress (a command prints nothing, a built-in reports
    /// nothing) for this long, whatever its timeout; `None`: only the timeout applies.
    #[serde(default)]
    pub stall_ms: Option<u64>,
}

crate::text_enum! {
    /// What a tick does when the job's previous run is still active.
    pub enum Overlap {
        /// It is recorded as skipped.
        Skip = "skip",
        /// It waits its turn.
        Queue = "queue",
    }
}

crate::text_enum! {
    /// What the job's trigger URL does while the job is paused (on its own, by a maintenance
    /// window on one of its tags, or with everything).
    pub enum WhenPaused {
        /// Answers 409: the caller tries again after the pause.
        Refuse = "refuse",
        /// Makes the run, which waits until the pause ends.
        Queue = "queue",
    }
}

impl WhenPaused {
    /// `when_paused` as a form or the REST API sends it (empty: refuse, as trigger URLs always
    /// did).
    pub fn from_field(text: Option<&str>) -> Result<WhenPaused, super::FieldProblem> {
        match text.map(str::trim).filter(|t| !t.is_empty()) {
            None => Ok(WhenPaused::Refuse),
            Some(text) => WhenPaused::parse(text).ok_or_else(|| {
                super::FieldProblem::new(
                    "when_paused",
                    crate::problem!("error-hook-when-paused", text = text),
                )
            }),
        }
    }
}

crate::text_enum! {
    /// What becomes of ticks missed while Bulwark was down.
    pub enum Misfire {
        /// The newest missed tick runs once when it is back.
        RunOnce = "run_once",
        /// They are recorded as skipped.
        Skip = "skip",
    }
}

crate::text_enum! {
    /// What happens when a run's retries run out (the stored word; the fallback's job name is
    /// its own column).
    pub enum ExhaustedAction {
        DeadLetter = "dead_letter",
        SkipToNext = "skip_to_next",
        Fallback = "fallback",
    }
}

/// What happens when a run's retries run out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnExhausted {
    /// Park the run in the failed queue.
    DeadLetter,
    /// Record it as skipped; the next tick runs as usual.
    SkipToNext,
    /// Start a run of the named job.
    Fallback(String),
}

impl OnExhausted {
    pub fn action(&self) -> ExhaustedAction {
        match self {
            OnExhausted::DeadLetter => ExhaustedAction::DeadLetter,
            OnExhausted::SkipToNext => ExhaustedAction::SkipToNext,
            OnExhausted::Fallback(_) => ExhaustedAction::Fallback,
        }
    }

    pub fn fallback_job(&self) -> Option<&str> {
        match self {
            OnExhausted::Fallback(job) => Some(job),
            _ => None,
        }
    }

    /// From the two stored columns; `None` when a fallback names no job.
    pub fn from_parts(action: ExhaustedAction, fallback_job: Option<&str>) -> Option<Self> {
        match action {
            ExhaustedAction::DeadLetter => Some(OnExhausted::DeadLetter),
            ExhaustedAction::SkipToNext => Some(OnExhausted::SkipToNext),
            ExhaustedAction::Fallback => fallback_job
                .filter(|job| !job.is_empty())
                .map(|job| OnExhausted::Fallback(job.to_string())),
        }
    }
}

/// Who hears about a failing job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alerts {
    pub to: Vec<EmailAddress>,
    /// Consecutive failed runs before the escalation mail.
    pub escalate_after: u32,
    pub escalate_to: Vec<EmailAddress>,
    /// Channels the alerts go to, by name.
    pub channels: Vec<String>,
    /// Channels escalations go to; empty: [`Alerts::channels`].
    pub escalate_channels: Vec<String>,
}

impl Alerts {
    /// Where an escalation is said: its own channels, or the alert channels.
    pub fn escalation_channels(&self) -> &[String] {
        if self.escalate_channels.is_empty() {
            &self.channels
        } else {
            &self.escalate_channels
        }
    }
}

/// What a watched job expects (`super::watch`). Its schedule is the job's cron, or `every_ms`
/// after its last ping (anchored as Healthchecks anchors a simple period).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Watch {
    /// Expected this long after the last ping, instead of a cron.
    #[serde(default)]
    pub every_ms: Option<u64>,
    /// How far from its tick a ping may come, and how long a tick waits for one.
    pub grace_ms: u64,
    /// A run that ends sooner than this is too fast (with what its history teaches).
    #[serde(default)]
    pub min_duration_ms: Option<u64>,
    /// A run that ends later than this is too slow (with what its history teaches).
    #[serde(default)]
    pub max_duration_ms: Option<u64>,
}

/// The grace a new watched job starts with.
pub const DEFAULT_GRACE_MS: u64 = 5 * 60_000;

/// Shortest and longest `every` period.
pub const EVERY_MS: std::ops::RangeInclusive<u64> = 1_000..=366 * 86_400_000;

/// Longest grace.
pub const MAX_GRACE_MS: u64 = 30 * 86_400_000;

/// A valid job definition.
#[derive(Debug, Clone, PartialEq)]
pub struct JobSpec {
    pub name: String,
    pub description: String,
    pub kind: JobKind,
    /// When it runs; `None` only for a watched job expected `every` so long after its last
    /// ping instead ([`JobSpec::next_tick_after`]).
    pub cron: Option<CronExpr>,
    pub timezone: Tz,
    pub enabled: bool,
    pub retry: RetryPolicy,
    pub timeout: TimeoutPolicy,
    pub overlap: Overlap,
    pub misfire: Misfire,
    pub on_exhausted: OnExhausted,
    pub alerts: Alerts,
    /// Jobs whose next runs are held while this job's latest run is dead.
    pub dependants: Vec<String>,
    /// What a run may be started with.
    pub parameters: Vec<params::Parameter>,
    /// The words teams split jobs by ([`tags`]).
    pub tags: Vec<String>,
    /// The work calendar whose workdays it runs on, by name (`super::calendar`).
    pub calendar: Option<String>,
    /// What becomes of a tick its calendar's base rule gives on an off day.
    pub on_off_day: OnOffDay,
    /// The labels a node must carry to run it (`super::labels`); none: any node.
    pub run_on: super::labels::Labels,
    /// The concurrency pool it takes a place in, by name (`super::pool`).
    pub pool: Option<String>,
    /// How many runs a tick makes across the nodes.
    pub spread: spread::Spread,
}

impl JobSpec {
    /// The first tick strictly after `after`: the cron's, or for a job watched `every` so
    /// long, that long after `after` (its last ping, or when it was defined).
    pub fn next_tick_after(&self, after: DateTime<Utc>) -> Option<DateTime<Utc>> {
        match (&self.cron, self.kind.watch().and_then(|w| w.every_ms)) {
            (Some(cron), _) => cron
                .next_after(&self.timezone, after)
                .ok()
                .map(|t| t.with_timezone(&Utc)),
            (None, Some(every)) => Some(after + chrono::Duration::milliseconds(every as i64)),
            (None, None) => None,
        }
    }

    /// The newest `keep` ticks strictly after `after` and at or before `until`, oldest first
    /// ([`CronExpr::ticks_between`]); a job watched `every` so long ticks at `after` plus
    /// whole periods.
    pub fn ticks_between(
        &self,
        after: DateTime<Utc>,
        until: DateTime<Utc>,
        keep: usize,
    ) -> super::cron::Ticks {
        match (&self.cron, self.kind.watch().and_then(|w| w.every_ms)) {
            (Some(cron), _) => cron.ticks_between(&self.timezone, after, until, keep),
            (None, Some(every)) => super::cron::periods_between(after, until, every, keep),
            (None, None) => super::cron::Ticks {
                last: Vec::new(),
                more: false,
                examined: 0,
            },
        }
    }

    /// The job's cron with `calendar` (the one it names) deciding the days; `None` where it
    /// follows none, or its cron cannot follow this one.
    fn schedule<'a>(&'a self, calendar: Option<&'a Calendar>) -> Option<(CronExpr, &'a Calendar)> {
        let calendar = calendar.filter(|_| self.calendar.is_some())?;
        let open = days_from_calendar(self.cron.as_ref()?, calendar).ok()?;
        Some((open, calendar))
    }

    /// [`JobSpec::next_tick_after`] on the workdays of `calendar` (the one the job names).
    pub fn next_fire_after(
        &self,
        calendar: Option<&Calendar>,
        after: DateTime<Utc>,
    ) -> Option<DateTime<Utc>> {
        match self.schedule(calendar) {
            Some((cron, calendar)) => Schedule {
                cron: &cron,
                zone: &self.timezone,
                calendar,
                on_off_day: self.on_off_day,
            }
            .next_after(after),
            None => self.next_tick_after(after),
        }
    }

    /// What fires in (`after`, `until`], oldest first ([`JobSpec::ticks_between`]), each with
    /// the date it stands for, on the workdays of `calendar` (the one the job names); `true`
    /// with them when older ones were not looked at.
    pub fn due_between(
        &self,
        calendar: Option<&Calendar>,
        after: DateTime<Utc>,
        until: DateTime<Utc>,
        keep: usize,
    ) -> (Vec<Due>, bool) {
        let Some((cron, calendar)) = self.schedule(calendar) else {
            let ticks = self.ticks_between(after, until, keep);
            let due = ticks.last.into_iter().map(|t| Due::at(t, self.date_of(t)));
            return (due.collect(), ticks.more);
        };
        let schedule = Schedule {
            cron: &cron,
            zone: &self.timezone,
            calendar,
            on_off_day: self.on_off_day,
        };
        let (ticks, more) = schedule.ticks_between(after, until, keep);
        let due = ticks.into_iter().map(|t| Due {
            fire: t.fire,
            tick: t.tick,
            business_date: t.business_date,
            off_day: t.skipped.then(|| calendar.off_day_note(t.business_date)),
        });
        (due.collect(), more)
    }

    /// The date `t` falls on in the job's zone.
    pub fn date_of(&self, t: DateTime<Utc>) -> chrono::NaiveDate {
        t.with_timezone(&self.timezone).date_naive()
    }

    /// The schedule as the Jobs list shows it: the cron, or `every 1h`.
    pub fn schedule_text(&self) -> String {
        match (&self.cron, self.kind.watch().and_then(|w| w.every_ms)) {
            (Some(cron), _) => cron.as_str().to_string(),
            (None, Some(every)) => format!("every {}", super::duration::format_ms(every)),
            (None, None) => String::new(),
        }
    }
}
