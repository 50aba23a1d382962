//! What the REST API sends and takes besides the console's own wire types (`app::views`),
//! which it shares: a page of a list, a trigger's body and answer, an apply's result.

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// One page of a list; `next` is the cursor for the following page (`null` on the last).
#[derive(Debug, Serialize, ToSchema)]
pub struct Page<T: ToSchema> {
    pub items: Vec<T>,
    pub next: Option<String>,
}

/// Paging for lists: `cursor` from the previous page's `next`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    pub cursor: Option<String>,
    /// At most this many items (default 50, at most 500).
    pub limit: Option<u64>,
}

impl PageQuery {
    pub fn limit(&self) -> u64 {
        self.limit.unwrap_or(50).clamp(1, 500)
    }
}

/// The body of a trigger: the run's parameters.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"params": {"upload_id": "u-42", "limit": 500}}))]
pub struct TriggerBody {
    /// Values for the job's declared parameters, by name.
    #[serde(default)]
    pub params: serde_json::Map<String, serde_json::Value>,
    /// The date the run stands for (`BULWARK_BUSINESS_DATE`), `YYYY-MM-DD`; default: the day
    /// it is asked for, in the job's zone.
    #[serde(default)]
    pub business_date: Option<chrono::NaiveDate>,
}

/// A run as a trigger answers it.
#[derive(Debug, Serialize, ToSchema)]
pub struct TriggeredRun {
    pub id: i64,
    pub job: String,
    pub status: app::domain::run::RunStatus,
    pub created_at: chrono::DateTime<chrono::Utc>,
    /// The parameters the run was started with.
    pub params: Option<serde_json::Value>,
    /// Where the run's page is.
    pub url: String,
}

/// A set of jobs as JSON for `POST /api/v1/jobs/apply` (TOML takes the jobs file's format).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct JobSet {
    pub jobs: Vec<app::domain::job::JobInput>,
}

#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DryRun {
    /// Check and compute the changes, write nothing.
    #[serde(default)]
    pub dry_run: bool,
}

/// A reason, for resolving or discarding a failed run.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"reason": "re-sent by hand from the supplier's portal"}))]
pub struct Reason {
    pub reason: String,
}
