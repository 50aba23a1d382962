//! The jobs file: job definitions as TOML (`bulwark jobs apply`, the demo, the system jobs).
//!
//! One `[[job]]` table per job; omitted keys take the editor's defaults. The format is
//! documented in `docs/ARCHITECTURE.md` ("Jobs as code"). Applying is all or nothing: every job
//! is parsed and validated first, every problem reported with its line, and only a file
//! without problems is written — in one transaction.

use std::collections::{BTreeMap, HashSet};

use app::domain::calendar::{Calendar, CalendarInput};
use app::domain::job::{ExhaustedAction, JobInput, JobSpec, OnExhausted};
use app::domain::pool::{Pool, PoolInput};
use app::entities::job;
use app::services::audit::Actor;
use app::services::jobs::{self, JobError};
use app::services::secrets::SecretKey;
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter, TransactionTrait,
};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct JobsFile {
    /// Work calendars the jobs may follow (`app/src/domain/calendar.rs`).
    #[serde(default)]
    calendar: Vec<toml::Spanned<CalendarInput>>,
    /// Concurrency pools the jobs may take places in (`app/src/domain/pool.rs`).
    #[serde(default)]
    pool: Vec<toml::Spanned<PoolInput>>,
    #[serde(default)]
    job: Vec<toml::Spanned<JobToml>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct JobToml {
    name: String,
    description: Option<String>,
    /// Required, except for a watched job expected `every` so long.
    cron: Option<String>,
    /// A watched job: expected this long after its last ping (`"1h"`), instead of a cron.
    every: Option<String>,
    /// A watched job: how far from its tick a ping may come (`"5m"`).
    grace: Option<String>,
    /// A watched job: a run shorter than this is too fast.
    min_duration: Option<String>,
    /// A watched job: a run longer than this is too slow.
    max_duration: Option<String>,
    timezone: Option<String>,
    kind: String,
    enabled: Option<bool>,
    url: Option<String>,
    method: Option<String>,
    headers: Option<BTreeMap<String, String>>,
    body: Option<String>,
    expected: Option<String>,
    /// `same-origin` (default), `any` or `none`.
    follow_redirects: Option<String>,
    command: Option<Vec<String>>,
    transient_exit_codes: Option<Vec<i32>>,
    task: Option<String>,
    params: Option<BTreeMap<String, toml::Value>>,
    overlap: Option<String>,
    misfire: Option<String>,
    on_exhausted: Option<String>,
    dependants: Option<Vec<String>>,
    /// The words teams split jobs by (`["billing", "team-a"]`).
    tags: Option<Vec<String>>,
    /// The work calendar it runs on, by name.
    calendar: Option<String>,
    /// `skip` (default) or `next_workday`.
    on_off_day: Option<String>,
    /// The labels a node must carry to run it (`{ role = "db" }`).
    run_on: Option<BTreeMap<String, String>>,
    /// The concurrency pool it takes a place in, by name.
    pool: Option<String>,
    /// `"all"`: one child run per matching live node each tick.
    run_on_count: Option<String>,
    /// A tick makes this many child runs spread over the matching nodes.
    shards: Option<u16>,
    retry: Option<RetryToml>,
    timeout: Option<TimeoutToml>,
    /// No output for this long ends a command attempt as stalled (`"5m"`).
    stall_timeout: Option<String>,
    alerts: Option<AlertsToml>,
    /// Channels the alerts go to, by name.
    alert_channels: Option<Vec<String>>,
    /// Channels escalations go to (default: the alert channels).
    escalate_channels: Option<Vec<String>>,
    /// What a run may be started with (`[[job.parameter]]`).
    parameter: Option<Vec<ParameterToml>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ParameterToml {
    name: String,
    #[serde(rename = "type")]
    kind: String,
    default: Option<toml::Value>,
    required: Option<bool>,
    choices: Option<Vec<String>>,
    pattern: Option<String>,
    max_length: Option<u32>,
    min: Option<f64>,
    max: Option<f64>,
}

impl ParameterToml {
    /// The declaration as the editor's line (`app::domain::job::params`), so one parser
    /// checks both; what that line cannot carry (a choice with a comma, ` | ` in a pattern)
    /// is refused rather than read differently.
    fn line(&self) -> Result<String, String> {
        let mut line = format!("{}: {}", self.name, self.kind);
        if let Some(default) = &self.default {
            line.push_str(&format!(" = {}", toml_text(default)));
        }
        if self.required == Some(true) {
            line.push_str(" required");
        }
        if let Some(choices) = &self.choices {
            if let Some(bad) = choices
                .iter()
                .find(|c| c.contains(',') || c.contains(" | "))
            {
                return Err(format!(
                    "parameter {}: a choice cannot hold a comma: '{bad}'",
                    self.name
                ));
            }
            line.push_str(&format!(" | choices: {}", choices.join(", ")));
        }
        if let Some(pattern) = &self.pattern {
            if pattern.contains(" | ") {
                return Err(format!(
                    "parameter {}: write the pattern's | without spaces around it",
                    self.name
                ));
            }
            line.push_str(&format!(" | pattern: {pattern}"));
        }
        let numbers = [
            ("max_length", self.max_length.map(f64::from)),
            ("min", self.min),
            ("max", self.max),
        ];
        for (option, value) in numbers {
            if let Some(value) = value {
                line.push_str(&format!(" | {option}: {value}"));
            }
        }
        Ok(line)
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RetryToml {
    first: Option<String>,
    multiplier: Option<f64>,
    max_retries: Option<i64>,
    jitter: Option<String>,
    cap: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TimeoutToml {
    #[serde(rename = "static")]
    static_: Option<String>,
    mode: Option<String>,
    window: Option<i64>,
    factor: Option<f64>,
    floor: Option<String>,
    hard_cap: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AlertsToml {
    to: Option<Vec<String>>,
    escalate_after: Option<i64>,
    escalate_to: Option<Vec<String>>,
}

fn toml_text(value: &toml::Value) -> String {
    match value {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

impl JobToml {
    /// The definition as the editor would hold it; omitted fields take the editor's defaults.
    fn into_input(mut self) -> JobInput {
        let mut input = JobInput {
            name: std::mem::take(&mut self.name),
            description: self.description.take().unwrap_or_default(),
            kind: std::mem::take(&mut self.kind),
            cron: self.cron.take().unwrap_or_default(),
            ..JobInput::default()
        };
        put(&mut input.watch_every, self.every.take());
        put(&mut input.watch_grace, self.grace.take());
        put(&mut input.watch_min_duration, self.min_duration.take());
        put(&mut input.watch_max_duration, self.max_duration.take());
        put(&mut input.timezone, self.timezone.take());
        if let Some(v) = self.enabled {
            input.enabled = v;
        }
        self.what_it_runs(&mut input);
        self.around_a_run(&mut input);
        if let Some(r) = self.retry.take() {
            put(&mut input.retry.first, r.first);
            put(
                &mut input.retry.multiplier,
                r.multiplier.map(|v| v.to_string()),
            );
            put(
                &mut input.retry.max_retries,
                r.max_retries.map(|v| v.to_string()),
            );
            put(&mut input.retry.jitter, r.jitter);
            put(&mut input.retry.cap, r.cap);
        }
        if let Some(t) = self.timeout.take() {
            put(&mut input.timeout_static, t.static_);
            put(&mut input.timeout_mode, t.mode);
            put(&mut input.timeout_window, t.window.map(|v| v.to_string()));
            put(&mut input.timeout_factor, t.factor.map(|v| v.to_string()));
            put(&mut input.timeout_floor, t.floor);
            put(&mut input.timeout_hard_cap, t.hard_cap);
        }
        put(&mut input.timeout_stall, self.stall_timeout.take());
        self.who_hears(&mut input);
        input
    }

    /// The HTTP call, the command or the built-in task.
    fn what_it_runs(&mut self, input: &mut JobInput) {
        put(&mut input.http_url, self.url.take());
        put(&mut input.http_method, self.method.take());
        put(
            &mut input.http_headers,
            self.headers.take().map(|v| {
                v.iter()
                    .map(|(k, v)| format!("{k}: {v}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            }),
        );
        put(&mut input.http_body, self.body.take());
        put(&mut input.http_expected, self.expected.take());
        put(
            &mut input.http_follow_redirects,
            self.follow_redirects.take(),
        );
        if let Some(mut command) = self.command.take()
            && !command.is_empty()
        {
            input.command_program = command.remove(0);
            input.command_args = command.join("\n");
        }
        put(
            &mut input.command_transient_codes,
            self.transient_exit_codes
                .take()
                .map(|v| v.iter().map(i32::to_string).collect::<Vec<_>>().join(", ")),
        );
        put(&mut input.builtin_task, self.task.take());
        put(
            &mut input.builtin_params,
            self.params.take().map(|v| {
                v.iter()
                    .map(|(k, v)| format!("{k}={}", toml_text(v)))
                    .collect::<Vec<_>>()
                    .join("\n")
            }),
        );
        if let Some(parameters) = &self.parameter {
            // A line that cannot be written is left for the file's check to name
            // (`parse_file`).
            input.parameters = parameters
                .iter()
                .filter_map(|p| p.line().ok())
                .collect::<Vec<_>>()
                .join("\n");
        }
    }

    /// Overlap, missed ticks, what follows, what comes after and the tags.
    fn around_a_run(&mut self, input: &mut JobInput) {
        put(&mut input.overlap, self.overlap.take());
        put(&mut input.misfire, self.misfire.take());
        put(
            &mut input.dependants,
            self.dependants.take().map(|v| v.join(", ")),
        );
        put(&mut input.tags, self.tags.take().map(|v| v.join(", ")));
        put(&mut input.calendar, self.calendar.take());
        put(&mut input.on_off_day, self.on_off_day.take());
        put(&mut input.pool, self.pool.take());
        put(&mut input.run_on_count, self.run_on_count.take());
        put(&mut input.shards, self.shards.take().map(|n| n.to_string()));
        put(
            &mut input.run_on,
            self.run_on.take().map(|labels| {
                let pairs: Vec<String> = labels.iter().map(|(n, v)| format!("{n}={v}")).collect();
                pairs.join(", ")
            }),
        );
        if let Some(v) = self.on_exhausted.take() {
            // The file writes a fallback as `fallback:<job>`; the form has two fields.
            match v.strip_prefix("fallback:") {
                Some(job) => {
                    input.on_exhausted = ExhaustedAction::Fallback.as_str().into();
                    input.fallback_job = job.to_string();
                }
                None => input.on_exhausted = v,
            }
        }
    }

    /// Who hears of a failure, and when it escalates.
    fn who_hears(&mut self, input: &mut JobInput) {
        let joined = |v: Vec<String>| v.join(", ");
        put(
            &mut input.alert_channels,
            self.alert_channels.take().map(joined),
        );
        put(
            &mut input.escalate_channels,
            self.escalate_channels.take().map(joined),
        );
        if let Some(a) = self.alerts.take() {
            put(&mut input.alert_to, a.to.map(joined));
            put(
                &mut input.escalate_after,
                a.escalate_after.map(|v| v.to_string()),
            );
            put(&mut input.escalate_to, a.escalate_to.map(joined));
        }
    }
}

/// A field the file gives replaces the editor's default.
fn put(slot: &mut String, value: Option<String>) {
    if let Some(value) = value {
        *slot = value;
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// What a jobs file defines.
#[derive(Debug, Default, Clone)]
pub struct Document {
    pub calendars: Vec<Calendar>,
    pub pools: Vec<Pool>,
    pub jobs: Vec<JobSpec>,
}

/// Parses and validates a jobs file's jobs: the specs, or every problem with its line (for
/// files of jobs alone: Bulwark's own, the demo's).
pub fn parse_file(text: &str) -> Result<Vec<JobSpec>, Vec<String>> {
    parse_document(text).map(|doc| doc.jobs)
}

/// Parses and validates a jobs file: its calendars and jobs, or every problem with its line.
pub fn parse_document(text: &str) -> Result<Document, Vec<String>> {
    let file: JobsFile = toml::from_str(text).map_err(|e| {
        let line = e
            .span()
            .map(|s| format!("line {}: ", line_of(text, s.start)))
            .unwrap_or_default();
        vec![format!("{line}{}", e.message())]
    })?;
    let mut problems = Vec::new();
    let calendars = parse_tables(text, file.calendar, &mut problems);
    let pools = parse_tables(text, file.pool, &mut problems);
    let mut specs = Vec::new();
    let mut names = HashSet::new();
    for (index, spanned) in file.job.into_iter().enumerate() {
        let line = line_of(text, spanned.span().start);
        let job = spanned.into_inner();
        let label = format!("job {} '{}' (line {line})", index + 1, job.name);
        if !names.insert(job.name.clone()) {
            problems.push(format!(
                "{label}: name: '{}' appears more than once in this file",
                job.name
            ));
        }
        for parameter in job.parameter.iter().flatten() {
            if let Err(problem) = parameter.line() {
                problems.push(format!("{label}: parameters: {problem}"));
            }
        }
        match JobSpec::parse(&job.into_input()) {
            Ok(spec) => specs.push(spec),
            Err(errors) => problems.extend(
                errors
                    .into_iter()
                    .map(|e| format!("{label}: {}: {}", e.field, e.problem)),
            ),
        }
    }
    if specs.is_empty() && calendars.is_empty() && pools.is_empty() && problems.is_empty() {
        problems.push("the file defines no [[job]]".into());
    }
    if problems.is_empty() {
        Ok(Document {
            calendars,
            pools,
            jobs: specs,
        })
    } else {
        Err(problems)
    }
}

/// A `[[calendar]]` or `[[pool]]` table of a jobs file: its name, and the value it checks to.
trait Table: Sized {
    type Checked;
    /// The table's name in the file, for problems.
    const KIND: &'static str;
    fn name(&self) -> &str;
    /// The checked value, or each problem in English.
    fn check(self) -> Result<Self::Checked, Vec<String>>;
}

impl Table for CalendarInput {
    type Checked = Calendar;
    const KIND: &'static str = "calendar";
    fn name(&self) -> &str {
        &self.name
    }
    fn check(self) -> Result<Calendar, Vec<String>> {
        self.parse()
            .map_err(|list| list.into_iter().map(|p| p.to_string()).collect())
    }
}

impl Table for PoolInput {
    type Checked = Pool;
    const KIND: &'static str = "pool";
    fn name(&self) -> &str {
        &self.name
    }
    fn check(self) -> Result<Pool, Vec<String>> {
        self.parse().map_err(|list| {
            list.into_iter()
                .map(|(field, problem)| format!("{field}: {}", app::i18n::current().say(&problem)))
                .collect()
        })
    }
}

/// The file's tables of one kind, each checked; problems name the table, its name and line.
fn parse_tables<T: Table>(
    text: &str,
    entries: Vec<toml::Spanned<T>>,
    problems: &mut Vec<String>,
) -> Vec<T::Checked> {
    let mut names = HashSet::new();
    let mut checked = Vec::new();
    for spanned in entries {
        let line = line_of(text, spanned.span().start);
        let input = spanned.into_inner();
        let label = format!("{} '{}' (line {line})", T::KIND, input.name());
        if !names.insert(input.name().trim().to_string()) {
            problems.push(format!(
                "{label}: name: it appears more than once in this file"
            ));
            continue;
        }
        match input.check() {
            Ok(value) => checked.push(value),
            Err(list) => problems.extend(list.into_iter().map(|p| format!("{label}: {p}"))),
        }
    }
    checked
}

/// What applying a set of jobs did (or, for a dry run, would do): the jobs' names.
#[derive(Debug, Default, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
pub struct Applied {
    pub created: Vec<String>,
    pub updated: Vec<String>,
    pub unchanged: Vec<String>,
    /// Calendars created or changed.
    pub calendars: Vec<String>,
    /// Pools created or resized.
    pub pools: Vec<String>,
}

/// Keeps the file's calendars in its transaction, before its jobs (which may follow them).
async fn store_calendars(
    txn: &sea_orm::DatabaseTransaction,
    calendars: &[Calendar],
    now: chrono::DateTime<chrono::Utc>,
    applied: &mut Applied,
    problems: &mut Vec<String>,
) {
    for calendar in calendars {
        match app::services::calendars::store(txn, calendar, now).await {
            Ok(true) => applied.calendars.push(calendar.name.clone()),
            Ok(false) => {}
            Err(e) => problems.push(format!(
                "calendar '{}': {}",
                calendar.name,
                calendar_words(e)
            )),
        }
    }
}

/// A calendar's refusal in English, as the file's other problems are.
fn calendar_words(e: app::services::calendars::CalendarServiceError) -> String {
    use app::services::calendars::CalendarServiceError;
    match e {
        CalendarServiceError::Invalid(problems) => problems
            .iter()
            .map(|p| app::i18n::current().say(p))
            .collect::<Vec<_>>()
            .join("; "),
        other => other.to_string(),
    }
}

/// Creates or updates every job of the file, in one transaction with the audit row that says
/// `who` applied them.
pub async fn apply_specs(
    db: &DatabaseConnection,
    specs: Vec<JobSpec>,
    who: &Actor<'_>,
    key: &SecretKey,
) -> Result<Applied, Vec<String>> {
    apply_specs_checked(db, specs, false, who, key).await
}

/// [`apply_specs`], or with `dry_run` everything checked and written the same way, then rolled
/// back: the answer says what applying would do.
pub async fn apply_specs_checked(
    db: &DatabaseConnection,
    specs: Vec<JobSpec>,
    dry_run: bool,
    who: &Actor<'_>,
    key: &SecretKey,
) -> Result<Applied, Vec<String>> {
    let doc = Document {
        jobs: specs,
        ..Document::default()
    };
    apply_checked(db, doc, dry_run, who, key).await
}

/// Keeps every calendar, then creates or updates every job of the file — each changed one
/// getting its next revision — in one transaction with the audit row; with `dry_run`, rolled
/// back.
pub async fn apply_checked(
    db: &DatabaseConnection,
    doc: Document,
    dry_run: bool,
    who: &Actor<'_>,
    key: &SecretKey,
) -> Result<Applied, Vec<String>> {
    let Document {
        calendars,
        pools,
        jobs: mut specs,
    } = doc;
    // Jobs that name no other job go first, so references exist when they are checked.
    specs.sort_by_key(|s| {
        matches!(s.on_exhausted, OnExhausted::Fallback(_)) || !s.dependants.is_empty()
    });
    let db_error = |e: sea_orm::DbErr| vec![format!("database: {e}")];
    let txn = db.begin().await.map_err(db_error)?;
    if txn.get_database_backend() == sea_orm::DatabaseBackend::Sqlite {
        // A write first, so SQLite's write lock is held before anything is read: a transaction
        // that reads and then writes fails if another writer (the engine) committed between.
        txn.execute_unprepared("UPDATE jobs SET id = id WHERE 0")
            .await
            .map_err(db_error)?;
    }
    let now = crate::clock::now();
    let mut applied = Applied::default();
    let mut problems = Vec::new();
    store_calendars(&txn, &calendars, now, &mut applied, &mut problems).await;
    for pool in &pools {
        match app::services::pools::store(&txn, pool, now).await {
            Ok(true) => applied.pools.push(pool.name.clone()),
            Ok(false) => {}
            Err(e) => problems.push(format!("pool '{}': database: {e}", pool.name)),
        }
    }
    for spec in &specs {
        let existing = job::Entity::find()
            .filter(job::Column::Name.eq(&spec.name))
            .one(&txn)
            .await
            .map_err(db_error)?;
        let result = match existing {
            Some(row) if jobs::to_spec(&row).ok().as_ref() == Some(spec) => {
                applied.unchanged.push(spec.name.clone());
                continue;
            }
            Some(row) => jobs::replace(&txn, row.id, spec, now)
                .await
                .map(|row| (row, &mut applied.updated)),
            None => jobs::insert(&txn, spec, now)
                .await
                .map(|row| (row, &mut applied.created)),
        };
        let change = app::services::revisions::Change {
            key,
            actor: who.name,
            note: None,
        };
        let result = match result {
            Ok((row, list)) => {
                list.push(spec.name.clone());
                app::services::revisions::record(&txn, &row, spec, change, now)
                    .await
                    .map(|_| ())
                    .map_err(JobError::from)
            }
            Err(e) => Err(e),
        };
        match result {
            Ok(()) => {}
            Err(JobError::Invalid(errors)) => problems.extend(
                errors
                    .into_iter()
                    .map(|e| format!("job '{}': {}: {}", spec.name, e.field, e.problem)),
            ),
            Err(e) => problems.push(format!("job '{}': {e}", spec.name)),
        }
    }
    if problems.is_empty() && !dry_run {
        let detail = serde_json::json!({
            "created": applied.created,
            "updated": applied.updated,
            "calendars": applied.calendars,
            "pools": applied.pools,
        });
        app::services::audit::record(&txn, who, "jobs.applied", "jobs", detail, now)
            .await
            .map_err(db_error)?;
        let wake = app::wake::jobs_changed_in(&txn).await;
        txn.commit().await.map_err(db_error)?;
        wake.after_commit();
        Ok(applied)
    } else if problems.is_empty() {
        txn.rollback().await.map_err(db_error)?;
        Ok(applied)
    } else {
        let _ = txn.rollback().await;
        Err(problems)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOCUMENTED_EXAMPLE: &str = r#"
[[job]]
name = "store-receipt-mail"
description = "Mail each store its receiving details"
cron = "0 30 7 * * *"            # six fields, seconds first
timezone = "Asia/Shanghai"
kind = "http"                    # http | command | builtin | watch
url = "http://127.0.0.1:8080/mail/receipts"
method = "POST"
on_exhausted = "dead_letter"
[job.retry]
first = "10s"
multiplier = 2.0
max_retries = 5
jitter = "full"
cap = "1h"
[job.timeout]
static = "3m"
[job.alerts]
to = ["oncall@example.com"]
escalate_after = 3
escalate_to = ["lead@example.com"]
"#;

    #[test]
    fn the_design_example_parses() {
        let specs = parse_file(DOCUMENTED_EXAMPLE).unwrap();
        assert_eq!(specs.len(), 1);
        let s = &specs[0];
        assert_eq!(
            (s.name.as_str(), s.timezone.name()),
            ("store-receipt-mail", "Asia/Shanghai")
        );
        assert_eq!(s.retry.max_retries(), 5);
        assert_eq!(s.retry.cap_ms(), Some(3_600_000));
        assert_eq!(s.timeout.static_ms, 180_000);
        assert_eq!(
            app::domain::email::join(&s.alerts.escalate_to),
            "lead@example.com"
        );
    }

    #[test]
    fn problems_name_their_job_and_line() {
        let text = format!(
            "{DOCUMENTED_EXAMPLE}\n[[job]]\nname = \"second\"\ncron = \"* * * * *\"\nkind = \"builtin\"\ntask = \"nope\"\n[job.retry]\nmultiplier = 9.0\n"
        );
        let problems = parse_file(&text).unwrap_err();
        assert_eq!(problems.len(), 3, "{problems:#?}");
        assert!(
            problems[0].starts_with("job 2 'second' (line 24): builtin_task:"),
            "{problems:#?}"
        );
        assert!(
            problems
                .iter()
                .any(|p| p.contains("cron: cron needs 6 fields"))
        );
        assert!(problems.iter().any(|p| {
            p.contains("retry.multiplier: multiplier must be between 1.0 and 8.0, not 9")
        }));
    }

    #[test]
    fn syntax_errors_and_unknown_keys_have_lines() {
        let problems = parse_file(
            "[[job]]\nname = \"x\"\ncron = \"0 * * * * *\"\nkind = \"http\"\nurll = \"http://x\"\n",
        )
        .unwrap_err();
        assert!(
            problems[0].starts_with("line 5: unknown field `urll`"),
            "{problems:?}"
        );
        let problems = parse_file("[[job]\n").unwrap_err();
        assert!(problems[0].starts_with("line 1:"), "{problems:?}");
    }

    #[test]
    fn tags_are_a_list_checked_like_the_editor_checks_them() {
        let job = "[[job]]\nname = \"tagged\"\ncron = \"0 * * * * *\"\nkind = \"command\"\ncommand = [\"backup.sh\"]\n";
        let specs = parse_file(&format!("{job}tags = [\"Billing\", \"team-a\"]\n")).unwrap();
        assert_eq!(specs[0].tags, ["billing", "team-a"]);
        assert!(parse_file(job).unwrap()[0].tags.is_empty());
        let problems = parse_file(&format!("{job}tags = [\"no/slash\"]\n")).unwrap_err();
        assert!(problems[0].contains("no/slash"), "{problems:?}");
    }

    #[test]
    fn run_on_is_a_table_of_labels() {
        let job = "[[job]]\nname = \"placed\"\ncron = \"0 * * * * *\"\nkind = \"command\"\ncommand = [\"backup.sh\"]\n";
        let specs =
            parse_file(&format!("{job}run_on = {{ role = \"db\", dc = \"sh\" }}\n")).unwrap();
        assert_eq!(specs[0].run_on.to_string(), "dc=sh,role=db");
        assert!(parse_file(job).unwrap()[0].run_on.is_empty());
        let problems = parse_file(&format!("{job}run_on = {{ Role = \"db\" }}\n")).unwrap_err();
        assert!(problems[0].contains("Role"), "{problems:?}");
    }

    #[test]
    fn pools_are_tables_of_the_file_and_jobs_name_them() {
        let text = "[[pool]]\nname = \"backups\"\nsize = 2\n\n[[job]]\nname = \"db-dump\"\ncron = \"0 * * * * *\"\nkind = \"command\"\ncommand = [\"dump.sh\"]\npool = \"backups\"\n";
        let doc = parse_document(text).unwrap();
        assert_eq!(
            doc.pools,
            [Pool {
                name: "backups".into(),
                size: 2
            }]
        );
        assert_eq!(doc.jobs[0].pool.as_deref(), Some("backups"));
        let problems = parse_document(&text.replace("size = 2", "size = 0")).unwrap_err();
        assert!(
            problems[0].starts_with("pool 'backups' (line 1): size"),
            "{problems:?}"
        );
    }

    #[test]
    fn a_tick_is_spread_by_run_on_count_or_shards() {
        use app::domain::job::spread::Spread;
        let job = "[[job]]\nname = \"spread\"\ncron = \"0 * * * * *\"\nkind = \"command\"\ncommand = [\"part.sh\"]\n";
        let all = parse_file(&format!("{job}run_on_count = \"all\"\n")).unwrap();
        assert_eq!(all[0].spread, Spread::All);
        let shards = parse_file(&format!("{job}shards = 4\n")).unwrap();
        assert_eq!(shards[0].spread, Spread::Shards(4));
        assert_eq!(parse_file(job).unwrap()[0].spread, Spread::One);
        let both = parse_file(&format!("{job}run_on_count = \"all\"\nshards = 4\n")).unwrap_err();
        assert!(both[0].contains("shards"), "{both:?}");
        let one = parse_file(&format!("{job}shards = 1\n")).unwrap_err();
        assert!(one[0].contains("2 to 64"), "{one:?}");
    }

    #[test]
    fn a_stall_timeout_is_a_top_level_key() {
        let job = "[[job]]\nname = \"quiet\"\ncron = \"0 * * * * *\"\nkind = \"command\"\ncommand = [\"backup.sh\"]\n";
        let specs = parse_file(&format!("{job}stall_timeout = \"5m\"\n")).unwrap();
        assert_eq!(specs[0].timeout.stall_ms, Some(300_000));
        assert_eq!(parse_file(job).unwrap()[0].timeout.stall_ms, None);
        let problems = parse_file(&format!("{job}stall_timeout = \"often\"\n")).unwrap_err();
        assert!(
            problems[0].contains("line 1") && problems[0].contains("stall timeout"),
            "{problems:?}"
        );
    }

    #[test]
    fn channels_are_top_level_keys() {
        let job = "[[job]]\nname = \"loud\"\ncron = \"0 * * * * *\"\nkind = \"command\"\ncommand = [\"x\"]\n";
        let specs = parse_file(&format!(
            "{job}alert_channels = [\"ops-ding\", \"hook\"]\nescalate_channels = [\"pager\"]\n"
        ))
        .unwrap();
        assert_eq!(specs[0].alerts.channels, ["ops-ding", "hook"]);
        assert_eq!(specs[0].alerts.escalation_channels(), ["pager"]);
        let specs = parse_file(&format!("{job}alert_channels = [\"ops-ding\"]\n")).unwrap();
        assert_eq!(
            specs[0].alerts.escalation_channels(),
            ["ops-ding"],
            "escalations go to the alert channels unless told otherwise"
        );
        let problems =
            parse_file(&format!("{job}alert_channels = [\"not a name\"]\n")).unwrap_err();
        assert!(problems[0].contains("alert_channels"), "{problems:?}");
    }

    #[test]
    fn parameters_are_tables_of_the_job() {
        let job = "[[job]]\nname = \"ingest\"\ncron = \"0 * * * * *\"\nkind = \"http\"\nurl = \"https://x/ingest?upload=${param:upload_id}\"\n";
        let specs = parse_file(&format!(
            "{job}[[job.parameter]]\nname = \"upload_id\"\ntype = \"string\"\nrequired = true\n[[job.parameter]]\nname = \"limit\"\ntype = \"number\"\ndefault = 100\n"
        ))
        .unwrap();
        let p = &specs[0].parameters;
        assert_eq!((p[0].name.as_str(), p[0].required), ("upload_id", true));
        assert_eq!(p[1].default, Some(serde_json::json!(100)));
        let problems = parse_file(job).unwrap_err();
        assert!(
            problems[0].contains("no parameter upload_id is declared"),
            "{problems:?}"
        );
    }
}
