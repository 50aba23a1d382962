//! The job page's revisions: history with what each revision's runs did, a diff of two,
//! and restoring one (`crate::services::revisions`).

use leptos::prelude::*;

use super::AppError;
use super::codec::Json;
use crate::domain::job::diff::FieldChange;
use crate::views::jobs::RevisionView;

#[cfg(feature = "ssr")]
impl From<crate::services::revisions::RevisionError> for AppError {
    fn from(e: crate::services::revisions::RevisionError) -> Self {
        use crate::services::revisions::RevisionError;
        match e {
            RevisionError::NotFound { job, revision } => {
                AppError::NotFound(crate::t!("noun-revision", job = job, revision = revision))
            }
            other => AppError::internal(&other),
        }
    }
}

/// A job's revisions, newest first, each with its runs' outcome and whether it did worse than
/// the one before.
#[server(endpoint = "jobs/revisions", output = Json)]
pub async fn list_revisions(id: i64) -> Result<Vec<RevisionView>, AppError> {
    use crate::domain::job::outcomes::worse;
    use crate::services::{jobs, revisions};
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            let job = jobs::get(&state.db, id).await.map_err(AppError::from)?;
            let history = revisions::history(&state.db, job.id).await?;
            let outcomes = revisions::outcomes(&state.db, job.id).await?;
            let of = |revision: i32| outcomes.iter().find(|o| o.revision == revision);
            Ok(history
                .into_iter()
                .map(|row| {
                    let outcome = of(row.revision).cloned();
                    let before = of(row.revision - 1);
                    let worse = before.zip(outcome.as_ref()).and_then(|(b, a)| worse(b, a));
                    RevisionView {
                        row,
                        outcome,
                        worse,
                    }
                })
                .collect())
        }
        .await,
    )
}

/// The fields two revisions of a job differ in, credentials hidden.
#[server(endpoint = "jobs/revisions/diff", output = Json)]
pub async fn diff_revisions(id: i64, from: i32, to: i32) -> Result<Vec<FieldChange>, AppError> {
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            let job = crate::services::jobs::get(&state.db, id)
                .await
                .map_err(AppError::from)?;
            Ok(
                crate::services::revisions::diff(&state.db, &state.secret_key, &job, (from, to))
                    .await?,
            )
        }
        .await,
    )
}

/// Admins: makes a revision's definition the job's again (credentials included), as its next
/// revision; the answer is that revision's number.
#[server(endpoint = "jobs/revisions/restore", output = Json)]
pub async fn restore_revision(id: i64, revision: i32) -> Result<i32, AppError> {
    super::respond(
        async {
            let admin = super::auth::require_admin("restore job revisions")?;
            let state = super::state()?;
            let job = crate::services::jobs::get(&state.db, id)
                .await
                .map_err(AppError::from)?;
            let who = super::actor(&admin);
            let note = crate::t!("revisions-restored-note", revision = revision);
            let now = crate::clock::now();
            let change = (&state.secret_key, Some(note.as_str()));
            let saved =
                crate::services::jobs::restore(&state.db, &job, revision, &who, change, now)
                    .await
                    .map_err(AppError::from)?;
            Ok(saved.revision)
        }
        .await,
    )
}
