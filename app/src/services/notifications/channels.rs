//! Notification channels: stored with their URL and signing secret sealed under the secret key
//! (bound to the channel's name), listed with the host only.

use crate::problem;
use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, NotSet, QueryFilter,
    QueryOrder, Set,
};
use serde::{Deserialize, Serialize};

use crate::domain::chat::ChannelKind;
use crate::domain::email;
use crate::entities::channel;
use crate::services::audit::{self, Actor};
use crate::services::secrets::SecretKey;
use crate::services::sql::begin_write;

#[derive(Debug, thiserror::Error)]
pub enum ChannelError {
    #[error("{0}")]
    Invalid(crate::domain::Problem),
    #[error("a channel named '{0}' already exists")]
    Taken(String),
    #[error("there is no channel named '{0}'")]
    NotFound(String),
    #[error(
        "the channel '{0}' cannot be opened with this node's secret key: every node needs the \
         same secret_key_file"
    )]
    WrongKey(String),
    #[error("the channel '{0}' is in use by {1}: take it out there first")]
    InUse(String, String),
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// What a new channel needs: a URL for the robots and webhooks (its signing secret when the
/// platform has one), addresses for `email`.
#[derive(Debug, Clone, Default)]
pub struct NewChannel {
    pub name: String,
    pub kind: Option<ChannelKind>,
    pub url: Option<String>,
    pub secret: Option<String>,
    pub to: Vec<String>,
}

/// A channel as anyone may see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Listed {
    pub name: String,
    pub kind: ChannelKind,
    /// Where it points: the URL's host, or the addresses for `email`.
    pub target: String,
    pub signed: bool,
    pub last_answer: Option<String>,
    pub last_delivery_at: Option<DateTime<Utc>>,
    /// The language of its messages (a catalogue tag); `None`: `default_locale`.
    pub locale: Option<String>,
}

/// A channel opened for a delivery.
#[derive(Debug, Clone)]
pub struct Opened {
    pub id: i64,
    pub name: String,
    pub kind: ChannelKind,
    pub url: String,
    pub secret: Option<String>,
    pub to: Vec<String>,
    /// The channel's own language for its messages; `None`: the configured default.
    pub locale: Option<crate::i18n::Locale>,
}

#[derive(Serialize, Deserialize)]
struct Credentials {
    url: String,
    #[serde(default)]
    secret: Option<String>,
}

fn context(name: &str) -> String {
    format!("channel:{name}")
}

fn host_of(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit('@').next()?;
    (!host.is_empty()).then(|| host.to_string())
}

/// Checks `new`; returns the row to insert.
fn validate(new: &NewChannel) -> Result<(ChannelKind, Option<String>, Vec<String>), ChannelError> {
    let invalid = ChannelError::Invalid;
    crate::domain::secrets::SecretName::parse(&new.name).map_err(|_| {
        ChannelError::Invalid(problem!(
            "error-channel-name",
            name = new.name.trim().to_string()
        ))
    })?;
    let kind = new
        .kind
        .ok_or_else(|| invalid(problem!("error-channel-kind")))?;
    match kind {
        ChannelKind::Email => {
            if new.to.is_empty() {
                return Err(invalid(problem!("error-channel-to")));
            }
            let mut to = Vec::new();
            for address in &new.to {
                let parsed = email::EmailAddress::parse(address)
                    .map_err(|e| ChannelError::Invalid(e.problem()))?;
                to.push(parsed.to_string());
            }
            Ok((kind, None, to))
        }
        _ => {
            let url = new
                .url
                .as_deref()
                .map(str::trim)
                .filter(|u| !u.is_empty())
                .ok_or_else(|| invalid(problem!("error-channel-url-missing")))?;
            if !(url.starts_with("https://") || url.starts_with("http://"))
                || url.contains(char::is_whitespace)
                || host_of(url).is_none()
            {
                return Err(invalid(problem!("error-channel-url")));
            }
            if kind == ChannelKind::Webhook
                && let Some(secret) = new.secret.as_deref().filter(|s| !s.is_empty())
                && !secret.starts_with("whsec_")
            {
                return Err(invalid(problem!("error-channel-secret")));
            }
            Ok((kind, Some(url.to_string()), Vec::new()))
        }
    }
}

