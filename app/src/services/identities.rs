//! Accounts of people an OpenID provider or a trusted proxy vouches for.
//!
//! A provider's person is found by the provider's issuer and their `sub` there — never by name
//! or e-mail, which a provider may reassign — and made just in time on their first sign-in,
//! unless a local account has their name: then an administrator links the two first
//! ([`link`]). Their role follows their groups at every sign-in; a person disabled here stays
//! out whatever the provider says. A proxy's person is found by name, as the proxy asserts it.
//! Every sign-in, creation, role change and refusal is audited.

use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait,
    QueryFilter, Set, SqlErr,
};

use super::audit::{self, Actor};
use super::users::{self, Change, ManageError};
use crate::domain::account::{CurrentUser, Role, Username};
use crate::domain::sign_in::{ProviderName, Refusal, SignInMethod};
use crate::entities::{user, user_identity};

pub const ACTION_SIGNED_IN: &str = "login.succeeded";
pub const ACTION_REFUSED: &str = "login.refused";
pub const ACTION_CREATED: &str = "user.created";
pub const ACTION_LINKED: &str = "user.linked";

/// Who a provider says signed in.
#[derive(Debug, Clone)]
pub struct Claimed<'a> {
    pub provider: &'a ProviderName,
    pub issuer: &'a str,
    pub subject: &'a str,
    /// The name their account gets if it is made now.
    pub name: Option<Username>,
    /// Their role by their groups; `None`: no mapped group and no default.
    pub role: Option<Role>,
    pub ip: Option<String>,
}

/// What became of a sign-in.
#[derive(Debug, Clone)]
pub enum Outcome {
    SignedIn(CurrentUser),
    Refused(Refusal),
}

#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    #[error("{0} has no account")]
    NoAccount(String),
    #[error("that identity already belongs to {0}")]
    Taken(String),
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// Signs in the person a provider vouched for: their account, made now if they have none.
pub async fn sign_in_oidc(
    db: &DatabaseConnection,
    claimed: &Claimed<'_>,
    now: DateTime<Utc>,
) -> Result<Outcome, DbErr> {
    let actor_name = SignInMethod::Oidc(claimed.provider.as_str().to_string()).to_string();
    let known = user_identity::Entity::find()
        .filter(user_identity::Column::Issuer.eq(claimed.issuer))
        .filter(user_identity::Column::Subject.eq(claimed.subject))
        .find_also_related(user::Entity)
        .one(db)
        .await?;
    let outcome = match known {
        Some((_, Some(account))) => returning(db, account, claimed.role, &actor_name, now).await?,
        _ => first_time(db, claimed, now).await?,
    };
    let subject = match &outcome {
        Outcome::SignedIn(user) => user.username.clone(),
        Outcome::Refused(_) => claimed
            .name
            .as_ref()
            .map_or_else(|| claimed.subject.to_string(), |n| n.to_string()),
    };
    record(db, &actor_name, &subject, &outcome, claimed.ip.clone(), now).await?;
    Ok(outcome)
}

/// Writes the sign-in or its refusal (with the reason) to the audit log.
async fn record(
    db: &impl ConnectionTrait,
    method: &str,
    subject: &str,
    outcome: &Outcome,
    ip: Option<String>,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    let (id, action, detail) = match outcome {
        Outcome::SignedIn(user) => (
            Some(user.id),
            ACTION_SIGNED_IN,
            serde_json::json!({ "via": method }),
        ),
        Outcome::Refused(reason) => (
            None,
            ACTION_REFUSED,
            serde_json::json!({ "via": method, "reason": reason.as_str() }),
        ),
    };
    let actor = Actor {
        id,
        name: subject,
        ip,
    };
    audit::record(db, &actor, action, subject, detail, now).await?;
    Ok(())
}

/// A known person: still enabled, and given the role their groups map to now.
async fn returning(
    db: &DatabaseConnection,
    account: user::Model,
    role: Option<Role>,
    actor_name: &str,
    now: DateTime<Utc>,
) -> Result<Outcome, DbErr> {
    if account.disabled_at.is_some() {
        return Ok(Outcome::Refused(Refusal::Disabled));
    }
    let Some(role) = role else {
        return Ok(Outcome::Refused(Refusal::NoMatchingGroup));
    };
    let account = follow_role(db, account, role, actor_name, now).await?;
    users::signed_in(db, account.id, now).await?;
    Ok(Outcome::SignedIn(account.current()))
}

/// Gives `account` the role its groups map to, audited as the provider's or proxy's doing. The
/// last enabled administrator keeps the role (the rule in `super::users`), with a warning.
async fn follow_role(
    db: &DatabaseConnection,
    mut account: user::Model,
    role: Role,
    actor_name: &str,
    now: DateTime<Utc>,
) -> Result<user::Model, DbErr> {
    if account.role == role {
        return Ok(account);
    }
    let who = Actor::named(actor_name);
    match users::change(db, &account.username, Change::Role(role), &who, now).await {
        Ok(_) => account.role = role,
        Err(ManageError::LastAdmin(name)) => {
            tracing::warn!(user = %name, "the groups make the last administrator a viewer: kept an administrator");
        }
        Err(ManageError::Db(e)) => return Err(e),
        Err(e) => return Err(DbErr::Custom(e.to_string())),
    }
    Ok(account)
}

