//! Accounts, as the Settings page manages them.

use leptos::prelude::*;

use super::AppError;
use super::codec::Json;
use crate::views::users::UserRow;

#[server(endpoint = "users/list", output = Json)]
pub async fn list_users() -> Result<Vec<UserRow>, AppError> {
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            let users = crate::services::users::list(&state.db).await?;
            let now = crate::clock::now();
            let working: Vec<_> = crate::services::tokens::list(&state.db)
                .await?
                .into_iter()
                .filter(|t| t.state(now) == "active")
                .collect();
            Ok(users
                .into_iter()
                .map(UserRow::from)
                .map(|mut row| {
                    row.tokens = working
                        .iter()
                        .filter(|t| t.owner.as_deref() == Some(row.username.as_str()))
                        .map(|t| (t.name.clone(), t.scope))
                        .collect();
                    row
                })
                .collect())
        }
        .await,
    )
}

#[server(endpoint = "users/create", output = Json)]
pub async fn create_user(
    username: String,
    password: String,
    role: String,
) -> Result<UserRow, AppError> {
    use crate::domain::account::{NewPassword, Role, Username};
    use crate::services::users;

    super::respond(
        async {
            let admin = super::auth::require_admin("add users")?;
            let username = Username::parse(&username)?;
            let role = Role::parse_field(&role)?;
            let password = NewPassword::parse(&password)?;
            let state = super::state()?;
            let who = super::actor(&admin);
            let created = users::add(&state.db, &username, role, &password, &who)
                .await
                .map_err(|e| match e {
                    users::CreateUserError::Taken(name) => AppError::invalid(
                        "username",
                        crate::t!("error-username-taken", name = name),
                    ),
                    users::CreateUserError::Invalid(e) => e.into(),
                    other => AppError::internal(&other),
                })?;
            Ok(UserRow::from(created))
        }
        .await,
    )
}

#[cfg(feature = "ssr")]
impl From<crate::services::users::ManageError> for AppError {
    fn from(e: crate::services::users::ManageError) -> Self {
        use crate::services::users::ManageError;
        match e {
            ManageError::NotFound(name) => AppError::NotFound(crate::t!("noun-user", name = name)),
            ManageError::LastAdmin(name) => {
                AppError::Conflict(crate::t!("error-last-admin", name = name))
            }
            ManageError::SamePassword => {
                AppError::invalid("password", crate::t!("error-same-password"))
            }
            ManageError::Password(crate::services::passwords::PasswordError::Busy) => {
                AppError::TooManyAttempts(crate::t!("error-busy"))
            }
            other => AppError::internal(&other),
        }
    }
}

/// Everyone: a new password for themselves, the current one required. Their other sessions
/// end; this one stays.
#[server(endpoint = "account/password", output = Json)]
pub async fn change_password(current: String, password: String) -> Result<(), AppError> {
    use crate::domain::account::NewPassword;

    super::respond(
        async {
            let me = super::auth::require_signed_in()?;
            let new = NewPassword::parse(&password)?;
            let state = super::state()?;
            let keep = super::auth::request_session_id();
            super::auth::confirm_own_password(&state, &me, &current, "current").await?;
            let who = super::actor(&me);
            crate::services::users::change_own_password(
                &state.db,
                me.id,
                &current,
                &new,
                keep.as_deref(),
                &who,
            )
            .await
            .map_err(AppError::from)?;
            Ok(())
        }
        .await,
    )
}

/// Everyone: the language of their own console; empty follows the browser. The page reloads
/// after it, so everything is rendered again in the new language.
#[server(endpoint = "account/locale", output = Json)]
pub async fn set_my_locale(locale: String) -> Result<(), AppError> {
    super::respond(
        async {
            let me = super::auth::require_signed_in()?;
            let chosen = super::locale_field("locale", &locale)?;
            let state = super::state()?;
            crate::services::users::set_locale(&state.db, me.id, chosen)
                .await
                .map_err(|e| AppError::internal(&e))?;
            Ok(())
        }
        .await,
    )
}

/// Everyone: their own live sessions, this one marked.
#[server(endpoint = "account/sessions", output = Json)]
pub async fn my_sessions() -> Result<Vec<crate::views::users::SessionRow>, AppError> {
    super::respond(
        async {
            let me = super::auth::require_signed_in()?;
            let state = super::state()?;
            let current = super::auth::request_session_id();
            let now = crate::clock::now();
            let sessions = crate::services::sessions::list_for_user(
                &state.db,
                me.id,
                state.auth.lifetimes(),
                now,
            )
            .await?;
            Ok(sessions
                .into_iter()
                .map(|s| crate::views::users::SessionRow {
                    current: current.as_deref() == Some(s.id.as_str()),
                    last_seen_at: s.last_seen_at.unwrap_or(s.created_at),
                    id: s.id,
                    created_at: s.created_at,
                    ip: s.ip,
                    user_agent: s.user_agent,
                })
                .collect())
        }
        .await,
    )
}