/// Adds a channel, and records who did.
pub async fn add(
    db: &sea_orm::DatabaseConnection,
    key: &SecretKey,
    new: &NewChannel,
    who: &Actor<'_>,
    now: DateTime<Utc>,
) -> Result<Listed, ChannelError> {
    let txn = begin_write(db).await?;
    let added = insert(&txn, key, new, now).await?;
    let detail = serde_json::json!({ "kind": added.kind, "target": added.target });
    audit::record(&txn, who, "channel.created", &added.name, detail, now).await?;
    txn.commit().await?;
    Ok(added)
}

async fn insert(
    db: &impl ConnectionTrait,
    key: &SecretKey,
    new: &NewChannel,
    now: DateTime<Utc>,
) -> Result<Listed, ChannelError> {
    let (kind, url, to) = validate(new)?;
    let name = new.name.trim().to_string();
    if channel::Entity::find()
        .filter(channel::Column::Name.eq(&name))
        .one(db)
        .await?
        .is_some()
    {
        return Err(ChannelError::Taken(name));
    }
    let sealed = url.as_ref().map(|url| {
        let credentials = Credentials {
            url: url.clone(),
            secret: new.secret.clone().filter(|s| !s.is_empty()),
        };
        key.seal_value(
            &context(&name),
            &serde_json::to_string(&credentials).unwrap_or_default(),
        )
    });
    let row = channel::ActiveModel {
        name: Set(name),
        kind: Set(kind),
        host: Set(url.as_deref().and_then(host_of)),
        sealed: Set(sealed),
        recipients: Set(to.join(", ")),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
    .insert(db)
    .await?;
    Ok(listed(
        row,
        new.secret.as_ref().is_some_and(|s| !s.is_empty()),
    ))
}

/// What an edit changes: `None` keeps the value (a URL and a secret are never shown, so a
/// blank field means "as it is").
#[derive(Debug, Clone, Default)]
pub struct ChannelChange {
    pub url: Option<String>,
    pub secret: Option<String>,
    /// Drops the signing secret.
    pub clear_secret: bool,
    /// For `email`: the new addresses.
    pub to: Option<Vec<String>>,
    /// The language of its messages: `Some(None)` follows `default_locale` again; `None` keeps
    /// it as it is.
    pub locale: Option<Option<crate::i18n::Locale>>,
}

/// Changes a channel's URL, secret or addresses, and records who did; its kind and name stay
/// (make a new channel for another kind). Nothing changes unless the result is a valid
/// channel.
pub async fn edit(
    db: &sea_orm::DatabaseConnection,
    key: &SecretKey,
    name: &str,
    change: &ChannelChange,
    who: &Actor<'_>,
    now: DateTime<Utc>,
) -> Result<Listed, ChannelError> {
    let txn = begin_write(db).await?;
    let edited = update(&txn, key, name, change, now).await?;
    let detail = serde_json::json!({ "target": edited.target, "signed": edited.signed });
    audit::record(&txn, who, "channel.changed", &edited.name, detail, now).await?;
    txn.commit().await?;
    Ok(edited)
}

async fn update(
    db: &impl ConnectionTrait,
    key: &SecretKey,
    name: &str,
    change: &ChannelChange,
    now: DateTime<Utc>,
) -> Result<Listed, ChannelError> {
    let row = channel::Entity::find()
        .filter(channel::Column::Name.eq(name))
        .one(db)
        .await?
        .ok_or_else(|| ChannelError::NotFound(name.to_string()))?;
    let given = |v: &Option<String>| {
        v.as_deref()
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_string)
    };
    let (old_url, old_secret) = match (row.kind, opened_credentials(key, &row)) {
        (ChannelKind::Email, _) => (None, None),
        (_, Some(c)) => (Some(c.url), c.secret),
        // Without the old URL only a complete replacement can be saved.
        (_, None) if given(&change.url).is_some() => (None, None),
        (_, None) => return Err(ChannelError::WrongKey(row.name)),
    };
    let secret = if change.clear_secret {
        None
    } else {
        given(&change.secret).or(old_secret)
    };
    let new = NewChannel {
        name: row.name.clone(),
        kind: Some(row.kind),
        url: given(&change.url).or(old_url),
        secret,
        to: change.to.clone().unwrap_or_else(|| {
            row.recipients
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect()
        }),
    };
    let (_, url, to) = validate(&new)?;
    let sealed = url.as_ref().map(|url| {
        let credentials = Credentials {
            url: url.clone(),
            secret: new.secret.clone(),
        };
        key.seal_value(
            &context(&row.name),
            &serde_json::to_string(&credentials).unwrap_or_default(),
        )
    });
    let updated = channel::ActiveModel {
        id: Set(row.id),
        host: Set(url.as_deref().and_then(host_of)),
        sealed: Set(sealed),
        recipients: Set(to.join(", ")),
        updated_at: Set(now),
        locale: match change.locale {
            Some(locale) => Set(locale.map(crate::i18n::Locale::tag)),
            None => NotSet,
        },
        ..Default::default()
    }
    .update(db)
    .await?;
    Ok(listed(updated, new.secret.is_some()))
}

