//! Notification channels on the Notifications page: everyone sees them, admins add, test and
//! remove them. A channel's URL and secret go in and never come back out.

use leptos::prelude::*;

use super::AppError;
use crate::views::channels::{ChannelRow, ChannelTest};

#[cfg(feature = "ssr")]
fn channel_error(e: crate::services::channels::ChannelError) -> AppError {
    use crate::services::channels::ChannelError;
    match e {
        ChannelError::Invalid(m) => AppError::invalid("channel", m),
        ChannelError::Taken(_) => AppError::invalid("name", e.to_string()),
        ChannelError::NotFound(name) => AppError::NotFound(format!("channel '{name}'")),
        other => AppError::internal(&other),
    }
}

#[server(endpoint = "channels/list")]
pub async fn list_channels() -> Result<Vec<ChannelRow>, AppError> {
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            Ok(
                crate::services::channels::list(&state.db, &state.secret_key)
                    .await?
                    .into_iter()
                    .map(|c| ChannelRow {
                        name: c.name,
                        kind: c.kind,
                        target: c.target,
                        signed: c.signed,
                        last_answer: c.last_answer,
                        last_delivery_at: c.last_delivery_at,
                    })
                    .collect(),
            )
        }
        .await,
    )
}

/// `to`: addresses for an e-mail channel, separated by commas.
#[server(endpoint = "channels/add")]
pub async fn add_channel(
    name: String,
    kind: String,
    url: Option<String>,
    secret: Option<String>,
    to: Option<String>,
) -> Result<(), AppError> {
    use crate::domain::chat::ChannelKind;
    super::respond(
        async {
            let admin = super::auth::require_admin("add channels")?;
            let kind = ChannelKind::parse(kind.trim()).ok_or_else(|| {
                AppError::invalid(
                    "kind",
                    format!("kind must be one of {}", ChannelKind::WORDS.join(", ")),
                )
            })?;
            let state = super::state()?;
            let new = crate::services::channels::NewChannel {
                name: name.trim().to_string(),
                kind: Some(kind),
                url,
                secret,
                to: to
                    .unwrap_or_default()
                    .split(',')
                    .map(str::trim)
                    .filter(|a| !a.is_empty())
                    .map(str::to_string)
                    .collect(),
            };
            let added = crate::services::channels::add(
                &state.db,
                &state.secret_key,
                &new,
                crate::clock::now(),
            )
            .await
            .map_err(channel_error)?;
            super::audit(
                &state,
                &admin,
                "channel.created",
                &added.name,
                serde_json::json!({ "kind": added.kind, "target": added.target }),
            )
            .await
        }
        .await,
    )
}

#[server(endpoint = "channels/test")]
pub async fn test_channel(name: String) -> Result<ChannelTest, AppError> {
    super::respond(
        async {
            let admin = super::auth::require_admin("send test messages")?;
            let state = super::state()?;
            let tester = state
                .channels
                .clone()
                .ok_or_else(|| AppError::Internal("channel delivery is not set up".into()))?;
            let (accepted, answer) = tester
                .test(&name)
                .await
                .map_err(|e| AppError::invalid("channel", e.to_string()))?;
            super::audit(
                &state,
                &admin,
                "channel.tested",
                &name,
                serde_json::json!({ "accepted": accepted }),
            )
            .await?;
            Ok(ChannelTest {
                name,
                accepted,
                answer,
            })
        }
        .await,
    )
}

#[server(endpoint = "channels/remove")]
pub async fn remove_channel(name: String) -> Result<(), AppError> {
    super::respond(
        async {
            let admin = super::auth::require_admin("remove channels")?;
            let state = super::state()?;
            crate::services::channels::remove(&state.db, &name)
                .await
                .map_err(channel_error)?;
            super::audit(
                &state,
                &admin,
                "channel.removed",
                &name,
                serde_json::json!({}),
            )
            .await
        }
        .await,
    )
}
