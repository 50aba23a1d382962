//! Accounts, as the Settings page manages them.

use leptos::prelude::*;

use super::AppError;
use crate::domain::account::Role;
use serde::{Deserialize, Serialize};

/// An account as the browser sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserRow {
    pub id: i64,
    pub username: String,
    pub role: Role,
    pub created_at: chrono::DateTime<chrono::Utc>,
}

#[cfg(feature = "ssr")]
impl From<crate::services::users::UserSummary> for UserRow {
    fn from(u: crate::services::users::UserSummary) -> Self {
        UserRow {
            id: u.id,
            username: u.username,
            role: u.role,
            created_at: u.created_at,
        }
    }
}

#[server(endpoint = "users/list")]
pub async fn list_users() -> Result<Vec<UserRow>, AppError> {
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            let users = crate::services::users::list(&state.db).await?;
            Ok(users.into_iter().map(UserRow::from).collect())
        }
        .await,
    )
}

#[server(endpoint = "users/create")]
pub async fn create_user(
    username: String,
    password: String,
    role: String,
) -> Result<UserRow, AppError> {
    use crate::domain::account::{NewPassword, Username};
    use crate::services::{audit, users};

    super::respond(
        async {
            let admin = super::auth::require_admin("add users")?;
            let username = Username::parse(&username)?;
            let role = Role::parse(&role)?;
            let password = NewPassword::parse(&password)?;
            let state = super::state()?;
            let created = users::create(&state.db, &username, role, &password)
                .await
                .map_err(|e| match e {
                    users::CreateUserError::Taken(_) => {
                        AppError::invalid("username", e.to_string())
                    }
                    users::CreateUserError::Invalid(e) => e.into(),
                    other => AppError::internal(&other),
                })?;
            let ip = super::auth::request_ip();
            audit::record(
                &state.db,
                &audit::Actor {
                    id: Some(admin.id),
                    name: &admin.username,
                    ip: ip.as_deref(),
                },
                "user.created",
                created.username.as_str(),
                serde_json::json!({ "role": role.as_str() }),
                chrono::Utc::now(),
            )
            .await?;
            Ok(UserRow::from(created))
        }
        .await,
    )
}
