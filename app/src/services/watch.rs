//! Watched jobs in the database: their ping tokens, the pings themselves, and the sweep that
//! ends the ticks nobody pinged. The rules are [`crate::domain::watch`].
//!
//! Every change to a watched job's runs happens with the job's row locked
//! ([`super::lanes::lock`]), so a ping and the sweep — on this instance or another sharing the
//! database — never both settle one tick: whichever comes second finds it settled. What a
//! settled run sets off (an alert episode, its escalation and recovery) is written in the
//! same transaction by [`super::alerts`], as for a run the engine settles.

use chrono::{DateTime, Utc};
use rand_core::{OsRng, RngCore};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait,
    QueryFilter, QueryOrder, QuerySelect, Set,
};
use sha2::{Digest, Sha256};

use super::alerts::{self, Settled};
use super::audit::{self, Actor};
use super::jobs::{JobError, to_spec};
use super::run_logs::{self, Owner};
use super::secrets::SecretKey;
use super::sql::begin_write;
use crate::domain::job::JobSpec;
use crate::domain::mail::FailedRun;
use crate::domain::run::{ErrorClass, Outcome, RunStatus, Trigger};
use crate::domain::run_log::Redactor;
use crate::domain::watch::{HISTORY, Limits, Pace, Ping, Watch, window_holds};
use crate::entities::{job, job_attempt, job_run};

/// Bytes of a ping's body kept, by default (`ping_body_max_kb`).
pub const DEFAULT_BODY_BYTES: usize = 100 * 1024;

/// Characters of a failing ping's body that become the run's message.
const MESSAGE_CHARS: usize = 1_000;

/// Bytes of a body kept on the attempt's row as its tail (the run log keeps all of it).
const TAIL_BYTES: usize = 4 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    #[error("job {0} is not a watched job")]
    NotWatched(String),
    #[error("no run of this job to add the log to yet: ping /start first")]
    NothingToLog,
    #[error(transparent)]
    Job(#[from] JobError),
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// What a ping token is sealed under (`super::sealed` opens it with the same).
pub(crate) fn context(job_id: i64) -> String {
    format!("ping:{job_id}")
}

fn hashed(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// The job's ping token, made (or, with `rotate`, made again) when it has none: the old one
/// stops working at once. Making one is audited; reading it again is not.
pub async fn token(
    db: &DatabaseConnection,
    key: &SecretKey,
    job: &job::Model,
    rotate: bool,
    who: &Actor<'_>,
    now: DateTime<Utc>,
) -> Result<String, WatchError> {
    if job.kind != crate::domain::job::Kind::Watch {
        return Err(WatchError::NotWatched(job.name.clone()));
    }
    if !rotate
        && let Some(token) = job
            .ping_token
            .as_deref()
            .and_then(|sealed| key.open_value(&context(job.id), sealed))
    {
        return Ok(token);
    }
    let mut bytes = [0u8; 16];
    OsRng.fill_bytes(&mut bytes);
    let token = hex::encode(bytes);
    let txn = begin_write(db).await?;
    job::ActiveModel {
        id: Set(job.id),
        ping_token_hash: Set(Some(hashed(&token))),
        ping_token: Set(Some(key.seal_value(&context(job.id), &token))),
        ..Default::default()
    }
    .update(&txn)
    .await?;
    let action = if job.ping_token.is_some() {
        "job.ping_url_rotated"
    } else {
        "job.ping_url_created"
    };
    audit::record(&txn, who, action, &job.name, serde_json::json!({}), now).await?;
    txn.commit().await?;
    Ok(token)
}

/// The job's ping token if it has one that opens with `key` (for showing it to an admin).
pub fn shown_token(key: &SecretKey, job: &job::Model) -> Option<String> {
    key.open_value(&context(job.id), job.ping_token.as_deref()?)
}

/// The watched job a token belongs to. Anything that is not 32 hex digits cannot be a token
/// and costs no query; one that is costs one indexed read whether or not it is known.
pub async fn find(db: &impl ConnectionTrait, token: &str) -> Result<Option<job::Model>, DbErr> {
    if token.len() != 32 || !token.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok(None);
    }
    job::Entity::find()
        .filter(job::Column::PingTokenHash.eq(hashed(&token.to_ascii_lowercase())))
        .one(db)
        .await
}

/// A ping as it arrived.
pub struct Incoming<'a> {
    pub ping: Ping,
    /// `?rid=`: which of several overlapping runs it is about.
    pub rid: Option<&'a str>,
    /// The request's body, cut to the configured size.
    pub body: &'a [u8],
    /// The instance that took it (the attempt's node).
    pub node: &'a str,
}

