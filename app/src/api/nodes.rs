//! The instances sharing the database, for the Settings page.

use leptos::prelude::*;

use super::AppError;
use super::codec::Json;
use crate::views::nodes::NodeView;

#[server(endpoint = "nodes/list", output = Json)]
pub async fn list_nodes() -> Result<Vec<NodeView>, AppError> {
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            let now = crate::clock::now();
            let nodes = crate::services::nodes::list(&state.db, now).await?;
            Ok(nodes.into_iter().map(|n| n.view(now)).collect())
        }
        .await,
    )
}
