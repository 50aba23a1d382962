//! API tokens: created with a role and an optional expiry, shown once, stored as their SHA-256,
//! found by that hash on each request, revoked by name. A request with a token acts as
//! `token:NAME` with the token's role, under the same rules as a person with that role.

use chrono::{DateTime, Utc};
use rand_core::{OsRng, RngCore};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder,
    Set,
};
use sha2::{Digest, Sha256};

use crate::domain::account::Role;
use crate::domain::api_token::{self, PREFIX};
use crate::entities::api_token::{self as row, Column, Entity};
pub use crate::views::tokens::TokenInfo;

#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// A refused value and the field it was typed in (`name`, `expires`).
    #[error("{1}")]
    Invalid(&'static str, String),
    #[error("a token named '{0}' exists already: revoke it first, or choose another name")]
    Taken(String),
    #[error("there is no active token named '{0}'")]
    NotFound(String),
    #[error(transparent)]
    Db(#[from] DbErr),
}

impl From<row::Model> for TokenInfo {
    fn from(m: row::Model) -> Self {
        TokenInfo {
            name: m.name,
            role: m.role,
            created_by: m.created_by,
            created_at: m.created_at,
            expires_at: m.expires_at,
            last_used_at: m.last_used_at,
            revoked_at: m.revoked_at,
        }
    }
}

/// Who a valid token speaks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenCaller {
    pub id: i64,
    pub name: String,
    pub role: Role,
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

/// Creates a token; returns it (the only time it exists outside the caller's hands) and its
/// listing. `expires` as [`api_token::parse_expiry`] reads it.
pub async fn create(
    db: &impl ConnectionTrait,
    name: &str,
    role: Role,
    expires: &str,
    created_by: &str,
    now: DateTime<Utc>,
) -> Result<(String, TokenInfo), TokenError> {
    let name = api_token::parse_name(name).map_err(|m| TokenError::Invalid("name", m))?;
    let expires_at =
        api_token::parse_expiry(expires, now).map_err(|m| TokenError::Invalid("expires", m))?;
    if active(db, &name).await?.is_some() {
        return Err(TokenError::Taken(name));
    }
    let mut bytes = [0u8; 32];
    OsRng.fill_bytes(&mut bytes);
    let token = format!("{PREFIX}{}", hex::encode(bytes));
    let created = row::ActiveModel {
        name: Set(name),
        role: Set(role),
        token_hash: Set(hash(&token)),
        created_by: Set(created_by.chars().take(64).collect()),
        created_at: Set(now),
        expires_at: Set(expires_at),
        last_used_at: Set(None),
        revoked_at: Set(None),
        ..Default::default()
    }
    .insert(db)
    .await?;
    Ok((token, created.into()))
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
    let mut rows: Vec<TokenInfo> = Entity::find()
        .order_by_desc(Column::CreatedAt)
        .order_by_desc(Column::Id)
        .all(db)
        .await?
        .into_iter()
        .map(TokenInfo::from)
        .collect();
    rows.sort_by_key(|t| t.revoked_at.is_some());
    Ok(rows)
}

/// Revokes the active token named `name`: every request with it is refused from now on.
pub async fn revoke(
    db: &impl ConnectionTrait,
    name: &str,
    now: DateTime<Utc>,
) -> Result<TokenInfo, TokenError> {
    let found = active(db, name.trim())
        .await?
        .ok_or_else(|| TokenError::NotFound(name.trim().to_string()))?;
    let mut model: row::ActiveModel = found.into();
    model.revoked_at = Set(Some(now));
    Ok(model.update(db).await?.into())
}

/// The caller a bearer token speaks for, if it exists, is not revoked and has not expired; its
/// last use is noted (at most once a minute, so reads stay reads).
pub async fn verify(
    db: &impl ConnectionTrait,
    token: &str,
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
    if found
        .last_used_at
        .is_none_or(|at| now - at >= chrono::Duration::minutes(1))
    {
        Entity::update_many()
            .col_expr(Column::LastUsedAt, Expr::value(now))
            .filter(Column::Id.eq(found.id))
            .exec(db)
            .await?;
    }
    Ok(Some(TokenCaller {
        id: found.id,
        name: found.name,
        role: found.role,
    }))
}
