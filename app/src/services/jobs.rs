//! Job definitions in the database: the mapping between [`JobSpec`] and the `jobs` row, and
//! the commands the editor and `jobs apply` use.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait,
    IntoActiveModel, QueryFilter, QueryOrder, QuerySelect, Set, SqlErr,
};

use crate::domain::calendar::{Calendar, days_from_calendar};
use crate::domain::cron::{CronExpr, parse_timezone};
use crate::domain::email::EmailAddress;
use crate::domain::job::{Alerts, FieldProblem, JobKind, JobSpec, OnExhausted, TimeoutPolicy};
use crate::domain::retry::{Multiplier, RetryPolicy};
use crate::domain::run::RunStatus;
use crate::entities::{job, job_alert, job_run};
use crate::services::audit::{self, Actor};
use crate::views::jobs::JobRow;

#[derive(Debug, thiserror::Error)]
pub enum JobError {
    #[error("invalid job definition")]
    Invalid(Vec<FieldProblem>),
    #[error("job {0} was not found")]
    NotFound(i64),
    #[error("job {id} holds a value the code cannot read ({what}); fix the row or re-save the job")]
    Corrupt { id: i64, what: String },
    #[error("could not encode the job definition: {0}")]
    Encode(serde_json::Error),
    #[error("could not record the revision: {0}")]
    Revision(#[from] super::revisions::RevisionError),
    #[error(transparent)]
    Db(#[from] DbErr),
}

pub fn to_spec(row: &job::Model) -> Result<JobSpec, JobError> {
    let corrupt = |what: &str| JobError::Corrupt {
        id: row.id,
        what: what.to_string(),
    };
    let kind: JobKind = serde_json::from_str(&row.config).map_err(|_| corrupt("config"))?;
    let multiplier = Multiplier::from_tenths(i64::from(row.retry_multiplier_x10))
        .map_err(|_| corrupt("retry multiplier"))?;
    let retry = RetryPolicy::new(
        u64::try_from(row.retry_first_ms).map_err(|_| corrupt("first interval"))?,
        multiplier,
        u8::try_from(row.retry_max).map_err(|_| corrupt("max retries"))?,
        row.retry_jitter,
        row.retry_cap_ms
            .map(|c| u64::try_from(c).map_err(|_| corrupt("retry cap")))
            .transpose()?,
    )
    .map_err(|e| corrupt(&e.to_string()))?;
    let addresses = |text: &str| -> Result<Vec<EmailAddress>, JobError> {
        serde_json::from_str(text).map_err(|_| corrupt("alert addresses"))
    };
    Ok(JobSpec {
        name: row.name.clone(),
        description: row.description.clone(),
        kind: kind.clone(),
        cron: match row.cron.as_str() {
            // A watched job expected `every` so long has none.
            "" if matches!(kind, JobKind::Watch(_)) => None,
            text => Some(CronExpr::parse(text).map_err(|_| corrupt("cron"))?),
        },
        timezone: parse_timezone(&row.timezone).map_err(|_| corrupt("timezone"))?,
        enabled: row.enabled,
        retry,
        timeout: TimeoutPolicy {
            static_ms: row.timeout_static_ms.max(0) as u64,
            mode: row.timeout_mode,
            window: row.timeout_window.max(0) as u32,
            factor_x10: row.timeout_factor_x10.max(0) as u32,
            floor_ms: row.timeout_floor_ms.max(0) as u64,
            hard_cap_ms: row.timeout_hard_cap_ms.max(0) as u64,
            stall_ms: row
                .stall_timeout_ms
                .map(|ms| u64::try_from(ms).map_err(|_| corrupt("stall timeout")))
                .transpose()?,
        },
        overlap: row.overlap,
        misfire: row.misfire,
        on_exhausted: OnExhausted::from_parts(row.on_exhausted, row.fallback_job.as_deref())
            .ok_or_else(|| corrupt("fallback job"))?,
        alerts: Alerts {
            to: addresses(&row.alert_to)?,
            escalate_after: row.escalate_after.max(0) as u32,
            escalate_to: addresses(&row.escalate_to)?,
            channels: serde_json::from_str(&row.alert_channels)
                .map_err(|_| corrupt("alert channels"))?,
            escalate_channels: serde_json::from_str(&row.escalate_channels)
                .map_err(|_| corrupt("escalation channels"))?,
        },
        dependants: serde_json::from_str(&row.dependants).map_err(|_| corrupt("dependants"))?,
        parameters: serde_json::from_str(&row.parameters).map_err(|_| corrupt("parameters"))?,
        tags: serde_json::from_str(&row.tags).map_err(|_| corrupt("tags"))?,
        calendar: row.calendar.clone(),
        on_off_day: row.on_off_day,
        run_on: crate::domain::labels::Labels::parse(&row.run_on).map_err(|_| corrupt("run_on"))?,
        pool: Some(row.pool.clone()).filter(|p| !p.is_empty()),
        spread: crate::domain::job::spread::Spread::from_columns(&row.run_on_count, row.shards),
    })
}

fn fill(
    model: &mut job::ActiveModel,
    spec: &JobSpec,
    calendar: Option<&Calendar>,
    now: DateTime<Utc>,
) -> Result<(), JobError> {
    let json = |v: &[EmailAddress]| serde_json::to_string(v).map_err(JobError::Encode);
    model.name = Set(spec.name.clone());
    model.description = Set(spec.description.clone());
    model.kind = Set(spec.kind.kind());
    model.config = Set(serde_json::to_string(&spec.kind).map_err(JobError::Encode)?);
    model.cron = Set(spec
        .cron
        .as_ref()
        .map_or(String::new(), |c| c.as_str().to_string()));
    model.timezone = Set(spec.timezone.name().to_string());
    model.enabled = Set(spec.enabled);
    model.retry_first_ms = Set(spec.retry.first_ms() as i64);
    model.retry_multiplier_x10 = Set(i32::from(spec.retry.multiplier().tenths()));
    model.retry_max = Set(i32::from(spec.retry.max_retries()));
    model.retry_jitter = Set(spec.retry.jitter());
    model.retry_cap_ms = Set(spec.retry.cap_ms().map(|c| c as i64));
    model.timeout_mode = Set(spec.timeout.mode);
    model.timeout_static_ms = Set(spec.timeout.static_ms as i64);
    model.timeout_window = Set(spec.timeout.window as i32);
    model.timeout_factor_x10 = Set(spec.timeout.factor_x10 as i32);
    model.timeout_floor_ms = Set(spec.timeout.floor_ms as i64);
    model.timeout_hard_cap_ms = Set(spec.timeout.hard_cap_ms as i64);
    model.stall_timeout_ms = Set(spec.timeout.stall_ms.map(|ms| ms as i64));
    model.next_fire_at = Set(next_fire_at(spec.enabled, spec, calendar, now));
    model.calendar = Set(spec.calendar.clone());
    model.on_off_day = Set(spec.on_off_day);
    model.run_on = Set(spec.run_on.to_string());
    model.pool = Set(spec.pool.clone().unwrap_or_default());
    model.run_on_count = Set(spec.spread.run_on_count().to_string());
    model.shards = Set(i32::from(spec.spread.shards()));
    model.overlap = Set(spec.overlap);
    model.misfire = Set(spec.misfire);
    model.on_exhausted = Set(spec.on_exhausted.action());
    model.fallback_job = Set(spec.on_exhausted.fallback_job().map(str::to_string));
    model.alert_to = Set(json(&spec.alerts.to)?);
    model.escalate_after = Set(spec.alerts.escalate_after as i32);
    model.escalate_to = Set(json(&spec.alerts.escalate_to)?);
    model.alert_channels =
        Set(serde_json::to_string(&spec.alerts.channels).map_err(JobError::Encode)?);
    model.escalate_channels =
        Set(serde_json::to_string(&spec.alerts.escalate_channels).map_err(JobError::Encode)?);
    model.dependants = Set(serde_json::to_string(&spec.dependants).map_err(JobError::Encode)?);
    model.parameters = Set(serde_json::to_string(&spec.parameters).map_err(JobError::Encode)?);
    model.tags = Set(serde_json::to_string(&spec.tags).map_err(JobError::Encode)?);
    // A saved definition passed `placement`: no hold, and no confirmation carried over.
    model.params_held = Set(None);
    model.params_as_written = Set(false);
    model.updated_at = Set(now);
    Ok(())
}

/// The first tick after `now` when the job is enabled: where the trigger starts counting. A new,
/// edited or re-enabled job does not fire for the time before it was (re)defined.
pub fn next_fire_at(
    enabled: bool,
    spec: &JobSpec,
    calendar: Option<&Calendar>,
    now: DateTime<Utc>,
) -> Option<DateTime<Utc>> {
    enabled
        .then(|| spec.next_fire_after(calendar, now))
        .flatten()
}

/// The calendar the job follows, as it is now.
pub async fn calendar_of(
    db: &impl ConnectionTrait,
    spec: &JobSpec,
) -> Result<Option<Calendar>, JobError> {
    match &spec.calendar {
        Some(name) => super::calendars::named(db, name)
            .await
            .map_err(calendar_error),
        None => Ok(None),
    }
}

fn calendar_error(e: super::calendars::CalendarServiceError) -> JobError {
    match e {
        super::calendars::CalendarServiceError::Db(e) => JobError::Db(e),
        other => JobError::Corrupt {
            id: 0,
            what: other.to_string(),
        },
    }
}

/// The calendar the job follows, checked: it exists, and the job's cron may follow it.
async fn check_calendar(
    db: &impl ConnectionTrait,
    spec: &JobSpec,
    errors: &mut Vec<FieldProblem>,
) -> Result<Option<Calendar>, JobError> {
    let Some(name) = &spec.calendar else {
        return Ok(None);
    };
    let calendar = match super::calendars::named(db, name).await {
        Ok(Some(calendar)) => calendar,
        Ok(None) => {
            let problem = crate::problem!("job-error-calendar-unknown", name = name);
            errors.push(FieldProblem::new("calendar", problem));
            return Ok(None);
        }
        Err(super::calendars::CalendarServiceError::Db(e)) => return Err(e.into()),
        Err(e) => {
            let problem = crate::problem!("job-error-calendar-unknown", name = e.to_string());
            errors.push(FieldProblem::new("calendar", problem));
            return Ok(None);
        }
    };
    if let Some(Err(e)) = spec
        .cron
        .as_ref()
        .map(|cron| days_from_calendar(cron, &calendar))
    {
        errors.push(FieldProblem::new("cron", e.problem()));
    }
    Ok(Some(calendar))
}

/// Checks what needs the database: a unique name, an existing fallback job and pool, a calendar the
/// cron may follow (returned).
async fn check_references(
    db: &impl ConnectionTrait,
    spec: &JobSpec,
    own_id: Option<i64>,
) -> Result<Option<Calendar>, JobError> {
    let mut errors = Vec::new();
    let calendar = check_calendar(db, spec, &mut errors).await?;
    if let Some(pool) = &spec.pool
        && crate::entities::pool::Entity::find_by_id(pool.clone())
            .one(db)
            .await?
            .is_none()
    {
        errors.push(FieldProblem::new(
            "pool",
            crate::problem!("job-error-pool-unknown", name = pool),
        ));
    }
    if let Some(other) = job::Entity::find()
        .filter(job::Column::Name.eq(&spec.name))
        .one(db)
        .await?
        && Some(other.id) != own_id
    {
        errors.push(FieldProblem::new(
            "name",
            crate::problem!("job-error-name-taken", name = &spec.name),
        ));
    }
    if let OnExhausted::Fallback(name) = &spec.on_exhausted
        && job::Entity::find()
            .filter(job::Column::Name.eq(name))
            .one(db)
            .await?
            .is_none()
    {
        errors.push(FieldProblem::new(
            "fallback_job",
            crate::problem!("job-error-no-such-job", name = name),
        ));
    }
    for dependant in &spec.dependants {
        if job::Entity::find()
            .filter(job::Column::Name.eq(dependant))
            .one(db)
            .await?
            .is_none()
        {
            errors.push(FieldProblem::new(
                "dependants",
                crate::problem!("job-error-no-such-job", name = dependant),
            ));
        }
    }
    for (field, names) in [
        ("alert_channels", &spec.alerts.channels),
        ("escalate_channels", &spec.alerts.escalate_channels),
    ] {
        for name in names {
            if crate::entities::channel::Entity::find()
                .filter(crate::entities::channel::Column::Name.eq(name))
                .one(db)
                .await?
                .is_none()
            {
                errors.push(FieldProblem::new(
                    field,
                    crate::problem!("job-error-channel-missing", name = name),
                ));
            }
        }
    }
    if errors.is_empty() {
        Ok(calendar)
    } else {
        Err(JobError::Invalid(errors))
    }
}

fn unique_name_violation(e: DbErr, name: &str) -> JobError {
    match e.sql_err() {
        Some(SqlErr::UniqueConstraintViolation(_)) => JobError::Invalid(vec![FieldProblem::new(
            "name",
            crate::problem!("job-error-name-taken", name = name),
        )]),
        _ => JobError::Db(e),
    }
}

/// Creates (`id` None) or updates a job, and records who did in the audit log and, when the
/// definition changed, as the job's next revision, in one transaction: the change, its audit
/// row and its revision are stored together or not at all.
pub async fn save(
    db: &DatabaseConnection,
    id: Option<i64>,
    spec: &JobSpec,
    who: &Actor<'_>,
    key: &super::secrets::SecretKey,
    now: DateTime<Utc>,
) -> Result<job::Model, JobError> {
    save_noted(db, id, spec, who, (key, None), now).await
}

/// [`save`], the revision it makes carrying a note.
pub async fn save_noted(
    db: &DatabaseConnection,
    id: Option<i64>,
    spec: &JobSpec,
    who: &Actor<'_>,
    (key, note): (&super::secrets::SecretKey, Option<&str>),
    now: DateTime<Utc>,
) -> Result<job::Model, JobError> {
    let txn = super::sql::begin_write(db).await?;
    let (mut saved, action) = match id {
        None => (insert(&txn, spec, now).await?, "job.created"),
        Some(id) => (replace(&txn, id, spec, now).await?, "job.updated"),
    };
    let change = super::revisions::Change {
        key,
        actor: who.name,
        note,
    };
    if let Some(revision) = super::revisions::record(&txn, &saved, spec, change, now).await? {
        saved.revision = revision;
    }
    audit::record(&txn, who, action, &spec.name, definition(spec)?, now).await?;
    let wake = crate::wake::jobs_changed_in(&txn).await;
    txn.commit().await?;
    wake.after_commit();
    Ok(saved)
}

/// Gives every job without a revision its first, as it stands: jobs that existed before
/// revisions did (at the first start after the upgrade) and Bulwark's own. Returns how many.
/// Instances starting together may race for a job: each job's in a transaction of its own,
/// and the one that finds it taken (the unique number) leaves it to the other.
pub async fn record_first_revisions(
    db: &sea_orm::DatabaseConnection,
    key: &super::secrets::SecretKey,
    now: DateTime<Utc>,
) -> Result<usize, super::revisions::RevisionError> {
    use sea_orm::TransactionTrait;
    let rows = job::Entity::find()
        .filter(job::Column::Revision.eq(0))
        .all(db)
        .await?;
    let change = super::revisions::Change {
        key,
        actor: "bulwark",
        note: None,
    };
    let mut made = 0;
    for row in &rows {
        let Ok(spec) = to_spec(row) else {
            // A row that no longer parses stays without one; its next save makes it.
            continue;
        };
        let txn = db.begin().await?;
        match super::revisions::record(&txn, row, &spec, change, now).await {
            Ok(Some(_)) => {
                txn.commit().await?;
                made += 1;
            }
            Ok(None) => txn.commit().await?,
            Err(super::revisions::RevisionError::Db(e))
                if matches!(
                    e.sql_err(),
                    Some(sea_orm::SqlErr::UniqueConstraintViolation(_))
                ) =>
            {
                txn.rollback().await?;
            }
            Err(e) => return Err(e),
        }
    }
    Ok(made)
}

/// Makes revision `revision`'s definition — credentials included — the job's again, as its
/// next revision. A definition that no longer holds (it names a channel since removed) is
/// refused with its fields, as an edit would be.
pub async fn restore(
    db: &DatabaseConnection,
    job: &job::Model,
    revision: i32,
    who: &Actor<'_>,
    (key, note): (&super::secrets::SecretKey, Option<&str>),
    now: DateTime<Utc>,
) -> Result<job::Model, JobError> {
    let (input, _) = super::revisions::get(db, key, job, revision).await?;
    let spec = JobSpec::parse(&input).map_err(JobError::Invalid)?;
    save_noted(db, Some(job.id), &spec, who, (key, note), now).await
}

/// A definition as the audit log keeps it: the editor's fields, credentials hidden.
fn definition(spec: &JobSpec) -> Result<serde_json::Value, JobError> {
    serde_json::to_value(spec.to_input().redacted()).map_err(JobError::Encode)
}

/// Creates a job nobody is recorded for (Bulwark's own jobs, a benchmark's): what an
/// administrator creates goes through [`save`].
pub async fn create(
    db: &impl ConnectionTrait,
    spec: &JobSpec,
    now: DateTime<Utc>,
) -> Result<job::Model, JobError> {
    let created = insert(db, spec, now).await?;
    crate::wake::jobs_changed(db).await;
    Ok(created)
}

/// Inserts a job's row; the caller wakes the triggers once it is committed.
pub async fn insert(
    db: &impl ConnectionTrait,
    spec: &JobSpec,
    now: DateTime<Utc>,
) -> Result<job::Model, JobError> {
    let calendar = check_references(db, spec, None).await?;
    let mut model = job::ActiveModel {
        created_at: Set(now),
        ..Default::default()
    };
    fill(&mut model, spec, calendar.as_ref(), now)?;
    model
        .insert(db)
        .await
        .map_err(|e| unique_name_violation(e, &spec.name))
}

/// Replaces a job's definition; the caller wakes the triggers once it is committed.
pub async fn replace(
    db: &impl ConnectionTrait,
    id: i64,
    spec: &JobSpec,
    now: DateTime<Utc>,
) -> Result<job::Model, JobError> {
    let row = job::Entity::find_by_id(id)
        .one(db)
        .await?
        .ok_or(JobError::NotFound(id))?;
    let calendar = check_references(db, spec, Some(id)).await?;
    // A tick that had come but was not yet recorded when the job was saved is recorded still
    // (the trigger counts from it, by the schedule as saved): an edit never drops a due tick.
    let due = row
        .next_fire_at
        .filter(|at| row.enabled && *at <= now && spec.enabled);
    // The edit lifts a hold (`super::held`), and resumes the job if the hold paused it.
    let resume = crate::domain::job::placement::Hold::from_column(row.params_held.as_deref())
        .is_some_and(|hold| hold.paused_it);
    let mut model = row.into_active_model();
    fill(&mut model, spec, calendar.as_ref(), now)?;
    if due.is_some() {
        model.next_fire_at = Set(due);
    }
    if resume {
        model.paused = Set(false);
    }
    model
        .update(db)
        .await
        .map_err(|e| unique_name_violation(e, &spec.name))
}

pub async fn get(db: &impl ConnectionTrait, id: i64) -> Result<job::Model, JobError> {
    job::Entity::find_by_id(id)
        .one(db)
        .await?
        .ok_or(JobError::NotFound(id))
}

/// Lets a job's schedule fire again or stops it, and records who did.
pub async fn set_enabled(
    db: &DatabaseConnection,
    id: i64,
    enabled: bool,
    who: &Actor<'_>,
    now: DateTime<Utc>,
) -> Result<job::Model, JobError> {
    let txn = super::sql::begin_write(db).await?;
    let row = get(&txn, id).await?;
    let spec = to_spec(&row)?;
    let calendar = calendar_of(&txn, &spec).await?;
    let mut model = row.into_active_model();
    model.enabled = Set(enabled);
    model.next_fire_at = Set(next_fire_at(enabled, &spec, calendar.as_ref(), now));
    model.updated_at = Set(now);
    let saved = model.update(&txn).await?;
    let action = if enabled {
        "job.enabled"
    } else {
        "job.disabled"
    };
    audit::record(&txn, who, action, &saved.name, serde_json::json!({}), now).await?;
    let wake = crate::wake::jobs_changed_in(&txn).await;
    txn.commit().await?;
    wake.after_commit();
    Ok(saved)
}

/// Deletes a job with its runs and their attempts, in one transaction with its audit row,
/// which keeps the definition (credentials hidden) so a deletion can be redone by hand.
/// Returns how many runs went with it.
pub async fn delete(
    db: &DatabaseConnection,
    id: i64,
    who: &Actor<'_>,
    now: DateTime<Utc>,
) -> Result<u64, JobError> {
    let txn = super::sql::begin_write(db).await?;
    let row = get(&txn, id).await?;
    let spec = to_spec(&row)?;
    let run_ids: Vec<i64> = job_run::Entity::find()
        .select_only()
        .column(job_run::Column::Id)
        .filter(job_run::Column::JobId.eq(id))
        .into_tuple()
        .all(&txn)
        .await?;
    for chunk in run_ids.chunks(500) {
        super::run_logs::delete_for_runs(&txn, chunk).await?;
        crate::entities::job_attempt::Entity::delete_many()
            .filter(crate::entities::job_attempt::Column::RunId.is_in(chunk.to_vec()))
            .exec(&txn)
            .await?;
    }
    job_run::Entity::delete_many()
        .filter(job_run::Column::JobId.eq(id))
        .exec(&txn)
        .await?;
    job::Entity::delete_by_id(id).exec(&txn).await?;
    let runs = run_ids.len() as u64;
    let detail =
        serde_json::json!({ "definition": spec.to_input().redacted(), "runs_deleted": runs });
    audit::record(&txn, who, "job.deleted", &spec.name, detail, now).await?;
    txn.commit().await?;
    Ok(runs)
}

/// Every job's row, by name.
pub async fn list_models(db: &impl ConnectionTrait) -> Result<Vec<job::Model>, DbErr> {
    job::Entity::find()
        .order_by_asc(job::Column::Name)
        .all(db)
        .await
}

/// Every job, by name, with what the Jobs page shows of its runs: the newest ones' statuses,
/// its success rate over 7 days, the P95 of its recent successful attempts, and whether it is
/// failing now. Five queries whatever the number of jobs; each job's newest runs are read from
/// the (job_id, id) index.
pub async fn list(db: &impl ConnectionTrait, now: DateTime<Utc>) -> Result<Vec<JobRow>, DbErr> {
    use crate::views::jobs::STRIP;

    let jobs = job::Entity::find()
        .order_by_asc(job::Column::Name)
        .all(db)
        .await?;
    let mut recent = newest_runs(db).await?;
    let mut durations = newest_durations(db).await?;
    let ended = week_ended(db, now).await?;
    let counts = run_counts(db).await?;
    let failing = failing_jobs(db).await?;
    Ok(jobs
        .into_iter()
        .map(|row| {
            let runs = recent.remove(&row.id).unwrap_or_default();
            let latest = runs.last().copied();
            let strip = runs[runs.len().saturating_sub(STRIP)..]
                .iter()
                .map(|(_, status, _)| *status)
                .collect();
            let (week_succeeded, week_ended) = ended.get(&row.id).copied().unwrap_or_default();
            let cron = schedule_text(&row);
            JobRow {
                last_status: latest.map(|(_, status, _)| status),
                last_at: latest.map(|(_, _, at)| at),
                strip,
                week_succeeded,
                week_ended,
                p95_ms: durations
                    .remove(&row.id)
                    .map(|ms| crate::domain::timeout::nearest_rank(&ms, 0.95)),
                runs: counts.get(&row.id).copied().unwrap_or(0).max(0) as u64,
                takes_parameters: row.parameters != "[]",
                failing: failing.contains(&row.id),
                paused: row.paused,
                tags: crate::domain::job::tags::from_column(&row.tags),
                next_fire_at: row.next_fire_at,
                id: row.id,
                name: row.name,
                description: row.description,
                kind: row.kind,
                cron,
                timezone: row.timezone,
                enabled: row.enabled,
            }
        })
        .collect())
}

/// The job's schedule as lists show it: its cron, or for a job watched `every` so long,
/// `every 1h`.
fn schedule_text(row: &job::Model) -> String {
    if row.cron.is_empty() {
        to_spec(row).map(|s| s.schedule_text()).unwrap_or_default()
    } else {
        row.cron.clone()
    }
}

/// Joins each job (`j`) to its newest `DURATION_RUNS` runs (`r`): from the id of its
/// `DURATION_RUNS`-th newest.
fn newest_runs_join() -> String {
    format!(
        "JOIN job_runs r ON r.job_id = j.id AND r.id >= COALESCE((SELECT x.id FROM job_runs x \
           WHERE x.job_id = j.id ORDER BY x.id DESC LIMIT 1 OFFSET {}), 0)",
        crate::views::jobs::DURATION_RUNS - 1
    )
}

/// Each job's newest runs, oldest first: id, status, and when it ended (or was created).
async fn newest_runs(
    db: &impl ConnectionTrait,
) -> Result<HashMap<i64, Vec<(i64, RunStatus, DateTime<Utc>)>>, DbErr> {
    let sql = format!(
        "SELECT r.id, r.job_id, r.status, r.created_at, r.finished_at FROM jobs j {} \
         ORDER BY r.job_id, r.id",
        newest_runs_join()
    );
    let statement = sea_orm::Statement::from_string(db.get_database_backend(), sql);
    let mut recent: HashMap<i64, Vec<(i64, RunStatus, DateTime<Utc>)>> = HashMap::new();
    for row in db.query_all_raw(statement).await? {
        let status: String = row.try_get("", "status")?;
        let Ok(status) = status.parse::<RunStatus>() else {
            continue;
        };
        let created: DateTime<Utc> = row.try_get("", "created_at")?;
        let finished: Option<DateTime<Utc>> = row.try_get("", "finished_at")?;
        recent.entry(row.try_get("", "job_id")?).or_default().push((
            row.try_get("", "id")?,
            status,
            finished.unwrap_or(created),
        ));
    }
    Ok(recent)
}

/// The durations of the successful attempts of each job's newest runs.
async fn newest_durations(db: &impl ConnectionTrait) -> Result<HashMap<i64, Vec<u64>>, DbErr> {
    let mut b = crate::services::sql::Binder::new(db.get_database_backend());
    let sql = format!(
        "SELECT r.job_id, a.duration_ms FROM jobs j {} \
         JOIN job_attempts a ON a.run_id = r.id \
         WHERE a.outcome = {} AND a.duration_ms IS NOT NULL",
        newest_runs_join(),
        b.bind(crate::domain::run::Outcome::Succeeded.as_str()),
    );
    let mut durations: HashMap<i64, Vec<u64>> = HashMap::new();
    for row in db.query_all_raw(b.statement(sql)).await? {
        let ms: i64 = row.try_get("", "duration_ms")?;
        durations
            .entry(row.try_get("", "job_id")?)
            .or_default()
            .push(ms.max(0) as u64);
    }
    Ok(durations)
}

/// Each job's runs that ended in the 7 days before `now`: (succeeded, ended).
async fn week_ended(
    db: &impl ConnectionTrait,
    now: DateTime<Utc>,
) -> Result<HashMap<i64, (u64, u64)>, DbErr> {
    let week: Vec<(i64, RunStatus, i64)> = job_run::Entity::find()
        .select_only()
        .column(job_run::Column::JobId)
        .column(job_run::Column::Status)
        .column_as(job_run::Column::Id.count(), "n")
        .filter(job_run::Column::CreatedAt.gte(now - chrono::Duration::days(7)))
        .filter(job_run::Column::Status.is_in([RunStatus::Succeeded, RunStatus::Dead]))
        .group_by(job_run::Column::JobId)
        .group_by(job_run::Column::Status)
        .into_tuple()
        .all(db)
        .await?;
    let mut ended: HashMap<i64, (u64, u64)> = HashMap::new();
    for (job_id, status, n) in week {
        let entry = ended.entry(job_id).or_default();
        entry.1 += n.max(0) as u64;
        if status == RunStatus::Succeeded {
            entry.0 += n.max(0) as u64;
        }
    }
    Ok(ended)
}

/// Each job's runs, ever.
async fn run_counts(db: &impl ConnectionTrait) -> Result<HashMap<i64, i64>, DbErr> {
    Ok(job_run::Entity::find()
        .select_only()
        .column(job_run::Column::JobId)
        .column_as(job_run::Column::Id.count(), "runs")
        .group_by(job_run::Column::JobId)
        .into_tuple()
        .all(db)
        .await?
        .into_iter()
        .collect())
}

/// The jobs with an open alert episode.
async fn failing_jobs(db: &impl ConnectionTrait) -> Result<HashSet<i64>, DbErr> {
    Ok(job_alert::Entity::find()
        .select_only()
        .column(job_alert::Column::JobId)
        .filter(job_alert::Column::Open.eq(true))
        .into_tuple()
        .all(db)
        .await?
        .into_iter()
        .collect())
}

/// Applies one action to several jobs in one transaction, with an audit row for each job it
/// changed; returns their names (a job already in the asked state is left alone and not
/// named). `tag` is checked for [`BulkAction::Tag`] and [`BulkAction::Untag`].
pub async fn bulk(
    db: &DatabaseConnection,
    ids: &[i64],
    action: crate::views::jobs::BulkAction,
    tag: Option<&str>,
    who: &Actor<'_>,
    now: DateTime<Utc>,
) -> Result<Vec<String>, JobError> {
    use crate::domain::job::tags;
    use crate::views::jobs::BulkAction;
    let tag = match action {
        BulkAction::Tag | BulkAction::Untag => Some(
            tags::parse_tag(tag.unwrap_or_default())
                .map_err(|e| JobError::Invalid(vec![FieldProblem::new("tag", e)]))?,
        ),
        _ => None,
    };
    let txn = super::sql::begin_write(db).await?;
    let rows = job::Entity::find()
        .filter(job::Column::Id.is_in(ids.to_vec()))
        .all(&txn)
        .await?;
    if let Some(missing) = ids.iter().find(|id| !rows.iter().any(|r| r.id == **id)) {
        return Err(JobError::NotFound(*missing));
    }
    let calendars = match action {
        BulkAction::Enable => super::calendars::all(&txn).await.map_err(calendar_error)?,
        _ => HashMap::new(),
    };
    let mut changed = Vec::new();
    for row in rows {
        let name = row.name.clone();
        let calendar = row.calendar.as_ref().and_then(|c| calendars.get(c));
        let Some(mut model) = bulk_change(&row, action, tag.as_deref(), calendar, now)? else {
            continue;
        };
        model.updated_at = Set(now);
        model.update(&txn).await?;
        let detail = serde_json::json!({ "bulk": true, "tag": tag });
        audit::record(&txn, who, action.audit_action(), &name, detail, now).await?;
        changed.push(name);
    }
    let mut wake = crate::wake::Wake::default();
    if !changed.is_empty() {
        wake = crate::wake::jobs_changed_in(&txn)
            .await
            .and(crate::wake::runs_changed_in(&txn).await);
    }
    txn.commit().await?;
    wake.after_commit();
    Ok(changed)
}

/// `action` applied to one job's row, or `None` when the job is in the asked state already
/// (or, to Resume, held).
fn bulk_change(
    row: &job::Model,
    action: crate::views::jobs::BulkAction,
    tag: Option<&str>,
    calendar: Option<&Calendar>,
    now: DateTime<Utc>,
) -> Result<Option<job::ActiveModel>, JobError> {
    use crate::domain::job::tags;
    use crate::views::jobs::BulkAction;
    let mut model = row.clone().into_active_model();
    match action {
        BulkAction::Enable | BulkAction::Disable => {
            let enabled = action == BulkAction::Enable;
            if row.enabled == enabled {
                return Ok(None);
            }
            let spec = to_spec(row)?;
            model.enabled = Set(enabled);
            model.next_fire_at = Set(next_fire_at(enabled, &spec, calendar, now));
        }
        BulkAction::Pause | BulkAction::Resume => {
            let paused = action == BulkAction::Pause;
            // A held job is released by an edit or a confirmation, not by a resume.
            if row.paused == paused || (!paused && row.params_held.is_some()) {
                return Ok(None);
            }
            model.paused = Set(paused);
        }
        BulkAction::Tag | BulkAction::Untag => {
            let tag = tag.unwrap_or_default().to_string();
            let mut list = tags::from_column(&row.tags);
            let had = list.contains(&tag);
            if action == BulkAction::Tag && !had {
                if list.len() >= tags::MAX_TAGS {
                    let full = crate::problem!(
                        "job-error-tags-full",
                        name = row.name.clone(),
                        max = tags::MAX_TAGS
                    );
                    return Err(JobError::Invalid(vec![FieldProblem::new("tag", full)]));
                }
                list.push(tag);
                list.sort();
            } else if action == BulkAction::Untag && had {
                list.retain(|t| *t != tag);
            } else {
                return Ok(None);
            }
            model.tags = Set(serde_json::to_string(&list).map_err(JobError::Encode)?);
        }
    }
    Ok(Some(model))
}

/// The ids of the jobs with `tag` (a checked tag), as a subquery for `job_id IN (…)`. Tags are
/// stored as a JSON array of words without quotes, so `"tag"` with its quotes matches one
/// whole tag; `_`, the one LIKE wildcard a tag may hold, is escaped.
pub fn tagged(tag: &str) -> sea_orm::sea_query::SelectStatement {
    use sea_orm::sea_query::{LikeExpr, Query};
    let pattern = format!("%\"{}\"%", tag.replace('\\', "").replace('_', "\\_"));
    Query::select()
        .column(job::Column::Id)
        .from(job::Entity)
        .and_where(job::Column::Tags.like(LikeExpr::new(pattern).escape('\\')))
        .to_owned()
}
