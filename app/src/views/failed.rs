//! The failed queue as the browser asks for it and sees it.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::domain::run::{ErrorClass, Trigger};

/// Which dead runs to show or act on, as the URL holds it (text, parsed by the server).
/// Dates are `YYYY-MM-DD` (UTC), both ends inclusive.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueFilter {
    pub job: Option<String>,
    pub class: Option<String>,
    pub from: Option<String>,
    pub to: Option<String>,
    /// Text to find in the last error message (case-insensitive).
    pub text: Option<String>,
    /// Only runs of jobs with this tag.
    #[serde(default)]
    pub tag: Option<String>,
}

/// One dead run as the queue lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct DeadRun {
    pub id: i64,
    pub job: String,
    pub trigger: Trigger,
    pub first_failure: Option<DateTime<Utc>>,
    pub last_failure: Option<DateTime<Utc>>,
    pub attempts: i32,
    pub error_class: Option<ErrorClass>,
    pub message: Option<String>,
    /// A watched job's run: it runs elsewhere, so it is resolved or discarded, never
    /// re-triggered.
    #[serde(default)]
    pub runs_elsewhere: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct QueuePage {
    pub rows: Vec<DeadRun>,
    /// Pass back to get the next (older) page; `None` on the last page.
    pub next: Option<String>,
    /// Dead runs matching the filter.
    pub matching: u64,
    /// The whole queue by job and by error class (`None`: no class recorded).
    pub per_job: Vec<(String, u64)>,
    pub per_class: Vec<(Option<ErrorClass>, u64)>,
}
