//! Sessions: a random token in an HttpOnly cookie, its SHA-256 in the `sessions` table.
//!
//! Storing only the hash means a copy of the database cannot be turned into a working cookie.

use chrono::{DateTime, Duration, Utc};
use rand_core::{OsRng, RngCore};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, Set,
};
use sha2::{Digest, Sha256};

use crate::domain::account::CurrentUser;
use crate::entities::{session, user};

pub const COOKIE_NAME: &str = "bulwark_session";

fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// Starts a session and returns the token for the cookie (256 random bits, hex).
pub async fn create(
    db: &impl ConnectionTrait,
    user_id: i64,
    ttl: Duration,
    now: DateTime<Utc>,
) -> Result<String, DbErr> {
    let mut bytes = [0u8; 32];
    OsRng.fill_bytes(&mut bytes);
    let token = hex::encode(bytes);
    session::ActiveModel {
        id: Set(token_hash(&token)),
        user_id: Set(user_id),
        created_at: Set(now),
        expires_at: Set(now + ttl),
    }
    .insert(db)
    .await?;
    Ok(token)
}

/// The user a token belongs to, if the session exists and has not expired.
pub async fn user_for_token(
    db: &impl ConnectionTrait,
    token: &str,
    now: DateTime<Utc>,
) -> Result<Option<CurrentUser>, DbErr> {
    // A well-formed token is 64 hex characters; anything else cannot match and costs no query.
    if token.len() != 64 || !token.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok(None);
    }
    let found = session::Entity::find_by_id(token_hash(token))
        .filter(session::Column::ExpiresAt.gt(now))
        .find_also_related(user::Entity)
        .one(db)
        .await?;
    let Some((_, Some(user))) = found else {
        return Ok(None);
    };
    let role = user.role;
    Ok(Some(CurrentUser {
        id: user.id,
        username: user.username,
        role,
    }))
}

pub async fn delete(db: &impl ConnectionTrait, token: &str) -> Result<(), DbErr> {
    session::Entity::delete_by_id(token_hash(token))
        .exec(db)
        .await?;
    Ok(())
}

/// Removes expired sessions; returns how many.
pub async fn purge_expired(db: &impl ConnectionTrait, now: DateTime<Utc>) -> Result<u64, DbErr> {
    Ok(session::Entity::delete_many()
        .filter(session::Column::ExpiresAt.lte(now))
        .exec(db)
        .await?
        .rows_affected)
}

/// The session token from a request's `Cookie` headers, if present.
pub fn token_from_headers(headers: &http::HeaderMap) -> Option<String> {
    headers
        .get_all(http::header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(cookie::Cookie::split_parse)
        .filter_map(Result::ok)
        .find(|c| c.name() == COOKIE_NAME)
        .map(|c| c.value().to_string())
}

/// The `Set-Cookie` value for a new session. `Lax` rather than `Strict` so that a link in an
/// alert mail opens the run for someone already signed in; cross-site POSTs are refused
/// separately (see the server's origin check).
pub fn set_cookie(token: &str, ttl: Duration, secure: bool) -> String {
    cookie::Cookie::build((COOKIE_NAME, token.to_string()))
        .path("/")
        .http_only(true)
        .same_site(cookie::SameSite::Lax)
        .secure(secure)
        .max_age(cookie::time::Duration::seconds(ttl.num_seconds()))
        .build()
        .to_string()
}

pub fn clear_cookie(secure: bool) -> String {
    cookie::Cookie::build((COOKIE_NAME, ""))
        .path("/")
        .http_only(true)
        .same_site(cookie::SameSite::Lax)
        .secure(secure)
        .max_age(cookie::time::Duration::ZERO)
        .build()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookie_flags() {
        let c = set_cookie(&"a".repeat(64), Duration::hours(12), false);
        assert!(c.contains("HttpOnly"));
        assert!(c.contains("SameSite=Lax"));
        assert!(!c.contains("Secure"));
        assert!(c.contains("Max-Age=43200"));
        assert!(set_cookie("t", Duration::hours(1), true).contains("Secure"));
    }

    #[test]
    fn token_is_read_among_other_cookies() {
        let mut headers = http::HeaderMap::new();
        headers.insert(
            http::header::COOKIE,
            "theme=dark; bulwark_session=abc123; other=1"
                .parse()
                .unwrap(),
        );
        assert_eq!(token_from_headers(&headers).as_deref(), Some("abc123"));
        assert_eq!(token_from_headers(&http::HeaderMap::new()), None);
    }
}