fn listed(row: channel::Model, signed: bool) -> Listed {
    Listed {
        target: match row.kind {
            ChannelKind::Email => row.recipients.clone(),
            _ => row.host.clone().unwrap_or_default(),
        },
        name: row.name,
        kind: row.kind,
        signed,
        last_answer: row.last_answer,
        last_delivery_at: row.last_delivery_at,
        locale: row.locale,
    }
}

/// Every channel; `key` tells which are signed (a channel that does not open is listed
/// unsigned, and [`open`] names the problem).
pub async fn list(db: &impl ConnectionTrait, key: &SecretKey) -> Result<Vec<Listed>, DbErr> {
    let rows = channel::Entity::find()
        .order_by_asc(channel::Column::Name)
        .all(db)
        .await?;
    Ok(rows
        .into_iter()
        .map(|row| {
            let signed = opened_credentials(key, &row).is_some_and(|c| c.secret.is_some());
            listed(row, signed)
        })
        .collect())
}

fn opened_credentials(key: &SecretKey, row: &channel::Model) -> Option<Credentials> {
    let sealed = row.sealed.as_deref()?;
    let text = key.open_value(&context(&row.name), sealed)?;
    serde_json::from_str(&text).ok()
}

pub async fn open(
    db: &impl ConnectionTrait,
    key: &SecretKey,
    name: &str,
) -> Result<Opened, ChannelError> {
    let row = channel::Entity::find()
        .filter(channel::Column::Name.eq(name))
        .one(db)
        .await?
        .ok_or_else(|| ChannelError::NotFound(name.to_string()))?;
    let (url, secret) = match row.kind {
        ChannelKind::Email => (String::new(), None),
        _ => {
            let credentials = opened_credentials(key, &row)
                .ok_or_else(|| ChannelError::WrongKey(row.name.clone()))?;
            (credentials.url, credentials.secret)
        }
    };
    Ok(Opened {
        locale: row.locale.as_deref().and_then(crate::i18n::Locale::parse),
        id: row.id,
        name: row.name,
        kind: row.kind,
        url,
        secret,
        to: row
            .recipients
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect(),
    })
}

/// Records the platform's answer to a delivery or test.
pub async fn answered(
    db: &impl ConnectionTrait,
    id: i64,
    answer: &str,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    channel::ActiveModel {
        id: Set(id),
        last_answer: Set(Some(answer.chars().take(1000).collect())),
        last_delivery_at: Set(Some(now)),
        ..Default::default()
    }
    .update(db)
    .await?;
    Ok(())
}

/// Where a channel is named: the jobs whose alerts or escalations go to it, and the digest.
pub async fn users(db: &impl ConnectionTrait, name: &str) -> Result<Vec<String>, DbErr> {
    use crate::entities::job;
    use sea_orm::sea_query::Condition;
    let quoted = serde_json::to_string(name).unwrap_or_default();
    let mut users: Vec<String> = job::Entity::find()
        .filter(
            Condition::any()
                .add(job::Column::AlertChannels.contains(&quoted))
                .add(job::Column::EscalateChannels.contains(&quoted)),
        )
        .order_by_asc(job::Column::Name)
        .all(db)
        .await?
        .into_iter()
        .filter(|j| {
            // `contains` is a LIKE: confirm on the parsed lists.
            let has = |json: &str| {
                serde_json::from_str::<Vec<String>>(json)
                    .unwrap_or_default()
                    .iter()
                    .any(|n| n == name)
            };
            has(&j.alert_channels) || has(&j.escalate_channels)
        })
        .map(|j| format!("job {}", j.name))
        .collect();
    if super::channels(db).await?.iter().any(|n| n == name) {
        users.push("the digest and trend alerts (Notifications page)".into());
    }
    for report in crate::entities::traffic_report::Entity::find()
        .filter(crate::entities::traffic_report::Column::Channels.contains(&quoted))
        .order_by_asc(crate::entities::traffic_report::Column::Site)
        .all(db)
        .await?
    {
        let names: Vec<String> = serde_json::from_str(&report.channels).unwrap_or_default();
        if names.iter().any(|n| n == name) {
            users.push(format!("the traffic report of {}", report.site));
        }
    }
    Ok(users)
}

