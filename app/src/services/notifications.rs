//! The Notifications page's settings: who gets the digest and when it goes out. The time is
//! the `mail-digest` system job's schedule, so the Jobs page and this page show the same thing.

use chrono::Utc;
use sea_orm::sea_query::OnConflict;
use sea_orm::{ActiveValue::Set, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter};

use super::digest::RECIPIENTS_SETTING;
use crate::entities::{job, setting};

/// The system job that sends the digest.
pub const DIGEST_JOB: &str = "mail-digest";

#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("{1}")]
    Invalid(&'static str, String),
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// `HH:MM` (24-hour) as (hour, minute).
pub fn parse_time(text: &str) -> Result<(u32, u32), String> {
    let bad = || format!("'{text}' is not a time of day such as 08:00");
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

pub struct DigestSettings {
    /// As entered, comma-separated; empty: everyone any job alerts.
    pub recipients: String,
    pub job: Option<job::Model>,
}

pub async fn digest_settings(db: &impl ConnectionTrait) -> Result<DigestSettings, DbErr> {
    Ok(DigestSettings {
        recipients: setting::Entity::find_by_id(RECIPIENTS_SETTING)
            .one(db)
            .await?
            .map(|row| row.value)
            .unwrap_or_default(),
        job: job::Entity::find()
            .filter(job::Column::Name.eq(DIGEST_JOB))
            .one(db)
            .await?,
    })
}

/// Saves the recipients and moves the digest job to `time`; nothing changes unless both are
/// valid.
pub async fn save_digest_settings(
    db: &impl ConnectionTrait,
    recipients: &str,
    time: &str,
) -> Result<(), SettingsError> {
    let list = crate::domain::job::address_list(recipients)
        .map_err(|e| SettingsError::Invalid("digest_to", e))?;
    let (hour, minute) = parse_time(time).map_err(|e| SettingsError::Invalid("digest_time", e))?;
    let job = job::Entity::find()
        .filter(job::Column::Name.eq(DIGEST_JOB))
        .one(db)
        .await?
        .ok_or_else(|| {
            SettingsError::Invalid(
                "digest_time",
                format!("the {DIGEST_JOB} job is missing: it is created when a server starts"),
            )
        })?;
    let now = Utc::now();
    setting::Entity::insert(setting::ActiveModel {
        key: Set(RECIPIENTS_SETTING.into()),
        value: Set(list.join(", ")),
        updated_at: Set(now),
    })
    .on_conflict(
        OnConflict::column(setting::Column::Key)
            .update_columns([setting::Column::Value, setting::Column::UpdatedAt])
            .to_owned(),
    )
    .exec_without_returning(db)
    .await?;
    job::Entity::update(job::ActiveModel {
        id: Set(job.id),
        cron: Set(format!("0 {minute} {hour} * * *")),
        updated_at: Set(now),
        ..Default::default()
    })
    .exec(db)
    .await?;
    Ok(())
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