/// Everyone: ends one of their own sessions (`id` from the list), or with `all` every other
/// one.
#[server(endpoint = "account/sessions/end", output = Json)]
pub async fn end_my_sessions(id: Option<String>, all: Option<bool>) -> Result<u64, AppError> {
    super::respond(
        async {
            let me = super::auth::require_signed_in()?;
            let state = super::state()?;
            use crate::services::sessions::{self, Which};
            let current = super::auth::request_session_id();
            let which = match (id.as_deref(), all.unwrap_or(false)) {
                (_, true) => Which::AllBut(current.as_deref()),
                (Some(id), false) => Which::One(id),
                (None, false) => {
                    return Err(AppError::invalid("id", crate::t!("error-name-session")));
                }
            };
            let (who, now) = (super::actor(&me), crate::clock::now());
            let user = (me.id, me.username.as_str());
            Ok(sessions::end(&state.db, user, which, &who, "user.sessions_ended", now).await?)
        }
        .await,
    )
}

/// Admins: a new password for someone else, which they must change at their next sign-in.
/// Every session of theirs ends.
#[server(endpoint = "users/reset-password", output = Json)]
pub async fn reset_password(username: String, password: String) -> Result<(), AppError> {
    use crate::domain::account::NewPassword;

    super::respond(
        async {
            let admin = super::auth::require_admin("reset passwords")?;
            let new = NewPassword::parse(&password)?;
            let state = super::state()?;
            let who = super::actor(&admin);
            crate::services::users::set_password(&state.db, &username, &new, true, &who)
                .await
                .map_err(AppError::from)?;
            Ok(())
        }
        .await,
    )
}

/// Admins: change a role, disable or enable, delete (`action`: `admin`, `viewer`, `disable`,
/// `enable`, `delete`), end every session (`end-sessions`) or turn a second factor off
/// (`second-factor-off`). The last enabled administrator
/// can be neither demoted, disabled nor deleted.
#[server(endpoint = "users/manage", output = Json)]
pub async fn manage_user(username: String, action: String) -> Result<bool, AppError> {
    use crate::domain::account::Role;
    use crate::services::users::{self, Change};

    super::respond(
        async {
            let admin = super::auth::require_admin("manage users")?;
            let state = super::state()?;
            let now = crate::clock::now();
            let change = match action.as_str() {
                "admin" => Some(Change::Role(Role::Admin)),
                "viewer" => Some(Change::Role(Role::Viewer)),
                "disable" => Some(Change::Disabled(true)),
                "enable" => Some(Change::Disabled(false)),
                "delete" => Some(Change::Delete),
                "end-sessions" | "second-factor-off" => None,
                other => {
                    return Err(AppError::invalid(
                        "action",
                        format!(
                            "'{other}' is not one of admin, viewer, disable, enable, delete, \
                             end-sessions, second-factor-off"
                        ),
                    ));
                }
            };
            let who = super::actor(&admin);
            if let Some(change) = change {
                return users::change(&state.db, &username, change, &who, now)
                    .await
                    .map_err(AppError::from);
            }
            let account = users::find_by_username(&state.db, &username)
                .await?
                .ok_or_else(|| {
                    AppError::NotFound(crate::t!("noun-user", name = username.clone()))
                })?;
            if action == "second-factor-off" {
                // For someone who lost both their authenticator and their recovery codes.
                return Ok(crate::services::second_factor::turn_off(
                    &state.db, &account, &who, now,
                )
                .await?);
            }
            use crate::services::sessions::{self, Which};
            let user = (account.id, username.as_str());
            let action = "user.end_sessions";
            Ok(sessions::end(&state.db, user, Which::AllBut(None), &who, action, now).await? > 0)
        }
        .await,
    )
}

/// Admins: let the person with subject `subject` at the configured OpenID provider `provider`
/// sign in as `username`'s account (what `bulwark user link` does).
#[server(endpoint = "users/link", output = Json)]
pub async fn link_user(
    username: String,
    provider: String,
    subject: String,
) -> Result<(), AppError> {
    use crate::domain::sign_in::ProviderName;
    use crate::services::identities::{self, Claimed, LinkError};

    super::respond(
        async {
            let admin = super::auth::require_admin("link accounts")?;
            let state = super::state()?;
            let configured = state
                .auth
                .providers
                .iter()
                .find(|p| p.name == provider)
                .ok_or_else(|| {
                    AppError::invalid(
                        "provider",
                        crate::t!("error-link-provider", name = provider.clone()),
                    )
                })?;
            let subject = subject.trim();
            if subject.is_empty() || subject.len() > 255 {
                return Err(AppError::invalid(
                    "subject",
                    crate::t!("error-link-subject"),
                ));
            }
            let name = ProviderName::parse(&configured.name).map_err(|_| {
                AppError::invalid(
                    "provider",
                    crate::t!("error-link-provider", name = provider.clone()),
                )
            })?;
            let claimed = Claimed {
                provider: &name,
                issuer: &configured.issuer,
                subject,
                name: None,
                role: None,
                ip: None,
            };
            let who = super::actor(&admin);
            let days = configured.token_max_days;
            let now = crate::clock::now();
            identities::link(&state.db, &username, &claimed, days, &who, now)
                .await
                .map_err(|e| match e {
                    LinkError::NoAccount(name) => {
                        AppError::NotFound(crate::t!("noun-user", name = name))
                    }
                    LinkError::Taken(owner) => {
                        AppError::Conflict(crate::t!("error-link-taken", name = owner))
                    }
                    LinkError::Db(e) => AppError::from(e),
                })
        }
        .await,
    )
}