/// What a ping did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pinged {
    pub run_id: i64,
    pub status: RunStatus,
    /// No tick was expected then: the run was made for the ping (shown, not lost).
    pub unexpected: bool,
    /// The run it ended, if it ended one.
    pub ended: Option<Ended>,
}

/// A watched run a ping or the sweep ended, as `/metrics` counts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    pub job: String,
    pub status: RunStatus,
    pub outcome: Outcome,
    pub class: Option<ErrorClass>,
    /// From `/start`, when it was sent.
    pub duration_ms: Option<u64>,
}

/// Applies a ping to the job's runs (see the module's documentation); its body, secrets taken
/// out, becomes the attempt's output.
pub async fn ping(
    db: &DatabaseConnection,
    key: &SecretKey,
    job: &job::Model,
    incoming: Incoming<'_>,
    now: DateTime<Utc>,
    default_locale: crate::i18n::Locale,
) -> Result<Pinged, WatchError> {
    let spec = to_spec(job)?;
    let Some(watch) = spec.kind.watch().copied() else {
        return Err(WatchError::NotWatched(job.name.clone()));
    };
    let body = redacted(db, key, incoming.body).await;
    let txn = begin_write(db).await?;
    super::lanes::lock(&txn, &[job.id]).await?;
    let (pinged, attempt_id) = match incoming.ping.ends() {
        None if incoming.ping == Ping::Log => log_target(&txn, job, incoming.rid).await?,
        None => start(&txn, job, &spec, &watch, &incoming, now).await?,
        Some(succeeded) => {
            let end = End {
                succeeded,
                exit_code: incoming.ping.exit_code(),
                body: &body,
                node: incoming.node,
            };
            let target = running(&txn, job.id, incoming.rid).await?;
            let target = match target {
                Some(run) => Some(run),
                None => expected(&txn, job, &spec, &watch, now).await?,
            };
            finish(&txn, job, &spec, &watch, target, &end, now, default_locale).await?
        }
    };
    if let Some(every) = watch.every_ms
        && incoming.ping.ends().is_some()
        && job.enabled
    {
        anchor(&txn, job.id, now, every).await?;
    }
    let wake = crate::wake::jobs_changed_in(&txn).await;
    txn.commit().await?;
    wake.after_commit();
    let owner = Owner {
        run_id: pinged.run_id,
        attempt_id,
    };
    if let Err(e) = run_logs::append(db, owner, &body, now.timestamp_millis()).await {
        tracing::error!(job = %job.name, run = pinged.run_id, error = %e, "could not keep a ping's body in the run log");
    }
    Ok(pinged)
}

/// The body with every vault secret's value taken out (a watched job names none, but what it
/// prints may hold any); nothing is kept when the vault cannot be opened.
async fn redacted(db: &DatabaseConnection, key: &SecretKey, body: &[u8]) -> Vec<u8> {
    if body.is_empty() {
        return Vec::new();
    }
    match super::secrets::open_all(db, key).await {
        Ok(open) => {
            let pairs: Vec<(String, String)> = open.into_iter().collect();
            let mut redactor = Redactor::new(&pairs);
            let mut out = redactor.push(body);
            out.extend(redactor.finish());
            out
        }
        Err(e) => {
            tracing::error!(error = %e, "the vault does not open: a ping's body is not kept");
            Vec::new()
        }
    }
}

