//! Signing in: password check, limits on guessing, and the audit trail of both.
//!
//! Every attempt is written to the audit log *before* its password is checked, and then
//! counted with everything else in the window; so however many arrive at once, no more of them
//! reach the hash than the limits allow (each can see the ones written before it). The counts
//! live in the database, so they hold across restarts and instances sharing it.
//!
//! An address is a *source*: an IPv4 address, or an IPv6 address's whole /64
//! (`crate::domain::client_addr::limit_source`), so rotating within a /64 gains nothing. The
//! limits:
//! - per name *and* source: [`MAX_FAILURES_PER_NAME_AND_IP`] failures in [`WINDOW_MINUTES`]
//!   (since that source's last success with the name) lock that pair for the rest of the
//!   window. Guessing from one place cannot lock the name out from every other place.
//! - per source: [`MAX_FAILURES_PER_IP`] failures or busy refusals across all names lock it.
//! - per name, from strangers: a source that has not signed in as the name in the last
//!   [`KNOWN_DAYS`] days shares with every other such source a budget of
//!   [`NAME_BUDGET_PER_MINUTE`] password checks a minute. A crowd of addresses spends it and is
//!   refused without a hash; a *known* pair keeps its own allowance (the pair limit) and a
//!   reserved place in the hash queue ([`super::passwords::Lane::Known`]), so the person whose
//!   name is attacked still signs in from where they usually do.
//!
//! An attempt refused by a limit is recorded as [`ACTION_THROTTLED`], which counts towards no
//! limit; one refused because the hash queue was full as [`ACTION_BUSY`], which counts for its
//! source. The same limits guard `account/password`'s current password
//! ([`confirm_password`]).

use chrono::{DateTime, Duration, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, PaginatorTrait,
    QueryFilter, QueryOrder, Set,
};
use serde_json::json;

use super::passwords::{self, Lane, PasswordError};
use super::users;
use crate::domain::account::{CurrentUser, Username};
use crate::domain::client_addr::limit_source;
use crate::entities::audit_log;

pub const MAX_FAILURES_PER_NAME_AND_IP: u64 = 5;
pub const MAX_FAILURES_PER_IP: u64 = 20;
pub const NAME_BUDGET_PER_MINUTE: u64 = 10;
pub const KNOWN_DAYS: i64 = 30;
pub const WINDOW_MINUTES: i64 = 15;

pub const ACTION_FAILED: &str = "login.failed";
pub const ACTION_SUCCEEDED: &str = "login.succeeded";
pub const ACTION_THROTTLED: &str = "login.throttled";
pub const ACTION_BUSY: &str = "login.busy";
/// A right password for an account with a second factor, sent without a code: counts towards
/// no limit (the code is what is asked next).
pub const ACTION_NEEDS_CODE: &str = "login.needs_code";

