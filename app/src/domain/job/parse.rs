//! [`JobSpec::parse`]: the definition as typed becomes a valid definition, or the list of
//! every field that is wrong and why.

use crate::domain::Problem;
use crate::problem;
use std::collections::BTreeMap;

use super::{
    Alerts, BUILTIN_TASKS, ExhaustedAction, FieldProblem, JobInput, JobKind, JobSpec, Kind,
    Misfire, OnExhausted, Overlap, TimeoutMode, TimeoutPolicy,
};
use crate::domain::calendar::OnOffDay;
use crate::domain::cron::{self, CronExpr};
use crate::domain::duration;
use crate::domain::email::{self, EmailAddress};
use crate::domain::labels::Labels;
use crate::domain::retry::{Multiplier, RetryPolicy};

const HTTP_METHODS: &[&str] = &["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"];

impl JobSpec {
    /// Parses every field; on failure returns every problem, each naming its field.
    pub fn parse(input: &JobInput) -> Result<JobSpec, Vec<FieldProblem>> {
        let mut errors = Vec::new();
        let mut fail =
            |field: &str, problem: Problem| errors.push(FieldProblem::new(field, problem));
        let name = parse_name(input, &mut fail);
        let kind = parse_kind(input, &mut fail);
        let every = matches!(&kind, Some(JobKind::Watch(w)) if w.every_ms.is_some());
        let cron = parse_cron(input, every, &mut fail);
        let timezone = cron::parse_timezone(&input.timezone)
            .map_err(|e| fail("timezone", e.problem()))
            .ok();
        let retry = RetryPolicy::parse(&input.retry)
            .map_err(|list| {
                for e in list {
                    fail(&format!("retry.{}", e.field()), e.problem());
                }
            })
            .ok();
        let timeout = parse_timeout(input, &mut fail);
        let handling = parse_handling(input, &name, &mut fail);
        let (dependants, tags, parameters) = parse_relations(input, &name, &mut fail);
        if let Some(kind) = &kind {
            check_parameter_uses(kind, &parameters, &mut fail);
        }
        let alerts = parse_alerts(input, &mut fail);
        let (calendar, on_off_day) = parse_calendar(input, cron.as_ref(), &mut fail);
        let run_on = parse_run_on(input, &mut fail);
        let pool = parse_pool(input, &mut fail);
        let spread = parse_spread(input, kind.as_ref(), &mut fail);
        match (kind, cron, timezone, retry, timeout, handling, alerts) {
            (
                Some(kind),
                Some(cron),
                Some(timezone),
                Some(retry),
                Some(timeout),
                Some((overlap, misfire, on_exhausted)),
                Some(alerts),
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
                alerts,
                dependants,
                parameters,
                tags,
                calendar,
                on_off_day,
                run_on,
                pool,
                spread,
            }),
            _ => Err(errors),
        }
    }
}

/// The labels a node needs to run it; a watched job runs nowhere, so it asks for none.
fn parse_run_on(input: &JobInput, fail: &mut impl FnMut(&str, Problem)) -> Labels {
    let labels = Labels::parse(&input.run_on).unwrap_or_else(|e| {
        fail("run_on", e.problem());
        Labels::default()
    });
    if !labels.is_empty() && input.kind.trim() == Kind::Watch.as_str() {
        fail("run_on", problem!("job-error-run-on-watch"));
    }
    labels
}

