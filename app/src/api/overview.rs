//! The Overview in one call: tiles, what needs attention, the next ticks, the last failures
//! and the runs per hour.

use leptos::prelude::*;

use super::AppError;
use super::codec::Json;
use crate::views::overview::Overview;

#[server(endpoint = "dashboard/overview", output = Json)]
pub async fn get_overview() -> Result<Overview, AppError> {
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            crate::services::overview::read(&state.db, crate::clock::now(), state.timezone)
                .await
                .map_err(|e| AppError::internal(&e))
        }
        .await,
    )
}
