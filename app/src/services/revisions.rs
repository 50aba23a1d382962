//! Job revisions: every save that changes a definition — from the console, the API, a jobs
//! file or a restore — makes revision N+1 holding the whole definition, in the same
//! transaction as the save.
//!
//! The definition is stored twice: sealed with the secret key (it may hold credentials, and a
//! restore must bring them back; listed in `super::sealed`, so a rekey covers it) and with
//! credentials hidden (what history and diffs show without the key). A save whose definition
//! hashes as the latest revision's makes none, so applying the same file twice adds nothing.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder,
    Set,
};
use sha2::{Digest, Sha256};

use super::secrets::{SecretError, SecretKey};
use crate::domain::job::JobSpec;
use crate::domain::job::diff::{self, FieldChange};
use crate::domain::job::input::JobInput;
use crate::entities::{job, job_revision};
use crate::views::jobs::RevisionRow;

#[derive(Debug, thiserror::Error)]
pub enum RevisionError {
    #[error("{job} has no revision {revision}")]
    NotFound { job: String, revision: i32 },
    #[error("a stored revision cannot be read: {0}")]
    Unreadable(String),
    #[error(transparent)]
    Secret(#[from] SecretError),
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// What a change is recorded with.
#[derive(Debug, Clone, Copy)]
pub struct Change<'a> {
    pub key: &'a SecretKey,
    /// A person's name or `token:NAME`.
    pub actor: &'a str,
    pub note: Option<&'a str>,
}

/// The context a revision is sealed under: its job's and its number, so a sealed value moved
/// to another row opens for nobody.
pub fn context(job_id: i64, revision: i32) -> String {
    format!("job_revisions:{job_id}:{revision}")
}

fn encoded(input: &JobInput) -> Result<String, RevisionError> {
    serde_json::to_string(input).map_err(|e| RevisionError::Unreadable(e.to_string()))
}

/// Records `saved`'s definition as its next revision, unless it is the latest one already;
/// returns the number made.
pub async fn record(
    db: &impl ConnectionTrait,
    saved: &job::Model,
    spec: &JobSpec,
    change: Change<'_>,
    now: DateTime<Utc>,
) -> Result<Option<i32>, RevisionError> {
    let input = spec.to_input();
    let text = encoded(&input)?;
    let digest = hex::encode(Sha256::digest(text.as_bytes()));
    if latest(db, saved.id)
        .await?
        .is_some_and(|last| last.digest == digest)
    {
        return Ok(None);
    }
    let revision = saved.revision + 1;
    job_revision::ActiveModel {
        job_id: Set(saved.id),
        revision: Set(revision),
        sealed: Set(change.key.seal_value(&context(saved.id, revision), &text)),
        shown: Set(encoded(&input.redacted())?),
        digest: Set(digest),
        actor: Set(change.actor.chars().take(64).collect()),
        at: Set(now),
        note: Set(change.note.map(|n| n.chars().take(500).collect())),
        ..Default::default()
    }
    .insert(db)
    .await?;
    job::Entity::update_many()
        .col_expr(job::Column::Revision, Expr::value(revision))
        .filter(job::Column::Id.eq(saved.id))
        .exec(db)
        .await?;
    Ok(Some(revision))
}

async fn latest(
    db: &impl ConnectionTrait,
    job_id: i64,
) -> Result<Option<job_revision::Model>, DbErr> {
    job_revision::Entity::find()
        .filter(job_revision::Column::JobId.eq(job_id))
        .order_by_desc(job_revision::Column::Revision)
        .one(db)
        .await
}

/// A job's revisions, newest first.
pub async fn history(db: &impl ConnectionTrait, job_id: i64) -> Result<Vec<RevisionRow>, DbErr> {
    Ok(job_revision::Entity::find()
        .filter(job_revision::Column::JobId.eq(job_id))
        .order_by_desc(job_revision::Column::Revision)
        .all(db)
        .await?
        .into_iter()
        .map(|r| RevisionRow {
            revision: r.revision,
            actor: r.actor,
            at: r.at,
            note: r.note,
        })
        .collect())
}

/// Revision `revision` of `job` as stored (credentials included) and as shown.
pub async fn get(
    db: &impl ConnectionTrait,
    key: &SecretKey,
    job: &job::Model,
    revision: i32,
) -> Result<(JobInput, JobInput), RevisionError> {
    let row = job_revision::Entity::find()
        .filter(job_revision::Column::JobId.eq(job.id))
        .filter(job_revision::Column::Revision.eq(revision))
        .one(db)
        .await?
        .ok_or_else(|| RevisionError::NotFound {
            job: job.name.clone(),
            revision,
        })?;
    let context = context(job.id, revision);
    let text = key
        .open_value(&context, &row.sealed)
        .ok_or(SecretError::WrongKey(context))?;
    let parse = |text: &str| {
        serde_json::from_str::<JobInput>(text).map_err(|e| RevisionError::Unreadable(e.to_string()))
    };
    Ok((parse(&text)?, parse(&row.shown)?))
}

/// The fields that differ from revision `a` to revision `b`, credentials hidden.
pub async fn diff(
    db: &impl ConnectionTrait,
    key: &SecretKey,
    job: &job::Model,
    (a, b): (i32, i32),
) -> Result<Vec<FieldChange>, RevisionError> {
    let (before, shown_before) = get(db, key, job, a).await?;
    let (after, shown_after) = get(db, key, job, b).await?;
    Ok(diff::changes(
        (&before, &shown_before),
        (&after, &shown_after),
    ))
}

/// Every revision sealed again from `old` to `new` (`super::sealed::rekey`); the count.
pub(crate) async fn reseal(
    db: &impl ConnectionTrait,
    old: &SecretKey,
    new: &SecretKey,
) -> Result<usize, SecretError> {
    let rows = job_revision::Entity::find().all(db).await?;
    for row in &rows {
        let context = context(row.job_id, row.revision);
        let resealed = old.reseal_value(new, &context, &row.sealed)?;
        job_revision::Entity::update_many()
            .col_expr(job_revision::Column::Sealed, Expr::value(resealed))
            .filter(job_revision::Column::Id.eq(row.id))
            .exec(db)
            .await?;
    }
    Ok(rows.len())
}

/// Opens one revision with `key`, if any exists: the start-up check.
pub(crate) async fn open_one(
    db: &impl ConnectionTrait,
    key: &SecretKey,
) -> Result<(), SecretError> {
    let Some(row) = job_revision::Entity::find().one(db).await? else {
        return Ok(());
    };
    key.check_opens(&context(row.job_id, row.revision), &row.sealed)
}

/// Finished runs per revision read for [`outcomes`]: the newest this many.
const OUTCOME_RUNS: u64 = 2_000;

/// What each revision of `job_id` did: its finished runs (the newest [`OUTCOME_RUNS`]),
/// succeeded and P95 duration, by revision.
pub async fn outcomes(
    db: &impl ConnectionTrait,
    job_id: i64,
) -> Result<Vec<crate::domain::job::outcomes::RevisionOutcome>, DbErr> {
    use crate::domain::job::outcomes::{self, FinishedRun};
    use crate::domain::run::RunStatus;
    use crate::entities::{job_attempt, job_run};
    use sea_orm::QuerySelect;
    let runs: Vec<(i64, i32, RunStatus)> = job_run::Entity::find()
        .select_only()
        .columns([
            job_run::Column::Id,
            job_run::Column::Revision,
            job_run::Column::Status,
        ])
        .filter(job_run::Column::JobId.eq(job_id))
        .filter(job_run::Column::Revision.is_not_null())
        .filter(job_run::Column::Status.is_in([RunStatus::Succeeded, RunStatus::Dead]))
        .order_by_desc(job_run::Column::Id)
        .limit(OUTCOME_RUNS)
        .into_tuple()
        .all(db)
        .await?;
    let mut durations: std::collections::HashMap<i64, Vec<u64>> = Default::default();
    for chunk in runs.chunks(500) {
        let ids = chunk.iter().map(|(id, ..)| *id);
        let rows: Vec<(i64, Option<i64>)> = job_attempt::Entity::find()
            .select_only()
            .columns([job_attempt::Column::RunId, job_attempt::Column::DurationMs])
            .filter(job_attempt::Column::RunId.is_in(ids))
            .into_tuple()
            .all(db)
            .await?;
        for (run, ms) in rows {
            if let Some(ms) = ms {
                durations.entry(run).or_default().push(ms.max(0) as u64);
            }
        }
    }
    let finished: Vec<FinishedRun> = runs
        .into_iter()
        .map(|(id, revision, status)| FinishedRun {
            revision,
            succeeded: status == RunStatus::Succeeded,
            durations_ms: durations.remove(&id).unwrap_or_default(),
        })
        .collect();
    Ok(outcomes::outcomes(&finished))
}

/// The fields revision `revision` of `job_id` changed from the one before, read from the
/// definitions as shown (no key needed; a change only to a credential is not named).
pub async fn shown_changes(
    db: &impl ConnectionTrait,
    job_id: i64,
    revision: i32,
) -> Result<Vec<String>, DbErr> {
    let rows = job_revision::Entity::find()
        .filter(job_revision::Column::JobId.eq(job_id))
        .filter(job_revision::Column::Revision.is_in([revision - 1, revision]))
        .order_by_asc(job_revision::Column::Revision)
        .all(db)
        .await?;
    let shown: Vec<JobInput> = rows
        .iter()
        .filter_map(|r| serde_json::from_str(&r.shown).ok())
        .collect();
    let [before, after] = shown.as_slice() else {
        return Ok(Vec::new());
    };
    Ok(diff::changes((before, before), (after, after))
        .into_iter()
        .map(|c| c.field)
        .collect())
}
