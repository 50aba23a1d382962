//! The Notifications page's settings: who gets the digest and when it goes out. The time is
//! the `mail-digest` system job's schedule, so the Jobs page and this page show the same thing.

pub mod channel_outbox;
pub mod channels;
pub mod digest;

use crate::problem;
use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use sea_orm::sea_query::OnConflict;
use sea_orm::{ActiveValue::Set, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter};

use crate::domain::email::{self, EmailAddress};
use crate::entities::{job, mail_outbox, setting};
use crate::i18n::Locale;
use crate::mailer::Mailer;
use crate::services::outbox::{self, NewMail};
use crate::views::notifications::{AlertRoute, MailSettingsView, TestMailResult};

/// The system job that sends the digest.
pub const DIGEST_JOB: &str = "mail-digest";

#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("{1}")]
    Invalid(&'static str, crate::domain::Problem),
    #[error("job {job} holds alert addresses the code cannot read; re-save the job")]
    Corrupt { job: String },
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// Text that is not a time of day.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a time of day such as 08:00")]
pub struct BadTime(String);

/// `HH:MM` (24-hour) as (hour, minute).
pub fn parse_time(text: &str) -> Result<(u32, u32), BadTime> {
    let bad = || BadTime(text.to_string());
    let (h, m) = text.trim().split_once(':').ok_or_else(bad)?;
    let (h, m): (u32, u32) = (h.parse().map_err(|_| bad())?, m.parse().map_err(|_| bad())?);
    if h > 23 || m > 59 || text.trim().len() != 5 {
        return Err(bad());
    }
    Ok((h, m))
}

/// The digest job's time as `HH:MM` when its schedule is a daily time, or the cron itself.
pub fn time_of(cron: &str) -> String {
    match cron.split_whitespace().collect::<Vec<_>>().as_slice() {
        ["0", m, h, "*", "*", "*"] => match (h.parse::<u32>(), m.parse::<u32>()) {
            (Ok(h), Ok(m)) if h < 24 && m < 60 => format!("{h:02}:{m:02}"),
            _ => cron.to_string(),
        },
        _ => cron.to_string(),
    }
}

/// The setting naming the language of mails (alerts, the digest, trends, test mails); absent:
/// the configured `default_locale`.
pub const MAIL_LOCALE_SETTING: &str = "mail_locale";

/// The language mails are written in: the [`MAIL_LOCALE_SETTING`], else `default`. A tag whose
/// catalogue is gone reads as unset.
pub async fn mail_locale(db: &impl ConnectionTrait, default: Locale) -> Result<Locale, DbErr> {
    Ok(setting::Entity::find_by_id(MAIL_LOCALE_SETTING)
        .one(db)
        .await?
        .and_then(|row| Locale::parse(&row.value))
        .unwrap_or(default))
}

/// Sets (or, with `None`, clears) the language of mails.
pub async fn set_mail_locale(
    db: &impl ConnectionTrait,
    locale: Option<Locale>,
) -> Result<(), DbErr> {
    match locale {
        None => {
            setting::Entity::delete_by_id(MAIL_LOCALE_SETTING)
                .exec(db)
                .await?;
        }
        Some(locale) => {
            put_setting(db, MAIL_LOCALE_SETTING, locale.tag(), crate::clock::now()).await?;
        }
    }
    Ok(())
}

pub struct DigestSettings {
    /// As entered, comma-separated; empty: everyone any job alerts.
    pub recipients: String,
    /// Channel names, comma-separated.
    pub channels: String,
    pub job: Option<job::Model>,
}

pub async fn digest_settings(db: &impl ConnectionTrait) -> Result<DigestSettings, DbErr> {
    Ok(DigestSettings {
        recipients: setting::Entity::find_by_id(RECIPIENTS_SETTING)
            .one(db)
            .await?
            .map(|row| row.value)
            .unwrap_or_default(),
        channels: channels(db).await?.join(", "),
        job: job::Entity::find()
            .filter(job::Column::Name.eq(DIGEST_JOB))
            .one(db)
            .await?,
    })
}

/// Writes one `settings` row, replacing what it held.
async fn put_setting(
    db: &impl ConnectionTrait,
    key: &str,
    value: String,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    setting::Entity::insert(setting::ActiveModel {
        key: Set(key.to_string()),
        value: Set(value),
        updated_at: Set(now),
    })
    .on_conflict(
        OnConflict::column(setting::Column::Key)
            .update_columns([setting::Column::Value, setting::Column::UpdatedAt])
            .to_owned(),
    )
    .exec_without_returning(db)
    .await?;
    Ok(())
}

/// The digest's settings as typed.
pub struct DigestChange<'a> {
    pub to: &'a str,
    pub channels: &'a str,
    pub time: &'a str,
}

