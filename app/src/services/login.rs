//! Signing in: password check, throttling of failures, and the audit trail of both.
//!
//! Throttling counts `login.failed` rows in the audit log, so it holds across restarts and
//! across instances sharing one database. A username is locked after
//! [`MAX_FAILURES_PER_USER`] failures within [`WINDOW_MINUTES`] (counted since its last
//! success); an address after [`MAX_FAILURES_PER_IP`], which stops one client guessing across
//! many names.

use chrono::{DateTime, Duration, Utc};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DbErr, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder,
};
use serde_json::json;

use super::audit::{self, Actor};
use super::passwords::{self, PasswordError};
use super::users;
use crate::domain::account::CurrentUser;
use crate::entities::audit_log;

pub const MAX_FAILURES_PER_USER: u64 = 5;
pub const MAX_FAILURES_PER_IP: u64 = 20;
pub const WINDOW_MINUTES: i64 = 15;

pub const ACTION_FAILED: &str = "login.failed";
pub const ACTION_SUCCEEDED: &str = "login.succeeded";

#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    #[error("unknown username or wrong password")]
    BadCredentials,
    #[error("too many failed sign-ins; try again in {minutes} minute(s)")]
    Throttled { minutes: i64 },
    #[error(transparent)]
    Password(#[from] PasswordError),
    #[error("could not check the sign-in: {0}")]
    Db(#[from] DbErr),
}

/// Checks a username and password. Unknown users and wrong passwords fail alike, in the same
/// time, with the same message.
pub async fn authenticate(
    db: &impl ConnectionTrait,
    username: &str,
    password: &str,
    ip: Option<&str>,
    now: DateTime<Utc>,
) -> Result<CurrentUser, LoginError> {
    let username = username.trim();
    if let Some(minutes) = throttled(db, username, ip, now).await? {
        return Err(LoginError::Throttled { minutes });
    }

    let account = users::find_by_username(db, username).await?;
    let verified = match &account {
        Some(user) => passwords::verify(user.password_hash.clone(), password.to_string()).await?,
        None => {
            passwords::burn_time(password.to_string()).await?;
            false
        }
    };

    let actor = Actor {
        id: account.as_ref().map(|u| u.id),
        name: username,
        ip,
    };
    match account {
        Some(user) if verified => {
            let role = user.role;
            audit::record(db, &actor, ACTION_SUCCEEDED, username, json!({}), now).await?;
            Ok(CurrentUser {
                id: user.id,
                username: user.username,
                role,
            })
        }
        _ => {
            audit::record(db, &actor, ACTION_FAILED, username, json!({}), now).await?;
            Err(LoginError::BadCredentials)
        }
    }
}

/// `Some(minutes to wait)` when this username or address has failed too often lately.
async fn throttled(
    db: &impl ConnectionTrait,
    username: &str,
    ip: Option<&str>,
    now: DateTime<Utc>,
) -> Result<Option<i64>, DbErr> {
    let window_start = now - Duration::minutes(WINDOW_MINUTES);

    let last_success = audit_log::Entity::find()
        .filter(audit_log::Column::Action.eq(ACTION_SUCCEEDED))
        .filter(audit_log::Column::Subject.eq(username))
        .filter(audit_log::Column::At.gt(window_start))
        .order_by_desc(audit_log::Column::At)
        .one(db)
        .await?
        .map(|row| row.at);
    let since = last_success.map_or(window_start, |t| t.max(window_start));

    let user_failures = audit_log::Entity::find()
        .filter(audit_log::Column::Action.eq(ACTION_FAILED))
        .filter(audit_log::Column::Subject.eq(username))
        .filter(audit_log::Column::At.gt(since));
    if user_failures.clone().count(db).await? >= MAX_FAILURES_PER_USER {
        return Ok(Some(wait_minutes(db, user_failures, now).await?));
    }

    if let Some(ip) = ip {
        let ip_failures = audit_log::Entity::find()
            .filter(audit_log::Column::Action.eq(ACTION_FAILED))
            .filter(audit_log::Column::Ip.eq(ip))
            .filter(audit_log::Column::At.gt(window_start));
        if ip_failures.clone().count(db).await? >= MAX_FAILURES_PER_IP {
            return Ok(Some(wait_minutes(db, ip_failures, now).await?));
        }
    }
    Ok(None)
}

/// Minutes until the oldest failure in the window ages out, at least one.
async fn wait_minutes(
    db: &impl ConnectionTrait,
    failures: sea_orm::Select<audit_log::Entity>,
    now: DateTime<Utc>,
) -> Result<i64, DbErr> {
    let oldest = failures
        .order_by_asc(audit_log::Column::At)
        .one(db)
        .await?
        .map_or(now, |row| row.at);
    let free_at = oldest + Duration::minutes(WINDOW_MINUTES);
    Ok(((free_at - now).num_seconds() + 59).div_euclid(60).max(1))
}
