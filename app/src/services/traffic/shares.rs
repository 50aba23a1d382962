//! Share links: a read-only public page of one site's people's figures, for someone without an
//! account (`/share/{token}`).
//!
//! - A site has one link at most; making another replaces it (the old link stops working).
//!   The link holds a random token; only its SHA-256 is stored, so the link cannot be shown
//!   again, only made anew.
//! - An optional password (Argon2, as accounts') and expiry. A browser that gave the password
//!   keeps [`unlock_key`] in a cookie: a digest of the token and the stored hash, which only
//!   the server could have handed out and which a new link or password voids.
//! - The page shows the people's side only ([`figures`]): no bot names or categories (one
//!   count), no hits, no addresses; the console's own host cannot be shared.
//! - Making and revoking are audited (`share.created`, `share.revoked`).

use chrono::{DateTime, Utc};
use rand_core::{OsRng, RngCore};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait,
    QueryFilter, QueryOrder,
};
use sha2::{Digest, Sha256};

use super::TrafficError;
use super::sites::{self, SiteError};
use super::stats::{self, StatsQuery};
use crate::domain::account::NewPassword;
use crate::domain::traffic_range::{Bucket, VisitorType};
use crate::entities::traffic_share::{self, Column, Entity, Model};
use crate::services::audit::{self, Actor};
use crate::services::passwords::{self, Lane, PasswordError};
use crate::services::sql::begin_write;
use crate::views::traffic::{ShareInfo, SharedDashboard, SharedPoint};

