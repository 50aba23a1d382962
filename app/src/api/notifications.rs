//! The Notifications page: the outbox, previews, resends, the digest settings, a test mail.

use chrono::{DateTime, Utc};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use super::AppError;

/// A mail as the outbox table shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutboxRow {
    pub id: i64,
    pub created_at: DateTime<Utc>,
    pub kind: String,
    pub recipients: String,
    pub subject: String,
    pub status: String,
    pub attempts: i32,
    pub next_attempt_at: DateTime<Utc>,
    pub sent_at: Option<DateTime<Utc>>,
    /// The SMTP server's answer when delivered (or where the .eml file went).
    pub reply: Option<String>,
    pub last_error: Option<String>,
    pub run_id: Option<i64>,
}

#[cfg(feature = "ssr")]
impl From<crate::entities::mail_outbox::Model> for OutboxRow {
    fn from(m: crate::entities::mail_outbox::Model) -> Self {
        OutboxRow {
            id: m.id,
            created_at: m.created_at,
            kind: m.kind,
            recipients: m.recipients,
            subject: m.subject,
            status: m.status,
            attempts: m.attempts,
            next_attempt_at: m.next_attempt_at,
            sent_at: m.sent_at,
            reply: m.reply,
            last_error: m.last_error,
            run_id: m.run_id,
        }
    }
}

/// The statuses the outbox filter offers.
pub const STATUSES: &[&str] = &["pending", "sent", "written", "failed"];

/// How many mails the outbox shows.
pub const OUTBOX_LIMIT: u64 = 200;

#[server(endpoint = "mail/outbox")]
pub async fn outbox(status: Option<String>) -> Result<Vec<OutboxRow>, AppError> {
    super::respond(
        async {
            super::auth::require_user()?;
            let status = status.filter(|s| !s.is_empty());
            if let Some(s) = &status
                && !STATUSES.contains(&s.as_str())
            {
                return Err(AppError::invalid(
                    "status",
                    format!("'{s}' is not a status: use {}", STATUSES.join(", ")),
                ));
            }
            let state = super::state()?;
            let rows =
                crate::services::outbox::list(&state.db, status.as_deref(), OUTBOX_LIMIT).await?;
            Ok(rows.into_iter().map(OutboxRow::from).collect())
        }
        .await,
    )
}

/// A mail as it is (or was) sent, links pointing at the console.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MailPreview {
    pub id: i64,
    pub subject: String,
    pub recipients: String,
    pub text: String,
    pub html: Option<String>,
}

#[server(endpoint = "mail/preview")]
pub async fn preview_mail(id: i64) -> Result<MailPreview, AppError> {
    use crate::domain::mail::with_console;
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            let mail = crate::services::outbox::get(&state.db, id)
                .await?
                .ok_or_else(|| AppError::NotFound(format!("mail {id}")))?;
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

#[server(endpoint = "mail/resend")]
pub async fn resend_mail(id: i64) -> Result<OutboxRow, AppError> {
    super::respond(
        async {
            let admin = super::auth::require_admin("resend mail")?;
            let state = super::state()?;
            let now = Utc::now();
            if !crate::services::outbox::resend(&state.db, id, now).await? {
                return Err(AppError::NotFound(format!("mail {id}")));
            }
            super::audit(
                &state,
                &admin,
                "mail.resend",
                &format!("mail {id}"),
                serde_json::json!({}),
            )
            .await?;
            deliver_now(&state).await;
            let row = crate::services::outbox::get(&state.db, id)
                .await?
                .ok_or_else(|| AppError::NotFound(format!("mail {id}")))?;
            Ok(row.into())
        }
        .await,
    )
}

/// Who a job's alerts go to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AlertRoute {
    pub job_id: i64,
    pub job: String,
    pub to: String,
    pub escalate_after: i32,
    pub escalate_to: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MailSettingsView {
    /// Where mail goes (SMTP server or .eml directory).
    pub route: String,
    pub digest_to: String,
    /// `HH:MM`, or the digest job's cron when it is not a daily time.
    pub digest_time: String,
    pub digest_timezone: String,
    pub digest_job_id: Option<i64>,
    pub routes: Vec<AlertRoute>,
}

#[server(endpoint = "mail/settings")]
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

#[server(endpoint = "mail/settings/save")]
pub async fn save_mail_settings(
    digest_to: String,
    digest_time: String,
) -> Result<MailSettingsView, AppError> {
    use crate::services::notifications::{SettingsError, save_digest_settings};
    super::respond(
        async {
            let admin = super::auth::require_admin("change mail settings")?;
            let state = super::state()?;
            save_digest_settings(&state.db, &digest_to, &digest_time)
                .await
                .map_err(|e| match e {
                    SettingsError::Invalid(field, message) => AppError::invalid(field, message),
                    SettingsError::Db(e) => e.into(),
                })?;
            super::audit(
                &state,
                &admin,
                "mail.settings",
                "digest",
                serde_json::json!({ "to": digest_to, "time": digest_time }),
            )
            .await?;
            settings_view(&state).await
        }
        .await,
    )
}

/// What became of a test mail: delivered or not, and the server's words either way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestMailResult {
    pub delivered: bool,
    pub status: String,
    pub answer: String,
}