#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    #[error("unknown username or wrong password")]
    BadCredentials,
    #[error("too many failed sign-ins; try again in {minutes} minute(s)")]
    Throttled { minutes: i64 },
    #[error("a code from the authenticator app is needed")]
    CodeRequired,
    #[error("wrong code")]
    WrongCode,
    #[error(transparent)]
    Password(#[from] PasswordError),
    #[error("could not check the code: {0}")]
    SecondFactor(#[from] super::second_factor::SecondFactorError),
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

/// The second factor a sign-in brings: the code typed (if any) and the key its seed opens with.
#[derive(Clone, Copy)]
pub struct SecondFactor<'a> {
    pub key: &'a super::secrets::SecretKey,
    pub code: Option<&'a str>,
}

/// Checks a username and password — and the code, for an account with a second factor — to
/// sign in. Unknown users and wrong passwords fail alike, in the same time, with the same
/// message; a wrong code is counted by the same limits as a wrong password.
pub async fn authenticate(
    db: &impl ConnectionTrait,
    username: &str,
    password: &str,
    second: SecondFactor<'_>,
    ip: Option<&str>,
    now: DateTime<Utc>,
) -> Result<CurrentUser, LoginError> {
    let user = attempt(db, username, password, Some(second), ip, now).await?;
    users::signed_in(db, user.id, now).await?;
    Ok(user)
}

/// Checks a signed-in person's current password before they choose a new one, counted and
/// locked like a sign-in (a stolen session must not guess it faster than a stranger could).
pub async fn confirm_password(
    db: &impl ConnectionTrait,
    username: &str,
    password: &str,
    ip: Option<&str>,
    now: DateTime<Utc>,
) -> Result<CurrentUser, LoginError> {
    attempt(db, username, password, None, ip, now).await
}

async fn attempt(
    db: &impl ConnectionTrait,
    username: &str,
    password: &str,
    second: Option<SecondFactor<'_>>,
    ip: Option<&str>,
    now: DateTime<Utc>,
) -> Result<CurrentUser, LoginError> {
    let name = attempted_name(username);
    let source = ip.map(limit_source);
    // Counted first: this row is what parallel attempts see of this one.
    let attempt = record_attempt(db, &name, ip, source.as_deref(), now).await?;
    let lane = match limits(db, &name, source.as_deref(), attempt, now).await {
        Ok(Limit::Check(lane)) => lane,
        Ok(Limit::Locked { minutes }) => {
            mark(db, attempt, ACTION_THROTTLED, None).await?;
            return Err(LoginError::Throttled { minutes });
        }
        Err(e) => {
            mark(db, attempt, ACTION_THROTTLED, None).await?;
            return Err(e.into());
        }
    };
    match check(db, &name, password, lane).await {
        Ok(Some(account)) => {
            if let Some(second) = second
                && super::second_factor::required(&account)
            {
                second_step(db, attempt, &account, second, now).await?;
            }
            mark(db, attempt, ACTION_SUCCEEDED, Some(account.id)).await?;
            Ok(account.current())
        }
        Ok(None) => Err(LoginError::BadCredentials),
        Err(LoginError::Password(PasswordError::Busy)) => {
            // Not checked, but a source that keeps the queue full is counted for it.
            mark(db, attempt, ACTION_BUSY, None).await?;
            Err(LoginError::Password(PasswordError::Busy))
        }
        Err(e) => {
            // Not checked (the database failed): it spends none of the limits.
            mark(db, attempt, ACTION_THROTTLED, None).await?;
            Err(e)
        }
    }
}

/// Writes the attempt's row, as a failure until it is known to be something else.
async fn record_attempt(
    db: &impl ConnectionTrait,
    name: &str,
    ip: Option<&str>,
    source: Option<&str>,
    now: DateTime<Utc>,
) -> Result<i64, DbErr> {
    let row = audit_log::ActiveModel {
        at: Set(now),
        actor_id: Set(None),
        actor: Set(name.chars().take(64).collect()),
        action: Set(ACTION_FAILED.to_string()),
        subject: Set(name.chars().take(255).collect()),
        detail: Set(json!({}).to_string()),
        ip: Set(ip.map(str::to_string)),
        source: Set(source.map(str::to_string)),
        ..Default::default()
    }
    .insert(db)
    .await?;
    Ok(row.id)
}

/// The code after a right password: none asks for one (counted towards nothing), a wrong one
/// leaves the attempt a failure, counted like a wrong password.
async fn second_step(
    db: &impl ConnectionTrait,
    attempt: i64,
    account: &crate::entities::user::Model,
    second: SecondFactor<'_>,
    now: DateTime<Utc>,
) -> Result<(), LoginError> {
    let Some(code) = second.code.filter(|c| !c.trim().is_empty()) else {
        mark(db, attempt, ACTION_NEEDS_CODE, Some(account.id)).await?;
        return Err(LoginError::CodeRequired);
    };
    if super::second_factor::check(db, second.key, account, code, now).await? {
        Ok(())
    } else {
        Err(LoginError::WrongCode)
    }
}

async fn check(
    db: &impl ConnectionTrait,
    name: &str,
    password: &str,
    lane: Lane,
) -> Result<Option<crate::entities::user::Model>, LoginError> {
    let account = users::find_by_username(db, name).await?;
    // A disabled account, or one made by a provider or proxy (it has no password), fails like
    // an unknown one: the answer tells a guesser nothing.
    let Some(user) = account.filter(|u| u.disabled_at.is_none() && !u.password_hash.is_empty())
    else {
        passwords::burn_time(lane, password.to_string()).await?;
        return Ok(None);
    };
    if !passwords::verify_in(lane, user.password_hash.clone(), password.to_string()).await? {
        return Ok(None);
    }
    Ok(Some(user))
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
    /// Check the password, in this lane of the hash queue.
    Check(Lane),
    Locked {
        minutes: i64,
    },
}

/// The limits as they stand with this attempt (`attempt`, already written) counted.
async fn limits(
    db: &impl ConnectionTrait,
    name: &str,
    source: Option<&str>,
    attempt: i64,
    now: DateTime<Utc>,
) -> Result<Limit, DbErr> {
    let window_start = now - Duration::minutes(WINDOW_MINUTES);
    let recent = |actions: &[&str]| {
        audit_log::Entity::find()
            .filter(audit_log::Column::Action.is_in(actions.iter().copied()))
            .filter(audit_log::Column::At.gt(window_start))
    };
    if let Some(source) = source {
        let since = last_success(db, name, Some(source), window_start).await?;
        let pair = recent(&[ACTION_FAILED])
            .filter(audit_log::Column::Subject.eq(name))
            .filter(audit_log::Column::Source.eq(source))
            .filter(since_success(since, window_start));
        if pair.clone().count(db).await? > MAX_FAILURES_PER_NAME_AND_IP {
            return Ok(Limit::Locked {
                minutes: wait_minutes(db, pair, attempt, now).await?,
            });
        }
        let address =
            recent(&[ACTION_FAILED, ACTION_BUSY]).filter(audit_log::Column::Source.eq(source));
        if address.clone().count(db).await? > MAX_FAILURES_PER_IP {
            return Ok(Limit::Locked {
                minutes: wait_minutes(db, address, attempt, now).await?,
            });
        }
    }
    let known = known_sources(db, name, now).await?;
    if source.is_some_and(|s| known.iter().any(|k| k == s)) {
        return Ok(Limit::Check(Lane::Known));
    }
    // Strangers share the name's budget: checks in the last minute from unknown sources,
    // this one included.
    let mut strangers = audit_log::Entity::find()
        .filter(audit_log::Column::Action.eq(ACTION_FAILED))
        .filter(audit_log::Column::Subject.eq(name))
        .filter(audit_log::Column::At.gt(now - Duration::minutes(1)));
    if !known.is_empty() {
        strangers = strangers.filter(
            sea_orm::Condition::any()
                .add(audit_log::Column::Source.is_null())
                .add(audit_log::Column::Source.is_not_in(known)),
        );
    }
    if strangers.count(db).await? > NAME_BUDGET_PER_MINUTE {
        return Ok(Limit::Locked { minutes: 1 });
    }
    Ok(Limit::Check(Lane::Open))
}

/// The sources that signed in as `name` in the last [`KNOWN_DAYS`] days.
async fn known_sources(
    db: &impl ConnectionTrait,
    name: &str,
    now: DateTime<Utc>,
) -> Result<Vec<String>, DbErr> {
    use sea_orm::QuerySelect;
    let sources: Vec<Option<String>> = audit_log::Entity::find()
        .select_only()
        .column(audit_log::Column::Source)
        .distinct()
        .filter(audit_log::Column::Action.eq(ACTION_SUCCEEDED))
        .filter(audit_log::Column::Subject.eq(name))
        .filter(audit_log::Column::At.gt(now - Duration::days(KNOWN_DAYS)))
        .filter(audit_log::Column::Source.is_not_null())
        .into_tuple()
        .all(db)
        .await?;
    Ok(sources.into_iter().flatten().collect())
}

/// The last successful sign-in with `name` (from `source`, when given) in the window.
async fn last_success(
    db: &impl ConnectionTrait,
    name: &str,
    source: Option<&str>,
    window_start: DateTime<Utc>,
) -> Result<Option<(DateTime<Utc>, i64)>, DbErr> {
    let mut query = audit_log::Entity::find()
        .filter(audit_log::Column::Action.eq(ACTION_SUCCEEDED))
        .filter(audit_log::Column::Subject.eq(name))
        .filter(audit_log::Column::At.gt(window_start));
    if let Some(source) = source {
        query = query.filter(audit_log::Column::Source.eq(source));
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
}
