//! Signing in: password check, limits on guessing, and the audit trail of both.
//!
//! Every attempt is written to the audit log *before* its password is checked, and then
//! counted with everything else in the window; so however many arrive at once, no more of them
//! reach the hash than the limits allow (each can see the ones written before it). The counts
//! live in the database, so they hold across restarts and instances sharing it.
//!
//! The limits, within [`WINDOW_MINUTES`]:
//! - per name *and* address: [`MAX_FAILURES_PER_NAME_AND_IP`] failures (since that address's
//!   last success with the name) lock that pair for the rest of the window. Guessing from one
//!   place cannot lock the name out from every other place.
//! - per address: [`MAX_FAILURES_PER_IP`] failures across all names lock the address.
//! - per name, from anywhere: beyond [`FREE_FAILURES_PER_NAME`] failures since the name's last
//!   success, every further attempt is *delayed* ([`delay_for`]), not refused: a distributed
//!   guesser is slowed down while the owner can still sign in.
//!
//! An attempt refused by a limit is recorded as [`ACTION_THROTTLED`], which counts towards no
//! limit; the hashing itself is bounded by [`super::passwords`].

use chrono::{DateTime, Duration, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, PaginatorTrait,
    QueryFilter, QueryOrder, Set,
};
use serde_json::json;

use super::audit::{self, Actor};
use super::passwords::{self, PasswordError};
use super::users;
use crate::domain::account::{CurrentUser, Username};
use crate::entities::audit_log;

pub const MAX_FAILURES_PER_NAME_AND_IP: u64 = 5;
pub const MAX_FAILURES_PER_IP: u64 = 20;
pub const FREE_FAILURES_PER_NAME: u64 = 10;
pub const WINDOW_MINUTES: i64 = 15;

pub const ACTION_FAILED: &str = "login.failed";
pub const ACTION_SUCCEEDED: &str = "login.succeeded";
pub const ACTION_THROTTLED: &str = "login.throttled";

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

/// What the audit log keeps of a name someone typed: at most a username's length, so a
/// megabyte typed into the form stays out of the database.
pub fn attempted_name(typed: &str) -> String {
    let typed = typed.trim();
    if typed.chars().count() <= Username::MAX_LEN {
        typed.to_string()
    } else {
        let mut cut: String = typed.chars().take(Username::MAX_LEN - 1).collect();
        cut.push('…');
        cut
    }
}

/// How long an attempt waits when the name has failed `failures` times lately from anywhere:
/// nothing up to [`FREE_FAILURES_PER_NAME`], then one second more per failure, at most 30.
pub fn delay_for(failures: u64) -> std::time::Duration {
    let over = failures.saturating_sub(FREE_FAILURES_PER_NAME);
    std::time::Duration::from_secs(over.min(30))
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
    let name = attempted_name(username);
    let actor = Actor {
        id: None,
        name: &name,
        ip,
    };
    // Counted first: this row is what parallel attempts see of this one.
    let attempt = audit::record(db, &actor, ACTION_FAILED, &name, json!({}), now).await?;
    match limits(db, &name, ip, attempt, now).await {
        Ok(Limit::Free) => {}
        Ok(Limit::Delay(wait)) => tokio::time::sleep(wait).await,
        Ok(Limit::Locked { minutes }) => {
            mark(db, attempt, ACTION_THROTTLED, None).await?;
            return Err(LoginError::Throttled { minutes });
        }
        Err(e) => {
            mark(db, attempt, ACTION_THROTTLED, None).await?;
            return Err(e.into());
        }
    }

    let checked = check(db, &name, password).await;
    match checked {
        Ok(Some(user)) => {
            mark(db, attempt, ACTION_SUCCEEDED, Some(user.id)).await?;
            users::signed_in(db, user.id, now).await?;
            Ok(user)
        }
        Ok(None) => Err(LoginError::BadCredentials),
        Err(e) => {
            // Not checked (busy, or the database failed): it spends none of the limits.
            mark(db, attempt, ACTION_THROTTLED, None).await?;
            Err(e)
        }
    }
}

async fn check(
    db: &impl ConnectionTrait,
    name: &str,
    password: &str,
) -> Result<Option<CurrentUser>, LoginError> {
    let account = users::find_by_username(db, name).await?;
    // A disabled account fails like an unknown one: the answer tells a guesser nothing.
    let Some(user) = account.filter(|u| u.disabled_at.is_none()) else {
        passwords::burn_time(password.to_string()).await?;
        return Ok(None);
    };
    if !passwords::verify(user.password_hash.clone(), password.to_string()).await? {
        return Ok(None);
    }
    Ok(Some(CurrentUser {
        id: user.id,
        username: user.username,
        role: user.role,
        must_change_password: user.must_change_password,
        locale: user.locale,
    }))
}

