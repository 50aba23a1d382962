//! API tokens on the Settings page: everyone sees which exist; admins create one (shown once)
//! and revoke them. Every change is audited.

use leptos::prelude::*;

use super::AppError;
use super::codec::Json;
use crate::views::tokens::{CreatedToken, TokenInfo};

#[cfg(feature = "ssr")]
impl From<crate::services::tokens::TokenError> for AppError {
    fn from(e: crate::services::tokens::TokenError) -> Self {
        use crate::services::tokens::TokenError;
        match e {
            TokenError::Invalid(field, m) => AppError::refused(field, &m),
            TokenError::Taken(name) => {
                AppError::invalid("name", crate::t!("error-token-taken", name = name))
            }
            TokenError::NotFound(name) => AppError::NotFound(crate::t!("noun-token", name = name)),
            TokenError::Db(e) => AppError::internal(&e),
        }
    }
}

#[server(endpoint = "tokens/list", output = Json)]
pub async fn list_tokens() -> Result<Vec<TokenInfo>, AppError> {
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            Ok(crate::services::tokens::list(&state.db).await?)
        }
        .await,
    )
}

/// Creates a token owned by the administrator who creates it; the answer holds it, the only
/// time it is shown.
#[server(endpoint = "tokens/create", output = Json)]
pub async fn create_token(
    name: String,
    scope: String,
    tags: String,
    expires: String,
) -> Result<CreatedToken, AppError> {
    use crate::domain::api_token::Scope;
    super::respond(
        async {
            let admin = super::auth::require_admin("create API tokens")?;
            let scope = Scope::from_word(&scope).ok_or_else(|| {
                AppError::invalid(
                    "scope",
                    crate::t!("error-token-scope", scopes = Scope::WORDS.join(", ")),
                )
            })?;
            let state = super::state()?;
            let new = crate::services::tokens::NewToken {
                name: &name,
                scope,
                tags: &tags,
                expires: &expires,
                owner: &admin.username,
                providers: &state.auth.providers,
            };
            let who = super::actor(&admin);
            let (token, info) =
                crate::services::tokens::create(&state.db, &new, &who, crate::clock::now()).await?;
            Ok(CreatedToken { token, info })
        }
        .await,
    )
}

#[server(endpoint = "tokens/revoke", output = Json)]
pub async fn revoke_token(name: String) -> Result<(), AppError> {
    super::respond(
        async {
            let admin = super::auth::require_admin("revoke API tokens")?;
            let state = super::state()?;
            let who = super::actor(&admin);
            crate::services::tokens::revoke(&state.db, &name, &who, crate::clock::now()).await?;
            Ok(())
        }
        .await,
    )
}

/// The REST API's operations, for the API reference page.
#[server(endpoint = "api-docs", output = Json)]
pub async fn api_docs() -> Result<Vec<crate::views::api_docs::ApiOperation>, AppError> {
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            Ok(state.api_docs.as_ref().clone())
        }
        .await,
    )
}
