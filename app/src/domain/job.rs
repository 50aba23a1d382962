//! A job definition: what runs, when, how it retries, how long it may take, what happens when
//! it cannot succeed, and who hears about it.
//!
//! [`JobInput`] is the definition as typed (a form, a jobs file): strings. [`JobSpec::parse`]
//! turns it into a [`JobSpec`] or a list of [`FieldError`]s naming every bad field at once.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::cron::{self, CronExpr};
use super::duration;
use super::retry::{Multiplier, RetryInput, RetryPolicy};

/// A problem with one field of a form or file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

impl FieldError {
    pub fn new(field: &str, message: impl Into<String>) -> Self {
        Self {
            field: field.to_string(),
            message: message.into(),
        }
    }
}

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
];

/// The definition as typed. Every field is text so a form can hold anything the person types.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobInput {
    pub name: String,
    pub description: String,
    /// `http`, `command` or `builtin`.
    pub kind: String,
    pub http_method: String,
    pub http_url: String,
    /// One `Name: value` per line.
    pub http_headers: String,
    pub http_body: String,
    /// Comma-separated codes and ranges, e.g. `200-299, 304`.
    pub http_expected: String,
    pub command_program: String,
    /// One argument per line.
    pub command_args: String,
    /// Comma-separated exit codes that are transient failures.
    pub command_transient_codes: String,
    pub builtin_task: String,
    /// One `key=value` per line.
    pub builtin_params: String,
    pub cron: String,
    pub timezone: String,
    pub enabled: bool,
    pub retry: RetryInput,
    /// `static`, `p95` or `p99`.
    pub timeout_mode: String,
    pub timeout_static: String,
    pub timeout_window: String,
    pub timeout_factor: String,
    pub timeout_floor: String,
    pub timeout_hard_cap: String,
    /// `skip` or `queue`.
    pub overlap: String,
    /// `run_once` or `skip`.
    pub misfire: String,
    /// `dead_letter`, `skip_to_next` or `fallback`.
    pub on_exhausted: String,
    pub fallback_job: String,
    /// Names of jobs that depend on this one, separated by commas.
    pub dependants: String,
    /// Addresses, separated by commas or new lines.
    pub alert_to: String,
    pub escalate_after: String,
    pub escalate_to: String,
}

impl Default for JobInput {
    fn default() -> Self {
        JobInput {
            name: String::new(),
            description: String::new(),
            kind: "http".into(),
            http_method: "GET".into(),
            http_url: String::new(),
            http_headers: String::new(),
            http_body: String::new(),
            http_expected: "200-299".into(),
            command_program: String::new(),
            command_args: String::new(),
            command_transient_codes: "75".into(),
            builtin_task: BUILTIN_TASKS[0].0.into(),
            builtin_params: String::new(),
            cron: "0 0 * * * *".into(),
            timezone: "UTC".into(),
            enabled: true,
            retry: RetryInput {
                first: "10s".into(),
                multiplier: "2.0".into(),
                max_retries: "5".into(),
                jitter: "full".into(),
                cap: "10m".into(),
            },
            timeout_mode: "static".into(),
            timeout_static: "5m".into(),
            timeout_window: "20".into(),
            timeout_factor: "1.5".into(),
            timeout_floor: "30s".into(),
            timeout_hard_cap: "30m".into(),
            overlap: "skip".into(),
            misfire: "run_once".into(),
            on_exhausted: "dead_letter".into(),
            fallback_job: String::new(),
            dependants: String::new(),
            alert_to: String::new(),
            escalate_after: "3".into(),
            escalate_to: String::new(),
        }
    }
}

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
}

fn default_transient_codes() -> Vec<i32> {
    vec![super::run::EX_TEMPFAIL]
}

