//! Sessions: a random token in an HttpOnly cookie, its SHA-256 in the `sessions` table.
//!
//! Storing only the hash means a copy of the database cannot be turned into a working cookie.
//! A session ends at its absolute expiry, after [`Lifetimes::idle`] without use, when its
//! owner or an administrator ends it, or when the account's password changes or it is
//! disabled or deleted.

use chrono::{DateTime, Duration, Utc};
use rand_core::{OsRng, RngCore};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, Set,
};
use sha2::{Digest, Sha256};

use crate::domain::account::CurrentUser;
use crate::entities::{session, user};

pub const COOKIE_NAME: &str = "bulwark_session";
/// The name when the cookie is `Secure`: the `__Host-` prefix makes the browser refuse it
/// unless it is secure, for the whole host and path `/`, so no subdomain can plant or widen it.
pub const SECURE_COOKIE_NAME: &str = "__Host-bulwark_session";

fn cookie_name(secure: bool) -> &'static str {
    if secure {
        SECURE_COOKIE_NAME
    } else {
        COOKIE_NAME
    }
}

fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// How long a session lasts: at most `absolute` after sign-in, and until `idle` passes
/// without a request.
#[derive(Debug, Clone, Copy)]
pub struct Lifetimes {
    pub absolute: Duration,
    pub idle: Duration,
}

/// Where a session was started from, kept so its owner can recognise it in a list.
#[derive(Debug, Clone, Default)]
pub struct Origin {
    pub ip: Option<String>,
    pub user_agent: Option<String>,
    /// The OpenID provider that vouched for the person, and where its sign-out is.
    pub provider: Option<String>,
    pub sign_out_url: Option<String>,
}

/// Starts a session and returns the token for the cookie (256 random bits, hex).
/// 32 bytes from the operating system's generator: for anything a guess must not find
/// (session tokens, the traffic IP-hash key).
pub fn random_key() -> [u8; 32] {
    let mut bytes = [0u8; 32];
    OsRng.fill_bytes(&mut bytes);
    bytes
}

pub async fn create(
    db: &impl ConnectionTrait,
    user_id: i64,
    ttl: Duration,
    origin: &Origin,
    now: DateTime<Utc>,
) -> Result<String, DbErr> {
    let token = hex::encode(random_key());
    session::ActiveModel {
        id: Set(token_hash(&token)),
        user_id: Set(user_id),
        created_at: Set(now),
        expires_at: Set(now + ttl),
        last_seen_at: Set(Some(now)),
        ip: Set(origin.ip.as_ref().map(|ip| ip.chars().take(64).collect())),
        user_agent: Set(origin
            .user_agent
            .as_ref()
            .map(|ua| ua.chars().take(255).collect())),
        provider: Set(origin.provider.clone()),
        sign_out_url: Set(origin.sign_out_url.clone()),
    }
    .insert(db)
    .await?;
    Ok(token)
}

/// A signed-in request: who, and which of their sessions.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub user: CurrentUser,
    /// The session's id (the token's hash), to tell "this session" from the others.
    pub session_id: String,
    /// A local account without a second factor (`require_totp_for_admins` may stop it).
    pub lacks_second_factor: bool,
}

/// The user a token belongs to, if the session exists, has neither expired nor been idle for
/// too long, and the account is enabled. Marks the session as used (at most once a minute, so
/// a busy page costs no write per request).
pub async fn user_for_token(
    db: &impl ConnectionTrait,
    token: &str,
    lifetimes: Lifetimes,
    now: DateTime<Utc>,
) -> Result<Option<Resolved>, DbErr> {
    // A well-formed token is 64 hex characters; anything else cannot match and costs no query.
    if token.len() != 64 || !token.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok(None);
    }
    let found = session::Entity::find_by_id(token_hash(token))
        .filter(session::Column::ExpiresAt.gt(now))
        .find_also_related(user::Entity)
        .one(db)
        .await?;
    let Some((session, Some(user))) = found else {
        return Ok(None);
    };
    let last_seen = session.last_seen_at.unwrap_or(session.created_at);
    if last_seen <= now - lifetimes.idle || user.disabled_at.is_some() {
        return Ok(None);
    }
    if now - last_seen > Duration::minutes(1) {
        session::Entity::update_many()
            .col_expr(session::Column::LastSeenAt, Expr::value(now))
            .filter(session::Column::Id.eq(&session.id))
            .exec(db)
            .await?;
    }
    Ok(Some(Resolved {
        lacks_second_factor: user.lacks_second_factor(),
        user: user.current(),
        session_id: session.id,
    }))
}

/// A user's live sessions, most recently used first.
pub async fn list_for_user(
    db: &impl ConnectionTrait,
    user_id: i64,
    lifetimes: Lifetimes,
    now: DateTime<Utc>,
) -> Result<Vec<session::Model>, DbErr> {
    let mut sessions: Vec<session::Model> = session::Entity::find()
        .filter(session::Column::UserId.eq(user_id))
        .filter(session::Column::ExpiresAt.gt(now))
        .all(db)
        .await?
        .into_iter()
        .filter(|s| s.last_seen_at.unwrap_or(s.created_at) > now - lifetimes.idle)
        .collect();
    sessions.sort_by_key(|s| std::cmp::Reverse(s.last_seen_at.unwrap_or(s.created_at)));
    Ok(sessions)
}

