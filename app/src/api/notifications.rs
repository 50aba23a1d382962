//! The Notifications page: the outbox, previews, resends, the digest settings, a test mail.

use leptos::prelude::*;

use super::AppError;
use super::codec::Json;
use crate::views::notifications::{MailPreview, MailSettingsView, OutboxRow, TestMailResult};

/// How many mails the outbox shows.
pub const OUTBOX_LIMIT: u64 = 200;

#[server(endpoint = "mail/outbox", output = Json)]
pub async fn outbox(status: Option<String>) -> Result<Vec<OutboxRow>, AppError> {
    super::respond(
        async {
            super::auth::require_user()?;
            let status =
                super::status_filter::<crate::domain::mail::MailStatus>(status.as_deref())?;
            let state = super::state()?;
            let rows = crate::services::outbox::list(&state.db, status, OUTBOX_LIMIT).await?;
            Ok(rows.into_iter().map(OutboxRow::from).collect())
        }
        .await,
    )
}

#[server(endpoint = "mail/preview", output = Json)]
pub async fn preview_mail(id: i64) -> Result<MailPreview, AppError> {
    use crate::domain::mail::with_console;
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            let mail = crate::services::outbox::get(&state.db, id)
                .await?
                .ok_or_else(|| AppError::NotFound(crate::t!("noun-mail", id = id)))?;
            let console = state
                .mailer
                .as_ref()
                .map(|m| m.public_url())
                .unwrap_or_default();
            Ok(MailPreview {
                id,
                subject: mail.subject,
                recipients: mail.recipients,
                text: with_console(&mail.body_text, &console),
                html: mail.body_html.map(|h| with_console(&h, &console)),
            })
        }
        .await,
    )
}

#[server(endpoint = "mail/resend", output = Json)]
pub async fn resend_mail(id: i64) -> Result<OutboxRow, AppError> {
    super::respond(
        async {
            let admin = super::auth::require_admin("resend mail")?;
            let state = super::state()?;
            let now = crate::clock::now();
            let who = super::actor(&admin);
            if !crate::services::outbox::resend(&state.db, id, &who, now).await? {
                return Err(AppError::NotFound(crate::t!("noun-mail", id = id)));
            }
            crate::services::notifications::deliver_now(state.mailer.as_deref()).await;
            let row = crate::services::outbox::get(&state.db, id)
                .await?
                .ok_or_else(|| AppError::NotFound(crate::t!("noun-mail", id = id)))?;
            Ok(row.into())
        }
        .await,
    )
}

#[server(endpoint = "mail/settings", output = Json)]
pub async fn mail_settings() -> Result<MailSettingsView, AppError> {
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            settings_view(&state).await
        }
        .await,
    )
}

#[server(endpoint = "mail/settings/save", output = Json)]
pub async fn save_mail_settings(
    digest_to: String,
    digest_channels: String,
    digest_time: String,
    // The language of mails: a catalogue's tag, empty for `default_locale`, absent to keep it.
    mail_locale: Option<String>,
) -> Result<MailSettingsView, AppError> {
    use crate::services::notifications::{DigestChange, SettingsError, save_settings};
    super::respond(
        async {
            let admin = super::auth::require_admin("change mail settings")?;
            let locale = mail_locale
                .as_deref()
                .map(|tag| super::locale_field("mail_locale", tag))
                .transpose()?;
            let state = super::state()?;
            let digest = DigestChange {
                to: &digest_to,
                channels: &digest_channels,
                time: &digest_time,
            };
            let (who, now) = (super::actor(&admin), crate::clock::now());
            save_settings(&state.db, digest, locale, &who, now)
                .await
                .map_err(|e| match e {
                    SettingsError::Invalid(field, problem) => AppError::refused(field, &problem),
                    other => AppError::internal(&other),
                })?;
            settings_view(&state).await
        }
        .await,
    )
}

#[server(endpoint = "mail/test", output = Json)]
pub async fn send_test_mail(to: String) -> Result<TestMailResult, AppError> {
    super::respond(
        async {
            let admin = super::auth::require_admin("send a test mail")?;
            let recipients = crate::domain::email::address_list(&to)
                .map_err(|e| AppError::refused("to", &e.problem()))?;
            if recipients.is_empty() {
                return Err(AppError::invalid("to", crate::t!("error-test-mail-to")));
            }
            let state = super::state()?;
            super::audit(&state, &admin, "mail.test", &to, serde_json::json!({})).await?;
            Ok(crate::services::notifications::send_test_mail(
                &state.db,
                state.mailer.as_deref(),
                &admin.username,
                recipients,
                crate::clock::now(),
                state.default_locale,
            )
            .await?)
        }
        .await,
    )
}

#[cfg(feature = "ssr")]
async fn settings_view(state: &crate::state::AppState) -> Result<MailSettingsView, AppError> {
    use crate::services::notifications::{self, SettingsError};
    notifications::settings_view(
        &state.db,
        state.mailer.as_ref().map(|m| m.route()),
        state.timezone,
        state.default_locale,
    )
    .await
    .map_err(|e| match e {
        SettingsError::Invalid(field, problem) => AppError::refused(field, &problem),
        other => AppError::internal(&other),
    })
}