/// Someone the provider names for the first time: an account of their own, unless their
/// groups give them none or a local account holds their name.
async fn first_time(
    db: &DatabaseConnection,
    claimed: &Claimed<'_>,
    now: DateTime<Utc>,
) -> Result<Outcome, DbErr> {
    let Some(role) = claimed.role else {
        return Ok(Outcome::Refused(Refusal::NoMatchingGroup));
    };
    let Some(name) = &claimed.name else {
        return Ok(Outcome::Refused(Refusal::NoUsableName));
    };
    let method = SignInMethod::Oidc(claimed.provider.as_str().to_string());
    let txn = super::sql::begin_write(db).await?;
    let Some(account) = insert_account(&txn, name, role, &method, now).await? else {
        return Ok(Outcome::Refused(Refusal::NameTaken));
    };
    insert_identity(&txn, account.id, claimed, now).await?;
    let method = method.to_string();
    let detail = serde_json::json!({ "role": role, "sign_in": method });
    audit::record(
        &txn,
        &Actor::named(&method),
        ACTION_CREATED,
        name.as_str(),
        detail,
        now,
    )
    .await?;
    txn.commit().await?;
    Ok(Outcome::SignedIn(account.current()))
}

/// A new account without a password; `None` when the name is taken.
async fn insert_account(
    db: &impl ConnectionTrait,
    name: &Username,
    role: Role,
    method: &SignInMethod,
    now: DateTime<Utc>,
) -> Result<Option<user::Model>, DbErr> {
    let inserted = user::ActiveModel {
        username: Set(name.to_string()),
        // No PHC string matches this, so no password ever signs in to the account.
        password_hash: Set(String::new()),
        role: Set(role),
        created_at: Set(now),
        last_sign_in_at: Set(Some(now)),
        sign_in: Set(method.to_string()),
        ..Default::default()
    }
    .insert(db)
    .await;
    match inserted {
        Ok(account) => Ok(Some(account)),
        Err(e) if matches!(e.sql_err(), Some(SqlErr::UniqueConstraintViolation(_))) => Ok(None),
        Err(e) => Err(e),
    }
}

async fn insert_identity(
    db: &impl ConnectionTrait,
    user_id: i64,
    claimed: &Claimed<'_>,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    user_identity::ActiveModel {
        user_id: Set(user_id),
        provider: Set(claimed.provider.as_str().to_string()),
        issuer: Set(claimed.issuer.to_string()),
        subject: Set(claimed.subject.to_string()),
        created_at: Set(now),
        ..Default::default()
    }
    .insert(db)
    .await?;
    Ok(())
}

/// Links `username`'s account to a provider's person: from now on they sign in as it there.
/// The account keeps its password for `bulwark user` but is shown as the provider's, and its
/// API tokens are brought within the provider's `token_max_days`.
pub async fn link(
    db: &DatabaseConnection,
    username: &str,
    claimed: &Claimed<'_>,
    token_max_days: u32,
    who: &Actor<'_>,
    now: DateTime<Utc>,
) -> Result<(), LinkError> {
    let txn = super::sql::begin_write(db).await?;
    let account = users::find_by_username(&txn, username)
        .await?
        .ok_or_else(|| LinkError::NoAccount(username.to_string()))?;
    let holder = user_identity::Entity::find()
        .filter(user_identity::Column::Issuer.eq(claimed.issuer))
        .filter(user_identity::Column::Subject.eq(claimed.subject))
        .find_also_related(user::Entity)
        .one(&txn)
        .await?;
    if let Some((_, Some(other))) = holder {
        return Err(LinkError::Taken(other.username));
    }
    insert_identity(&txn, account.id, claimed, now).await?;
    let method = SignInMethod::Oidc(claimed.provider.as_str().to_string()).to_string();
    user::Entity::update_many()
        .col_expr(
            user::Column::SignIn,
            sea_orm::sea_query::Expr::value(&method),
        )
        .filter(user::Column::Id.eq(account.id))
        .exec(&txn)
        .await?;
    super::tokens::cap_owned(&txn, account.id, token_max_days, now).await?;
    let detail = serde_json::json!({ "sign_in": method, "subject": claimed.subject });
    audit::record(&txn, who, ACTION_LINKED, username, detail, now).await?;
    txn.commit().await?;
    Ok(())
}

/// The person a trusted proxy's header names, made with `role` if they have no account yet.
/// `role` is what their groups map to (`None`: no mapped group and no default). `None` when
/// they may not in: disabled, no role, or a name that is not a valid username.
pub async fn by_header(
    db: &DatabaseConnection,
    name: &str,
    role: Option<Role>,
    groups_given: bool,
    ip: Option<String>,
    now: DateTime<Utc>,
) -> Result<Option<CurrentUser>, DbErr> {
    let Ok(name) = Username::parse(&name.to_lowercase()) else {
        return Ok(None);
    };
    let method = SignInMethod::Header.to_string();
    match users::find_by_username(db, name.as_str()).await? {
        Some(account) if account.disabled_at.is_some() => Ok(None),
        // Without a groups header the proxy says who, not what: the role set here stands.
        Some(account) if !groups_given => Ok(Some(account.current())),
        Some(account) => match role {
            Some(role) => Ok(Some(
                follow_role(db, account, role, &method, now)
                    .await?
                    .current(),
            )),
            None => Ok(None),
        },
        None => {
            let Some(role) = role else {
                let outcome = Outcome::Refused(Refusal::NoMatchingGroup);
                record(db, &method, name.as_str(), &outcome, ip, now).await?;
                return Ok(None);
            };
            let txn = super::sql::begin_write(db).await?;
            let Some(account) =
                insert_account(&txn, &name, role, &SignInMethod::Header, now).await?
            else {
                // Made by a request racing this one: theirs stands.
                drop(txn);
                return Ok(users::find_by_username(db, name.as_str())
                    .await?
                    .map(user::Model::current));
            };
            let detail = serde_json::json!({ "role": role, "sign_in": method });
            let who = Actor::named(&method);
            audit::record(&txn, &who, ACTION_CREATED, name.as_str(), detail, now).await?;
            txn.commit().await?;
            Ok(Some(account.current()))
        }
    }
}
