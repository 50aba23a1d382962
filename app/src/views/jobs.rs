//! Jobs as the list and the editor show them.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::domain::job::{JobInput, Kind};
use crate::domain::run::RunStatus;

/// A job as the list shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct JobRow {
    pub id: i64,
    pub name: String,
    pub description: String,
    pub kind: Kind,
    pub cron: String,
    pub timezone: String,
    pub enabled: bool,
    pub last_status: Option<RunStatus>,
    pub runs: u64,
    /// Runs are started with parameters (Run now asks for them on the job's page).
    #[serde(default)]
    pub takes_parameters: bool,
    /// An alert episode is open: the job is failing now.
    #[serde(default)]
    pub failing: bool,
}

/// A job opened in the editor (credentials hidden).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct JobDetail {
    pub id: i64,
    pub input: JobInput,
    pub updated_at: DateTime<Utc>,
}

/// A job's trigger URL as its admins see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hook {
    /// The path to POST to: `/hooks/<id>`.
    pub path: String,
    pub signed: bool,
}
