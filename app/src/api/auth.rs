//! Signing in and out, and who is asking.
//!
//! The server's session layer resolves the cookie once per request and puts the
//! [`CurrentUser`] into the request's extensions; [`require_user`] and [`require_admin`] read
//! it from there. Every server function except [`login`] starts with one of them.

use leptos::prelude::*;

use super::AppError;
use super::codec::Json;
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
    let user = require_signed_in()?;
    if user.must_change_password {
        return Err(AppError::PasswordChangeRequired);
    }
    if user.must_add_second_factor {
        return Err(AppError::SecondFactorRequired);
    }
    Ok(user)
}

/// The signed-in user even while they must change their password or add a second factor: for
/// the few functions that lead there (changing it, adding one, signing out, who am I).
#[cfg(feature = "ssr")]
pub fn require_signed_in() -> Result<CurrentUser, AppError> {
    request_user().ok_or(AppError::Unauthenticated)
}

/// The id of the session this request came with (see `crate::services::sessions`).
#[cfg(feature = "ssr")]
pub fn request_session_id() -> Option<String> {
    use_context::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<SessionId>().map(|s| s.0.clone()))
}

/// The request's session, put into its extensions next to the [`CurrentUser`].
#[cfg(feature = "ssr")]
#[derive(Debug, Clone)]
pub struct SessionId(pub String);

/// The request's `User-Agent`, for the session list.
#[cfg(feature = "ssr")]
pub fn request_user_agent() -> Option<String> {
    use_context::<http::request::Parts>().and_then(|parts| {
        parts
            .headers
            .get(http::header::USER_AGENT)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
    })
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

/// The client's address: the socket's peer, or behind trusted proxies the right-most
/// `X-Forwarded-For` entry none of them holds (`crate::domain::client_addr`).
#[cfg(feature = "ssr")]
pub fn request_ip() -> Option<String> {
    let parts = use_context::<http::request::Parts>()?;
    let trusted = use_context::<crate::state::AppState>()
        .map(|state| state.auth.trusted_proxies)
        .unwrap_or_default();
    address_of(&parts, &trusted)
}

/// A request's client address, as [`request_ip`] finds it, from its parts.
#[cfg(feature = "ssr")]
pub fn address_of(
    parts: &http::request::Parts,
    trusted: &crate::domain::client_addr::TrustedProxies,
) -> Option<String> {
    let peer = parts
        .extensions
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()?
        .0
        .ip();
    let forwarded: Vec<&str> = parts
        .headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    Some(trusted.client(peer, &forwarded).to_string())
}

/// The signed-in person's own password, checked (and counted) like a sign-in before a change
/// that needs it; a wrong one is refused on `field`.
#[cfg(feature = "ssr")]
pub async fn confirm_own_password(
    state: &crate::state::AppState,
    me: &CurrentUser,
    password: &str,
    field: &str,
) -> Result<(), AppError> {
    use crate::services::login::{self, LoginError};
    let ip = request_ip();
    let now = crate::clock::now();
    login::confirm_password(&state.db, &me.username, password, ip.as_deref(), now)
        .await
        .map(|_| ())
        .map_err(|e| match e {
            LoginError::BadCredentials => {
                AppError::invalid(field, crate::t!("error-wrong-password"))
            }
            other => AppError::from(other),
        })
}

/// A refused password check as the person reads it.
#[cfg(feature = "ssr")]
impl From<crate::services::login::LoginError> for AppError {
    fn from(e: crate::services::login::LoginError) -> Self {
        use crate::services::login::LoginError;
        match e {
            LoginError::BadCredentials => {
                AppError::invalid("password", crate::t!("error-login-bad"))
            }
            LoginError::CodeRequired => {
                AppError::invalid("code", crate::t!("error-login-code-required"))
            }
            LoginError::WrongCode => AppError::invalid("code", crate::t!("error-login-code-wrong")),
            LoginError::Throttled { minutes } => {
                AppError::TooManyAttempts(crate::t!("error-login-throttled", minutes = minutes))
            }
            LoginError::Password(crate::services::passwords::PasswordError::Busy) => {
                AppError::TooManyAttempts(crate::t!("error-busy"))
            }
            other => AppError::internal(&other),
        }
    }
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

/// Signs in with a password, and for an account with a second factor `code`: the
/// authenticator's code or a recovery code.
#[server(endpoint = "login", output = Json)]
pub async fn login(
    username: String,
    password: String,
    next: Option<String>,
    code: Option<String>,
) -> Result<(), AppError> {
    use crate::services::{login, sessions};

    super::respond(
        async {
            if username.trim().is_empty() {
                return Err(AppError::invalid(
                    "username",
                    crate::t!("error-username-empty"),
                ));
            }
            if password.is_empty() {
                return Err(AppError::invalid(
                    "password",
                    crate::t!("error-password-empty"),
                ));
            }
            let state = super::state()?;
            if !state.auth.password_login {
                return Err(AppError::PasswordLoginOff);
            }
            let now = crate::clock::now();
            let ip = request_ip();
            let second = login::SecondFactor {
                key: &state.secret_key,
                code: code.as_deref(),
            };
            let user =
                login::authenticate(&state.db, &username, &password, second, ip.as_deref(), now)
                    .await
                    .map_err(AppError::from)?;
            let origin = sessions::Origin {
                ip,
                user_agent: request_user_agent(),
                ..Default::default()
            };
            let token =
                sessions::create(&state.db, user.id, state.auth.session_ttl, &origin, now).await?;
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
            if user.must_change_password {
                leptos_axum::redirect("/account");
            } else {
                leptos_axum::redirect(&safe_next_path(next.as_deref()));
            }
            Ok(())
        }
        .await,
    )
}

#[server(endpoint = "logout", output = Json)]
pub async fn logout() -> Result<(), AppError> {
    use crate::services::sessions;

    super::respond(
        async {
            let state = super::state()?;
            let mut ended = None;
            if let Some(token) = use_context::<http::request::Parts>().and_then(|parts| {
                sessions::token_from_headers(&parts.headers, secure_cookies(&state))
            }) {
                ended = sessions::delete(&state.db, &token).await?;
            }
            let response = expect_context::<leptos_axum::ResponseOptions>();
            let value =
                http::HeaderValue::from_str(&sessions::clear_cookie(secure_cookies(&state)))
                    .map_err(|e| AppError::internal(&e))?;
            response.append_header(http::header::SET_COOKIE, value);
            leptos_axum::redirect(&after_sign_out(ended));
            Ok(())
        }
        .await,
    )
}

/// Where the browser goes once signed out: the sign-in page, or for a provider's session the
/// provider's own sign-out, which comes back to the sign-in page.
#[cfg(feature = "ssr")]
fn after_sign_out(ended: Option<crate::entities::session::Model>) -> String {
    ended
        .and_then(|s| s.sign_out_url)
        .unwrap_or_else(|| "/login".to_string())
}

/// How the sign-in page offers to sign in: the password form (unless `password_login` is
/// off) and a button per OpenID provider. Anyone may ask: it is what the page shows them.
#[server(endpoint = "sign_in_options", output = Json)]
pub async fn sign_in_options() -> Result<crate::views::users::SignInOptions, AppError> {
    super::respond(
        super::state().map(|state| crate::views::users::SignInOptions {
            password: state.auth.password_login,
            providers: state.auth.providers.clone(),
        }),
    )
}

/// Who is signed in; `Unauthenticated` when nobody is.
#[server(endpoint = "me", output = Json)]
pub async fn whoami() -> Result<CurrentUser, AppError> {
    super::respond(require_signed_in())
}
