//! Sign-ins sent to an OpenID provider and not yet back.
//!
//! Each is kept under a hash of its `state` with a hash of a cookie set in the browser that
//! set out, and taken (deleted) by the one callback that uses it: a replayed or forged callback,
//! or one arriving in another browser, finds nothing. They live [`LIFETIME_MINUTES`].

use chrono::{DateTime, Duration, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, Set,
};
use sha2::{Digest, Sha256};

use crate::entities::oidc_login;

/// How long a person may take at the provider.
pub const LIFETIME_MINUTES: i64 = 10;

fn hash(value: &str) -> String {
    hex::encode(Sha256::digest(value.as_bytes()))
}

/// What the callback needs of the sign-in it completes.
#[derive(Debug, Clone)]
pub struct Pending {
    pub provider: String,
    pub pkce_verifier: String,
    pub nonce: String,
    pub next: String,
}

/// Keeps a sign-in setting out with `state` from the browser holding `browser`.
pub async fn begin(
    db: &impl ConnectionTrait,
    state: &str,
    browser: &str,
    pending: &Pending,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    // Housekeeping rides on sign-ins, as the sessions' does.
    oidc_login::Entity::delete_many()
        .filter(oidc_login::Column::CreatedAt.lt(now - Duration::minutes(LIFETIME_MINUTES)))
        .exec(db)
        .await?;
    oidc_login::ActiveModel {
        state_hash: Set(hash(state)),
        browser_hash: Set(hash(browser)),
        provider: Set(pending.provider.clone()),
        pkce_verifier: Set(pending.pkce_verifier.clone()),
        nonce: Set(pending.nonce.clone()),
        next: Set(pending.next.clone()),
        created_at: Set(now),
    }
    .insert(db)
    .await?;
    Ok(())
}

/// Takes the sign-in `state` names if this browser started it for `provider` and it is
/// still fresh. Whoever deletes the row has it: two callbacks racing get it once.
pub async fn take(
    db: &impl ConnectionTrait,
    state: &str,
    browser: Option<&str>,
    provider: &str,
    now: DateTime<Utc>,
) -> Result<Option<Pending>, DbErr> {
    let Some(row) = oidc_login::Entity::find_by_id(hash(state)).one(db).await? else {
        return Ok(None);
    };
    let deleted = oidc_login::Entity::delete_many()
        .filter(oidc_login::Column::StateHash.eq(&row.state_hash))
        .exec(db)
        .await?
        .rows_affected;
    let fresh = row.created_at > now - Duration::minutes(LIFETIME_MINUTES);
    let same_browser = browser.is_some_and(|b| hash(b) == row.browser_hash);
    if deleted != 1 || !fresh || !same_browser || row.provider != provider {
        return Ok(None);
    }
    Ok(Some(Pending {
        provider: row.provider,
        pkce_verifier: row.pkce_verifier,
        nonce: row.nonce,
        next: row.next,
    }))
}

/// The cookie that ties a sign-in to the browser that set out on it.
const BROWSER_COOKIE: &str = "bulwark_oidc";
/// Its name when cookies are `Secure` (`super::sessions::SECURE_COOKIE_NAME` says why).
const SECURE_BROWSER_COOKIE: &str = "__Host-bulwark_oidc";

/// The `Set-Cookie` value marking this browser with `value` while it is at the provider.
/// `Lax`: the provider's redirect back is a top-level navigation from its site.
pub fn browser_cookie(value: &str, secure: bool) -> String {
    let name = if secure {
        SECURE_BROWSER_COOKIE
    } else {
        BROWSER_COOKIE
    };
    cookie::Cookie::build((name, value.to_string()))
        .path("/")
        .http_only(true)
        .same_site(cookie::SameSite::Lax)
        .secure(secure)
        .max_age(cookie::time::Duration::minutes(LIFETIME_MINUTES))
        .build()
        .to_string()
}

/// This browser's mark, if it set out on a sign-in.
pub fn browser_from_headers(headers: &http::HeaderMap, secure: bool) -> Option<String> {
    let names = (BROWSER_COOKIE, SECURE_BROWSER_COOKIE);
    super::sessions::cookie_from_headers(headers, names, secure)
}