impl JobKind {
    pub fn name(&self) -> &'static str {
        match self {
            JobKind::Http { .. } => "http",
            JobKind::Command { .. } => "command",
            JobKind::Builtin { .. } => "builtin",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Percentile {
    P95,
    P99,
}

/// How long one attempt may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeoutPolicy {
    /// Used alone in static mode, and in dynamic mode until enough samples exist.
    pub static_ms: u64,
    /// `None` for static; otherwise learned from this percentile of recent successes.
    pub dynamic: Option<Percentile>,
    /// How many recent successful durations the percentile reads.
    pub window: u32,
    /// The percentile is multiplied by this, in tenths (15 = ×1.5).
    pub factor_x10: u32,
    pub floor_ms: u64,
    pub hard_cap_ms: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Overlap {
    /// A tick that comes while a run is active is recorded as skipped.
    Skip,
    /// It waits its turn.
    Queue,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Misfire {
    /// Ticks missed while Bulwark was down run once when it is back.
    RunOnce,
    /// They are recorded as skipped.
    Skip,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnExhausted {
    DeadLetter,
    SkipToNext,
    Fallback(String),
}

impl OnExhausted {
    /// The stored form: `dead_letter`, `skip_to_next` or `fallback:<job>`.
    pub fn to_db(&self) -> String {
        match self {
            OnExhausted::DeadLetter => "dead_letter".into(),
            OnExhausted::SkipToNext => "skip_to_next".into(),
            OnExhausted::Fallback(job) => format!("fallback:{job}"),
        }
    }

    pub fn from_db(text: &str) -> Option<Self> {
        match text {
            "dead_letter" => Some(OnExhausted::DeadLetter),
            "skip_to_next" => Some(OnExhausted::SkipToNext),
            other => other
                .strip_prefix("fallback:")
                .filter(|job| !job.is_empty())
                .map(|job| OnExhausted::Fallback(job.to_string())),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Alerts {
    pub to: Vec<String>,
    /// Consecutive failed runs before the escalation mail.
    pub escalate_after: u32,
    pub escalate_to: Vec<String>,
}

/// A valid job definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobSpec {
    pub name: String,
    pub description: String,
    pub kind: JobKind,
    pub cron: String,
    pub timezone: String,
    pub enabled: bool,
    pub retry: RetryPolicy,
    pub timeout: TimeoutPolicy,
    pub overlap: Overlap,
    pub misfire: Misfire,
    pub on_exhausted: OnExhausted,
    pub alerts: Alerts,
    /// Jobs whose next runs are held while this job's latest run is dead.
    #[serde(default)]
    pub dependants: Vec<String>,
}

const HTTP_METHODS: &[&str] = &["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"];

/// Shown instead of a secret; saving it back keeps the stored secret.
pub const HIDDEN: &str = "(hidden)";

/// Headers whose values are credentials.
pub fn is_secret_header(name: &str) -> bool {
    let name = name.trim().to_ascii_lowercase();
    [
        "authorization",
        "cookie",
        "token",
        "secret",
        "password",
        "api-key",
        "apikey",
        "x-api-key",
    ]
    .iter()
    .any(|word| name.contains(word))
}

/// `scheme://user:password@host/…` → the password, if the URL has one.
fn url_password(url: &str) -> Option<(usize, usize)> {
    let start = url.find("://")? + 3;
    let authority_end = url[start..].find('/').map_or(url.len(), |i| start + i);
    let at = url[start..authority_end].rfind('@')? + start;
    let colon = url[start..at].find(':')? + start;
    Some((colon + 1, at))
}

impl JobInput {
    /// The definition with credentials replaced by [`HIDDEN`]: secret header values and URL
    /// passwords. What the editor shows; the stored definition keeps them.
    pub fn redacted(&self) -> JobInput {
        let mut out = self.clone();
        out.http_headers = self
            .http_headers
            .lines()
            .map(|line| match line.split_once(':') {
                Some((name, _)) if is_secret_header(name) => format!("{name}: {HIDDEN}"),
                _ => line.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n");
        if let Some((from, to)) = url_password(&self.http_url) {
            out.http_url = format!("{}{HIDDEN}{}", &self.http_url[..from], &self.http_url[to..]);
        }
        out
    }

    /// Puts back the stored credentials where the form still says [`HIDDEN`].
    pub fn restore_secrets(&mut self, stored: &JobInput) {
        let stored_headers: Vec<(String, String)> = stored
            .http_headers
            .lines()
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        self.http_headers = self
            .http_headers
            .lines()
            .map(|line| match line.split_once(':') {
                Some((name, value)) if value.trim() == HIDDEN => {
                    let key = name.trim().to_ascii_lowercase();
                    match stored_headers.iter().find(|(k, _)| *k == key) {
                        Some((_, v)) => format!("{}: {v}", name.trim()),
                        None => line.to_string(),
                    }
                }
                _ => line.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n");
        if let (Some((from, to)), Some((sfrom, sto))) =
            (url_password(&self.http_url), url_password(&stored.http_url))
            && &self.http_url[from..to] == HIDDEN
        {
            self.http_url = format!(
                "{}{}{}",
                &self.http_url[..from],
                &stored.http_url[sfrom..sto],
                &self.http_url[to..]
            );
        }
    }
}

impl JobSpec {
    /// Parses every field; on failure returns every problem, each naming its field.
    pub fn parse(input: &JobInput) -> Result<JobSpec, Vec<FieldError>> {
        let mut errors = Vec::new();
        let mut fail = |field: &str, message: String| errors.push(FieldError::new(field, message));

        let name = input.name.trim().to_string();
        if name.is_empty() {
            fail("name", "name is required".into());
        } else if name.chars().count() > 128 {
            fail("name", "name must be at most 128 characters".into());
        } else if !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        {
            fail(
                "name",
                "name may contain only letters, digits, '-', '_' and '.'".into(),
            );
        }

        let kind = match input.kind.trim() {
            "http" => parse_http(input, &mut fail),
            "command" => {
                let program = input.command_program.trim().to_string();
                if program.is_empty() {
                    fail("command_program", "program is required".into());
                }
                let args = input
                    .command_args
                    .lines()
                    .map(str::trim)
                    .filter(|a| !a.is_empty())
                    .map(str::to_string)
                    .collect();
                let codes: Result<Vec<i32>, _> = input
                    .command_transient_codes
                    .split(',')
                    .map(str::trim)
                    .filter(|c| !c.is_empty())
                    .map(str::parse::<i32>)
                    .collect();
                match codes {
                    Ok(transient_codes) => Some(JobKind::Command {
                        program,
                        args,
                        transient_codes,
                    }),
                    Err(_) => {
                        fail(
                            "command_transient_codes",
                            "transient exit codes are whole numbers separated by commas, e.g. 75"
                                .into(),
                        );
                        None
                    }
                }
            }
            "builtin" => {
                let task = input.builtin_task.trim().to_string();
                let mut params = BTreeMap::new();
                for (i, line) in input.builtin_params.lines().enumerate() {
                    if line.trim().is_empty() {
                        continue;
                    }
                    match line.split_once('=') {
                        Some((k, v)) if !k.trim().is_empty() => {
                            params.insert(k.trim().to_string(), v.trim().to_string());
                        }
                        _ => fail(
                            "builtin_params",
                            format!("parameter line {} must look like 'key=value'", i + 1),
                        ),
                    }
                }
                if BUILTIN_TASKS.iter().any(|(name, _)| *name == task) {
                    Some(JobKind::Builtin { task, params })
                } else {
                    let known: Vec<&str> = BUILTIN_TASKS.iter().map(|(n, _)| *n).collect();
                    fail(
                        "builtin_task",
                        format!("built-in task must be one of: {}", known.join(", ")),
                    );
                    None
                }
            }
            other => {
                fail(
                    "kind",
                    format!("kind must be http, command or builtin, not '{other}'"),
                );
                None
            }
        };

        let cron = match CronExpr::parse(&input.cron) {
            Ok(c) => Some(c.as_str().to_string()),
            Err(e) => {
                fail("cron", e.to_string());
                None
            }
        };
        let timezone = match cron::parse_timezone(&input.timezone) {
            Ok(tz) => Some(tz.name().to_string()),
            Err(e) => {
                fail("timezone", e.to_string());
                None
            }
        };

        let retry = match RetryPolicy::parse(&input.retry) {
            Ok(r) => Some(r),
            Err(list) => {
                for e in list {
                    fail(&format!("retry.{}", e.field()), e.to_string());
                }
                None
            }
        };

        let timeout = parse_timeout(input, &mut fail);

        let overlap = match input.overlap.trim() {
            "skip" => Some(Overlap::Skip),
            "queue" => Some(Overlap::Queue),
            other => {
                fail(
                    "overlap",
                    format!("overlap must be skip or queue, not '{other}'"),
                );
                None
            }
        };
        let misfire = match input.misfire.trim() {
            "run_once" => Some(Misfire::RunOnce),
            "skip" => Some(Misfire::Skip),
            other => {
                fail(
                    "misfire",
                    format!("misfire must be run_once or skip, not '{other}'"),
                );
                None
            }
        };
        let on_exhausted = match input.on_exhausted.trim() {
            "dead_letter" => Some(OnExhausted::DeadLetter),
            "skip_to_next" => Some(OnExhausted::SkipToNext),
            "fallback" => {
                let job = input.fallback_job.trim();
                if job.is_empty() {
                    fail("fallback_job", "name the fallback job".into());
                    None
                } else if job == name {
                    fail("fallback_job", "a job cannot be its own fallback".into());
                    None
                } else {
                    Some(OnExhausted::Fallback(job.to_string()))
                }
            }
            other => {
                fail(
                    "on_exhausted",
                    format!(
                        "when retries run out: dead_letter, skip_to_next or fallback, not '{other}'"
                    ),
                );
                None
            }
        };

        let dependants: Vec<String> = input
            .dependants
            .split([',', '\n'])
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(str::to_string)
            .collect();
        if dependants.contains(&name) {
            fail("dependants", "a job cannot depend on itself".into());
        }
        let to = parse_addresses("alert_to", &input.alert_to, &mut fail);
        let escalate_to = parse_addresses("escalate_to", &input.escalate_to, &mut fail);
        let escalate_after = match input.escalate_after.trim().parse::<u32>() {
            Ok(n) if (1..=100).contains(&n) => Some(n),
            _ => {
                fail(
                    "escalate_after",
                    format!(
                        "escalate after must be a whole number of failed runs between 1 and 100, not '{}'",
                        input.escalate_after.trim()
                    ),
                );
                None
            }
        };

        match (
            kind,
            cron,
            timezone,
            retry,
            timeout,
            overlap,
            misfire,
            on_exhausted,
            to,
            escalate_to,
            escalate_after,
        ) {
            (
                Some(kind),
                Some(cron),
                Some(timezone),
                Some(retry),
                Some(timeout),
                Some(overlap),
                Some(misfire),
                Some(on_exhausted),
                Some(to),
                Some(escalate_to),
                Some(escalate_after),
            ) if errors.is_empty() => Ok(JobSpec {
                name,
                description: input.description.trim().to_string(),
                kind,
                cron,
                timezone,
                enabled: input.enabled,
                retry,
                timeout,
                overlap,
                misfire,
                on_exhausted,
                alerts: Alerts {
                    to,
                    escalate_after,
                    escalate_to,
                },
                dependants,
            }),
            _ => Err(errors),
        }
    }

    /// The definition as a form holds it, for editing.
    pub fn to_input(&self) -> JobInput {
        let mut input = JobInput {
            name: self.name.clone(),
            description: self.description.clone(),
            kind: self.kind.name().into(),
            cron: self.cron.clone(),
            timezone: self.timezone.clone(),
            enabled: self.enabled,
            retry: self.retry.to_input(),
            timeout_mode: match self.timeout.dynamic {
                None => "static",
                Some(Percentile::P95) => "p95",
                Some(Percentile::P99) => "p99",
            }
            .into(),
            timeout_static: duration::format_ms(self.timeout.static_ms),
            timeout_window: self.timeout.window.to_string(),
            timeout_factor: format!("{:.1}", f64::from(self.timeout.factor_x10) / 10.0),
            timeout_floor: duration::format_ms(self.timeout.floor_ms),
            timeout_hard_cap: duration::format_ms(self.timeout.hard_cap_ms),
            overlap: match self.overlap {
                Overlap::Skip => "skip",
                Overlap::Queue => "queue",
            }
            .into(),
            misfire: match self.misfire {
                Misfire::RunOnce => "run_once",
                Misfire::Skip => "skip",
            }
            .into(),
            on_exhausted: match &self.on_exhausted {
                OnExhausted::DeadLetter => "dead_letter",
                OnExhausted::SkipToNext => "skip_to_next",
                OnExhausted::Fallback(_) => "fallback",
            }
            .into(),
            fallback_job: match &self.on_exhausted {
                OnExhausted::Fallback(job) => job.clone(),
                _ => String::new(),
            },
            dependants: self.dependants.join(", "),
            alert_to: self.alerts.to.join(", "),
            escalate_after: self.alerts.escalate_after.to_string(),
            escalate_to: self.alerts.escalate_to.join(", "),
            ..JobInput::default()
        };
        match &self.kind {
            JobKind::Http {
                method,
                url,
                headers,
                body,
                expected,
            } => {
                input.http_method = method.clone();
                input.http_url = url.clone();
                input.http_headers = headers
                    .iter()
                    .map(|(k, v)| format!("{k}: {v}"))
                    .collect::<Vec<_>>()
                    .join("\n");
                input.http_body = body.clone();
                input.http_expected = expected
                    .iter()
                    .map(|(lo, hi)| {
                        if lo == hi {
                            lo.to_string()
                        } else {
                            format!("{lo}-{hi}")
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
            }
            JobKind::Command {
                program,
                args,
                transient_codes,
            } => {
                input.command_program = program.clone();
                input.command_args = args.join("\n");
                input.command_transient_codes = transient_codes
                    .iter()
                    .map(i32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ");
            }
            JobKind::Builtin { task, params } => {
                input.builtin_task = task.clone();
                input.builtin_params = params
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join("\n");
            }
        }
        input
    }
}

fn parse_http(input: &JobInput, fail: &mut impl FnMut(&str, String)) -> Option<JobKind> {
    let method = input.http_method.trim().to_ascii_uppercase();
    let method_ok = HTTP_METHODS.contains(&method.as_str());
    if !method_ok {
        fail(
            "http_method",
            format!("method must be one of {}", HTTP_METHODS.join(", ")),
        );
    }
    let url = input.http_url.trim().to_string();
    let url_ok = (url.starts_with("http://") || url.starts_with("https://"))
        && url.len() > "https://".len()
        && !url.contains(char::is_whitespace);
    if !url_ok {
        fail(
            "http_url",
            "URL must start with http:// or https:// and contain no spaces".into(),
        );
    }
    let mut headers = Vec::new();
    let mut headers_ok = true;
    for (i, line) in input.http_headers.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match line.split_once(':') {
            Some((k, v))
                if !k.trim().is_empty()
                    && k.trim()
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') =>
            {
                headers.push((k.trim().to_string(), v.trim().to_string()));
            }
            _ => {
                headers_ok = false;
                fail(
                    "http_headers",
                    format!("header line {} must look like 'Name: value'", i + 1),
                );
            }
        }
    }
    let expected = parse_statuses(&input.http_expected);
    if expected.is_none() {
        fail(
            "http_expected",
            "expected statuses are codes or ranges between 100 and 599, e.g. 200-299, 304".into(),
        );
    }
    match (method_ok && url_ok && headers_ok, expected) {
        (true, Some(expected)) => Some(JobKind::Http {
            method,
            url,
            headers,
            body: input.http_body.clone(),
            expected,
        }),
        _ => None,
    }
}

fn parse_statuses(text: &str) -> Option<Vec<(u16, u16)>> {
    let valid = |code: u16| (100..=599).contains(&code);
    let ranges: Option<Vec<(u16, u16)>> = text
        .split(',')
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .map(|part| {
            let (lo, hi) = match part.split_once('-') {
                Some((lo, hi)) => (lo.trim().parse().ok()?, hi.trim().parse().ok()?),
                None => {
                    let code = part.parse().ok()?;
                    (code, code)
                }
            };
            (valid(lo) && valid(hi) && lo <= hi).then_some((lo, hi))
        })
        .collect();
    ranges.filter(|r| !r.is_empty())
}

fn parse_timeout(input: &JobInput, fail: &mut impl FnMut(&str, String)) -> Option<TimeoutPolicy> {
    let mut ms = |field: &str, text: &str| match duration::parse_ms(text) {
        Ok(0) => {
            fail(field, format!("{} must be greater than 0", label(field)));
            None
        }
        Ok(v) => Some(v),
        Err(e) => {
            fail(field, format!("{} {e}", label(field)));
            None
        }
    };
    let static_ms = ms("timeout_static", &input.timeout_static);
    let floor_ms = ms("timeout_floor", &input.timeout_floor);
    let hard_cap_ms = ms("timeout_hard_cap", &input.timeout_hard_cap);
    let dynamic = match input.timeout_mode.trim() {
        "static" => Some(None),
        "p95" => Some(Some(Percentile::P95)),
        "p99" => Some(Some(Percentile::P99)),
        other => {
            fail(
                "timeout_mode",
                format!("timeout mode must be static, p95 or p99, not '{other}'"),
            );
            None
        }
    };
    let window = match input.timeout_window.trim().parse::<u32>() {
        Ok(n) if (5..=1000).contains(&n) => Some(n),
        _ => {
            fail(
                "timeout_window",
                format!(
                    "window must be a whole number of runs between 5 and 1000, not '{}'",
                    input.timeout_window.trim()
                ),
            );
            None
        }
    };
    let factor_x10 = match Multiplier::parse(&input.timeout_factor) {
        Ok(m) => Some(u32::from(m.tenths())),
        Err(_) => {
            fail(
                "timeout_factor",
                format!(
                    "factor must be between 1.0 and 8.0 in steps of 0.1, not '{}'",
                    input.timeout_factor.trim()
                ),
            );
            None
        }
    };
    let (static_ms, dynamic, window, factor_x10, floor_ms, hard_cap_ms) = (
        static_ms?,
        dynamic?,
        window?,
        factor_x10?,
        floor_ms?,
        hard_cap_ms?,
    );
    if floor_ms > hard_cap_ms {
        fail(
            "timeout_floor",
            "the floor must not be above the hard cap".into(),
        );
        return None;
    }
    if static_ms > hard_cap_ms {
        fail(
            "timeout_static",
            "the static timeout must not be above the hard cap".into(),
        );
        return None;
    }
    Some(TimeoutPolicy {
        static_ms,
        dynamic,
        window,
        factor_x10,
        floor_ms,
        hard_cap_ms,
    })
}

fn label(field: &str) -> &'static str {
    match field {
        "timeout_static" => "timeout",
        "timeout_floor" => "floor",
        "timeout_hard_cap" => "hard cap",
        _ => "value",
    }
}

fn parse_addresses(
    field: &str,
    text: &str,
    fail: &mut impl FnMut(&str, String),
) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut ok = true;
    for address in text
        .split([',', '\n', ';'])
        .map(str::trim)
        .filter(|a| !a.is_empty())
    {
        if is_plausible_address(address) {
            out.push(address.to_string());
        } else {
            ok = false;
            fail(field, format!("'{address}' is not an e-mail address"));
        }
    }
    ok.then_some(out)
}

/// A list of addresses as people type it (commas, semicolons or lines between), every one
/// checked; the error names the first that is not an address.
pub fn address_list(text: &str) -> Result<Vec<String>, String> {
    let mut first_error = None;
    let list = parse_addresses("", text, &mut |_, message| {
        first_error.get_or_insert(message);
    });
    match (list, first_error) {
        (Some(list), None) => Ok(list),
        (_, error) => Err(error.unwrap_or_else(|| "not a list of e-mail addresses".into())),
    }
}

/// `local@domain`, no spaces or angle brackets; the SMTP server has the last word.
fn is_plausible_address(address: &str) -> bool {
    match address.split_once('@') {
        Some((local, domain)) => {
            !local.is_empty()
                && !domain.is_empty()
                && !domain.contains('@')
                && !domain.starts_with('.')
                && !domain.ends_with('.')
                && !address.contains(|c: char| c.is_whitespace() || matches!(c, '<' | '>' | ','))
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(errors: &[FieldError]) -> Vec<&str> {
        errors.iter().map(|e| e.field.as_str()).collect()
    }

    #[test]
    fn the_default_form_with_a_name_and_url_is_valid() {
        let input = JobInput {
            name: "store-receipt-mail".into(),
            http_url: "http://127.0.0.1:8080/mail/receipts".into(),
            ..JobInput::default()
        };
        let spec = JobSpec::parse(&input).unwrap();
        assert_eq!(spec.kind.name(), "http");
        assert_eq!(spec.retry.first_ms(), 10_000);
        assert_eq!(JobSpec::parse(&spec.to_input()), Ok(spec));
    }

    #[test]
    fn every_bad_field_is_named() {
        let input = JobInput {
            name: "bad name!".into(),
            http_method: "FETCH".into(),
            http_url: "ftp://x".into(),
            http_headers: "no colon here".into(),
            http_expected: "700".into(),
            cron: "* * * * *".into(),
            timezone: "Nowhere/City".into(),
            retry: RetryInput {
                first: "0s".into(),
                multiplier: "9".into(),
                max_retries: "20".into(),
                jitter: "none".into(),
                cap: String::new(),
            },
            timeout_static: "soon".into(),
            overlap: "maybe".into(),
            on_exhausted: "fallback".into(),
            alert_to: "oncall@example.com, not-an-address".into(),
            escalate_after: "0".into(),
            ..JobInput::default()
        };
        let errors = JobSpec::parse(&input).unwrap_err();
        assert_eq!(
            fields(&errors),
            [
                "name",
                "http_method",
                "http_url",
                "http_headers",
                "http_expected",
                "cron",
                "timezone",
                "retry.first",
                "retry.multiplier",
                "retry.max_retries",
                "timeout_static",
                "overlap",
                "fallback_job",
                "alert_to",
                "escalate_after"
            ]
        );
    }

    #[test]
    fn commands_and_builtins() {
        let command = JobInput {
            name: "backup".into(),
            kind: "command".into(),
            command_program: "/usr/bin/pg_dump".into(),
            command_args: "--format=custom\n\n  bulwark  \n".into(),
            ..JobInput::default()
        };
        let spec = JobSpec::parse(&command).unwrap();
        assert_eq!(
            spec.kind,
            JobKind::Command {
                program: "/usr/bin/pg_dump".into(),
                args: vec!["--format=custom".into(), "bulwark".into()],
                transient_codes: vec![75],
            }
        );
        let unknown = JobInput {
            name: "x".into(),
            kind: "builtin".into(),
            builtin_task: "mine-bitcoin".into(),
            ..JobInput::default()
        };
        assert_eq!(
            fields(&JobSpec::parse(&unknown).unwrap_err()),
            ["builtin_task"]
        );
    }

    #[test]
    fn statuses_and_timeouts() {
        assert_eq!(
            parse_statuses("200-299, 304"),
            Some(vec![(200, 299), (304, 304)])
        );
        assert_eq!(parse_statuses("299-200"), None);
        assert_eq!(parse_statuses(""), None);
        let input = JobInput {
            name: "t".into(),
            http_url: "https://example.com".into(),
            timeout_mode: "p99".into(),
            timeout_floor: "1h".into(),
            timeout_hard_cap: "10m".into(),
            ..JobInput::default()
        };
        assert_eq!(
            fields(&JobSpec::parse(&input).unwrap_err()),
            ["timeout_floor"]
        );
    }

    #[test]
    fn secrets_are_hidden_and_kept_on_save() {
        let stored = JobInput {
            http_url: "https://bot:s3cret@api.example.com/hook".into(),
            http_headers: "Authorization: Bearer abc123\nAccept: application/json".into(),
            ..JobInput::default()
        };
        let shown = stored.redacted();
        assert_eq!(shown.http_url, "https://bot:(hidden)@api.example.com/hook");
        assert_eq!(
            shown.http_headers,
            "Authorization: (hidden)\nAccept: application/json"
        );
        assert!(
            !format!("{shown:?}").contains("s3cret") && !format!("{shown:?}").contains("abc123")
        );

        let mut edited = shown.clone();
        edited.http_headers.push_str("\nX-Extra: 1");
        edited.restore_secrets(&stored);
        assert_eq!(edited.http_url, stored.http_url);
        assert_eq!(
            edited.http_headers,
            "Authorization: Bearer abc123\nAccept: application/json\nX-Extra: 1"
        );
        let mut replaced = shown;
        replaced.http_headers = "Authorization: Bearer new".into();
        replaced.restore_secrets(&stored);
        assert_eq!(
            replaced.http_headers, "Authorization: Bearer new",
            "a new value wins"
        );
    }

    #[test]
    fn on_exhausted_round_trips_through_the_database_form() {
        for value in [
            OnExhausted::DeadLetter,
            OnExhausted::SkipToNext,
            OnExhausted::Fallback("cleanup".into()),
        ] {
            assert_eq!(OnExhausted::from_db(&value.to_db()), Some(value));
        }
        assert_eq!(OnExhausted::from_db("fallback:"), None);
    }
}
