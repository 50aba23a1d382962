//! Accounts: creating, listing and managing them, and the first administrator.
//!
//! One rule holds over every change here: there is always an enabled administrator. A demotion,
//! a disable or a delete that would leave none is refused, and the check is race-free: the
//! change is written first and the remaining administrators counted in the same transaction,
//! with the administrators' rows locked on PostgreSQL (SQLite's write lock, taken by the first
//! write, serialises the rest).

use chrono::Utc;
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait,
    PaginatorTrait, QueryFilter, QueryOrder, Set, SqlErr, TransactionTrait,
};
use serde::{Deserialize, Serialize};

use super::passwords::{self, PasswordError};
use crate::domain::account::{AccountState, NewPassword, Role, Username};
use crate::domain::sign_in::SignInMethod;
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

/// Why an account change was refused.
#[derive(Debug, thiserror::Error)]
pub enum ManageError {
    #[error("there is no user named '{0}'")]
    NotFound(String),
    #[error("'{0}' is the last enabled administrator; make another administrator first")]
    LastAdmin(String),
    #[error("the new password must differ from the current one")]
    SamePassword,
    #[error(transparent)]
    Password(#[from] PasswordError),
    #[error("could not change the account: {0}")]
    Db(#[from] DbErr),
}

/// What the Settings page and `bulwark user list` show of an account (never the hash).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserSummary {
    pub id: i64,
    pub username: String,
    pub role: Role,
    pub state: AccountState,
    pub created_at: chrono::DateTime<Utc>,
    pub last_sign_in_at: Option<chrono::DateTime<Utc>>,
    /// `password`, `oidc:NAME` or `header`.
    pub sign_in: SignInMethod,
}

impl From<user::Model> for UserSummary {
    fn from(m: user::Model) -> Self {
        UserSummary {
            id: m.id,
            username: m.username,
            role: m.role,
            state: AccountState::of(m.disabled_at.is_some(), m.must_change_password),
            created_at: m.created_at,
            last_sign_in_at: m.last_sign_in_at,
            // Written only by this crate; an unreadable value is shown as a password account.
            sign_in: SignInMethod::parse(&m.sign_in).unwrap_or(SignInMethod::Password),
        }
    }
}

impl From<UserSummary> for crate::views::users::UserRow {
    fn from(u: UserSummary) -> Self {
        crate::views::users::UserRow {
            id: u.id,
            username: u.username,
            role: u.role,
            state: u.state,
            created_at: u.created_at,
            last_sign_in_at: u.last_sign_in_at,
            sign_in: u.sign_in,
            tokens: Vec::new(),
        }
    }
}

/// Records a successful sign-in's time.
pub async fn signed_in(
    db: &impl ConnectionTrait,
    user_id: i64,
    now: chrono::DateTime<Utc>,
) -> Result<(), DbErr> {
    user::Entity::update_many()
        .col_expr(user::Column::LastSignInAt, Expr::value(now))
        .filter(user::Column::Id.eq(user_id))
        .exec(db)
        .await?;
    Ok(())
}

async fn existing(db: &impl ConnectionTrait, username: &str) -> Result<user::Model, ManageError> {
    find_by_username(db, username)
        .await?
        .ok_or_else(|| ManageError::NotFound(username.to_string()))
}

/// A user changes their own password. `current` is their current password, already checked
/// under the sign-in limits (`services::login::confirm_password`, as `api/users.rs` does);
/// their other sessions end (`keep` is the one they are using, if any). Clears a pending
/// "must change".
pub async fn change_own_password(
    db: &DatabaseConnection,
    user_id: i64,
    current: &str,
    new: &NewPassword,
    keep: Option<&str>,
    who: &super::audit::Actor<'_>,
) -> Result<(), ManageError> {
    if current == new.expose() {
        return Err(ManageError::SamePassword);
    }
    let hash = passwords::hash(new.expose().to_string()).await?;
    let txn = db.begin().await?;
    user::Entity::update_many()
        .col_expr(user::Column::PasswordHash, Expr::value(hash))
        .col_expr(user::Column::MustChangePassword, Expr::value(false))
        .filter(user::Column::Id.eq(user_id))
        .exec(&txn)
        .await?;
    super::sessions::end_all(&txn, user_id, keep).await?;
    let (action, detail) = ("user.password_changed", serde_json::json!({}));
    super::audit::record(&txn, who, action, who.name, detail, crate::clock::now()).await?;
    txn.commit().await?;
    Ok(())
}

/// A person's own language for the console: a catalogue's tag, or `None` to follow their
/// browser. The caller checked the tag ([`crate::i18n::Locale::parse`]).
pub async fn set_locale(
    db: &impl ConnectionTrait,
    user_id: i64,
    locale: Option<crate::i18n::Locale>,
) -> Result<(), DbErr> {
    user::Entity::update_many()
        .col_expr(user::Column::Locale, Expr::value(locale.map(|l| l.tag())))
        .filter(user::Column::Id.eq(user_id))
        .exec(db)
        .await?;
    Ok(())
}

/// An administrator (or the operator, from the command line) sets a password, recorded as
/// `who`'s doing. With `must_change` the user has to choose their own at the next sign-in.
/// Every session of the user ends.
pub async fn set_password(
    db: &DatabaseConnection,
    username: &str,
    new: &NewPassword,
    must_change: bool,
    who: &super::audit::Actor<'_>,
) -> Result<(), ManageError> {
    let account = existing(db, username).await?;
    let hash = passwords::hash(new.expose().to_string()).await?;
    let txn = db.begin().await?;
    user::Entity::update_many()
        .col_expr(user::Column::PasswordHash, Expr::value(hash))
        .col_expr(user::Column::MustChangePassword, Expr::value(must_change))
        .filter(user::Column::Id.eq(account.id))
        .exec(&txn)
        .await?;
    super::sessions::end_all(&txn, account.id, None).await?;
    let (action, detail) = ("user.password_reset", serde_json::json!({}));
    super::audit::record(&txn, who, action, username, detail, crate::clock::now()).await?;
    txn.commit().await?;
    Ok(())
}

/// A change to an account that the last-administrator rule applies to.
#[derive(Debug, Clone, Copy)]
pub enum Change {
    Role(Role),
    /// Disabling ends every session of the user.
    Disabled(bool),
    /// The account and its sessions go; its audit rows keep its name.
    Delete,
}

impl Change {
    /// What the audit log calls it.
    pub fn audit_action(self) -> &'static str {
        match self {
            Change::Role(Role::Admin) => "user.admin",
            Change::Role(Role::Viewer) => "user.viewer",
            Change::Disabled(true) => "user.disable",
            Change::Disabled(false) => "user.enable",
            Change::Delete => "user.delete",
        }
    }
}

