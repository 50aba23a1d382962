//! Accounts: creating them, listing them, and the first administrator.

use chrono::Utc;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, PaginatorTrait,
    QueryFilter, QueryOrder, Set, SqlErr,
};
use serde::{Deserialize, Serialize};

use super::passwords::{self, PasswordError};
use crate::domain::account::{NewPassword, Role, Username};
use crate::entities::user;

#[derive(Debug, thiserror::Error)]
pub enum CreateUserError {
    #[error("a user named '{0}' already exists")]
    Taken(String),
    #[error(transparent)]
    Invalid(#[from] crate::domain::account::AccountError),
    #[error(transparent)]
    Password(#[from] PasswordError),
    #[error("could not store the user: {0}")]
    Db(#[from] DbErr),
}

/// What the Settings page and `bulwark user list` show of an account (never the hash).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserSummary {
    pub id: i64,
    pub username: String,
    pub role: Role,
    pub created_at: chrono::DateTime<Utc>,
}

impl TryFrom<user::Model> for UserSummary {
    type Error = DbErr;

    fn try_from(m: user::Model) -> Result<Self, DbErr> {
        let role = Role::parse(&m.role)
            .map_err(|e| DbErr::Custom(format!("user {} has a bad role in the database: {e}", m.id)))?;
        Ok(UserSummary {
            id: m.id,
            username: m.username,
            role,
            created_at: m.created_at,
        })
    }
}

/// Creates an account. A name that is taken is refused whole: nothing is written.
pub async fn create(
    db: &impl ConnectionTrait,
    username: &Username,
    role: Role,
    password: &NewPassword,
) -> Result<UserSummary, CreateUserError> {
    // Checked first for a friendly message; the unique index below still settles races.
    if find_by_username(db, username.as_str()).await?.is_some() {
        return Err(CreateUserError::Taken(username.to_string()));
    }
    let password_hash = passwords::hash(password.expose().to_string()).await?;
    let inserted = user::ActiveModel {
        username: Set(username.to_string()),
        password_hash: Set(password_hash),
        role: Set(role.as_str().to_string()),
        created_at: Set(Utc::now()),
        ..Default::default()
    }
    .insert(db)
    .await
    .map_err(|e| match e.sql_err() {
        Some(SqlErr::UniqueConstraintViolation(_)) => CreateUserError::Taken(username.to_string()),
        _ => CreateUserError::Db(e),
    })?;
    Ok(UserSummary::try_from(inserted)?)
}

pub async fn find_by_username(
    db: &impl ConnectionTrait,
    username: &str,
) -> Result<Option<user::Model>, DbErr> {
    user::Entity::find()
        .filter(user::Column::Username.eq(username))
        .one(db)
        .await
}

pub async fn list(db: &impl ConnectionTrait) -> Result<Vec<UserSummary>, DbErr> {
    user::Entity::find()
        .order_by_asc(user::Column::Username)
        .all(db)
        .await?
        .into_iter()
        .map(UserSummary::try_from)
        .collect()
}

/// The first administrator of a fresh installation.
#[derive(Debug)]
pub struct FirstAdmin {
    pub username: String,
    /// Set when Bulwark chose the password: it is shown once and stored only as a hash.
    pub generated_password: Option<String>,
}

/// Creates `admin` when there is no account at all, with `password` or a generated one.
/// Returns `None` when accounts already exist (the usual case after the first start).
pub async fn ensure_first_admin(
    db: &impl ConnectionTrait,
    password: Option<&str>,
) -> Result<Option<FirstAdmin>, CreateUserError> {
    if user::Entity::find().count(db).await? > 0 {
        return Ok(None);
    }
    let (password, generated) = match password {
        Some(p) => (p.to_string(), None),
        None => {
            let p = passwords::generate();
            (p.clone(), Some(p))
        }
    };
    let new_password = NewPassword::parse(&password)?;
    let username = Username::parse("admin")?;
    match create(db, &username, Role::Admin, &new_password).await {
        Ok(_) => Ok(Some(FirstAdmin {
            username: username.to_string(),
            generated_password: generated,
        })),
        // Another instance created it at the same moment: that one reports the password.
        Err(CreateUserError::Taken(_)) => Ok(None),
        Err(e) => Err(e),
    }
}