/// Saves the digest's settings and, when given, the language of mails (`Some(None)`: the
/// configured default), and records who did, in one transaction: nothing changes unless all
/// are valid.
pub async fn save_settings(
    db: &sea_orm::DatabaseConnection,
    digest: DigestChange<'_>,
    locale: Option<Option<Locale>>,
    who: &crate::services::audit::Actor<'_>,
    now: DateTime<Utc>,
) -> Result<(), SettingsError> {
    let txn = crate::services::sql::begin_write(db).await?;
    store_digest_settings(&txn, digest.to, digest.channels, digest.time).await?;
    if let Some(locale) = locale {
        set_mail_locale(&txn, locale).await?;
    }
    let detail = serde_json::json!({
        "to": digest.to,
        "channels": digest.channels,
        "time": digest.time,
        "mail_locale": locale.map(|l| l.map(|l| l.tag())),
    });
    crate::services::audit::record(&txn, who, "mail.settings", "digest", detail, now).await?;
    let wake = crate::wake::jobs_changed_in(&txn).await;
    txn.commit().await?;
    wake.after_commit();
    Ok(())
}

/// Saves the recipients and channels and moves the digest job to `time`; nothing changes
/// unless all are valid. What an administrator saves goes through [`save_settings`].
pub async fn save_digest_settings(
    db: &impl ConnectionTrait,
    recipients: &str,
    channels: &str,
    time: &str,
) -> Result<(), SettingsError> {
    store_digest_settings(db, recipients, channels, time).await?;
    crate::wake::jobs_changed(db).await;
    Ok(())
}

/// [`save_digest_settings`] without waking the triggers: the caller does once it commits.
async fn store_digest_settings(
    db: &impl ConnectionTrait,
    recipients: &str,
    channels: &str,
    time: &str,
) -> Result<(), SettingsError> {
    let list = email::address_list(recipients)
        .map_err(|e| SettingsError::Invalid("digest_to", e.problem()))?;
    let mut problem = None;
    let names =
        crate::domain::job::parse::parse_channels("digest_channels", channels, &mut |_, m| {
            problem.get_or_insert(m);
        });
    if let Some(message) = problem {
        return Err(SettingsError::Invalid("digest_channels", message));
    }
    for name in &names {
        if crate::entities::channel::Entity::find()
            .filter(crate::entities::channel::Column::Name.eq(name))
            .one(db)
            .await?
            .is_none()
        {
            return Err(SettingsError::Invalid(
                "digest_channels",
                problem!("error-channel-missing", name = name.clone()),
            ));
        }
    }
    let (hour, minute) = parse_time(time).map_err(|e| {
        SettingsError::Invalid(
            "digest_time",
            problem!("error-time-of-day", text = e.0.clone()),
        )
    })?;
    let job = job::Entity::find()
        .filter(job::Column::Name.eq(DIGEST_JOB))
        .one(db)
        .await?
        .ok_or_else(|| {
            SettingsError::Invalid(
                "digest_time",
                problem!("error-digest-job-missing", job = DIGEST_JOB),
            )
        })?;
    let now = crate::clock::now();
    put_setting(db, RECIPIENTS_SETTING, email::join(&list), now).await?;
    put_setting(db, CHANNELS_SETTING, names.join(", "), now).await?;
    let cron = format!("0 {minute} {hour} * * *");
    let next_fire_at = match (
        crate::domain::cron::CronExpr::parse(&cron),
        crate::domain::cron::parse_timezone(&job.timezone),
    ) {
        (Ok(cron), Ok(zone)) if job.enabled => cron
            .next_after(&zone, now)
            .ok()
            .map(|t| t.with_timezone(&chrono::Utc)),
        _ => None,
    };
    job::Entity::update(job::ActiveModel {
        id: Set(job.id),
        cron: Set(cron),
        next_fire_at: Set(next_fire_at),
        updated_at: Set(now),
        ..Default::default()
    })
    .exec(db)
    .await?;
    Ok(())
}

/// The Notifications page's settings: where mail goes, the digest, every job's alert routes.
/// `route` is what the mailer says of itself (`None`: the mail settings are unusable).
pub async fn settings_view(
    db: &impl ConnectionTrait,
    route: Option<String>,
    zone: Tz,
    default_locale: Locale,
) -> Result<MailSettingsView, SettingsError> {
    let digest = digest_settings(db).await?;
    let jobs = super::jobs::list_models(db).await?;
    let mut routes = Vec::with_capacity(jobs.len());
    let names = |json: &str| {
        serde_json::from_str::<Vec<String>>(json)
            .unwrap_or_default()
            .join(", ")
    };
    for j in jobs {
        let list = |json: &str| -> Result<String, SettingsError> {
            serde_json::from_str::<Vec<EmailAddress>>(json)
                .map(|list| email::join(&list))
                .map_err(|_| SettingsError::Corrupt {
                    job: j.name.clone(),
                })
        };
        routes.push(AlertRoute {
            job_id: j.id,
            to: list(&j.alert_to)?,
            escalate_after: j.escalate_after,
            escalate_to: list(&j.escalate_to)?,
            channels: names(&j.alert_channels),
            escalate_channels: names(&j.escalate_channels),
            job: j.name,
        });
    }
    Ok(MailSettingsView {
        route: route.unwrap_or_else(|| "mail settings unusable: see the server log".into()),
        digest_to: digest.recipients,
        digest_channels: digest.channels,
        digest_time: digest
            .job
            .as_ref()
            .map(|j| time_of(&j.cron))
            .unwrap_or_default(),
        digest_timezone: digest
            .job
            .as_ref()
            .map_or_else(|| zone.name().to_string(), |j| j.timezone.clone()),
        digest_job_id: digest.job.as_ref().map(|j| j.id),
        routes,
        mail_locale: setting::Entity::find_by_id(MAIL_LOCALE_SETTING)
            .one(db)
            .await?
            .and_then(|row| Locale::parse(&row.value))
            .map(Locale::tag),
        default_locale: default_locale.tag(),
    })
}