/// Sets a job watched `every` so long to expect its next ping that long from now.
async fn anchor(
    db: &impl ConnectionTrait,
    job_id: i64,
    now: DateTime<Utc>,
    every_ms: u64,
) -> Result<(), DbErr> {
    job::ActiveModel {
        id: Set(job_id),
        next_fire_at: Set(Some(now + chrono::Duration::milliseconds(every_ms as i64))),
        ..Default::default()
    }
    .update(db)
    .await?;
    Ok(())
}

/// The job's started run `rid` names, or without one its newest started run.
async fn running(
    db: &impl ConnectionTrait,
    job_id: i64,
    rid: Option<&str>,
) -> Result<Option<job_run::Model>, DbErr> {
    let mut query = job_run::Entity::find()
        .filter(job_run::Column::JobId.eq(job_id))
        .filter(job_run::Column::Status.eq(RunStatus::Running));
    if let Some(rid) = rid {
        query = query.filter(job_run::Column::PingRid.eq(rid));
    }
    query.order_by_desc(job_run::Column::Id).one(db).await
}

/// The tick a ping at `now` answers: the oldest awaiting tick whose window holds it (any
/// awaiting tick for a job watched `every` so long), else the coming tick when `now` is
/// within its grace (recorded here; the trigger finds it recorded). `None`: no tick was
/// expected.
async fn expected(
    db: &impl ConnectionTrait,
    job: &job::Model,
    spec: &JobSpec,
    watch: &Watch,
    now: DateTime<Utc>,
) -> Result<Option<job_run::Model>, DbErr> {
    let awaiting = job_run::Entity::find()
        .filter(job_run::Column::JobId.eq(job.id))
        .filter(job_run::Column::Status.eq(RunStatus::AwaitingPing))
        .order_by_asc(job_run::Column::CronTick)
        .all(db)
        .await?;
    let open = awaiting.into_iter().find(|run| {
        watch.every_ms.is_some()
            || run
                .cron_tick
                .is_some_and(|tick| window_holds(tick, watch.grace_ms, now))
    });
    if open.is_some() || watch.every_ms.is_some() || !job.enabled {
        return Ok(open);
    }
    let calendar = match super::jobs::calendar_of(db, spec).await {
        Ok(calendar) => calendar,
        Err(super::jobs::JobError::Db(e)) => return Err(e),
        // No tick is found: the ping makes a run of its own, shown, never lost.
        Err(e) => {
            tracing::error!(job = %job.name, error = %e, "the watched job's calendar is unreadable");
            return Ok(None);
        }
    };
    let Some(tick) = spec.next_fire_after(calendar.as_ref(), now) else {
        return Ok(None);
    };
    if !window_holds(tick, watch.grace_ms, now) {
        return Ok(None);
    }
    let due = crate::domain::ticks::Due::at(tick, spec.date_of(tick));
    let row = tick_row(job, &due, watch, now);
    job_run::Entity::insert(row)
        .on_conflict(
            sea_orm::sea_query::OnConflict::columns([
                job_run::Column::JobId,
                job_run::Column::CronTick,
            ])
            .do_nothing()
            .to_owned(),
        )
        .exec_without_returning(db)
        .await?;
    job_run::Entity::find()
        .filter(job_run::Column::JobId.eq(job.id))
        .filter(job_run::Column::CronTick.eq(tick))
        .filter(job_run::Column::Status.eq(RunStatus::AwaitingPing))
        .one(db)
        .await
}