#[derive(Debug, thiserror::Error)]
pub enum ShareError {
    #[error(transparent)]
    Site(#[from] SiteError),
    #[error("{0} is the console's own host: its traffic is not shared")]
    Console(String),
    #[error("{0}")]
    Password(crate::domain::account::AccountError),
    #[error("{0}")]
    Hash(#[from] PasswordError),
    #[error("{0} has no share link")]
    NotFound(String),
    #[error(transparent)]
    Traffic(#[from] TrafficError),
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// A link about to be made, as typed.
pub struct NewShare<'a> {
    pub site: &'a str,
    pub password: Option<&'a str>,
    pub expires_at: Option<DateTime<Utc>>,
}

fn hashed(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// What a browser that gave the password keeps: only the server knows the stored hash, and a
/// new token or password changes the key.
pub fn unlock_key(token: &str, password_hash: &str) -> String {
    let mut digest = Sha256::new();
    digest.update(b"bulwark-share-unlock\0");
    digest.update(token.as_bytes());
    digest.update(b"\0");
    digest.update(password_hash.as_bytes());
    hex::encode(digest.finalize())
}

/// The cookie that carries a link's [`unlock_key`].
pub fn unlock_cookie_name(share_id: i64) -> String {
    format!("bulwark_share_{share_id}")
}

/// Makes a site's link (replacing the one it had), and records who did; returns the token.
pub async fn create(
    db: &DatabaseConnection,
    new: NewShare<'_>,
    console: &str,
    who: &Actor<'_>,
    now: DateTime<Utc>,
) -> Result<String, ShareError> {
    let site = sites::known(db, new.site, console).await?;
    if site == console {
        return Err(ShareError::Console(site));
    }
    let password_hash = match new.password {
        Some(typed) => {
            let password = NewPassword::parse(typed).map_err(ShareError::Password)?;
            Some(passwords::hash(password.expose().to_string()).await?)
        }
        None => None,
    };
    let mut bytes = [0u8; 24];
    OsRng.fill_bytes(&mut bytes);
    let token = hex::encode(bytes);
    let txn = begin_write(db).await?;
    Entity::delete_many()
        .filter(Column::Site.eq(&site))
        .exec(&txn)
        .await?;
    let protected = password_hash.is_some();
    Entity::insert(traffic_share::ActiveModel {
        site: Set(site.clone()),
        token_hash: Set(hashed(&token)),
        password_hash: Set(password_hash),
        expires_at: Set(new.expires_at),
        created_by: Set(who.name.to_string()),
        created_at: Set(now),
        ..Default::default()
    })
    .exec_without_returning(&txn)
    .await?;
    let detail = serde_json::json!({ "expires_at": new.expires_at, "password": protected });
    audit::record(&txn, who, "share.created", &site, detail, now).await?;
    txn.commit().await?;
    Ok(token)
}

/// Ends a site's link, and records who did.
pub async fn revoke(
    db: &DatabaseConnection,
    typed: &str,
    who: &Actor<'_>,
    now: DateTime<Utc>,
) -> Result<String, ShareError> {
    let site = crate::domain::sites::normalise_host(typed)
        .map_err(|p| ShareError::Site(SiteError::Invalid(p)))?;
    let txn = begin_write(db).await?;
    let deleted = Entity::delete_many()
        .filter(Column::Site.eq(&site))
        .exec(&txn)
        .await?
        .rows_affected;
    if deleted == 0 {
        return Err(ShareError::NotFound(site));
    }
    audit::record(
        &txn,
        who,
        "share.revoked",
        &site,
        serde_json::json!({}),
        now,
    )
    .await?;
    txn.commit().await?;
    Ok(site)
}

/// Every link, by site, without its token.
pub async fn list(db: &impl ConnectionTrait) -> Result<Vec<ShareInfo>, DbErr> {
    Ok(Entity::find()
        .order_by_asc(Column::Site)
        .all(db)
        .await?
        .into_iter()
        .map(|row| ShareInfo {
            site: row.site,
            protected: row.password_hash.is_some(),
            expires_at: row.expires_at,
            created_by: row.created_by,
            created_at: row.created_at,
        })
        .collect())
}

/// The link `token` opens, unless it was revoked or has expired.
pub async fn find(
    db: &impl ConnectionTrait,
    token: &str,
    now: DateTime<Utc>,
) -> Result<Option<Model>, DbErr> {
    let token = token.trim();
    if token.is_empty() || token.len() > 128 {
        return Ok(None);
    }
    Ok(Entity::find()
        .filter(Column::TokenHash.eq(hashed(token)))
        .one(db)
        .await?
        .filter(|row| row.expires_at.is_none_or(|end| end > now)))
}

/// Whether `candidate` is the link's password (a link without one needs none).
pub async fn password_matches(share: &Model, candidate: &str) -> Result<bool, PasswordError> {
    match &share.password_hash {
        None => Ok(true),
        Some(phc) => passwords::verify_in(Lane::Open, phc.clone(), candidate.to_string()).await,
    }
}

/// The people's figures of the link's site: `current` and `previous` are people's queries of
/// that site; bots are one count.
pub async fn figures(
    db: &impl ConnectionTrait,
    share: &Model,
    current: &StatsQuery,
    previous: &StatsQuery,
    bucket: Bucket,
) -> Result<SharedDashboard, TrafficError> {
    let (now, before, series) = stats::dashboard(db, current, previous, bucket).await?;
    let bots = StatsQuery {
        visitors: VisitorType::Bot,
        ..current.clone()
    };
    let bots = stats::totals(db, &bots).await?.bot;
    Ok(SharedDashboard {
        site: share.site.clone(),
        from: current.from,
        to: current.to,
        timezone: current.zone.name().to_string(),
        bucket,
        people: now.visits,
        page_views: now.page_views,
        people_before: before.visits,
        page_views_before: before.page_views,
        bots,
        series: series
            .into_iter()
            .map(|p| SharedPoint {
                start: p.start,
                views: p.human,
            })
            .collect(),
        pages: now
            .top_pages
            .into_iter()
            .map(|p| crate::views::traffic::Ranked {
                name: p.path,
                views: p.count,
            })
            .collect(),
        referrers: now.people.referrers,
        countries: now.countries,
        campaigns: now.campaigns,
        channels: now.channels,
        browsers: now.people.browsers,
        systems: now.people.systems,
        devices: now.people.devices,
        expires_at: share.expires_at,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unlock_key_changes_with_the_token_and_the_password() {
        let key = unlock_key("token", "$argon2id$a");
        assert_eq!(key.len(), 64);
        assert_ne!(key, unlock_key("token", "$argon2id$b"));
        assert_ne!(key, unlock_key("other", "$argon2id$a"));
        assert_eq!(key, unlock_key("token", "$argon2id$a"));
    }
}