/// How many runs a tick makes; a watched job runs nowhere, so it makes its one. An HTTP job
/// that refers to its shard (`${shard:index}`) must have one.
fn parse_spread(
    input: &JobInput,
    kind: Option<&JobKind>,
    fail: &mut impl FnMut(&str, Problem),
) -> super::spread::Spread {
    use super::spread::Spread;
    let spread = Spread::parse(&input.run_on_count, &input.shards).unwrap_or_else(|(field, p)| {
        fail(field, p);
        Spread::One
    });
    if spread.fans_out() && input.kind.trim() == Kind::Watch.as_str() {
        fail("run_on_count", problem!("job-error-spread-watch"));
    }
    // Which of the children's failures would start it, and with what, is not for a guess.
    if spread.fans_out() && input.on_exhausted.trim() == ExhaustedAction::Fallback.as_str() {
        fail("on_exhausted", problem!("job-error-spread-fallback"));
    }
    if let Some(JobKind::Http {
        url, headers, body, ..
    }) = kind
    {
        let texts = std::iter::once(url.as_str())
            .chain(headers.iter().flat_map(|(n, v)| [n.as_str(), v.as_str()]))
            .chain(std::iter::once(body.as_str()));
        let probe = super::spread::Shard { index: 0, total: 1 };
        for text in texts {
            for (_, name) in crate::domain::tick::spans_of(text, crate::domain::tick::SHARD_OPEN) {
                if probe.value(name).is_none() {
                    fail("http_url", problem!("job-error-shard-unknown", name = name));
                } else if !spread.fans_out() {
                    fail("shards", problem!("job-error-shard-alone"));
                }
            }
        }
    }
    spread
}

/// The pool it takes a place in (that it exists is checked with the database); a watched job
/// runs elsewhere and takes none.
fn parse_pool(input: &JobInput, fail: &mut impl FnMut(&str, Problem)) -> Option<String> {
    let name = input.pool.trim();
    if name.is_empty() {
        return None;
    }
    if !crate::domain::pool::valid_name(name) {
        fail("pool", problem!("pool-error-name", name = name));
    } else if input.kind.trim() == Kind::Watch.as_str() {
        fail("pool", problem!("job-error-pool-watch"));
    }
    Some(name.to_string())
}

fn parse_name(input: &JobInput, fail: &mut impl FnMut(&str, Problem)) -> String {
    let name = input.name.trim().to_string();
    if name.is_empty() {
        fail("name", problem!("job-error-name-empty"));
    } else if name.chars().count() > 128 {
        fail("name", problem!("job-error-name-long"));
    } else if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        fail("name", problem!("job-error-name-chars"));
    }
    name
}

fn parse_kind(input: &JobInput, fail: &mut impl FnMut(&str, Problem)) -> Option<JobKind> {
    match Kind::parse(input.kind.trim()) {
        Some(Kind::Http) => parse_http(input, fail),
        Some(Kind::Command) => parse_command(input, fail),
        Some(Kind::Builtin) => parse_builtin(input, fail),
        Some(Kind::Watch) => parse_watch(input, fail),
        None => {
            fail(
                "kind",
                problem!(
                    "job-error-kind",
                    kinds = Kind::WORDS.join(", "),
                    text = input.kind.trim().to_string()
                ),
            );
            None
        }
    }
}

/// The cron: required, except for a watched job expected `every` so long, which takes none
/// (`Some(None)`). `None`: it is wrong.
fn parse_cron(
    input: &JobInput,
    every: bool,
    fail: &mut impl FnMut(&str, Problem),
) -> Option<Option<CronExpr>> {
    let text = input.cron.trim();
    match (every, text.is_empty()) {
        (true, true) => Some(None),
        (true, false) => {
            fail("cron", problem!("job-error-watch-cron-and-every"));
            None
        }
        (false, _) => CronExpr::parse(text)
            .map_err(|e| fail("cron", e.problem()))
            .ok()
            .map(Some),
    }
}

