//! Backfills on the job page: everyone sees a job's backfills and their progress; admins start
//! one over a range of business dates (or see what it would do), pause, resume and cancel it.

use chrono::NaiveDate;
use leptos::prelude::*;

use super::AppError;
use super::codec::Json;
use crate::domain::backfill::BackfillState;
use crate::views::backfills::{BackfillPlan, BackfillRow};

/// A refused backfill in the request's language.
#[cfg(feature = "ssr")]
impl From<crate::services::backfills::BackfillServiceError> for AppError {
    fn from(e: crate::services::backfills::BackfillServiceError) -> Self {
        use crate::services::backfills::BackfillServiceError;
        match e {
            BackfillServiceError::Refused(e) => AppError::refused("backfill", &e.problem()),
            BackfillServiceError::NotFound(id) => {
                AppError::NotFound(crate::t!("noun-backfill", id = id))
            }
            BackfillServiceError::State { .. } => AppError::Conflict(e.to_string()),
            other => AppError::internal(&other),
        }
    }
}

#[server(endpoint = "backfills/list", output = Json)]
pub async fn list_backfills(job_id: i64) -> Result<Vec<BackfillRow>, AppError> {
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            Ok(crate::services::backfills::of_job(&state.db, job_id).await?)
        }
        .await,
    )
}

/// Starts a backfill of the job over `from`..=`to` (or with `dry_run` only says what it
/// would run); returns the ticks and the backfill made, if any.
#[server(endpoint = "backfills/start", input = Json, output = Json)]
pub async fn start_backfill(
    job_id: i64,
    from: NaiveDate,
    to: NaiveDate,
    parallel: u32,
    per_minute: Option<u32>,
    rerun: bool,
    dry_run: bool,
) -> Result<BackfillPlan, AppError> {
    use crate::domain::backfill::Pace;
    use crate::services::backfills::{self, Request};
    super::respond(
        async {
            let admin = super::auth::require_admin("backfill jobs")?;
            let state = super::state()?;
            let job = crate::services::jobs::get(&state.db, job_id).await?;
            let pace = Pace {
                parallel,
                per_minute,
            };
            let request = Request {
                from,
                to,
                pace,
                rerun,
            };
            let now = crate::clock::now();
            let (spec, made, planned) = if dry_run {
                let (spec, planned) = backfills::plan(&state.db, &job, &request, now).await?;
                (spec, None, planned)
            } else {
                let who = super::actor(&admin);
                let (made, planned) =
                    backfills::start(&state.db, &job, &request, &who, now).await?;
                let spec = crate::services::jobs::to_spec(&job)?;
                (spec, made.map(|b| b.id), planned)
            };
            Ok(backfills::plan_view(&spec, made, &planned))
        }
        .await,
    )
}

#[server(endpoint = "backfills/change", input = Json, output = Json)]
pub async fn change_backfill(id: i64, state_to: BackfillState) -> Result<(), AppError> {
    super::respond(
        async {
            let admin = super::auth::require_admin("change backfills")?;
            let state = super::state()?;
            let who = super::actor(&admin);
            crate::services::backfills::change(&state.db, id, state_to, &who, crate::clock::now())
                .await?;
            Ok(())
        }
        .await,
    )
}
