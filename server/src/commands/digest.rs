//! `bulwark digest send [--to ADDR] [--dry-run]`: the daily digest, now.

use anyhow::Context;
use app::domain::email;
use app::domain::mail::{MailStatus, with_console};
use app::services::notifications::digest;
use sea_orm::DatabaseConnection;

use crate::config::Config;
use crate::mail::sender::Sender;

pub async fn send(
    db: &DatabaseConnection,
    config: &Config,
    to: &[String],
    dry_run: bool,
) -> anyhow::Result<()> {
    let zone = config.zone();
    let now = crate::clock::now();
    let recipients = if to.is_empty() {
        app::services::notifications::recipients(db)
            .await
            .context("could not read the digest recipients")?
    } else {
        email::address_list(&to.join(",")).map_err(|e| anyhow::anyhow!("--to: {e}"))?
    };
    if dry_run {
        let locale = app::services::notifications::mail_locale(db, config.locale())
            .await
            .context("could not read the mail language")?;
        let mail = app::i18n::digest::compose(
            &digest::gather(db, now)
                .await
                .context("could not read the runs")?,
            zone,
            locale,
        );
        println!("To: {}", email::join(&recipients));
        println!("Subject: {}\n", mail.subject);
        print!("{}", with_console(&mail.text, &config.public_url()));
        return Ok(());
    }
    anyhow::ensure!(
        !recipients.is_empty(),
        "nobody to send the digest to: pass --to ADDR, or set the recipients on the Notifications page"
    );
    let key = format!("digest:manual:{}", now.timestamp_millis());
    digest::queue(
        db,
        now,
        zone,
        recipients.clone(),
        &[],
        key.clone(),
        config.locale(),
    )
    .await
    .context("could not queue the digest")?;
    // Deliver it now rather than waiting for a server's sender.
    let sender = Sender {
        db: db.clone(),
        settings: config.mail_settings()?,
        name: format!("cli-{}", std::process::id()),
    };
    sender
        .deliver_due(now)
        .await
        .context("could not deliver the outbox")?;
    let row = app::entities::mail_outbox::Entity::find_by_dedupe_key(db, &key)
        .await?
        .context("the queued digest disappeared")?;
    let reply = row.reply.as_deref().unwrap_or_default();
    let error = row.last_error.as_deref().unwrap_or_default();
    match row.status {
        MailStatus::Sent => println!("digest sent to {}: {reply}", email::join(&recipients)),
        MailStatus::Written => println!("no smtp_url configured: digest {reply}"),
        MailStatus::Pending => println!(
            "digest queued (mail #{}) but not delivered yet: {error}; a running server retries it",
            row.id
        ),
        MailStatus::Failed => anyhow::bail!(
            "the SMTP server refused the digest (mail #{}): {error}",
            row.id
        ),
    }
    Ok(())
}