async fn mark(
    db: &impl ConnectionTrait,
    id: i64,
    action: &str,
    actor_id: Option<i64>,
) -> Result<(), DbErr> {
    audit_log::ActiveModel {
        id: Set(id),
        action: Set(action.to_string()),
        actor_id: Set(actor_id),
        ..Default::default()
    }
    .update(db)
    .await?;
    Ok(())
}

enum Limit {
    Free,
    Delay(std::time::Duration),
    Locked { minutes: i64 },
}

/// The limits as they stand with this attempt (`attempt`, already written) counted.
async fn limits(
    db: &impl ConnectionTrait,
    name: &str,
    ip: Option<&str>,
    attempt: i64,
    now: DateTime<Utc>,
) -> Result<Limit, DbErr> {
    let window_start = now - Duration::minutes(WINDOW_MINUTES);
    let failures = || {
        audit_log::Entity::find()
            .filter(audit_log::Column::Action.eq(ACTION_FAILED))
            .filter(audit_log::Column::At.gt(window_start))
    };

    if let Some(ip) = ip {
        let since = last_success(db, name, Some(ip), window_start).await?;
        let pair = failures()
            .filter(audit_log::Column::Subject.eq(name))
            .filter(audit_log::Column::Ip.eq(ip))
            .filter(since_success(since, window_start));
        if pair.clone().count(db).await? > MAX_FAILURES_PER_NAME_AND_IP {
            return Ok(Limit::Locked {
                minutes: wait_minutes(db, pair, attempt, now).await?,
            });
        }
        let address = failures().filter(audit_log::Column::Ip.eq(ip));
        if address.clone().count(db).await? > MAX_FAILURES_PER_IP {
            return Ok(Limit::Locked {
                minutes: wait_minutes(db, address, attempt, now).await?,
            });
        }
    }

    let since = last_success(db, name, None, window_start).await?;
    let everywhere = failures()
        .filter(audit_log::Column::Subject.eq(name))
        .filter(since_success(since, window_start))
        .filter(audit_log::Column::Id.ne(attempt))
        .count(db)
        .await?;
    let wait = delay_for(everywhere);
    Ok(if wait.is_zero() {
        Limit::Free
    } else {
        Limit::Delay(wait)
    })
}

/// The last successful sign-in with `name` (from `ip`, when given) in the window.
async fn last_success(
    db: &impl ConnectionTrait,
    name: &str,
    ip: Option<&str>,
    window_start: DateTime<Utc>,
) -> Result<Option<(DateTime<Utc>, i64)>, DbErr> {
    let mut query = audit_log::Entity::find()
        .filter(audit_log::Column::Action.eq(ACTION_SUCCEEDED))
        .filter(audit_log::Column::Subject.eq(name))
        .filter(audit_log::Column::At.gt(window_start));
    if let Some(ip) = ip {
        query = query.filter(audit_log::Column::Ip.eq(ip));
    }
    Ok(query
        .order_by_desc(audit_log::Column::Id)
        .one(db)
        .await?
        .map(|row| (row.at, row.id)))
}

/// Rows after a success: later in time, or written after it at the same instant.
fn since_success(
    success: Option<(DateTime<Utc>, i64)>,
    window_start: DateTime<Utc>,
) -> sea_orm::Condition {
    match success {
        Some((at, id)) => sea_orm::Condition::any()
            .add(audit_log::Column::At.gt(at))
            .add(
                sea_orm::Condition::all()
                    .add(audit_log::Column::At.eq(at))
                    .add(audit_log::Column::Id.gt(id)),
            ),
        None => sea_orm::Condition::all().add(audit_log::Column::At.gt(window_start)),
    }
}

/// Minutes until the oldest failure in the window ages out, at least one.
async fn wait_minutes(
    db: &impl ConnectionTrait,
    failures: sea_orm::Select<audit_log::Entity>,
    attempt: i64,
    now: DateTime<Utc>,
) -> Result<i64, DbErr> {
    let oldest = failures
        .filter(audit_log::Column::Id.ne(attempt))
        .order_by_asc(audit_log::Column::At)
        .one(db)
        .await?
        .map_or(now, |row| row.at);
    let free_at = oldest + Duration::minutes(WINDOW_MINUTES);
    Ok(((free_at - now).num_seconds() + 59).div_euclid(60).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempted_names_are_bounded() {
        assert_eq!(attempted_name("  admin "), "admin");
        let long = "a".repeat(10_000);
        let kept = attempted_name(&long);
        assert_eq!(kept.chars().count(), Username::MAX_LEN);
        assert!(kept.ends_with('…'));
    }

    #[test]
    fn the_name_limit_delays_and_is_capped() {
        assert!(delay_for(0).is_zero());
        assert!(delay_for(FREE_FAILURES_PER_NAME).is_zero());
        assert_eq!(delay_for(FREE_FAILURES_PER_NAME + 3).as_secs(), 3);
        assert_eq!(delay_for(u64::MAX).as_secs(), 30);
    }
}