/// Ends one of a user's sessions; false when it was not theirs or is gone already.
pub async fn end_one(
    db: &impl ConnectionTrait,
    user_id: i64,
    session_id: &str,
) -> Result<bool, DbErr> {
    Ok(session::Entity::delete_many()
        .filter(session::Column::UserId.eq(user_id))
        .filter(session::Column::Id.eq(session_id))
        .exec(db)
        .await?
        .rows_affected
        > 0)
}

/// Ends every session of a user but `keep` (the caller's own, when they stay signed in);
/// returns how many ended.
pub async fn end_all(
    db: &impl ConnectionTrait,
    user_id: i64,
    keep: Option<&str>,
) -> Result<u64, DbErr> {
    let mut delete = session::Entity::delete_many().filter(session::Column::UserId.eq(user_id));
    if let Some(keep) = keep {
        delete = delete.filter(session::Column::Id.ne(keep));
    }
    Ok(delete.exec(db).await?.rows_affected)
}

/// Which of a user's sessions [`end`] ends.
#[derive(Debug, Clone, Copy)]
pub enum Which<'a> {
    /// One, by its id; it must be theirs.
    One(&'a str),
    /// All of them but this one (the caller's own, when they stay signed in).
    AllBut(Option<&'a str>),
}

/// Ends sessions of `user` (its id and name) and records who did as `action`; how many ended
/// (nothing is recorded when none did).
pub async fn end(
    db: &sea_orm::DatabaseConnection,
    user: (i64, &str),
    which: Which<'_>,
    who: &super::audit::Actor<'_>,
    action: &str,
    now: DateTime<Utc>,
) -> Result<u64, DbErr> {
    let txn = super::sql::begin_write(db).await?;
    let ended = match which {
        Which::One(id) => u64::from(end_one(&txn, user.0, id).await?),
        Which::AllBut(keep) => end_all(&txn, user.0, keep).await?,
    };
    if ended > 0 {
        let detail = serde_json::json!({ "ended": ended });
        super::audit::record(&txn, who, action, user.1, detail, now).await?;
    }
    txn.commit().await?;
    Ok(ended)
}

/// Ends the session `token` opens; returns it as it was (`None`: there was none), so a
/// provider-backed one can be ended at its provider too.
pub async fn delete(
    db: &impl ConnectionTrait,
    token: &str,
) -> Result<Option<session::Model>, DbErr> {
    let id = token_hash(token);
    let Some(found) = session::Entity::find_by_id(&id).one(db).await? else {
        return Ok(None);
    };
    session::Entity::delete_by_id(id).exec(db).await?;
    Ok(Some(found))
}

/// Removes expired sessions; returns how many.
pub async fn purge_expired(db: &impl ConnectionTrait, now: DateTime<Utc>) -> Result<u64, DbErr> {
    Ok(session::Entity::delete_many()
        .filter(session::Column::ExpiresAt.lte(now))
        .exec(db)
        .await?
        .rows_affected)
}

/// The session token from a request's `Cookie` headers, if present. With `secure_only` (the
/// console is served over TLS) only the `__Host-` cookie counts: the plain one could have been
/// planted over plain HTTP or by a sibling domain.
pub fn token_from_headers(headers: &http::HeaderMap, secure_only: bool) -> Option<String> {
    cookie_from_headers(headers, (COOKIE_NAME, SECURE_COOKIE_NAME), secure_only)
}

/// A cookie known by a plain and a `__Host-` name (`names`): with `secure_only`, the prefixed
/// one only; otherwise the prefixed one first, since only a secure connection could have set it.
pub fn cookie_from_headers(
    headers: &http::HeaderMap,
    (plain, secure): (&str, &str),
    secure_only: bool,
) -> Option<String> {
    headers
        .get_all(http::header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(cookie::Cookie::split_parse)
        .filter_map(Result::ok)
        .filter(|c| c.name() == secure || (!secure_only && c.name() == plain))
        .max_by_key(|c| c.name() == secure)
        .map(|c| c.value().to_string())
}

/// The `Set-Cookie` value for a new session. `Lax` rather than `Strict` so that a link in an
/// alert mail opens the run for someone already signed in; cross-site POSTs are refused
/// separately (see the server's origin check).
pub fn set_cookie(token: &str, ttl: Duration, secure: bool) -> String {
    cookie::Cookie::build((cookie_name(secure), token.to_string()))
        .path("/")
        .http_only(true)
        .same_site(cookie::SameSite::Lax)
        .secure(secure)
        .max_age(cookie::time::Duration::seconds(ttl.num_seconds()))
        .build()
        .to_string()
}

pub fn clear_cookie(secure: bool) -> String {
    cookie::Cookie::build((cookie_name(secure), ""))
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
        let secure = set_cookie("t", Duration::hours(1), true);
        assert!(secure.starts_with("__Host-bulwark_session=t"), "{secure}");
        assert!(secure.contains("Secure") && secure.contains("Path=/"));
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
        assert_eq!(
            token_from_headers(&headers, false).as_deref(),
            Some("abc123")
        );
        assert_eq!(token_from_headers(&http::HeaderMap::new(), false), None);
        // Under TLS the unprefixed cookie is not a session.
        assert_eq!(token_from_headers(&headers, true), None);
        headers.append(
            http::header::COOKIE,
            "__Host-bulwark_session=def456".parse().unwrap(),
        );
        assert_eq!(
            token_from_headers(&headers, true).as_deref(),
            Some("def456")
        );
    }
}