/// A watched job's expectations: `every` (or the cron), `grace`, `min_duration`,
/// `max_duration`.
fn parse_watch(input: &JobInput, fail: &mut impl FnMut(&str, Problem)) -> Option<JobKind> {
    use super::{EVERY_MS, MAX_GRACE_MS, Watch};
    let mut ok = true;
    let mut optional = |field: &str, text: &str, range: std::ops::RangeInclusive<u64>| {
        let text = text.trim();
        if text.is_empty() {
            return None;
        }
        match duration::parse_ms(text) {
            Ok(ms) if range.contains(&ms) => Some(ms),
            Ok(_) => {
                ok = false;
                fail(
                    field,
                    problem!(
                        "job-error-watch-range",
                        low = duration::format_ms(*range.start()),
                        high = duration::format_ms(*range.end())
                    ),
                );
                None
            }
            Err(e) => {
                ok = false;
                fail(field, e.problem());
                None
            }
        }
    };
    let every_ms = optional("watch_every", &input.watch_every, EVERY_MS);
    let grace_ms = optional("watch_grace", &input.watch_grace, 0..=MAX_GRACE_MS);
    let min_duration_ms = optional(
        "watch_min_duration",
        &input.watch_min_duration,
        0..=u64::MAX,
    );
    let max_duration_ms = optional(
        "watch_max_duration",
        &input.watch_max_duration,
        1..=u64::MAX,
    );
    if let (Some(min), Some(max)) = (min_duration_ms, max_duration_ms)
        && min >= max
    {
        ok = false;
        fail("watch_max_duration", problem!("job-error-watch-min-max"));
    }
    ok.then_some(JobKind::Watch(Watch {
        every_ms,
        grace_ms: grace_ms.unwrap_or(super::DEFAULT_GRACE_MS),
        min_duration_ms,
        max_duration_ms,
    }))
}

fn parse_command(input: &JobInput, fail: &mut impl FnMut(&str, Problem)) -> Option<JobKind> {
    let program = input.command_program.trim().to_string();
    if program.is_empty() {
        fail("command_program", problem!("job-error-program"));
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
            fail("command_transient_codes", problem!("job-error-exit-codes"));
            None
        }
    }
}

fn parse_builtin(input: &JobInput, fail: &mut impl FnMut(&str, Problem)) -> Option<JobKind> {
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
                problem!("job-error-param-line", line = i + 1),
            ),
        }
    }
    if BUILTIN_TASKS.iter().any(|(name, _)| *name == task) {
        Some(JobKind::Builtin { task, params })
    } else {
        let known: Vec<&str> = BUILTIN_TASKS.iter().map(|(n, _)| *n).collect();
        fail(
            "builtin_task",
            problem!("job-error-builtin", tasks = known.join(", ")),
        );
        None
    }
}

/// What happens around a run: overlap, missed ticks, and what follows the last retry.
fn parse_handling(
    input: &JobInput,
    name: &str,
    fail: &mut impl FnMut(&str, Problem),
) -> Option<(Overlap, Misfire, OnExhausted)> {
    let overlap = word::<Overlap>(&input.overlap)
        .map_err(|e| {
            fail(
                "overlap",
                problem!("job-error-overlap", error = e.to_string()),
            )
        })
        .ok();
    let misfire = word::<Misfire>(&input.misfire)
        .map_err(|e| {
            fail(
                "misfire",
                problem!("job-error-misfire", error = e.to_string()),
            )
        })
        .ok();
    let on_exhausted = match word::<ExhaustedAction>(&input.on_exhausted) {
        Ok(ExhaustedAction::DeadLetter) => Some(OnExhausted::DeadLetter),
        Ok(ExhaustedAction::SkipToNext) => Some(OnExhausted::SkipToNext),
        Ok(ExhaustedAction::Fallback) => {
            let job = input.fallback_job.trim();
            if job.is_empty() {
                fail("fallback_job", problem!("job-error-fallback-missing"));
                None
            } else if job == name {
                fail("fallback_job", problem!("job-error-fallback-self"));
                None
            } else {
                Some(OnExhausted::Fallback(job.to_string()))
            }
        }
        Err(e) => {
            fail(
                "on_exhausted",
                problem!("job-error-exhausted", error = e.to_string()),
            );
            None
        }
    };
    Some((overlap?, misfire?, on_exhausted?))
}