/// Removes a channel no job and no digest names, and records who did; its sent and waiting
/// messages stay listed.
pub async fn remove(
    db: &sea_orm::DatabaseConnection,
    name: &str,
    who: &Actor<'_>,
    now: DateTime<Utc>,
) -> Result<(), ChannelError> {
    let txn = begin_write(db).await?;
    let users = users(&txn, name).await?;
    if !users.is_empty() {
        return Err(ChannelError::InUse(name.to_string(), users.join(", ")));
    }
    let deleted = channel::Entity::delete_many()
        .filter(channel::Column::Name.eq(name))
        .exec(&txn)
        .await?
        .rows_affected;
    if deleted == 0 {
        return Err(ChannelError::NotFound(name.to_string()));
    }
    audit::record(
        &txn,
        who,
        "channel.removed",
        name,
        serde_json::json!({}),
        now,
    )
    .await?;
    txn.commit().await?;
    Ok(())
}

/// Every channel's credentials sealed again from `old` to `new` (`crate::services::sealed`); the count.
pub(crate) async fn reseal(
    db: &impl ConnectionTrait,
    old: &SecretKey,
    new: &SecretKey,
) -> Result<usize, crate::services::secrets::SecretError> {
    let rows = channel::Entity::find()
        .filter(channel::Column::Sealed.is_not_null())
        .all(db)
        .await?;
    for row in &rows {
        let sealed = row.sealed.as_deref().unwrap_or_default();
        let resealed = old.reseal_value(new, &context(&row.name), sealed)?;
        channel::ActiveModel {
            id: Set(row.id),
            sealed: Set(Some(resealed)),
            ..Default::default()
        }
        .update(db)
        .await?;
    }
    Ok(rows.len())
}

/// Opens one channel's credentials with `key`, if any channel has some: the start-up check.
pub(crate) async fn open_one(
    db: &impl ConnectionTrait,
    key: &SecretKey,
) -> Result<(), crate::services::secrets::SecretError> {
    let Some(row) = channel::Entity::find()
        .filter(channel::Column::Sealed.is_not_null())
        .one(db)
        .await?
    else {
        return Ok(());
    };
    key.check_opens(
        &context(&row.name),
        row.sealed.as_deref().unwrap_or_default(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_is_all_that_shows() {
        assert_eq!(
            host_of("https://oapi.dingtalk.com/robot/send?access_token=abc").as_deref(),
            Some("oapi.dingtalk.com")
        );
        assert_eq!(
            host_of("https://u:p@hooks.example:8443/x").as_deref(),
            Some("hooks.example:8443")
        );
        assert_eq!(host_of("not a url"), None);
    }

    #[test]
    fn new_channels_are_checked() {
        let ok = NewChannel {
            name: "ops-ding".into(),
            kind: Some(ChannelKind::Dingtalk),
            url: Some("https://oapi.dingtalk.com/robot/send?access_token=t".into()),
            ..Default::default()
        };
        assert!(validate(&ok).is_ok());
        for bad in [
            NewChannel {
                name: "bad name".into(),
                ..ok.clone()
            },
            NewChannel {
                url: None,
                ..ok.clone()
            },
            NewChannel {
                url: Some("ftp://x".into()),
                ..ok.clone()
            },
            NewChannel {
                kind: Some(ChannelKind::Email),
                ..ok.clone()
            },
            NewChannel {
                kind: Some(ChannelKind::Webhook),
                secret: Some("plain".into()),
                ..ok.clone()
            },
        ] {
            assert!(validate(&bad).is_err(), "{bad:?}");
        }
    }
}