/// Queues a test mail from `sent_by` to `recipients`, delivers it now, and says what the mail
/// server answered (or what went wrong).
pub async fn send_test_mail(
    db: &impl ConnectionTrait,
    mailer: Option<&dyn Mailer>,
    sent_by: &str,
    recipients: Vec<EmailAddress>,
    now: DateTime<Utc>,
    default_locale: Locale,
) -> Result<TestMailResult, DbErr> {
    let locale = mail_locale(db, default_locale).await?;
    let key = format!("test:{sent_by}:{}", now.timestamp_millis());
    outbox::enqueue(
        db,
        NewMail {
            dedupe_key: key.clone(),
            kind: "test".into(),
            job_id: None,
            run_id: None,
            recipients,
            composed: crate::i18n::mail::test_mail(locale, sent_by),
        },
        now,
    )
    .await?;
    deliver_now(mailer).await;
    let row = mail_outbox::Entity::find_by_dedupe_key(db, &key)
        .await?
        .ok_or_else(|| DbErr::RecordNotFound(format!("the test mail {key}")))?;
    Ok(TestMailResult {
        delivered: row.status.is_delivered(),
        answer: row
            .reply
            .or(row.last_error)
            .unwrap_or_else(|| "not attempted yet".into()),
        status: row.status,
    })
}

/// Delivers what is due now rather than at the sender's next round; a failure is left to the
/// sender, which retries.
pub async fn deliver_now(mailer: Option<&dyn Mailer>) {
    if let Some(mailer) = mailer
        && let Err(e) = mailer.deliver_now().await
    {
        tracing::warn!(error = %e, "could not deliver the outbox now; the sender will");
    }
}

/// The `settings` key holding the digest's recipients (comma-separated).
pub const RECIPIENTS_SETTING: &str = "mail.digest_to";

/// Who gets the digest: the recipients set on the Notifications page, or else everyone any job
/// alerts.
pub async fn recipients(db: &impl ConnectionTrait) -> Result<Vec<EmailAddress>, DbErr> {
    use crate::entities::setting;
    if let Some(row) = setting::Entity::find_by_id(RECIPIENTS_SETTING)
        .one(db)
        .await?
    {
        match email::address_list(&row.value) {
            Ok(list) if !list.is_empty() => return Ok(list),
            Ok(_) => {}
            // Saved through the same parser, so this is a row edited by hand: say so, and
            // fall back to the alert recipients rather than send no digest.
            Err(e) => tracing::error!(
                error = %e,
                setting = RECIPIENTS_SETTING,
                "the digest recipients are unreadable; using every job's alert recipients"
            ),
        }
    }
    let mut all: Vec<EmailAddress> = Vec::new();
    for j in job::Entity::find().all(db).await? {
        match serde_json::from_str::<Vec<EmailAddress>>(&j.alert_to) {
            Ok(list) => all.extend(list),
            Err(e) => tracing::error!(
                job = %j.name,
                error = %e,
                "the job's alert addresses are unreadable; re-save the job"
            ),
        }
    }
    all.sort();
    all.dedup();
    Ok(all)
}

/// The `settings` key holding the channels the digest and the trend alerts go to
/// (comma-separated names).
pub const CHANNELS_SETTING: &str = "channels.digest";

/// The channels the digest and the trend alerts go to.
pub async fn channels(db: &impl ConnectionTrait) -> Result<Vec<String>, DbErr> {
    use crate::entities::setting;
    Ok(setting::Entity::find_by_id(CHANNELS_SETTING)
        .one(db)
        .await?
        .map(|row| {
            row.value
                .split(',')
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_of_day() {
        assert_eq!(parse_time("08:00"), Ok((8, 0)));
        assert_eq!(parse_time("23:59"), Ok((23, 59)));
        for bad in ["24:00", "8:00", "08:60", "noon", "08-00", ""] {
            assert!(parse_time(bad).is_err(), "{bad}");
        }
        assert_eq!(time_of("0 30 7 * * *"), "07:30");
        assert_eq!(time_of("0 0 */2 * * *"), "0 0 */2 * * *");
    }
}
