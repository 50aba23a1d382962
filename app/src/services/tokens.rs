//! API tokens: created with a scope, an owner and an end (90 days unless said otherwise),
//! shown once, stored as their SHA-256, found by that hash on each request, revoked by name. A
//! request with a token acts as `token:NAME` with the role its scope acts as, and only while
//! its owner's account exists (by id: a new account of the same name is someone else), is
//! enabled and holds a role the scope allows.

use chrono::{DateTime, Utc};
use rand_core::{OsRng, RngCore};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder,
    Set,
};
use sha2::{Digest, Sha256};

use crate::domain::account::Role;
use crate::domain::api_token::{self, PREFIX, Scope};
use crate::entities::api_token::{self as row, Column, Entity};
use crate::entities::user;
use crate::services::audit::{self, Actor};
use crate::services::sql::begin_write;
pub use crate::views::tokens::TokenInfo;

#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// A refused value and the field it was typed in (`name`, `scope`, `tags`, `expires`,
    /// `owner`).
    #[error("{1}")]
    Invalid(&'static str, crate::domain::Problem),
    #[error("a token named '{0}' exists already: revoke it first, or choose another name")]
    Taken(String),
    #[error("there is no active token named '{0}'")]
    NotFound(String),
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// A row as listed, with its owner's name and whether the owner still lets it work.
fn info(m: row::Model, owner: Option<&user::Model>) -> TokenInfo {
    TokenInfo {
        owner: owner.map(|o| o.username.clone()),
        stopped_by_owner: m.owner_id.is_some() && !owner_keeps(m.scope, owner),
        name: m.name,
        role: m.role,
        scope: m.scope,
        tags: tags_of(&m.tags),
        created_by: m.created_by,
        created_at: m.created_at,
        expires_at: m.expires_at,
        last_used_at: m.last_used_at,
        last_used_from: m.last_used_from,
        revoked_at: m.revoked_at,
    }
}

fn tags_of(column: &Option<String>) -> Vec<String> {
    column
        .as_deref()
        .map(|t| t.split(',').map(str::to_string).collect())
        .unwrap_or_default()
}

/// Whether an owner (found by id, or gone) keeps a token of `scope` working.
fn owner_keeps(scope: Scope, owner: Option<&user::Model>) -> bool {
    owner.is_some_and(|o| o.disabled_at.is_none() && scope.allowed_for(o.role))
}

/// What a new token is for; the texts as typed ([`api_token`] reads them).
#[derive(Debug, Clone, Copy)]
pub struct NewToken<'a> {
    pub name: &'a str,
    pub scope: Scope,
    /// A trigger token's tags; empty: every job.
    pub tags: &'a str,
    /// `30d`, a date, `never`; empty: [`api_token::DEFAULT_EXPIRY`].
    pub expires: &'a str,
    /// The owning account's username.
    pub owner: &'a str,
    /// The configured OpenID providers: a token of an account signing in through one expires
    /// within its `token_max_days`, so a leaver's tokens stop without anyone revoking them.
    pub providers: &'a [crate::views::users::ProviderInfo],
}

/// Who a valid token speaks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenCaller {
    pub id: i64,
    pub name: String,
    pub role: Role,
    pub scope: Scope,
    /// A trigger token's tags; empty: every job.
    pub tags: Vec<String>,
}

impl TokenCaller {
    /// The name audit rows carry.
    pub fn actor(&self) -> String {
        format!("token:{}", self.name)
    }
}

fn hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// Creates a token and records who did; returns it (the only time it exists outside the
/// caller's hands) and its listing.
pub async fn create(
    db: &sea_orm::DatabaseConnection,
    new: &NewToken<'_>,
    who: &Actor<'_>,
    now: DateTime<Utc>,
) -> Result<(String, TokenInfo), TokenError> {
    let txn = begin_write(db).await?;
    let (token, info) = insert(&txn, new, who.name, now).await?;
    let detail = serde_json::json!({
        "scope": info.scope, "tags": info.tags, "owner": info.owner, "expires_at": info.expires_at,
    });
    audit::record(&txn, who, "token.created", &info.name, detail, now).await?;
    txn.commit().await?;
    Ok((token, info))
}