#[server(endpoint = "mail/test")]
pub async fn send_test_mail(to: String) -> Result<TestMailResult, AppError> {
    use crate::services::outbox::{self, NewMail, status};
    super::respond(
        async {
            let admin = super::auth::require_admin("send a test mail")?;
            let recipients =
                crate::domain::job::address_list(&to).map_err(|e| AppError::invalid("to", e))?;
            if recipients.is_empty() {
                return Err(AppError::invalid(
                    "to",
                    "enter an address to send the test mail to",
                ));
            }
            let state = super::state()?;
            let now = Utc::now();
            let key = format!("test:{}:{}", admin.username, now.timestamp_millis());
            outbox::enqueue(
                &state.db,
                NewMail {
                    dedupe_key: key.clone(),
                    kind: "test".into(),
                    job_id: None,
                    run_id: None,
                    recipients,
                    composed: crate::domain::mail::test_mail(&admin.username),
                },
                now,
            )
            .await?;
            super::audit(&state, &admin, "mail.test", &to, serde_json::json!({})).await?;
            deliver_now(&state).await;
            let row = crate::entities::mail_outbox::Entity::find_by_dedupe_key(&state.db, &key)
                .await?
                .ok_or_else(|| AppError::Internal("the test mail disappeared".into()))?;
            Ok(TestMailResult {
                delivered: row.status == status::SENT || row.status == status::WRITTEN,
                answer: row
                    .reply
                    .clone()
                    .or(row.last_error.clone())
                    .unwrap_or_else(|| "not attempted yet".into()),
                status: row.status,
            })
        }
        .await,
    )
}

#[cfg(feature = "ssr")]
async fn deliver_now(state: &crate::state::AppState) {
    if let Some(mailer) = &state.mailer
        && let Err(e) = mailer.deliver_now().await
    {
        tracing::warn!(error = %e, "could not deliver the outbox now; the sender will");
    }
}

#[cfg(feature = "ssr")]
async fn settings_view(state: &crate::state::AppState) -> Result<MailSettingsView, AppError> {
    use crate::services::notifications::{digest_settings, time_of};
    let digest = digest_settings(&state.db).await?;
    let jobs = crate::services::jobs::list_models(&state.db).await?;
    let list = |json: &str| {
        serde_json::from_str::<Vec<String>>(json)
            .unwrap_or_default()
            .join(", ")
    };
    Ok(MailSettingsView {
        route: state.mailer.as_ref().map_or_else(
            || "mail settings unusable: see the server log".into(),
            |m| m.route(),
        ),
        digest_to: digest.recipients,
        digest_time: digest
            .job
            .as_ref()
            .map(|j| time_of(&j.cron))
            .unwrap_or_default(),
        digest_timezone: digest
            .job
            .as_ref()
            .map(|j| j.timezone.clone())
            .unwrap_or_else(|| state.timezone.clone()),
        digest_job_id: digest.job.as_ref().map(|j| j.id),
        routes: jobs
            .into_iter()
            .map(|j| AlertRoute {
                job_id: j.id,
                to: list(&j.alert_to),
                escalate_after: j.escalate_after,
                escalate_to: list(&j.escalate_to),
                job: j.name,
            })
            .collect(),
    })
}
