//! An attempt's whole output on the run page, and lines of many runs' output on the Runs page
//! (`crate::services::run_logs`). Viewers may read both.

use leptos::prelude::*;

use super::AppError;
use super::codec::Json;
use crate::views::run_logs::{Anchor, LogMatch, LogPage};

/// Lines on one screen of the log viewer, at most.
pub const SCREEN_LINES: usize = 200;

/// A screen of attempt `attempt` of run `id` (its last when `None`): `stream` is `stdout`,
/// `stderr` or blank for both. `None` when the run has no attempt yet.
#[server(endpoint = "runs/log", output = Json)]
pub async fn read_log(
    id: i64,
    attempt: Option<i32>,
    anchor: Anchor,
    stream: Option<String>,
) -> Result<Option<LogPage>, AppError> {
    use crate::domain::run_log::Stream;
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            let stream = match stream.as_deref().filter(|s| !s.is_empty()) {
                Some(text) => Some(
                    Stream::parse(text)
                        .filter(|s| *s != Stream::Note)
                        .ok_or_else(|| AppError::invalid("stream", text))?,
                ),
                None => None,
            };
            let screen = SCREEN_LINES;
            let page =
                crate::services::run_logs::page(&state.db, id, attempt, anchor, screen, stream)
                    .await?;
            Ok(page)
        }
        .await,
    )
}

/// Lines of runs' output holding `text` (case ignored), newest run first, at most 200; of
/// `job`'s runs, of runs in `status`, of runs started in the last `since_hours`, when given.
#[server(endpoint = "runs/search-output", output = Json)]
pub async fn search_output(
    text: String,
    job: Option<String>,
    status: Option<String>,
    since_hours: Option<u32>,
) -> Result<Vec<LogMatch>, AppError> {
    use crate::domain::run::RunStatus;
    use crate::services::run_logs::{SearchError, SearchFilter};
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            let filter = SearchFilter {
                text,
                job: job.filter(|j| !j.is_empty()),
                tag: None,
                status: super::status_filter::<RunStatus>(status.as_deref())?,
                since: since_hours
                    .map(|h| crate::clock::now() - chrono::Duration::hours(i64::from(h))),
                limit: 200,
            };
            crate::services::run_logs::search(&state.db, &filter)
                .await
                .map_err(|e| match e {
                    SearchError::TooShort => AppError::invalid(
                        "q",
                        crate::t!(
                            "log-search-too-short",
                            count = crate::domain::run_log::MIN_SEARCH_CHARS
                        ),
                    ),
                    SearchError::Db(e) => AppError::from(e),
                })
        }
        .await,
    )
}