async fn insert(
    db: &impl ConnectionTrait,
    new: &NewToken<'_>,
    created_by: &str,
    now: DateTime<Utc>,
) -> Result<(String, TokenInfo), TokenError> {
    let name = api_token::parse_name(new.name).map_err(|m| TokenError::Invalid("name", m))?;
    let tags = api_token::parse_scope_tags(new.scope, new.tags)
        .map_err(|m| TokenError::Invalid("tags", m))?;
    let expires_at =
        api_token::parse_expiry(new.expires, now).map_err(|m| TokenError::Invalid("expires", m))?;
    let owner = owner_for(db, new.owner, new.scope).await?;
    let expires_at = capped(expires_at, max_days(&owner, new.providers), now);
    if active(db, &name).await?.is_some() {
        return Err(TokenError::Taken(name));
    }
    let mut bytes = [0u8; 32];
    OsRng.fill_bytes(&mut bytes);
    let token = format!("{PREFIX}{}", hex::encode(bytes));
    let created = row::ActiveModel {
        name: Set(name),
        role: Set(new.scope.acts_as()),
        scope: Set(new.scope),
        tags: Set((!tags.is_empty()).then(|| tags.join(","))),
        owner_id: Set(Some(owner.id)),
        token_hash: Set(hash(&token)),
        created_by: Set(created_by.chars().take(64).collect()),
        created_at: Set(now),
        expires_at: Set(expires_at),
        last_used_at: Set(None),
        last_used_from: Set(None),
        revoked_at: Set(None),
        ..Default::default()
    }
    .insert(db)
    .await?;
    Ok((token, info(created, Some(&owner))))
}

/// How many days a token of `owner` may live: its provider's limit, if it signs in through one.
fn max_days(owner: &user::Model, providers: &[crate::views::users::ProviderInfo]) -> Option<u32> {
    let provider = owner.sign_in.strip_prefix("oidc:")?;
    providers
        .iter()
        .find(|p| p.name == provider)
        .map(|p| p.token_max_days)
}

/// `expires_at`, brought within `max_days` of `now` when there is a limit.
pub fn capped(
    expires_at: Option<DateTime<Utc>>,
    max_days: Option<u32>,
    now: DateTime<Utc>,
) -> Option<DateTime<Utc>> {
    let Some(days) = max_days else {
        return expires_at;
    };
    let limit = now + chrono::Duration::days(i64::from(days));
    Some(expires_at.map_or(limit, |at| at.min(limit)))
}

/// Brings every working token of `owner_id` within `days` of `now` (an account just linked
/// to a provider keeps no token that outlives its limit).
pub async fn cap_owned(
    db: &impl ConnectionTrait,
    owner_id: i64,
    days: u32,
    now: DateTime<Utc>,
) -> Result<u64, DbErr> {
    let limit = now + chrono::Duration::days(i64::from(days));
    Ok(Entity::update_many()
        .col_expr(Column::ExpiresAt, sea_orm::sea_query::Expr::value(limit))
        .filter(Column::OwnerId.eq(owner_id))
        .filter(Column::RevokedAt.is_null())
        .filter(
            sea_orm::Condition::any()
                .add(Column::ExpiresAt.is_null())
                .add(Column::ExpiresAt.gt(limit)),
        )
        .exec(db)
        .await?
        .rows_affected)
}

/// The account named to own a token of `scope`: it exists, is enabled and may hold the scope.
async fn owner_for(
    db: &impl ConnectionTrait,
    username: &str,
    scope: Scope,
) -> Result<user::Model, TokenError> {
    let username = username.trim();
    let refuse = |m| TokenError::Invalid("owner", m);
    let owner = user::Entity::find()
        .filter(user::Column::Username.eq(username))
        .one(db)
        .await?
        .ok_or_else(|| {
            refuse(crate::problem!(
                "error-token-owner-missing",
                name = username
            ))
        })?;
    if owner.disabled_at.is_some() {
        return Err(refuse(crate::problem!(
            "error-token-owner-disabled",
            name = username
        )));
    }
    if !scope.allowed_for(owner.role) {
        return Err(refuse(crate::problem!(
            "error-token-owner-role",
            name = username,
            scope = scope.as_str()
        )));
    }
    Ok(owner)
}

async fn active(db: &impl ConnectionTrait, name: &str) -> Result<Option<row::Model>, DbErr> {
    Entity::find()
        .filter(Column::Name.eq(name))
        .filter(Column::RevokedAt.is_null())
        .one(db)
        .await
}

