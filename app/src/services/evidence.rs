//! A job's failure episodes, read from its runs and attempts, for the retry evidence
//! (`crate::domain::recovery`): the editor's replay, `bulwark policy preview --job` and the
//! digest.

use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect,
};

use crate::domain::recovery::{AttemptFact, Episode, JobEpisodes, episode_of};
use crate::domain::run::RunStatus;
use crate::entities::{job, job_attempt, job_run};

/// How many of a job's latest runs with a failure are read: enough for a steady estimate,
/// recent enough to describe the job as it is now.
pub const RUNS_READ: u64 = 500;

/// The failure episodes of `job_id`'s latest [`RUNS_READ`] runs that had a failure, newest
/// first.
pub async fn episodes(db: &impl ConnectionTrait, job_id: i64) -> Result<Vec<Episode>, DbErr> {
    Ok(by_revision(db, job_id)
        .await?
        .into_iter()
        .map(|(_, episode)| episode)
        .collect())
}

/// [`episodes`] with the revision each episode's run ran, and the job's revision now: the
/// editor's panel can keep to the current definition.
pub async fn of_job(db: &impl ConnectionTrait, job: &job::Model) -> Result<JobEpisodes, DbErr> {
    Ok(JobEpisodes {
        current: job.revision,
        episodes: by_revision(db, job.id).await?,
    })
}

async fn by_revision(
    db: &impl ConnectionTrait,
    job_id: i64,
) -> Result<Vec<(Option<i32>, Episode)>, DbErr> {
    // A run that succeeded at its first attempt has no episode; every other run may.
    let runs: Vec<(i64, Option<i32>)> = job_run::Entity::find()
        .select_only()
        .column(job_run::Column::Id)
        .column(job_run::Column::Revision)
        .filter(job_run::Column::JobId.eq(job_id))
        .filter(job_run::Column::Attempts.gte(1))
        .filter(
            Condition::any()
                .add(job_run::Column::Attempts.gt(1))
                .add(job_run::Column::Status.ne(RunStatus::Succeeded)),
        )
        .order_by_desc(job_run::Column::CreatedAt)
        .order_by_desc(job_run::Column::Id)
        .limit(RUNS_READ)
        .into_tuple()
        .all(db)
        .await?;
    if runs.is_empty() {
        return Ok(Vec::new());
    }
    let attempts = job_attempt::Entity::find()
        .filter(job_attempt::Column::RunId.is_in(runs.iter().map(|(id, _)| *id)))
        .order_by_asc(job_attempt::Column::RunId)
        .order_by_asc(job_attempt::Column::Number)
        .all(db)
        .await?;
    let mut by_run: std::collections::HashMap<i64, Vec<AttemptFact>> =
        std::collections::HashMap::new();
    for a in attempts {
        by_run.entry(a.run_id).or_default().push(AttemptFact {
            started_at: a.started_at,
            finished_at: a.finished_at,
            outcome: a.outcome,
            error_class: a.error_class,
        });
    }
    Ok(runs
        .iter()
        .filter_map(|(run, revision)| {
            let episode = by_run.get(run).and_then(|attempts| episode_of(attempts))?;
            Some((*revision, episode))
        })
        .collect())
}