/// A watched tick's run, awaiting its ping until tick + grace: what the trigger records and
/// what an early ping records first.
pub fn tick_row(
    job: &job::Model,
    due: &crate::domain::ticks::Due,
    watch: &Watch,
    now: DateTime<Utc>,
) -> job_run::ActiveModel {
    let tick = due.tick;
    job_run::ActiveModel {
        job_id: Set(job.id),
        trigger: Set(Trigger::Cron),
        scheduled_for: Set(due.fire),
        cron_tick: Set(Some(tick)),
        business_date: Set(Some(due.business_date)),
        status: Set(RunStatus::AwaitingPing),
        attempts: Set(0),
        idempotency_key: Set(format!("{}@{}", job.name, tick.to_rfc3339())),
        expect_by: Set(Some(
            due.fire + chrono::Duration::milliseconds(watch.grace_ms as i64),
        )),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
}

/// A run made for a ping no tick expected.
async fn unexpected(
    db: &impl ConnectionTrait,
    job: &job::Model,
    now: DateTime<Utc>,
) -> Result<job_run::Model, DbErr> {
    job_run::ActiveModel {
        job_id: Set(job.id),
        trigger: Set(Trigger::Ping),
        scheduled_for: Set(now),
        status: Set(RunStatus::AwaitingPing),
        attempts: Set(0),
        idempotency_key: Set(format!("{}@ping-{}", job.name, now.timestamp_micros())),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
    .insert(db)
    .await
}

/// `/start`: the expected tick (or a run made for the ping) becomes `running`, without a
/// lease, until its end ping or its timeout.
async fn start(
    db: &impl ConnectionTrait,
    job: &job::Model,
    spec: &JobSpec,
    watch: &Watch,
    incoming: &Incoming<'_>,
    now: DateTime<Utc>,
) -> Result<(Pinged, i64), DbErr> {
    let (run, surprise) = match expected(db, job, spec, watch, now).await? {
        Some(run) => (run, false),
        None => (unexpected(db, job, now).await?, true),
    };
    let history = super::runs::recent_success_ms(db, job.id, spec.timeout.window.max(20)).await?;
    let timeout_ms = crate::domain::timeout::effective(&spec.timeout, &history).ms;
    job_run::ActiveModel {
        id: Set(run.id),
        status: Set(RunStatus::Running),
        attempts: Set(1),
        expect_by: Set(Some(
            now + chrono::Duration::milliseconds(timeout_ms as i64),
        )),
        ping_rid: Set(incoming.rid.map(str::to_string)),
        updated_at: Set(now),
        ..Default::default()
    }
    .update(db)
    .await?;
    let attempt = new_attempt(run.id, now, timeout_ms, incoming.node)
        .insert(db)
        .await?;
    Ok((
        Pinged {
            run_id: run.id,
            status: RunStatus::Running,
            unexpected: surprise,
            ended: None,
        },
        attempt.id,
    ))
}

fn new_attempt(
    run_id: i64,
    now: DateTime<Utc>,
    timeout_ms: u64,
    node: &str,
) -> job_attempt::ActiveModel {
    job_attempt::ActiveModel {
        run_id: Set(run_id),
        number: Set(1),
        started_at: Set(now),
        timeout_ms: Set(timeout_ms as i64),
        node: Set(node.to_string()),
        slow: Set(false),
        spent_retry: Set(true),
        ..Default::default()
    }
}

/// `/log`: the started run `rid` names (or the newest), else the newest run with an attempt.
async fn log_target(
    db: &impl ConnectionTrait,
    job: &job::Model,
    rid: Option<&str>,
) -> Result<(Pinged, i64), WatchError> {
    let run = match running(db, job.id, rid).await? {
        Some(run) => run,
        None => job_run::Entity::find()
            .filter(job_run::Column::JobId.eq(job.id))
            .filter(job_run::Column::Attempts.gt(0))
            .order_by_desc(job_run::Column::Id)
            .one(db)
            .await?
            .ok_or(WatchError::NothingToLog)?,
    };
    let attempt = last_attempt(db, run.id)
        .await?
        .ok_or(WatchError::NothingToLog)?;
    Ok((
        Pinged {
            run_id: run.id,
            status: run.status,
            unexpected: false,
            ended: None,
        },
        attempt.id,
    ))
}

async fn last_attempt(
    db: &impl ConnectionTrait,
    run_id: i64,
) -> Result<Option<job_attempt::Model>, DbErr> {
    job_attempt::Entity::find()
        .filter(job_attempt::Column::RunId.eq(run_id))
        .order_by_desc(job_attempt::Column::Number)
        .one(db)
        .await
}

/// How a run ends, as its end ping says.
struct End<'a> {
    succeeded: bool,
    exit_code: Option<u8>,
    body: &'a [u8],
    node: &'a str,
}

/// What a finished run became.
struct Verdict {
    status: RunStatus,
    outcome: Outcome,
    class: Option<ErrorClass>,
    message: Option<String>,
    /// Too slow: the longest it should have taken.
    slow: Option<u64>,
}

/// Decides what an ended run is: a failure as its ping says, a success too short to be true,
/// or a success (flagged when too slow).
async fn verdict(
    db: &impl ConnectionTrait,
    job_id: i64,
    watch: &Watch,
    end: &End<'_>,
    duration_ms: Option<u64>,
) -> Result<Verdict, DbErr> {
    if !end.succeeded {
        let said = String::from_utf8_lossy(end.body).trim().to_string();
        let message = match (said.is_empty(), end.exit_code) {
            (false, _) => said.chars().take(MESSAGE_CHARS).collect(),
            (true, Some(code)) => format!("exited with code {code}"),
            (true, None) => "reported failure (/fail)".to_string(),
        };
        return Ok(failed(ErrorClass::Permanent, message));
    }
    let Some(duration_ms) = duration_ms else {
        return Ok(succeeded(None));
    };
    let history = super::runs::recent_success_ms(db, job_id, HISTORY).await?;
    let limits = Limits::learn(watch.min_duration_ms, watch.max_duration_ms, &history);
    Ok(match limits.judge(duration_ms) {
        Pace::TooFast { below_ms } => failed(
            ErrorClass::TooFast,
            format!(
                "finished in {}, sooner than {} (too fast to have done its work)",
                crate::domain::duration::format_ms(duration_ms),
                crate::domain::duration::format_ms(below_ms)
            ),
        ),
        Pace::TooSlow { above_ms } => succeeded(Some(above_ms)),
        Pace::Usual => succeeded(None),
    })
}

fn failed(class: ErrorClass, message: String) -> Verdict {
    Verdict {
        status: RunStatus::Dead,
        outcome: Outcome::Failed,
        class: Some(class),
        message: Some(message),
        slow: None,
    }
}

fn succeeded(slow: Option<u64>) -> Verdict {
    Verdict {
        status: RunStatus::Succeeded,
        outcome: Outcome::Succeeded,
        class: None,
        message: None,
        slow,
    }
}

/// An end ping: the run it ends (`target`, or one made for it) is settled with its verdict,
/// and its job's alert episode stepped.
#[allow(clippy::too_many_arguments)]
async fn finish(
    db: &impl ConnectionTrait,
    job: &job::Model,
    spec: &JobSpec,
    watch: &Watch,
    target: Option<job_run::Model>,
    end: &End<'_>,
    now: DateTime<Utc>,
    default_locale: crate::i18n::Locale,
) -> Result<(Pinged, i64), DbErr> {
    let (run, surprise) = match target {
        Some(run) => (run, false),
        None => (unexpected(db, job, now).await?, true),
    };
    let started = match run.status {
        RunStatus::Running => last_attempt(db, run.id).await?,
        _ => None,
    };
    let duration_ms = started
        .as_ref()
        .map(|a| (now - a.started_at).num_milliseconds().max(0) as u64);
    let verdict = verdict(db, job.id, watch, end, duration_ms).await?;
    let attempt_id = match started {
        Some(attempt) => attempt.id,
        None => new_attempt(run.id, now, 0, end.node).insert(db).await?.id,
    };
    let tail = tail(end.body);
    job_attempt::ActiveModel {
        id: Set(attempt_id),
        finished_at: Set(Some(now)),
        duration_ms: Set(duration_ms.map(|ms| ms as i64)),
        outcome: Set(Some(verdict.outcome)),
        error_class: Set(verdict.class),
        message: Set(verdict.message.clone()),
        output_tail: Set((!tail.is_empty()).then_some(tail)),
        slow: Set(verdict.slow.is_some()),
        ..Default::default()
    }
    .update(db)
    .await?;
    settle_run(db, &run, &verdict, now).await?;
    let told = Told {
        job,
        spec,
        run_id: run.id,
        duration_ms,
    };
    tell(db, &told, &verdict, now, default_locale).await?;
    Ok((
        Pinged {
            run_id: run.id,
            status: verdict.status,
            unexpected: surprise,
            ended: Some(Ended {
                job: job.name.clone(),
                status: verdict.status,
                outcome: verdict.outcome,
                class: verdict.class,
                duration_ms,
            }),
        },
        attempt_id,
    ))
}

/// The run a ping ended, for [`tell`].
struct Told<'a> {
    job: &'a job::Model,
    spec: &'a JobSpec,
    run_id: i64,
    duration_ms: Option<u64>,
}

