//! Notification channels on the Notifications page: everyone sees them, admins add, test and
//! remove them. A channel's URL and secret go in and never come back out.

use leptos::prelude::*;

use super::AppError;
use super::codec::Json;
use crate::views::channels::{ChannelRow, ChannelTest, DeliveryRow};

/// How many channel messages the Notifications page shows.
pub const DELIVERIES_LIMIT: u64 = 200;

#[cfg(feature = "ssr")]
impl From<crate::services::notifications::channels::ChannelError> for AppError {
    fn from(e: crate::services::notifications::channels::ChannelError) -> Self {
        use crate::services::notifications::channels::ChannelError;
        match e {
            ChannelError::Invalid(m) => AppError::refused("channel", &m),
            ChannelError::Taken(name) => {
                AppError::invalid("name", crate::t!("error-channel-taken", name = name))
            }
            ChannelError::NotFound(name) => {
                AppError::NotFound(crate::t!("noun-channel", name = name))
            }
            ChannelError::InUse(name, by) => {
                AppError::Conflict(crate::t!("error-channel-in-use", name = name, by = by))
            }
            other => AppError::internal(&other),
        }
    }
}

#[server(endpoint = "channels/list", output = Json)]
pub async fn list_channels() -> Result<Vec<ChannelRow>, AppError> {
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            Ok(
                crate::services::notifications::channels::list(&state.db, &state.secret_key)
                    .await?
                    .into_iter()
                    .map(|c| ChannelRow {
                        name: c.name,
                        kind: c.kind,
                        target: c.target,
                        signed: c.signed,
                        last_answer: c.last_answer,
                        last_delivery_at: c.last_delivery_at,
                        locale: c.locale,
                    })
                    .collect(),
            )
        }
        .await,
    )
}

/// `to`: addresses for an e-mail channel, separated by commas.
#[server(endpoint = "channels/add", output = Json)]
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
            let new = crate::services::notifications::channels::NewChannel {
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
            let (who, now) = (super::actor(&admin), crate::clock::now());
            let key = &state.secret_key;
            crate::services::notifications::channels::add(&state.db, key, &new, &who, now).await?;
            Ok(())
        }
        .await,
    )
}

/// Blank `url` and `secret` keep what is stored; `clear_secret` (a checkbox) drops the secret.
#[server(endpoint = "channels/edit", output = Json)]
pub async fn edit_channel(
    name: String,
    url: Option<String>,
    secret: Option<String>,
    clear_secret: Option<String>,
    to: Option<String>,
    // A catalogue's tag, empty for `default_locale`, absent to keep it.
    locale: Option<String>,
) -> Result<(), AppError> {
    super::respond(
        async {
            let admin = super::auth::require_admin("edit channels")?;
            let locale = locale
                .as_deref()
                .map(|tag| super::locale_field("locale", tag))
                .transpose()?;
            let state = super::state()?;
            let change = crate::services::notifications::channels::ChannelChange {
                url,
                secret,
                clear_secret: clear_secret.is_some_and(|v| !v.is_empty()),
                to: to.map(|to| {
                    to.split(',')
                        .map(str::trim)
                        .filter(|a| !a.is_empty())
                        .map(str::to_string)
                        .collect()
                }),
                locale,
            };
            crate::services::notifications::channels::edit(
                &state.db,
                &state.secret_key,
                name.trim(),
                &change,
                &super::actor(&admin),
                crate::clock::now(),
            )
            .await?;
            Ok(())
        }
        .await,
    )
}

#[server(endpoint = "channels/test", output = Json)]
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

/// The latest messages to channels, optionally of one status.
#[server(endpoint = "channels/deliveries", output = Json)]
pub async fn deliveries(status: Option<String>) -> Result<Vec<DeliveryRow>, AppError> {
    super::respond(
        async {
            super::auth::require_user()?;
            let status =
                super::status_filter::<crate::domain::chat::DeliveryStatus>(status.as_deref())?;
            let state = super::state()?;
            let rows = crate::services::notifications::channel_outbox::list(
                &state.db,
                status,
                DELIVERIES_LIMIT,
            )
            .await?;
            Ok(rows.into_iter().map(DeliveryRow::from).collect())
        }
        .await,
    )
}

/// Puts a message back in the queue (the sender sends it within seconds, with its webhook-id).
#[server(endpoint = "channels/deliveries/resend", output = Json)]
pub async fn resend_delivery(id: i64) -> Result<DeliveryRow, AppError> {
    super::respond(
        async {
            let admin = super::auth::require_admin("resend channel messages")?;
            let state = super::state()?;
            let (who, now) = (super::actor(&admin), crate::clock::now());
            if !crate::services::notifications::channel_outbox::resend(&state.db, id, &who, now)
                .await?
            {
                return Err(AppError::NotFound(crate::t!(
                    "noun-channel-message",
                    id = id
                )));
            }
            let row = crate::services::notifications::channel_outbox::get(&state.db, id)
                .await?
                .ok_or_else(|| AppError::NotFound(crate::t!("noun-channel-message", id = id)))?;
            Ok(row.into())
        }
        .await,
    )
}

#[server(endpoint = "channels/remove", output = Json)]
pub async fn remove_channel(name: String) -> Result<(), AppError> {
    super::respond(
        async {
            let admin = super::auth::require_admin("remove channels")?;
            let state = super::state()?;
            let who = super::actor(&admin);
            let now = crate::clock::now();
            crate::services::notifications::channels::remove(&state.db, &name, &who, now).await?;
            Ok(())
        }
        .await,
    )
}
