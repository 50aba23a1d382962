//! Resolves the session cookie once per request and keeps anonymous visitors out of pages.
//!
//! The signed-in [`CurrentUser`] goes into the request's extensions, where server functions
//! and renders read it (`app::api::auth::require_user`). Pages redirect anonymous visitors to
//! the sign-in page; server functions refuse them themselves with 401, so this layer is not the
//! only guard.

use app::api::auth::SessionId;
use app::domain::account::CurrentUser;
use app::i18n::Locale;
use app::services::sessions;
use app::state::AppState;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};

/// Paths anyone may fetch: the sign-in page and company sign-in's redirects, health checks, server functions and the REST API
/// and metrics (which check the session or token themselves), trigger and ping URLs (their
/// id is the credential), share links (their token is), the built site's files and the script other sites embed to be counted.
fn is_public(path: &str) -> bool {
    matches!(
        path,
        "/login"
            | "/healthz"
            | "/readyz"
            | "/metrics"
            | "/favicon.ico"
            | "/favicon.svg"
            | "/collect.js"
    ) || [
        "/api/", "/assets/", "/pkg/", "/vendor/", "/hooks/", "/ping/", "/auth/", "/share/",
    ]
    .iter()
    .any(|prefix| path.starts_with(prefix))
}

pub async fn layer(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    let peer = request
        .extensions()
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map(|info| info.0.ip());
    let mut user = match signed_in(&state, request.headers(), peer).await {
        Ok(user) => user,
        Err(e) => {
            tracing::error!(error = %e, "cannot look up the session");
            return (
                StatusCode::SERVICE_UNAVAILABLE,
                "the database is unreachable; try again shortly",
            )
                .into_response();
        }
    };

    if let Some(resolved) = user.as_mut()
        && state.auth.require_totp_for_admins
        && resolved.lacks_second_factor
        && resolved.user.is_admin()
    {
        resolved.user.must_add_second_factor = true;
    }

    let path = request.uri().path();
    let is_page_view = matches!(*request.method(), Method::GET | Method::HEAD);
    match &user {
        Some(_) if path == "/login" && is_page_view => return Redirect::to("/").into_response(),
        // A password reset by an administrator, or a second factor required and missing: the
        // account page, and nothing else, until it is done (server functions refuse the same
        // way).
        Some(resolved)
            if (resolved.user.must_change_password || resolved.user.must_add_second_factor)
                && is_page_view
                && path != "/account"
                && !is_public(path) =>
        {
            return Redirect::to("/account").into_response();
        }
        None if is_page_view && !is_public(path) => {
            let target = request.uri().path_and_query().map_or("/", |pq| pq.as_str());
            let next: String = form_urlencoded::byte_serialize(target.as_bytes()).collect();
            return Redirect::to(&format!("/login?next={next}")).into_response();
        }
        _ => {}
    }
    let locale = page_locale(
        user.as_ref().and_then(|r| r.user.locale.as_deref()),
        request.headers(),
        state.default_locale,
    );
    request.extensions_mut().insert(locale);
    if let Some(resolved) = user {
        request
            .extensions_mut()
            .insert::<CurrentUser>(resolved.user);
        if !resolved.session_id.is_empty() {
            request
                .extensions_mut()
                .insert(SessionId(resolved.session_id));
        }
    }
    app::i18n::scope(locale, next.run(request)).await
}

/// Who the request comes from: the person a trusted proxy's header names (from a listed proxy
/// only), else the session cookie's.
async fn signed_in(
    state: &AppState,
    headers: &HeaderMap,
    peer: Option<std::net::IpAddr>,
) -> Result<Option<sessions::Resolved>, sea_orm::DbErr> {
    if let Some(user) = header_user(state, headers, peer).await? {
        return Ok(Some(user));
    }
    let Some(token) = sessions::token_from_headers(headers, state.auth.secure_cookies) else {
        return Ok(None);
    };
    let lifetimes = state.auth.lifetimes();
    sessions::user_for_token(&state.db, &token, lifetimes, crate::clock::now()).await
}

/// The person `auth_header` names, when the request's peer — the socket's, never a forwarded
/// address — is one of `auth_header_proxies`. From anyone else the header means nothing.
async fn header_user(
    state: &AppState,
    headers: &HeaderMap,
    peer: Option<std::net::IpAddr>,
) -> Result<Option<sessions::Resolved>, sea_orm::DbErr> {
    let Some(auth) = &state.auth.header else {
        return Ok(None);
    };
    if !peer.is_some_and(|ip| auth.proxies.contains(ip)) {
        return Ok(None);
    }
    let value = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    let Some(name) = value(&auth.header).filter(|n| !n.is_empty()) else {
        return Ok(None);
    };
    let groups = auth
        .groups_header
        .as_deref()
        .and_then(value)
        .map(app::domain::sign_in::groups_of_header);
    let role = auth.roles.role(groups.as_deref().unwrap_or_default());
    let ip = peer.map(|ip| ip.to_string());
    let now = crate::clock::now();
    let user =
        app::services::identities::by_header(&state.db, name, role, groups.is_some(), ip, now)
            .await?;
    Ok(user.map(|user| sessions::Resolved {
        user,
        // No cookie, no session: each request is vouched for by the proxy.
        session_id: String::new(),
        // The proxy's own sign-in is the person's second factor, if any.
        lacks_second_factor: false,
    }))
}

/// The language a page (and a server function's messages) is written in: the person's own
/// choice, else the best their browser asks for, else the configured default. The sign-in page
/// has no person yet, so it follows the browser.
fn page_locale(chosen: Option<&str>, headers: &HeaderMap, default: Locale) -> Locale {
    chosen
        .and_then(Locale::parse)
        .or_else(|| {
            headers
                .get(header::ACCEPT_LANGUAGE)
                .and_then(|v| v.to_str().ok())
                .and_then(Locale::from_accept_language)
        })
        .unwrap_or(default)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_private_and_assets_public() {
        for path in ["/", "/jobs", "/settings", "/runs/12"] {
            assert!(!is_public(path), "{path}");
        }
        for path in [
            "/login",
            "/healthz",
            "/readyz",
            "/api/login",
            "/pkg/bulwark.js",
            "/vendor/echarts.min.js",
            "/collect.js",
            "/share/0123abcd",
        ] {
            assert!(is_public(path), "{path}");
        }
    }

    #[test]
    fn a_persons_choice_beats_the_browser_which_beats_the_default() {
        let zh = Locale::parse("zh-CN").expect("zh-CN");
        let en = Locale::english();
        let mut chinese_browser = HeaderMap::new();
        chinese_browser.insert(header::ACCEPT_LANGUAGE, "zh-CN,zh;q=0.9".parse().unwrap());
        let mut french_browser = HeaderMap::new();
        french_browser.insert(header::ACCEPT_LANGUAGE, "fr".parse().unwrap());
        assert_eq!(page_locale(Some("en"), &chinese_browser, zh), en);
        assert_eq!(page_locale(None, &chinese_browser, en), zh);
        assert_eq!(page_locale(None, &french_browser, zh), zh);
        assert_eq!(page_locale(None, &HeaderMap::new(), en), en);
        // A setting whose catalogue was removed since: as if none was chosen.
        assert_eq!(page_locale(Some("xx"), &chinese_browser, en), zh);
    }
}