/// Steps the job's alert episode for the run's `verdict`, and says so when it was too slow.
async fn tell(
    db: &impl ConnectionTrait,
    told: &Told<'_>,
    verdict: &Verdict,
    now: DateTime<Utc>,
    default_locale: crate::i18n::Locale,
) -> Result<(), DbErr> {
    let Told {
        job, spec, run_id, ..
    } = *told;
    let settled = match verdict.status {
        RunStatus::Succeeded => Settled::Succeeded { run_id },
        _ => Settled::Failed(FailedRun {
            job: job.name.clone(),
            run_id,
            status: verdict.status,
            error_class: verdict.class,
            message: verdict.message.clone(),
            attempts: 1,
            finished_at: now,
        }),
    };
    let ended = [(job.id, spec, job.name.clone(), settled)];
    alerts::record_batch(db, &ended, now, default_locale).await?;
    if let Some(limit_ms) = verdict.slow {
        let slow = alerts::TooSlow {
            run_id,
            took_ms: told.duration_ms.unwrap_or(0),
            limit_ms,
        };
        alerts::too_slow(db, job.id, spec, &slow, now, default_locale).await?;
    }
    Ok(())
}

async fn settle_run(
    db: &impl ConnectionTrait,
    run: &job_run::Model,
    verdict: &Verdict,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    let mut model = job_run::ActiveModel {
        id: Set(run.id),
        status: Set(verdict.status),
        attempts: Set(1),
        expect_by: Set(None),
        finished_at: Set(Some(now)),
        updated_at: Set(now),
        ..Default::default()
    };
    if verdict.class.is_some() {
        model.last_error_class = Set(verdict.class);
        model.last_error = Set(verdict.message.clone());
    }
    model.update(db).await?;
    Ok(())
}

