//! Named secrets on the Settings page: everyone sees the names, admins set, replace and remove
//! them. A value goes in and never comes back out.

use leptos::prelude::*;

use super::AppError;
use super::codec::Json;
use crate::views::secrets::SecretRow;

#[cfg(feature = "ssr")]
impl From<crate::services::secrets::SecretError> for AppError {
    fn from(e: crate::services::secrets::SecretError) -> Self {
        use crate::services::secrets::SecretError;
        match e {
            SecretError::NotFound(name) => {
                AppError::NotFound(crate::t!("noun-secret", name = name))
            }
            SecretError::Empty => AppError::invalid("value", crate::t!("error-secret-empty")),
            other => AppError::internal(&other),
        }
    }
}

#[server(endpoint = "secrets/list", output = Json)]
pub async fn list_secrets() -> Result<Vec<SecretRow>, AppError> {
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            Ok(crate::services::secrets::list(&state.db)
                .await?
                .into_iter()
                .map(|s| SecretRow {
                    name: s.name,
                    updated_at: s.updated_at,
                })
                .collect())
        }
        .await,
    )
}

/// Sets or replaces a secret; true when it is new.
#[server(endpoint = "secrets/set", output = Json)]
pub async fn set_secret(name: String, value: String) -> Result<bool, AppError> {
    use crate::domain::secrets::SecretName;
    super::respond(
        async {
            let admin = super::auth::require_admin("set secrets")?;
            let name = SecretName::parse(&name).map_err(|m| AppError::refused("name", &m))?;
            let state = super::state()?;
            let (who, now) = (super::actor(&admin), crate::clock::now());
            let key = &state.secret_key;
            Ok(crate::services::secrets::set(&state.db, key, &name, &value, &who, now).await?)
        }
        .await,
    )
}

#[server(endpoint = "secrets/remove", output = Json)]
pub async fn remove_secret(name: String) -> Result<(), AppError> {
    super::respond(
        async {
            let admin = super::auth::require_admin("remove secrets")?;
            let state = super::state()?;
            let who = super::actor(&admin);
            crate::services::secrets::remove(&state.db, &name, &who, crate::clock::now()).await?;
            Ok(())
        }
        .await,
    )
}
