//! The definition as typed: every field is text, so a form can hold anything a person types
//! and [`super::JobSpec::parse`] can name every bad field at once.

use serde::{Deserialize, Serialize};

use super::{
    BUILTIN_TASKS, ExhaustedAction, JobKind, JobSpec, Kind, Misfire, Overlap, TimeoutMode,
};
use crate::domain::duration;
use crate::domain::email;
use crate::domain::retry::{Jitter, RetryInput};

/// The definition as typed into the editor or read from a jobs file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct JobInput {
    pub name: String,
    pub description: String,
    /// A [`Kind`] word.
    pub kind: String,
    pub http_method: String,
    pub http_url: String,
    /// One `Name: value` per line.
    pub http_headers: String,
    pub http_body: String,
    /// Comma-separated codes and ranges, e.g. `200-299, 304`.
    pub http_expected: String,
    /// `same-origin`, `any` or `none` (`super::Redirects`).
    #[serde(default = "default_redirects")]
    pub http_follow_redirects: String,
    pub command_program: String,
    /// One argument per line.
    pub command_args: String,
    /// Comma-separated exit codes that are transient failures.
    pub command_transient_codes: String,
    pub builtin_task: String,
    /// One `key=value` per line.
    pub builtin_params: String,
    /// Six fields, seconds first; empty for a watched job expected `every` so long.
    pub cron: String,
    /// A watched job: expected this long after its last ping (`1h`), instead of a cron.
    #[serde(default)]
    pub watch_every: String,
    /// A watched job: how far from its tick a ping may come (`5m`).
    #[serde(default = "default_grace")]
    pub watch_grace: String,
    /// A watched job: shorter than this is too fast; empty: learned only.
    #[serde(default)]
    pub watch_min_duration: String,
    /// A watched job: longer than this is too slow; empty: learned only.
    #[serde(default)]
    pub watch_max_duration: String,
    pub timezone: String,
    pub enabled: bool,
    pub retry: RetryInput,
    /// A [`TimeoutMode`] word.
    pub timeout_mode: String,
    pub timeout_static: String,
    pub timeout_window: String,
    pub timeout_factor: String,
    pub timeout_floor: String,
    pub timeout_hard_cap: String,
    /// No progress for this long ends the attempt (`5m`); empty: no stall timeout.
    #[serde(default)]
    pub timeout_stall: String,
    /// An [`Overlap`] word.
    pub overlap: String,
    /// A [`Misfire`] word.
    pub misfire: String,
    /// An [`ExhaustedAction`] word.
    pub on_exhausted: String,
    pub fallback_job: String,
    /// Names of jobs that depend on this one, separated by commas.
    pub dependants: String,
    /// Addresses, separated by commas or new lines.
    pub alert_to: String,
    pub escalate_after: String,
    pub escalate_to: String,
    /// Channel names, separated by commas.
    #[serde(default)]
    pub alert_channels: String,
    /// Channel names for escalations, separated by commas; empty: the alert channels.
    #[serde(default)]
    pub escalate_channels: String,
    /// Parameters a run takes, one per line: `name: type [= default] [required]`.
    #[serde(default)]
    pub parameters: String,
    /// Tags, separated by commas or spaces.
    #[serde(default)]
    pub tags: String,
    /// The work calendar it runs on, by name; empty: none.
    #[serde(default)]
    pub calendar: String,
    /// An [`OnOffDay`](crate::domain::calendar::OnOffDay) word.
    #[serde(default = "default_on_off_day")]
    pub on_off_day: String,
    /// The labels a node must carry to run it, `role=db, dc=sh`; empty: any node
    /// ([`Labels`](crate::domain::labels::Labels)). Left out of the JSON when empty, so a
    /// definition from before it existed reads and digests as it did: a revision's digest is
    /// of this JSON, and an unchanged save makes no revision.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub run_on: String,
    /// The concurrency pool it belongs to, by name ([`crate::domain::pool`]); empty: none.
    /// Left out of the JSON when empty, as `run_on` is.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub pool: String,
    /// `all`: a tick makes one child run per matching live node; empty: one run
    /// ([`Spread`](super::spread::Spread)). Left out of the JSON when empty, as `run_on` is.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub run_on_count: String,
    /// A tick makes this many child runs spread over the matching nodes; empty: none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub shards: String,
}

impl Default for JobInput {
    /// What a new job starts from in the editor, and what a jobs file's omitted keys mean.
    fn default() -> Self {
        JobInput {
            name: String::new(),
            description: String::new(),
            kind: Kind::Http.as_str().into(),
            http_method: "GET".into(),
            http_url: String::new(),
            http_headers: String::new(),
            http_body: String::new(),
            http_expected: "200-299".into(),
            http_follow_redirects: default_redirects(),
            command_program: String::new(),
            command_args: String::new(),
            command_transient_codes: crate::domain::run::EX_TEMPFAIL.to_string(),
            builtin_task: BUILTIN_TASKS[0].0.into(),
            builtin_params: String::new(),
            cron: "0 0 * * * *".into(),
            watch_every: String::new(),
            watch_grace: default_grace(),
            watch_min_duration: String::new(),
            watch_max_duration: String::new(),
            timezone: "UTC".into(),
            enabled: true,
            retry: RetryInput {
                first: "10s".into(),
                multiplier: "2.0".into(),
                max_retries: "5".into(),
                jitter: Jitter::Full.as_str().into(),
                cap: "10m".into(),
            },
            timeout_mode: TimeoutMode::Static.as_str().into(),
            timeout_static: "5m".into(),
            timeout_window: "20".into(),
            timeout_factor: "1.5".into(),
            timeout_floor: "30s".into(),
            timeout_hard_cap: "30m".into(),
            timeout_stall: String::new(),
            overlap: Overlap::Skip.as_str().into(),
            misfire: Misfire::RunOnce.as_str().into(),
            on_exhausted: ExhaustedAction::DeadLetter.as_str().into(),
            fallback_job: String::new(),
            dependants: String::new(),
            alert_to: String::new(),
            escalate_after: "3".into(),
            escalate_to: String::new(),
            alert_channels: String::new(),
            escalate_channels: String::new(),
            parameters: String::new(),
            tags: String::new(),
            calendar: String::new(),
            on_off_day: default_on_off_day(),
            run_on: String::new(),
            pool: String::new(),
            run_on_count: String::new(),
            shards: String::new(),
        }
    }
}