/// The last [`TAIL_BYTES`] of a body, as text, cut at a character.
fn tail(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let mut from = text.len().saturating_sub(TAIL_BYTES);
    while !text.is_char_boundary(from) {
        from += 1;
    }
    text[from..].to_string()
}

/// Ends every watched run whose wait is over: a tick nobody pinged by tick + grace is dead
/// with class `missed` (one attempt, failed, never retried); a started run with no end by its
/// timeout is dead with class `timeout`. Their jobs' alert episodes step as for any dead run.
/// Returns what it ended.
pub async fn sweep(
    db: &DatabaseConnection,
    now: DateTime<Utc>,
    default_locale: crate::i18n::Locale,
) -> Result<Vec<Ended>, DbErr> {
    let due: Vec<(i64, i64)> = job_run::Entity::find()
        .select_only()
        .column(job_run::Column::Id)
        .column(job_run::Column::JobId)
        .filter(job_run::Column::ExpectBy.lte(now))
        .order_by_asc(job_run::Column::ExpectBy)
        .limit(200)
        .into_tuple()
        .all(db)
        .await?;
    if due.is_empty() {
        return Ok(Vec::new());
    }
    let txn = begin_write(db).await?;
    let job_ids: Vec<i64> = due.iter().map(|(_, job)| *job).collect();
    super::lanes::lock(&txn, &job_ids).await?;
    let ids: Vec<i64> = due.iter().map(|(id, _)| *id).collect();
    // Read again under the jobs' locks: a ping may have settled some meanwhile.
    let runs = job_run::Entity::find()
        .filter(job_run::Column::Id.is_in(ids))
        .filter(job_run::Column::ExpectBy.lte(now))
        .filter(job_run::Column::Status.is_in([RunStatus::AwaitingPing, RunStatus::Running]))
        .all(&txn)
        .await?;
    let jobs: std::collections::HashMap<i64, job::Model> = job::Entity::find()
        .filter(job::Column::Id.is_in(job_ids))
        .all(&txn)
        .await?
        .into_iter()
        .map(|j| (j.id, j))
        .collect();
    let mut ended = Vec::new();
    let mut swept = Vec::with_capacity(runs.len());
    for run in &runs {
        let Some(job) = jobs.get(&run.job_id) else {
            continue;
        };
        let Ok(spec) = to_spec(job) else { continue };
        let (failed, gave_up) = give_up(&txn, job, run, now).await?;
        ended.push((job.id, spec, failed));
        swept.push(gave_up);
    }
    let batch: Vec<alerts::Ended<'_>> = ended
        .iter()
        .map(|(id, spec, failed)| {
            (
                *id,
                spec,
                failed.job.clone(),
                Settled::Failed(failed.clone()),
            )
        })
        .collect();
    alerts::record_batch(&txn, &batch, now, default_locale).await?;
    txn.commit().await?;
    Ok(swept)
}