/// The calendar it follows, by name (whether its cron may follow that calendar is
/// [`crate::domain::calendar::days_from_calendar`], asked once the calendar is at hand), and
/// what becomes of its off-day ticks.
fn parse_calendar(
    input: &JobInput,
    cron: Option<&Option<CronExpr>>,
    fail: &mut impl FnMut(&str, Problem),
) -> (Option<String>, OnOffDay) {
    let on_off_day = OnOffDay::parse(input.on_off_day.trim()).unwrap_or_else(|| {
        fail(
            "on_off_day",
            problem!(
                "job-error-on-off-day",
                words = OnOffDay::WORDS.join(", "),
                text = input.on_off_day.trim().to_string()
            ),
        );
        OnOffDay::default()
    });
    let name = input.calendar.trim();
    if name.is_empty() {
        return (None, on_off_day);
    }
    if !crate::domain::calendar::valid_name(name) {
        fail("calendar", problem!("calendar-error-name"));
    } else if matches!(cron, Some(None)) {
        fail("calendar", problem!("job-error-calendar-every"));
    }
    (Some(name.to_string()), on_off_day)
}

/// The jobs it starts after it, its tags and its declared parameters.
fn parse_relations(
    input: &JobInput,
    name: &str,
    fail: &mut impl FnMut(&str, Problem),
) -> (Vec<String>, Vec<String>, Vec<super::params::Parameter>) {
    let dependants: Vec<String> = input
        .dependants
        .split([',', '\n'])
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(str::to_string)
        .collect();
    if dependants.iter().any(|d| d == name) {
        fail("dependants", problem!("job-error-depends-self"));
    }
    let tags = super::tags::parse_tags(&input.tags).unwrap_or_else(|problems| {
        for problem in problems {
            fail("tags", problem);
        }
        Vec::new()
    });
    let parameters =
        super::params::parse_declarations(&input.parameters).unwrap_or_else(|problems| {
            for problem in problems {
                fail("parameters", problem);
            }
            Vec::new()
        });
    (dependants, tags, parameters)
}

/// Every parameter the job uses is declared, and stands where a value may.
fn check_parameter_uses(
    kind: &JobKind,
    parameters: &[super::params::Parameter],
    fail: &mut impl FnMut(&str, Problem),
) {
    for name in kind.param_references() {
        if !parameters.iter().any(|p| p.name == name) {
            fail(
                "parameters",
                problem!("job-error-param-undeclared", name = name.clone()),
            );
        }
    }
    for misplaced in super::placement::misplaced(kind, parameters) {
        fail(&misplaced.field, misplaced_problem(&misplaced));
    }
    check_tick_uses(kind, fail);
}

/// An HTTP job's tick references (`crate::domain::tick`) name what a tick has, and stand
/// where a parameter may.
fn check_tick_uses(kind: &JobKind, fail: &mut impl FnMut(&str, Problem)) {
    use super::tick_refs::as_params;
    use crate::domain::tick::{RunTick, unknown_references};
    let JobKind::Http {
        url, headers, body, ..
    } = kind
    else {
        return;
    };
    let texts = std::iter::once(url.as_str())
        .chain(headers.iter().flat_map(|(n, v)| [n.as_str(), v.as_str()]))
        .chain(std::iter::once(body.as_str()));
    for reference in unknown_references(texts) {
        fail(
            "http_url",
            problem!("job-error-tick-unknown", reference = reference),
        );
    }
    let probe = RunTick {
        scheduled_at: String::new(),
        business_date: chrono::NaiveDate::MIN,
        shard: Some(super::spread::Shard { index: 0, total: 1 }),
    };
    let (rewritten, made) = as_params(kind, &probe);
    let declared: Vec<_> = made.into_iter().map(|(p, _)| p).collect();
    // The job's own parameters are checked by their declarations; only the ticks' here.
    let ticks = super::placement::misplaced(&rewritten, &declared)
        .into_iter()
        .filter(|m| declared.iter().any(|d| d.name == m.param));
    for misplaced in ticks {
        fail(&misplaced.field, problem!("job-error-tick-misplaced"));
    }
}

