//! Signing in and out, and who is asking.
//!
//! The server's session layer resolves the cookie once per request and puts the
//! [`CurrentUser`] into the request's extensions; [`require_user`] and [`require_admin`] read
//! it from there. Every server function except [`login`] starts with one of them.

use leptos::prelude::*;

use super::AppError;
use crate::domain::account::CurrentUser;

#[cfg(feature = "ssr")]
use crate::domain::account::safe_next_path;

/// The signed-in user of the current request, if any.
#[cfg(feature = "ssr")]
pub fn request_user() -> Option<CurrentUser> {
    use_context::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<CurrentUser>().cloned())
}

#[cfg(feature = "ssr")]
pub fn require_user() -> Result<CurrentUser, AppError> {
    request_user().ok_or(AppError::Unauthenticated)
}

/// The signed-in user if they are an admin; `action` completes "only administrators may …".
#[cfg(feature = "ssr")]
pub fn require_admin(action: &str) -> Result<CurrentUser, AppError> {
    let user = require_user()?;
    if user.is_admin() {
        Ok(user)
    } else {
        Err(AppError::Forbidden(action.to_string()))
    }
}

/// The client's address as the socket saw it.
#[cfg(feature = "ssr")]
pub fn request_ip() -> Option<String> {
    use_context::<http::request::Parts>().and_then(|parts| {
        parts
            .extensions
            .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
            .map(|info| info.0.ip().to_string())
    })
}

/// Whether cookies must carry `Secure`: configured, or the request came through TLS.
#[cfg(feature = "ssr")]
fn secure_cookies(state: &crate::state::AppState) -> bool {
    state.auth.secure_cookies
        || use_context::<http::request::Parts>().is_some_and(|parts| {
            parts
                .headers
                .get("x-forwarded-proto")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.eq_ignore_ascii_case("https"))
        })
}

#[server(endpoint = "login")]
pub async fn login(
    username: String,
    password: String,
    next: Option<String>,
) -> Result<(), AppError> {
    use crate::services::{login, sessions};
    use login::LoginError;

    super::respond(
        async {
            if username.trim().is_empty() {
                return Err(AppError::invalid("username", "username is required"));
            }
            if password.is_empty() {
                return Err(AppError::invalid("password", "password is required"));
            }
            let state = super::state()?;
            let now = crate::clock::now();
            let ip = request_ip();
            let user = login::authenticate(&state.db, &username, &password, ip.as_deref(), now)
                .await
                .map_err(|e| match e {
                    LoginError::BadCredentials => AppError::invalid("password", e.to_string()),
                    LoginError::Throttled { .. } => AppError::TooManyAttempts(e.to_string()),
                    other => AppError::internal(&other),
                })?;
            let token = sessions::create(&state.db, user.id, state.auth.session_ttl, now).await?;
            // Housekeeping rides on sign-ins: cheap, and no extra timer to run.
            if let Err(e) = sessions::purge_expired(&state.db, now).await {
                tracing::warn!(error = %e, "could not purge expired sessions");
            }
            let response = expect_context::<leptos_axum::ResponseOptions>();
            let cookie =
                sessions::set_cookie(&token, state.auth.session_ttl, secure_cookies(&state));
            let value = http::HeaderValue::from_str(&cookie).map_err(|e| AppError::internal(&e))?;
            response.append_header(http::header::SET_COOKIE, value);
            tracing::info!(user = %user.username, "signed in");
            leptos_axum::redirect(&safe_next_path(next.as_deref()));
            Ok(())
        }
        .await,
    )
}

#[server(endpoint = "logout")]
pub async fn logout() -> Result<(), AppError> {
    use crate::services::sessions;

    super::respond(
        async {
            let state = super::state()?;
            if let Some(token) = use_context::<http::request::Parts>()
                .and_then(|parts| sessions::token_from_headers(&parts.headers))
            {
                sessions::delete(&state.db, &token).await?;
            }
            let response = expect_context::<leptos_axum::ResponseOptions>();
            let value =
                http::HeaderValue::from_str(&sessions::clear_cookie(secure_cookies(&state)))
                    .map_err(|e| AppError::internal(&e))?;
            response.append_header(http::header::SET_COOKIE, value);
            leptos_axum::redirect("/login");
            Ok(())
        }
        .await,
    )
}

/// Who is signed in; `Unauthenticated` when nobody is.
#[server(endpoint = "me")]
pub async fn whoami() -> Result<CurrentUser, AppError> {
    super::respond(require_user())
}