/// Every token, active ones first, newest first.
pub async fn list(db: &impl ConnectionTrait) -> Result<Vec<TokenInfo>, DbErr> {
    let owners: std::collections::HashMap<i64, user::Model> = user::Entity::find()
        .all(db)
        .await?
        .into_iter()
        .map(|u| (u.id, u))
        .collect();
    let mut rows: Vec<TokenInfo> = Entity::find()
        .order_by_desc(Column::CreatedAt)
        .order_by_desc(Column::Id)
        .all(db)
        .await?
        .into_iter()
        .map(|m| {
            let owner = m.owner_id.and_then(|id| owners.get(&id));
            info(m, owner)
        })
        .collect();
    rows.sort_by_key(|t| t.revoked_at.is_some());
    Ok(rows)
}

/// Revokes the active token named `name`, and records who did: every request with it is
/// refused from now on.
pub async fn revoke(
    db: &sea_orm::DatabaseConnection,
    name: &str,
    who: &Actor<'_>,
    now: DateTime<Utc>,
) -> Result<TokenInfo, TokenError> {
    let txn = begin_write(db).await?;
    let found = active(&txn, name.trim())
        .await?
        .ok_or_else(|| TokenError::NotFound(name.trim().to_string()))?;
    let owner = match found.owner_id {
        Some(id) => user::Entity::find_by_id(id).one(&txn).await?,
        None => None,
    };
    let mut model: row::ActiveModel = found.into();
    model.revoked_at = Set(Some(now));
    let revoked = info(model.update(&txn).await?, owner.as_ref());
    let detail = serde_json::json!({});
    audit::record(&txn, who, "token.revoked", &revoked.name, detail, now).await?;
    txn.commit().await?;
    Ok(revoked)
}

/// What would happen to an owner's account, for [`stopped_by`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OwnerChange {
    Disable,
    Delete,
    Demote(Role),
}

/// The names of the working tokens a change to account `user_id` would stop, for the console
/// to say before it confirms.
pub async fn stopped_by(
    db: &impl ConnectionTrait,
    user_id: i64,
    change: OwnerChange,
    now: DateTime<Utc>,
) -> Result<Vec<String>, DbErr> {
    let owner = user::Entity::find_by_id(user_id).one(db).await?;
    let rows = Entity::find()
        .filter(Column::OwnerId.eq(user_id))
        .filter(Column::RevokedAt.is_null())
        .order_by_asc(Column::Name)
        .all(db)
        .await?;
    Ok(rows
        .into_iter()
        .filter(|t| t.expires_at.is_none_or(|at| at > now))
        .filter(|t| owner_keeps(t.scope, owner.as_ref()))
        .filter(|t| match change {
            OwnerChange::Disable | OwnerChange::Delete => true,
            OwnerChange::Demote(role) => !t.scope.allowed_for(role),
        })
        .map(|t| t.name)
        .collect())
}

/// The caller a bearer token speaks for, if it exists, is not revoked, has not expired and its
/// owner still lets it work; its last use and the address it came `from` are noted (at most
/// once a minute from one address, so reads stay reads).
pub async fn verify(
    db: &impl ConnectionTrait,
    token: &str,
    from: &str,
    now: DateTime<Utc>,
) -> Result<Option<TokenCaller>, DbErr> {
    if !api_token::well_formed(token) {
        return Ok(None);
    }
    let Some(found) = Entity::find()
        .filter(Column::TokenHash.eq(hash(token)))
        .one(db)
        .await?
    else {
        return Ok(None);
    };
    if found.revoked_at.is_some() || found.expires_at.is_some_and(|at| at <= now) {
        return Ok(None);
    }
    if let Some(owner_id) = found.owner_id {
        let owner = user::Entity::find_by_id(owner_id).one(db).await?;
        if !owner_keeps(found.scope, owner.as_ref()) {
            return Ok(None);
        }
    }
    let from: String = from.chars().take(64).collect();
    let stale = found
        .last_used_at
        .is_none_or(|at| now - at >= chrono::Duration::minutes(1));
    if stale || found.last_used_from.as_deref() != Some(from.as_str()) {
        Entity::update_many()
            .col_expr(Column::LastUsedAt, Expr::value(now))
            .col_expr(Column::LastUsedFrom, Expr::value(from))
            .filter(Column::Id.eq(found.id))
            .exec(db)
            .await?;
    }
    Ok(Some(TokenCaller {
        id: found.id,
        tags: tags_of(&found.tags),
        name: found.name,
        role: found.scope.acts_as(),
        scope: found.scope,
    }))
}