fn parse_alerts(input: &JobInput, fail: &mut impl FnMut(&str, Problem)) -> Option<Alerts> {
    let to = parse_addresses("alert_to", &input.alert_to, fail);
    let escalate_to = parse_addresses("escalate_to", &input.escalate_to, fail);
    let channels = parse_channels("alert_channels", &input.alert_channels, fail);
    let escalate_channels = parse_channels("escalate_channels", &input.escalate_channels, fail);
    let escalate_after = match input.escalate_after.trim().parse::<u32>() {
        Ok(n) if (1..=100).contains(&n) => Some(n),
        _ => {
            fail(
                "escalate_after",
                problem!(
                    "job-error-escalate-after",
                    text = input.escalate_after.trim().to_string()
                ),
            );
            None
        }
    };
    Some(Alerts {
        to: to?,
        escalate_after: escalate_after?,
        escalate_to: escalate_to?,
        channels,
        escalate_channels,
    })
}

fn parse_http(input: &JobInput, fail: &mut impl FnMut(&str, Problem)) -> Option<JobKind> {
    let method = input.http_method.trim().to_ascii_uppercase();
    let method_ok = HTTP_METHODS.contains(&method.as_str());
    if !method_ok {
        fail(
            "http_method",
            problem!("job-error-method", methods = HTTP_METHODS.join(", ")),
        );
    }
    let url = input.http_url.trim().to_string();
    let url_ok = (url.starts_with("http://") || url.starts_with("https://"))
        && url.len() > "https://".len()
        && !url.contains(char::is_whitespace);
    if !url_ok {
        fail("http_url", problem!("job-error-url"));
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
                    problem!("job-error-header-line", line = i + 1),
                );
            }
        }
    }
    let expected = parse_statuses(&input.http_expected);
    if expected.is_none() {
        fail("http_expected", problem!("job-error-statuses"));
    }
    let follow_redirects = super::Redirects::parse(input.http_follow_redirects.trim());
    if follow_redirects.is_none() {
        fail(
            "http_follow_redirects",
            problem!(
                "job-error-redirects",
                choices = super::Redirects::WORDS.join(", "),
                text = input.http_follow_redirects.trim().to_string()
            ),
        );
    }
    match (
        method_ok && url_ok && headers_ok,
        expected,
        follow_redirects,
    ) {
        (true, Some(expected), Some(follow_redirects)) => Some(JobKind::Http {
            method,
            url,
            headers,
            body: input.http_body.clone(),
            expected,
            follow_redirects,
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

fn parse_timeout(input: &JobInput, fail: &mut impl FnMut(&str, Problem)) -> Option<TimeoutPolicy> {
    let mut ms = |field: &str, text: &str| positive_ms(field, text, fail);
    let static_ms = ms("timeout_static", &input.timeout_static);
    let floor_ms = ms("timeout_floor", &input.timeout_floor);
    let hard_cap_ms = ms("timeout_hard_cap", &input.timeout_hard_cap);
    let stall_ms = match input.timeout_stall.trim() {
        "" => Some(None),
        text => ms("timeout_stall", text).map(Some),
    };
    let mode = word::<TimeoutMode>(&input.timeout_mode)
        .map_err(|e| {
            fail(
                "timeout_mode",
                problem!("job-error-timeout-mode", error = e.to_string()),
            )
        })
        .ok();
    let window = parse_window(&input.timeout_window, fail);
    let factor_x10 = parse_factor(&input.timeout_factor, fail);
    let policy = TimeoutPolicy {
        static_ms: static_ms?,
        mode: mode?,
        window: window?,
        factor_x10: factor_x10?,
        floor_ms: floor_ms?,
        hard_cap_ms: hard_cap_ms?,
        stall_ms: stall_ms?,
    };
    if policy.floor_ms > policy.hard_cap_ms {
        fail("timeout_floor", problem!("job-error-floor-cap"));
        return None;
    }
    if policy.static_ms > policy.hard_cap_ms {
        fail("timeout_static", problem!("job-error-static-cap"));
        return None;
    }
    Some(policy)
}

/// A duration above zero, in milliseconds.
fn positive_ms(field: &str, text: &str, fail: &mut impl FnMut(&str, Problem)) -> Option<u64> {
    match duration::parse_ms(text) {
        Ok(0) => {
            fail(field, problem!("job-error-positive", label = label(field)));
            None
        }
        Ok(v) => Some(v),
        Err(e) => {
            let error = e.problem();
            fail(
                field,
                problem!("job-error-duration", label = label(field), error = error),
            );
            None
        }
    }
}

/// How many recent durations the adaptive timeout reads: 5 to 1,000.
fn parse_window(text: &str, fail: &mut impl FnMut(&str, Problem)) -> Option<u32> {
    match text.trim().parse::<u32>() {
        Ok(n) if (5..=1000).contains(&n) => Some(n),
        _ => {
            let text = text.trim().to_string();
            fail("timeout_window", problem!("job-error-window", text = text));
            None
        }
    }
}

/// The adaptive timeout's factor, in tenths.
fn parse_factor(text: &str, fail: &mut impl FnMut(&str, Problem)) -> Option<u32> {
    match Multiplier::parse(text) {
        Ok(m) => Some(u32::from(m.tenths())),
        Err(_) => {
            let text = text.trim().to_string();
            fail("timeout_factor", problem!("job-error-factor", text = text));
            None
        }
    }
}

/// A word of a [`crate::text_enum!`] enum as typed (surrounding blanks ignored).
fn word<T: std::str::FromStr>(text: &str) -> Result<T, T::Err> {
    text.trim().parse()
}

fn label(field: &str) -> Problem {
    match field {
        "timeout_static" => problem!("job-label-timeout"),
        "timeout_floor" => problem!("job-label-floor"),
        "timeout_hard_cap" => problem!("job-label-hard-cap"),
        "timeout_stall" => problem!("job-label-stall"),
        _ => problem!("job-label-value"),
    }
}

/// Channel names separated by commas or new lines, each written as a channel is named; no
/// name twice.
pub fn parse_channels(
    field: &str,
    text: &str,
    fail: &mut impl FnMut(&str, Problem),
) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for name in text
        .split([',', '\n'])
        .map(str::trim)
        .filter(|n| !n.is_empty())
    {
        if crate::domain::secrets::SecretName::parse(name).is_err() {
            fail(
                field,
                problem!("error-channel-name", name = name.to_string()),
            );
        } else if !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
    }
    names
}

fn parse_addresses(
    field: &str,
    text: &str,
    fail: &mut impl FnMut(&str, Problem),
) -> Option<Vec<EmailAddress>> {
    match email::parse_list(text) {
        Ok(list) => Some(list),
        Err(bad) => {
            for e in bad {
                fail(field, e.problem());
            }
            None
        }
    }
}

/// What the editor (and a held job's banner) says about a parameter where it may not stand.
pub fn misplaced_problem(m: &super::placement::Misplaced) -> Problem {
    use super::placement::Place;
    let name = m.param.clone();
    let variable = super::params::env_name(&m.param);
    match m.place {
        Place::UrlOrigin => problem!("job-error-param-url-origin", name = name),
        Place::HeaderName => problem!("job-error-param-header-name", name = name),
        Place::OtherBody => problem!("job-error-param-body", name = name),
        Place::Program => problem!("job-error-param-program", name = name, variable = variable),
        Place::PartOfArgument => {
            problem!(
                "job-error-param-part-of-argument",
                name = name,
                variable = variable
            )
        }
        Place::OpenArgument => {
            problem!(
                "job-error-param-open-argument",
                name = name,
                variable = variable
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::retry::RetryInput;

    fn fields(errors: &[FieldProblem]) -> Vec<&str> {
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
        assert_eq!(spec.kind.kind(), Kind::Http);
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
            timeout_mode: TimeoutMode::P99.as_str().into(),
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
    fn on_exhausted_round_trips_through_its_two_columns() {
        for value in [
            OnExhausted::DeadLetter,
            OnExhausted::SkipToNext,
            OnExhausted::Fallback("cleanup".into()),
        ] {
            assert_eq!(
                OnExhausted::from_parts(value.action(), value.fallback_job()),
                Some(value)
            );
        }
        assert_eq!(
            OnExhausted::from_parts(ExhaustedAction::Fallback, Some("")),
            None
        );
    }
}