impl JobSpec {
    /// The definition as a form holds it, for editing.
    pub fn to_input(&self) -> JobInput {
        let mut input = JobInput {
            name: self.name.clone(),
            description: self.description.clone(),
            kind: self.kind.kind().as_str().into(),
            cron: self
                .cron
                .as_ref()
                .map(|c| c.as_str().to_string())
                .unwrap_or_default(),
            timezone: self.timezone.name().into(),
            enabled: self.enabled,
            retry: self.retry.to_input(),
            timeout_mode: self.timeout.mode.as_str().into(),
            timeout_static: duration::format_ms(self.timeout.static_ms),
            timeout_window: self.timeout.window.to_string(),
            timeout_factor: format!("{:.1}", f64::from(self.timeout.factor_x10) / 10.0),
            timeout_floor: duration::format_ms(self.timeout.floor_ms),
            timeout_hard_cap: duration::format_ms(self.timeout.hard_cap_ms),
            timeout_stall: self
                .timeout
                .stall_ms
                .map(duration::format_ms)
                .unwrap_or_default(),
            overlap: self.overlap.as_str().into(),
            misfire: self.misfire.as_str().into(),
            on_exhausted: self.on_exhausted.action().as_str().into(),
            fallback_job: self.on_exhausted.fallback_job().unwrap_or_default().into(),
            dependants: self.dependants.join(", "),
            alert_to: email::join(&self.alerts.to),
            escalate_after: self.alerts.escalate_after.to_string(),
            escalate_to: email::join(&self.alerts.escalate_to),
            alert_channels: self.alerts.channels.join(", "),
            escalate_channels: self.alerts.escalate_channels.join(", "),
            parameters: super::params::format_declarations(&self.parameters),
            tags: self.tags.join(", "),
            calendar: self.calendar.clone().unwrap_or_default(),
            on_off_day: self.on_off_day.as_str().into(),
            run_on: self.run_on.to_string(),
            pool: self.pool.clone().unwrap_or_default(),
            run_on_count: self.spread.run_on_count().into(),
            shards: match self.spread.shards() {
                0 => String::new(),
                n => n.to_string(),
            },
            ..JobInput::default()
        };
        self.kind.fill(&mut input);
        input
    }
}

impl JobKind {
    /// Writes the kind's own fields into a form.
    fn fill(&self, input: &mut JobInput) {
        let lines = |items: Vec<String>, sep: &str| items.join(sep);
        match self {
            JobKind::Http {
                method,
                url,
                headers,
                body,
                expected,
                follow_redirects,
            } => {
                input.http_follow_redirects = follow_redirects.as_str().to_string();
                input.http_method = method.clone();
                input.http_url = url.clone();
                input.http_headers = lines(
                    headers.iter().map(|(k, v)| format!("{k}: {v}")).collect(),
                    "\n",
                );
                input.http_body = body.clone();
                input.http_expected = lines(expected.iter().map(status_range).collect(), ", ");
            }
            JobKind::Command {
                program,
                args,
                transient_codes,
            } => {
                input.command_program = program.clone();
                input.command_args = args.join("\n");
                input.command_transient_codes =
                    lines(transient_codes.iter().map(i32::to_string).collect(), ", ");
            }
            JobKind::Builtin { task, params } => {
                input.builtin_task = task.clone();
                input.builtin_params = lines(
                    params.iter().map(|(k, v)| format!("{k}={v}")).collect(),
                    "\n",
                );
            }
            JobKind::Watch(watch) => {
                let text = |ms: Option<u64>| ms.map(duration::format_ms).unwrap_or_default();
                input.watch_every = text(watch.every_ms);
                input.watch_grace = duration::format_ms(watch.grace_ms);
                input.watch_min_duration = text(watch.min_duration_ms);
                input.watch_max_duration = text(watch.max_duration_ms);
            }
        }
    }
}

/// `200` or `200-299`.
fn status_range((lo, hi): &(u16, u16)) -> String {
    if lo == hi {
        lo.to_string()
    } else {
        format!("{lo}-{hi}")
    }
}

fn default_grace() -> String {
    duration::format_ms(super::DEFAULT_GRACE_MS)
}

fn default_on_off_day() -> String {
    crate::domain::calendar::OnOffDay::default()
        .as_str()
        .to_string()
}

fn default_redirects() -> String {
    super::Redirects::default().as_str().to_string()
}
