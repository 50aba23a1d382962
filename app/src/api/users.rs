//! Accounts, as the Settings page manages them.

use leptos::prelude::*;

use super::AppError;
use crate::views::users::UserRow;

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
    use crate::domain::account::{NewPassword, Role, Username};
    use crate::services::users;

    super::respond(
        async {
            let admin = super::auth::require_admin("add users")?;
            let username = Username::parse(&username)?;
            let role = Role::parse_field(&role)?;
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
            super::audit(
                &state,
                &admin,
                "user.created",
                created.username.as_str(),
                serde_json::json!({ "role": role }),
            )
            .await?;
            Ok(UserRow::from(created))
        }
        .await,
    )
}
