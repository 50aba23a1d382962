//! The sender: every few seconds, claims due mails and delivers them (see [`super`]).

use std::future::Future;
use std::time::Duration;

use app::entities::mail_outbox;
use app::services::outbox::{self, Delivery};
use chrono::{DateTime, Utc};
use sea_orm::{DatabaseConnection, DbErr};

use super::{MAX_ATTEMPTS, MailSettings, SmtpOutcome, backoff, build, send_smtp};

/// How often the outbox is looked at.
pub const POLL: Duration = Duration::from_secs(2);
/// How long a claim lasts: longer than an SMTP conversation's timeout.
const CLAIM: chrono::Duration = chrono::Duration::minutes(2);
/// Mails claimed at once.
const BATCH: u64 = 20;

pub struct Sender {
    pub db: DatabaseConnection,
    pub settings: MailSettings,
    /// This instance's name on its claims.
    pub name: String,
}

impl Sender {
    /// Delivers every mail due at `now`; returns how many were attempted.
    pub async fn deliver_due(&self, now: DateTime<Utc>) -> Result<usize, DbErr> {
        let mut attempted = 0;
        loop {
            let mails = outbox::claim(&self.db, &self.name, now, now + CLAIM, BATCH).await?;
            if mails.is_empty() {
                return Ok(attempted);
            }
            for mail in &mails {
                let delivery = self.deliver(mail, now).await;
                match &delivery {
                    Delivery::Sent { reply } => {
                        tracing::info!(id = mail.id, kind = %mail.kind, to = %mail.recipients, %reply, "mail sent")
                    }
                    Delivery::Written { path } => {
                        tracing::info!(id = mail.id, kind = %mail.kind, %path, "mail written (no SMTP server configured)")
                    }
                    Delivery::Retry { error, at } => {
                        tracing::warn!(id = mail.id, %error, retry_at = %at, "mail not delivered; will retry")
                    }
                    Delivery::Failed { error } => {
                        tracing::error!(id = mail.id, %error, "mail refused; kept in the outbox")
                    }
                }
                if !outbox::record(&self.db, mail.id, &self.name, &delivery, now).await? {
                    tracing::warn!(id = mail.id, "claim lost before recording the delivery");
                }
                attempted += 1;
            }
        }
    }

    async fn deliver(&self, mail: &mail_outbox::Model, now: DateTime<Utc>) -> Delivery {
        let message = match build(&self.settings, mail) {
            Ok(message) => message,
            Err(e) => {
                return Delivery::Failed {
                    error: e.to_string(),
                };
            }
        };
        let attempt = u32::try_from(mail.attempts).unwrap_or(0) + 1;
        let retry = |error: String| {
            if mail.attempts + 1 >= MAX_ATTEMPTS {
                Delivery::Failed {
                    error: format!("{error} (gave up after {attempt} attempts)"),
                }
            } else {
                Delivery::Retry {
                    error,
                    at: now
                        + chrono::Duration::from_std(backoff(attempt))
                            .unwrap_or(chrono::Duration::hours(1)),
                }
            }
        };
        match &self.settings.transport {
            None => {
                let path = self
                    .settings
                    .outbox_dir
                    .join(format!("{}-{}.eml", mail.id, mail.kind));
                let written = async {
                    tokio::fs::create_dir_all(&self.settings.outbox_dir).await?;
                    tokio::fs::write(&path, message.formatted()).await
                };
                match written.await {
                    Ok(()) => Delivery::Written {
                        path: path.display().to_string(),
                    },
                    Err(e) => retry(format!("could not write {}: {e}", path.display())),
                }
            }
            Some(transport) => match send_smtp(transport, message).await {
                SmtpOutcome::Accepted(reply) => Delivery::Sent { reply },
                SmtpOutcome::Permanent(error) => Delivery::Failed { error },
                SmtpOutcome::Transient(error) => retry(error),
            },
        }
    }

    /// Delivers due mail until `stop` resolves.
    pub async fn run(self, stop: impl Future<Output = ()>) {
        tokio::pin!(stop);
        loop {
            if let Err(e) = self.deliver_due(crate::clock::now()).await {
                tracing::warn!(error = %e, "could not read the mail outbox");
            }
            tokio::select! {
                () = &mut stop => return,
                () = tokio::time::sleep(POLL) => {}
            }
        }
    }
}

impl app::mailer::Mailer for Sender {
    fn deliver_now(
        &self,
    ) -> std::pin::Pin<Box<dyn Future<Output = Result<(), app::mailer::DeliverError>> + Send + '_>>
    {
        Box::pin(async move {
            self.deliver_due(crate::clock::now())
                .await
                .map(|_| ())
                .map_err(|e| Box::new(e) as app::mailer::DeliverError)
        })
    }

    fn route(&self) -> String {
        match &self.settings.server {
            Some(server) => format!("SMTP server {server}"),
            None => format!(
                "no SMTP server configured (smtp_url): mails are kept here and written to {}",
                self.settings.outbox_dir.display()
            ),
        }
    }

    fn public_url(&self) -> String {
        self.settings.public_url.clone()
    }
}
