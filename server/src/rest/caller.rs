//! Who calls the API: a bearer token (`Authorization: Bearer bwk_…`), or a signed-in person's
//! session (the console's own pages and its API reference). Either way the role decides:
//! viewers read, admins change. A token works here and on `/metrics`, never for pages.
//!
//! A `trigger` token is narrower than a viewer: [`Caller`] refuses it, so an operation takes
//! it only by asking for a [`Runner`] (starting runs, reading jobs and runs) and checking the
//! job with [`Caller::covers`]. An operation added later is closed to it until it asks.

use app::domain::account::{CurrentUser, Role};
use app::domain::api_token::Scope;
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
    /// A token's scope; a session's is its role's (`read` or `admin`).
    pub scope: Scope,
    /// A trigger token's tags: the jobs it covers (empty: all).
    pub tags: Vec<String>,
    /// Where the request came from, for the audit log.
    pub address: Option<String>,
}

/// Any caller, a trigger token included: for the operations a trigger token may call, which
/// check each job against [`Caller::covers`].
#[derive(Debug, Clone)]
pub struct Runner(pub Caller);

impl FromRequestParts<AppState> for Runner {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Problem> {
        identify(parts, state).await.map(Runner)
    }
}

/// A caller allowed to change things: a viewer is refused with 403 before the request's body
/// is even read (so a viewer learns nothing from a body's validation).
#[derive(Debug, Clone)]
pub struct Admin(pub Caller);

impl FromRequestParts<AppState> for Admin {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Problem> {
        let caller = Caller::from_request_parts(parts, state).await?;
        if caller.scope == Scope::Admin && caller.role.can_change() {
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
    /// Whether this caller may start runs of a job with `job_tags`: an administrator, or a
    /// trigger token whose tags the job shares (or that has none).
    pub fn may_start(&self, job_tags: &[String]) -> bool {
        match self.scope {
            Scope::Admin => self.role.can_change(),
            Scope::Trigger => self.covers(job_tags),
            Scope::Read => false,
        }
    }

    /// Whether this caller may read a job with `job_tags` and its runs: anyone but a trigger
    /// token with tags the job lacks.
    pub fn covers(&self, job_tags: &[String]) -> bool {
        self.scope != Scope::Trigger
            || self.tags.is_empty()
            || job_tags.iter().any(|t| self.tags.contains(t))
    }

    /// The answer for a job this caller may not touch.
    pub fn not_covered(&self, job: &str) -> Problem {
        Problem::new(
            StatusCode::FORBIDDEN,
            format!(
                "{} may start and read only the jobs tagged {}; {job} is not one",
                self.actor,
                self.tags.join(", ")
            ),
        )
    }

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
            &self.as_actor(),
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
            ip: self.address.clone(),
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

/// The token's caller, or 401; `from` is the request's address.
pub async fn token_caller(
    state: &AppState,
    token: &str,
    from: Option<String>,
) -> Result<Caller, Problem> {
    let at = from.as_deref().unwrap_or("unknown");
    match tokens::verify(&state.db, token, at, crate::clock::now()).await {
        Ok(Some(found)) => Ok(Caller {
            actor: found.actor(),
            user_id: None,
            role: found.role,
            scope: found.scope,
            tags: found.tags,
            address: from,
        }),
        Ok(None) => Err(Problem::unauthorized(
            "the token is not valid: wrong, revoked, expired, or its owner's account no longer allows it",
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

/// The request's client address (behind trusted proxies, as `app/src/api/auth.rs` reads it).
pub fn address(parts: &Parts, state: &AppState) -> Option<String> {
    app::api::auth::address_of(parts, &state.auth.trusted_proxies)
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Problem> {
        let caller = identify(parts, state).await?;
        if caller.scope == Scope::Trigger {
            return Err(Problem::new(
                StatusCode::FORBIDDEN,
                format!(
                    "{} is a trigger token: it starts runs and reads jobs and runs, nothing else",
                    caller.actor
                ),
            ));
        }
        Ok(caller)
    }
}

/// The caller of a request, a token of any scope or a session.
async fn identify(parts: &Parts, state: &AppState) -> Result<Caller, Problem> {
    if let Some(token) = bearer(&parts.headers) {
        return token_caller(state, token?, address(parts, state)).await;
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
            scope: Scope::of_role(user.role),
            tags: Vec::new(),
            address: address(parts, state),
        }),
        None => Err(Problem::unauthorized(
            "send 'Authorization: Bearer <token>' (create one under Settings → API tokens, or with bulwark token create)",
        )),
    }
}
