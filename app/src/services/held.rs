//! Jobs saved before parameters became data (`crate::domain::job::placement`) that use one where
//! it may no longer stand. Failing them on every tick would bury the reason under alerts, so
//! they are *held*: paused, with the places named (`jobs.params_held`), until an edit moves the
//! parameter or an administrator confirms the job may run as written until its next edit
//! (`jobs.params_as_written`, audited). `bulwark jobs check` and the job's page show them.

use chrono::{DateTime, Utc};
use sea_orm::{ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, Set};
use serde::Serialize;

use super::jobs::{JobError, to_spec};
use crate::domain::job::placement::{self, Hold, Misplaced};
use crate::entities::job;

/// A job that uses a parameter where it is no longer allowed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Flagged {
    pub name: String,
    pub misplaced: Vec<Misplaced>,
    /// Held (paused until edited or confirmed), or confirmed to run as written.
    pub held: bool,
}

/// Every job whose definition puts a parameter where it may not stand, by name.
pub async fn flagged(db: &impl ConnectionTrait) -> Result<Vec<Flagged>, JobError> {
    let mut out = Vec::new();
    for row in super::jobs::list_models(db).await? {
        let spec = to_spec(&row)?;
        let misplaced = placement::misplaced(&spec.kind, &spec.parameters);
        if !misplaced.is_empty() {
            out.push(Flagged {
                name: row.name.clone(),
                misplaced,
                held: !row.params_as_written,
            });
        }
    }
    Ok(out)
}

/// Holds every job not yet held or confirmed that uses a parameter where it may not stand
/// (at start-up: after an upgrade, or a restored backup). Returns the jobs it held.
pub async fn hold_misplaced(
    db: &impl ConnectionTrait,
    now: DateTime<Utc>,
) -> Result<Vec<Flagged>, JobError> {
    let mut held = Vec::new();
    for flagged in flagged(db).await?.into_iter().filter(|f| f.held) {
        let Some(row) = job::Entity::find()
            .filter(job::Column::Name.eq(&flagged.name))
            .filter(job::Column::ParamsHeld.is_null())
            .one(db)
            .await?
        else {
            continue;
        };
        let hold = Hold {
            misplaced: flagged.misplaced.clone(),
            paused_it: !row.paused,
        };
        let mut model: job::ActiveModel = row.into();
        model.params_held = Set(Some(
            serde_json::to_string(&hold).map_err(JobError::Encode)?,
        ));
        model.paused = Set(true);
        model.updated_at = Set(now);
        model.update(db).await?;
        held.push(flagged);
    }
    if !held.is_empty() {
        crate::wake::jobs_changed(db).await;
    }
    Ok(held)
}

/// Lets a flagged job run as written until its next edit, lifting its hold, and records who
/// did; returns the places confirmed. A field error when no job has that name, or when it is
/// not flagged.
pub async fn confirm(
    db: &sea_orm::DatabaseConnection,
    name: &str,
    who: &super::audit::Actor<'_>,
    now: DateTime<Utc>,
) -> Result<Vec<Misplaced>, JobError> {
    let txn = super::sql::begin_write(db).await?;
    let row = job::Entity::find()
        .filter(job::Column::Name.eq(name))
        .one(&txn)
        .await?
        .ok_or_else(|| JobError::Invalid(vec![not_found(name)]))?;
    let spec = to_spec(&row)?;
    let misplaced = placement::misplaced(&spec.kind, &spec.parameters);
    if misplaced.is_empty() {
        return Err(JobError::Invalid(vec![crate::domain::FieldProblem::new(
            "name",
            crate::problem!("job-error-not-held", name = name.to_string()),
        )]));
    }
    let resume = Hold::from_column(row.params_held.as_deref()).is_some_and(|h| h.paused_it);
    let mut model: job::ActiveModel = row.into();
    model.params_as_written = Set(true);
    model.params_held = Set(None);
    if resume {
        model.paused = Set(false);
    }
    model.updated_at = Set(now);
    model.update(&txn).await?;
    let detail = serde_json::json!({ "misplaced": misplaced });
    super::audit::record(&txn, who, "job.params_as_written", name, detail, now).await?;
    let wake = crate::wake::jobs_changed_in(&txn)
        .await
        .and(crate::wake::runs_changed_in(&txn).await);
    txn.commit().await?;
    wake.after_commit();
    Ok(misplaced)
}

fn not_found(name: &str) -> crate::domain::FieldProblem {
    crate::domain::FieldProblem::new(
        "name",
        crate::problem!("job-error-no-such-job", name = name.to_string()),
    )
}

/// The refusal a held job gives to being resumed: it is released by an edit or a confirmation.
pub fn resume_refused(row: &job::Model) -> Option<JobError> {
    row.params_held.as_ref()?;
    Some(JobError::Invalid(vec![crate::domain::FieldProblem::new(
        "paused",
        crate::problem!("job-error-held-resume", name = row.name.clone()),
    )]))
}

/// A job as its editor and the REST API show it: credentials hidden, and the parameters it
/// uses where they are no longer allowed, worded for `locale`.
pub fn detail(
    row: &job::Model,
    locale: crate::i18n::Locale,
) -> Result<crate::views::jobs::JobDetail, JobError> {
    let spec = to_spec(row)?;
    let params_misplaced = placement::misplaced(&spec.kind, &spec.parameters)
        .iter()
        .map(|m| {
            crate::views::FieldError::new(
                &m.field,
                locale.say(&crate::domain::job::parse::misplaced_problem(m)),
            )
        })
        .collect();
    Ok(crate::views::jobs::JobDetail {
        id: row.id,
        // Credentials never travel back in full.
        input: spec.to_input().redacted(),
        updated_at: row.updated_at,
        params_misplaced,
        params_held: row.params_held.is_some(),
    })
}
