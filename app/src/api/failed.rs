//! The failed queue: dead runs kept with their history until a person re-triggers, resolves or
//! discards them. Viewers read; admins act. Every action is audited.

use leptos::prelude::*;

use super::codec::Json;

use super::AppError;
use crate::domain::retry::RetryInput;
use crate::views::audit::AuditEntry;
use crate::views::failed::{QueueFilter, QueuePage};

#[cfg(feature = "ssr")]
impl From<crate::services::failed::FailedError> for AppError {
    fn from(e: crate::services::failed::FailedError) -> Self {
        use crate::services::failed::FailedError;
        match e {
            FailedError::Invalid(field, problem) => AppError::refused(field, &problem),
            FailedError::Retry(errors) => {
                use crate::i18n::errors::Explain;
                let locale = crate::i18n::current();
                let words: Vec<String> = errors.iter().map(|e| e.explain(locale)).collect();
                AppError::invalid("retry", words.join("; "))
            }
            FailedError::NotInQueue(id) => {
                AppError::invalid("run", crate::t!("error-not-in-queue", id = id))
            }
            FailedError::RunsElsewhere(_) => {
                AppError::invalid("run", crate::t!("error-watch-retrigger"))
            }
            other => AppError::internal(&other),
        }
    }
}

/// The filter as the server reads it: one rule for every field ([`crate::domain::filters`]).
#[cfg(feature = "ssr")]
fn query(filter: &QueueFilter) -> Result<crate::domain::filters::QueueQuery, AppError> {
    Ok(crate::domain::filters::QueueQuery::parse(
        filter.job.as_deref(),
        filter.class.as_deref(),
        filter.from.as_deref(),
        filter.to.as_deref(),
        filter.text.as_deref(),
    )?
    .with_tag(filter.tag.as_deref())?)
}

#[server(endpoint = "failed/list", input = Json, output = Json)]
pub async fn failed_queue(
    filter: QueueFilter,
    cursor: Option<String>,
) -> Result<QueuePage, AppError> {
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            let cursor = cursor
                .as_deref()
                .filter(|c| !c.trim().is_empty())
                .map(crate::domain::filters::QueueCursor::parse)
                .transpose()?;
            crate::services::failed::page(&state.db, &query(&filter)?, cursor, 50)
                .await
                .map_err(AppError::from)
        }
        .await,
    )
}

/// How many dead runs a bulk re-trigger by this filter would touch.
#[server(endpoint = "failed/preview", input = Json, output = Json)]
pub async fn retrigger_preview(filter: QueueFilter) -> Result<u64, AppError> {
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            crate::services::failed::count_retriggerable(&state.db, &query(&filter)?)
                .await
                .map_err(AppError::from)
        }
        .await,
    )
}

/// Re-triggers one dead run, optionally once with another timeout or retry policy. Returns
/// the new run's id.
#[server(endpoint = "failed/retrigger", input = Json, output = Json)]
pub async fn retrigger_run(
    id: i64,
    timeout: Option<String>,
    retry: Option<RetryInput>,
) -> Result<i64, AppError> {
    super::respond(
        async {
            let admin = super::auth::require_admin("re-trigger runs")?;
            let state = super::state()?;
            let overrides =
                crate::services::failed::Overrides::parse(timeout.as_deref(), retry.as_ref())
                    .map_err(AppError::from)?;
            crate::services::failed::retrigger(
                &state.db,
                id,
                &overrides,
                &super::actor(&admin),
                crate::clock::now(),
                crate::clock::now(),
            )
            .await
            .map_err(AppError::from)
        }
        .await,
    )
}

/// Re-triggers the selected runs, or every run matching `filter`, released at `per_minute`.
#[server(endpoint = "failed/retrigger-many", input = Json, output = Json)]
pub async fn retrigger_many(
    ids: Vec<i64>,
    filter: Option<QueueFilter>,
    per_minute: u32,
) -> Result<u64, AppError> {
    super::respond(
        async {
            let admin = super::auth::require_admin("re-trigger runs")?;
            let state = super::state()?;
            let filter = filter.as_ref().map(query).transpose()?;
            crate::services::failed::retrigger_many(
                &state.db,
                &ids,
                filter.as_ref(),
                per_minute,
                &super::actor(&admin),
                crate::clock::now(),
            )
            .await
            .map_err(AppError::from)
        }
        .await,
    )
}

/// Takes a dead run out of the queue without running it: `discard = false` means someone
/// handled it by hand, `true` that it should simply be dropped. A reason is required.
#[server(endpoint = "failed/resolve", output = Json)]
pub async fn resolve_run(id: i64, reason: String, discard: bool) -> Result<(), AppError> {
    super::respond(
        async {
            let admin = super::auth::require_admin(if discard {
                "discard runs"
            } else {
                "resolve runs"
            })?;
            let state = super::state()?;
            crate::services::failed::resolve(
                &state.db,
                id,
                &reason,
                discard,
                &super::actor(&admin),
                crate::clock::now(),
            )
            .await
            .map_err(AppError::from)
        }
        .await,
    )
}

/// The latest audit entries, optionally only those about one subject (e.g. `run 12`).
#[server(endpoint = "audit/list", output = Json)]
pub async fn audit_entries(subject: Option<String>) -> Result<Vec<AuditEntry>, AppError> {
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            Ok(crate::services::audit::recent(&state.db, subject.as_deref(), 200).await?)
        }
        .await,
    )
}
