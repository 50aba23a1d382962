//! Figures for the home page.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use super::AppError;

/// Runs created during one hour, by how they ended so far.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HourBucket {
    pub hour: chrono::DateTime<chrono::Utc>,
    pub succeeded: u32,
    pub failed: u32,
    /// Still pending, running, waiting to retry, skipped or cancelled.
    pub other: u32,
}

/// Runs per hour over the last 24 hours.
#[server(endpoint = "dashboard/runs-per-hour")]
pub async fn runs_per_hour() -> Result<Vec<HourBucket>, AppError> {
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            Ok(crate::services::runs::per_hour(&state.db, chrono::Utc::now(), 24).await?)
        }
        .await,
    )
}