/// Applies `change` to `username`'s account, recorded as `who`'s doing, in a transaction that
/// commits only if an enabled administrator remains; returns false (and records nothing) when
/// the account already was that way.
pub async fn change(
    db: &DatabaseConnection,
    username: &str,
    change: Change,
    who: &super::audit::Actor<'_>,
    now: chrono::DateTime<Utc>,
) -> Result<bool, ManageError> {
    let txn = db.begin().await?;
    if txn.get_database_backend() == sea_orm::DatabaseBackend::Postgres {
        // Two admins demoting each other at once: the second waits here for the first and
        // then counts what the first left.
        txn.execute_unprepared(
            "SELECT id FROM users WHERE role = 'admin' AND disabled_at IS NULL FOR UPDATE",
        )
        .await?;
    } else {
        // A write first, so SQLite's write lock is held before anything is read.
        txn.execute_unprepared("UPDATE users SET id = id WHERE 0")
            .await?;
    }
    let account = existing(&txn, username).await?;
    let by_id =
        |update: sea_orm::UpdateMany<user::Entity>| update.filter(user::Column::Id.eq(account.id));
    let changed = match change {
        Change::Role(role) if account.role == role => false,
        Change::Role(role) => {
            by_id(user::Entity::update_many())
                .col_expr(user::Column::Role, Expr::value(role))
                .exec(&txn)
                .await?;
            true
        }
        Change::Disabled(disabled) if account.disabled_at.is_some() == disabled => false,
        Change::Disabled(disabled) => {
            by_id(user::Entity::update_many())
                .col_expr(
                    user::Column::DisabledAt,
                    Expr::value(disabled.then_some(now)),
                )
                .exec(&txn)
                .await?;
            if disabled {
                super::sessions::end_all(&txn, account.id, None).await?;
            }
            true
        }
        Change::Delete => {
            super::sessions::end_all(&txn, account.id, None).await?;
            user::Entity::delete_by_id(account.id).exec(&txn).await?;
            true
        }
    };
    let admins = user::Entity::find()
        .filter(user::Column::Role.eq(Role::Admin))
        .filter(user::Column::DisabledAt.is_null())
        .count(&txn)
        .await?;
    if admins == 0 {
        txn.rollback().await?;
        return Err(ManageError::LastAdmin(username.to_string()));
    }
    if changed {
        let detail = serde_json::json!({});
        super::audit::record(&txn, who, change.audit_action(), username, detail, now).await?;
    }
    txn.commit().await?;
    Ok(changed)
}

/// An administrator (or the operator) adds an account, recorded as `who`'s doing in the
/// same transaction.
pub async fn add(
    db: &DatabaseConnection,
    username: &Username,
    role: Role,
    password: &NewPassword,
    who: &super::audit::Actor<'_>,
) -> Result<UserSummary, CreateUserError> {
    let txn = super::sql::begin_write(db).await?;
    let created = create(&txn, username, role, password).await?;
    let detail = serde_json::json!({ "role": role });
    let now = crate::clock::now();
    super::audit::record(&txn, who, "user.created", username.as_str(), detail, now).await?;
    txn.commit().await?;
    Ok(created)
}

/// Creates an account nobody is recorded for (the first administrator; what an administrator
/// adds goes through [`add`]). A name that is taken is refused whole: nothing is written.
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