/// Ends one watched run whose wait is over; what it became.
async fn give_up(
    db: &impl ConnectionTrait,
    job: &job::Model,
    run: &job_run::Model,
    now: DateTime<Utc>,
) -> Result<(FailedRun, Ended), DbErr> {
    let started = run.status == RunStatus::Running;
    let (class, message) = if started {
        (
            ErrorClass::Timeout,
            "started, but no end ping came before its timeout".to_string(),
        )
    } else {
        (
            ErrorClass::Missed,
            "no ping came by its tick plus grace".to_string(),
        )
    };
    let outcome = if started {
        Outcome::TimedOut
    } else {
        Outcome::Failed
    };
    let (attempt_id, duration) = match last_attempt(db, run.id).await? {
        Some(attempt) if started => (
            attempt.id,
            Some((now - attempt.started_at).num_milliseconds().max(0)),
        ),
        _ => (new_attempt(run.id, now, 0, "-").insert(db).await?.id, None),
    };
    job_attempt::ActiveModel {
        id: Set(attempt_id),
        finished_at: Set(Some(now)),
        duration_ms: Set(duration),
        outcome: Set(Some(outcome)),
        error_class: Set(Some(class)),
        message: Set(Some(message.clone())),
        timeout_kind: Set(started.then_some(crate::domain::run::TimeoutKind::Timeout)),
        ..Default::default()
    }
    .update(db)
    .await?;
    let verdict = failed(class, message.clone());
    settle_run(db, run, &verdict, now).await?;
    let failed_run = FailedRun {
        job: job.name.clone(),
        run_id: run.id,
        status: RunStatus::Dead,
        error_class: Some(class),
        message: Some(message),
        attempts: 1,
        finished_at: now,
    };
    let ended = Ended {
        job: job.name.clone(),
        status: RunStatus::Dead,
        outcome,
        class: Some(class),
        duration_ms: duration.map(|ms| ms as u64),
    };
    Ok((failed_run, ended))
}

/// Whether `run` may be started again by hand (a watched job's cannot: it runs elsewhere).
pub async fn runs_elsewhere(db: &impl ConnectionTrait, job_id: i64) -> Result<bool, DbErr> {
    Ok(job::Entity::find_by_id(job_id)
        .one(db)
        .await?
        .is_some_and(|j| j.kind == crate::domain::job::Kind::Watch))
}
