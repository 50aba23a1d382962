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
    #[error(
        "there is no administrator and the name '{0}' belongs to a viewer: \
         add one with `bulwark user add --role admin`"
    )]
    NoAdminNameTaken(String),
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

impl From<user::Model> for UserSummary {
    fn from(m: user::Model) -> Self {
        UserSummary {
            id: m.id,
            username: m.username,
            role: m.role,
            created_at: m.created_at,
        }
    }
}

impl From<UserSummary> for crate::views::users::UserRow {
    fn from(u: UserSummary) -> Self {
        crate::views::users::UserRow {
            id: u.id,
            username: u.username,
            role: u.role,
            created_at: u.created_at,
        }
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
        role: Set(role),
        created_at: Set(crate::clock::now()),
        ..Default::default()
    }
    .insert(db)
    .await
    .map_err(|e| match e.sql_err() {
        Some(SqlErr::UniqueConstraintViolation(_)) => CreateUserError::Taken(username.to_string()),
        _ => CreateUserError::Db(e),
    })?;
    Ok(UserSummary::from(inserted))
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
    Ok(user::Entity::find()
        .order_by_asc(user::Column::Username)
        .all(db)
        .await?
        .into_iter()
        .map(UserSummary::from)
        .collect())
}

/// The first administrator of a fresh installation.
#[derive(Debug)]
pub struct FirstAdmin {
    pub username: String,
    /// Set when Bulwark chose the password: it is shown once and stored only as a hash.
    pub generated_password: Option<String>,
}

/// Creates the account `admin` when no administrator exists, with `password` or a generated
/// one. Returns `None` when an administrator already exists (the usual case after the first
/// start), including one that another instance created a moment ago.
pub async fn ensure_first_admin(
    db: &impl ConnectionTrait,
    password: Option<&str>,
) -> Result<Option<FirstAdmin>, CreateUserError> {
    if admin_exists(db).await? {
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
        Err(CreateUserError::Taken(name)) if !admin_exists(db).await? => {
            Err(CreateUserError::NoAdminNameTaken(name))
        }
        Err(CreateUserError::Taken(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

async fn admin_exists(db: &impl ConnectionTrait) -> Result<bool, DbErr> {
    Ok(user::Entity::find()
        .filter(user::Column::Role.eq(Role::Admin))
        .count(db)
        .await?
        > 0)
}
