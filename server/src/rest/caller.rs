//! Who calls the API: a bearer token (`Authorization: Bearer bwk_…`), or a signed-in person's
//! session (the console's own pages and its API reference). Either way the role decides:
//! viewers read, admins change. A token works here and on `/metrics`, never for pages.

use app::domain::account::{CurrentUser, Role};
use app::services::{audit, tokens};
use app::state::AppState;
use axum::extract::FromRequestParts;
use axum::http::StatusCode;
use axum::http::request::Parts;

use super::problem::Problem;

#[derive(Debug, Clone)]
pub struct Caller {
    /// The name audit rows carry: the username, or `token:NAME`.
    pub actor: String,
    /// The person's account, for a session.
    pub user_id: Option<i64>,
    pub role: Role,
}

/// A caller allowed to change things: a viewer is refused with 403 before the request's body
/// is even read (so a viewer learns nothing from a body's validation).
#[derive(Debug, Clone)]
pub struct Admin(pub Caller);

impl FromRequestParts<AppState> for Admin {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Problem> {
        let caller = Caller::from_request_parts(parts, state).await?;
        if caller.role.can_change() {
            Ok(Admin(caller))
        } else {
            Err(Problem::new(
                StatusCode::FORBIDDEN,
                format!(
                    "only administrators may change anything; {} is a viewer",
                    caller.actor
                ),
            ))
        }
    }
}

impl Caller {
    /// Writes an audit row for a change this caller made.
    pub async fn audit(
        &self,
        state: &AppState,
        action: &str,
        subject: &str,
        detail: serde_json::Value,
    ) -> Result<(), Problem> {
        audit::record(
            &state.db,
            &audit::Actor {
                id: self.user_id,
                name: &self.actor,
                ip: None,
            },
            action,
            subject,
            detail,
            crate::clock::now(),
        )
        .await?;
        Ok(())
    }

    /// The caller as the services that record who acted want it.
    pub fn as_actor(&self) -> audit::Actor<'_> {
        audit::Actor {
            id: self.user_id,
            name: &self.actor,
            ip: None,
        }
    }
}

/// The token of an `Authorization: Bearer` header, if the request has one; an error when the
/// header is there but says something else.
pub fn bearer(headers: &axum::http::HeaderMap) -> Option<Result<&str, Problem>> {
    let value = headers.get(axum::http::header::AUTHORIZATION)?;
    Some(
        value
            .to_str()
            .ok()
            .and_then(|v| {
                v.strip_prefix("Bearer ")
                    .or_else(|| v.strip_prefix("bearer "))
            })
            .map(str::trim)
            .ok_or_else(|| {
                Problem::unauthorized("the Authorization header must be 'Bearer <token>'")
            }),
    )
}

/// The token's caller, or 401.
pub async fn token_caller(state: &AppState, token: &str) -> Result<Caller, Problem> {
    match tokens::verify(&state.db, token, crate::clock::now()).await {
        Ok(Some(found)) => Ok(Caller {
            actor: found.actor(),
            user_id: None,
            role: found.role,
        }),
        Ok(None) => Err(Problem::unauthorized(
            "the token is not valid: wrong, revoked or expired",
        )),
        Err(e) => {
            tracing::error!(error = %e, "cannot look up an API token");
            Err(Problem::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "the database is unreachable; try again shortly",
            ))
        }
    }
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Problem> {
        if let Some(token) = bearer(&parts.headers) {
            return token_caller(state, token?).await;
        }
        match parts.extensions.get::<CurrentUser>() {
            Some(user) if user.must_change_password => Err(Problem::new(
                StatusCode::FORBIDDEN,
                "choose a new password first (on the Account page)",
            )),
            Some(user) => Ok(Caller {
                actor: user.username.clone(),
                user_id: Some(user.id),
                role: user.role,
            }),
            None => Err(Problem::unauthorized(
                "send 'Authorization: Bearer <token>' (create one under Settings → API tokens, or with bulwark token create)",
            )),
        }
    }
}
