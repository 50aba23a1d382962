//! OpenID Connect sign-in: the authorization-code flow with PKCE, `state` and `nonce`.
//!
//! `GET /auth/oidc/{name}` marks the browser with a cookie, keeps the sign-in
//! (`app::services::pending_logins`) and sends the browser to the provider. The provider sends
//! it back to `/auth/oidc/{name}/callback`, which takes that sign-in (once: a replay finds
//! nothing), exchanges the code with the PKCE verifier, and checks the ID token — signature
//! against the provider's published keys, issuer, audience, expiry (within
//! `oidc_clock_skew_seconds`) and nonce — before `app::services::identities` finds or makes the
//! account. Signing out of such a session sends the browser on to the provider's end-session
//! endpoint (RP-initiated logout), when it has one, kept with the session.
//!
//! The provider's discovery document is kept for [`METADATA_MINUTES`] and fetched again at
//! once when a token's key is not in it (the provider rotated its keys).

use std::collections::HashMap;
use std::sync::Arc;

use app::domain::account::safe_next_path;
use app::domain::sign_in::{self, GroupRoles, ProviderName, Refusal};
use app::services::identities::{self, Claimed, Outcome};
use app::services::{pending_logins, sessions};
use app::state::AppState;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::get;
use openidconnect::core::{CoreAuthenticationFlow, CoreClient, CoreIdToken};
use openidconnect::{
    AuthorizationCode, ClientId, ClientSecret, CsrfToken, IssuerUrl, Nonce, PkceCodeChallenge,
    PkceCodeVerifier, ProviderMetadataWithLogout, RedirectUrl, Scope, TokenResponse,
};
use serde::Deserialize;
use tokio::sync::Mutex;

use crate::config::{Config, OidcProvider};

/// How long a provider's discovery document (and its keys) is trusted before it is fetched again.
pub const METADATA_MINUTES: u64 = 15;

/// Where a provider's client secret comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretSource {
    /// `${secret:NAME}`: the vault, read at each sign-in so a rotation needs no restart.
    Vault(String),
    /// A file holding it (a trailing newline dropped).
    File(std::path::PathBuf),
}

impl SecretSource {
    pub fn parse(text: &str) -> Option<SecretSource> {
        let text = text.trim();
        if let Some(name) = text
            .strip_prefix("${secret:")
            .and_then(|t| t.strip_suffix('}'))
        {
            return app::domain::secrets::SecretName::parse(name)
                .ok()
                .map(|_| SecretSource::Vault(name.to_string()));
        }
        let path = std::path::Path::new(text);
        (!text.is_empty() && path.is_file()).then(|| SecretSource::File(path.to_path_buf()))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum OidcError {
    #[error("cannot read the provider's discovery document: {0}")]
    Discovery(String),
    #[error("cannot read the client secret: {0}")]
    Secret(String),
    #[error("the provider's answer failed its checks: {0}")]
    Token(String),
    #[error("database: {0}")]
    Db(#[from] sea_orm::DbErr),
}

type Metadata = Arc<ProviderMetadataWithLogout>;

struct Provider {
    config: OidcProvider,
    name: ProviderName,
    roles: GroupRoles,
    metadata: Mutex<Option<(std::time::Instant, Metadata)>>,
}

/// The configured providers and what talking to them needs.
pub struct Oidc {
    providers: HashMap<String, Arc<Provider>>,
    http: reqwest::Client,
    skew: chrono::Duration,
    /// The console's address as browsers reach it: the base of the callback URL.
    public_url: String,
}

impl Oidc {
    /// `None` when no provider is configured. `public_url`: the console's address (the bound
    /// one when `public_url` is not configured).
    pub fn new(config: &Config, public_url: String) -> anyhow::Result<Option<Arc<Oidc>>> {
        let mut providers = HashMap::new();
        for p in config.oidc_providers() {
            let name = ProviderName::parse(&p.name)
                .map_err(|n| anyhow::anyhow!("OpenID provider name '{n}' is not valid"))?;
            let roles = GroupRoles {
                admin: p.admin_groups.clone(),
                viewer: p.viewer_groups.clone(),
                default: p.default_role,
            };
            let provider = Provider {
                config: p,
                name,
                roles,
                metadata: Mutex::new(None),
            };
            providers.insert(provider.config.name.clone(), Arc::new(provider));
        }
        if providers.is_empty() {
            return Ok(None);
        }
        // The crate's own advice: no redirects, so a provider cannot steer these requests.
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(std::time::Duration::from_secs(15))
            .build()?;
        Ok(Some(Arc::new(Oidc {
            providers,
            http,
            skew: chrono::Duration::seconds(i64::from(config.oidc_clock_skew_seconds)),
            public_url: public_url.trim_end_matches('/').to_string(),
        })))
    }

    fn callback_url(&self, provider: &Provider) -> Result<RedirectUrl, OidcError> {
        let url = format!(
            "{}/auth/oidc/{}/callback",
            self.public_url,
            provider.name.as_str()
        );
        RedirectUrl::new(url).map_err(|e| OidcError::Token(e.to_string()))
    }

    async fn metadata(&self, provider: &Provider, fresh: bool) -> Result<Metadata, OidcError> {
        let mut cached = provider.metadata.lock().await;
        if let Some((at, metadata)) = cached.as_ref()
            && !fresh
            && at.elapsed() < std::time::Duration::from_secs(METADATA_MINUTES * 60)
        {
            return Ok(metadata.clone());
        }
        let issuer = IssuerUrl::new(provider.config.issuer.clone())
            .map_err(|e| OidcError::Discovery(e.to_string()))?;
        let metadata = ProviderMetadataWithLogout::discover_async(issuer, &self.http)
            .await
            .map_err(|e| OidcError::Discovery(error_chain(&e)))?;
        let metadata = Arc::new(metadata);
        *cached = Some((std::time::Instant::now(), metadata.clone()));
        Ok(metadata)
    }

    /// Where signing out of a session that began with `id_token` sends the browser: the
    /// provider's end-session endpoint (RP-initiated logout), back to `/login` after; `None`
    /// when the provider offers none.
    async fn sign_out_url(&self, provider: &Provider, id_token: &str) -> Option<String> {
        let metadata = self.metadata(provider, false).await.ok()?;
        let mut url = metadata
            .additional_metadata()
            .end_session_endpoint
            .as_ref()?
            .url()
            .clone();
        url.query_pairs_mut()
            .append_pair("id_token_hint", id_token)
            .append_pair("client_id", &provider.config.client_id)
            .append_pair(
                "post_logout_redirect_uri",
                &format!("{}/login", self.public_url),
            );
        Some(url.to_string())
    }

    async fn client_secret(
        &self,
        provider: &Provider,
        state: &AppState,
    ) -> Result<Option<ClientSecret>, OidcError> {
        let Some(configured) = &provider.config.client_secret else {
            return Ok(None);
        };
        let secret = match SecretSource::parse(configured) {
            Some(SecretSource::Vault(name)) => {
                let open = app::services::secrets::open_all(&state.db, &state.secret_key)
                    .await
                    .map_err(|e| OidcError::Secret(e.to_string()))?;
                open.get(&name)
                    .cloned()
                    .ok_or_else(|| OidcError::Secret(format!("no secret named {name}")))?
            }
            Some(SecretSource::File(path)) => std::fs::read_to_string(&path)
                .map_err(|e| OidcError::Secret(format!("{}: {e}", path.display())))?
                .trim_end()
                .to_string(),
            None => return Err(OidcError::Secret("neither a reference nor a file".into())),
        };
        Ok(Some(ClientSecret::new(secret)))
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// `/auth/oidc/{name}` and its callback.
pub fn routes(oidc: Arc<Oidc>) -> Router<AppState> {
    Router::new()
        .route("/auth/oidc/{provider}", get(start))
        .route("/auth/oidc/{provider}/callback", get(callback))
        .layer(axum::Extension(oidc))
}

#[derive(Deserialize)]
struct StartQuery {
    next: Option<String>,
}

/// Whether cookies must be `Secure`: configured, or the request came through TLS.
fn secure(state: &AppState, headers: &HeaderMap) -> bool {
    state.auth.secure_cookies
        || headers
            .get("x-forwarded-proto")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.eq_ignore_ascii_case("https"))
}

async fn start(
    State(state): State<AppState>,
    axum::Extension(oidc): axum::Extension<Arc<Oidc>>,
    Path(name): Path<String>,
    Query(query): Query<StartQuery>,
    headers: HeaderMap,
) -> Response {
    let Some(provider) = oidc.providers.get(&name).cloned() else {
        return StatusCode::NOT_FOUND.into_response();
    };
    match send_out(&state, &oidc, &provider, query.next.as_deref(), &headers).await {
        Ok(response) => response,
        Err(e) => {
            tracing::error!(provider = %name, error = %e, "cannot start an OpenID sign-in");
            refused_page(StatusCode::BAD_GATEWAY, Refusal::ProviderError)
        }
    }
}

async fn send_out(
    state: &AppState,
    oidc: &Oidc,
    provider: &Provider,
    next: Option<&str>,
    headers: &HeaderMap,
) -> Result<Response, OidcError> {
    let metadata = oidc.metadata(provider, false).await?;
    let client = CoreClient::from_provider_metadata(
        (*metadata).clone(),
        ClientId::new(provider.config.client_id.clone()),
        None,
    )
    .set_redirect_uri(oidc.callback_url(provider)?);
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let (url, csrf, nonce) = client
        .authorize_url(
            CoreAuthenticationFlow::AuthorizationCode,
            CsrfToken::new_random,
            Nonce::new_random,
        )
        .add_scope(Scope::new("profile".into()))
        .add_scope(Scope::new("email".into()))
        .set_pkce_challenge(challenge)
        .url();
    let browser = hex::encode(sessions::random_key());
    let pending = pending_logins::Pending {
        provider: provider.config.name.clone(),
        pkce_verifier: verifier.secret().clone(),
        nonce: nonce.secret().clone(),
        next: safe_next_path(next),
    };
    let now = crate::clock::now();
    pending_logins::begin(&state.db, csrf.secret(), &browser, &pending, now).await?;
    let mut response = Redirect::to(url.as_str()).into_response();
    let cookie = pending_logins::browser_cookie(&browser, secure(state, headers));
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().append(header::SET_COOKIE, value);
    }
    Ok(response)
}

#[derive(Deserialize)]
struct CallbackQuery {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
}

async fn callback(
    State(state): State<AppState>,
    axum::Extension(oidc): axum::Extension<Arc<Oidc>>,
    Path(name): Path<String>,
    Query(query): Query<CallbackQuery>,
    request: axum::extract::Request,
) -> Response {
    let Some(provider) = oidc.providers.get(&name).cloned() else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let (parts, _) = request.into_parts();
    let ip = app::api::auth::address_of(&parts, &state.auth.trusted_proxies);
    match complete(&state, &oidc, &provider, query, &parts.headers, ip.clone()).await {
        Ok(Completed::SignedIn(response)) => response,
        Ok(Completed::Refused(reason)) => {
            if matches!(
                reason,
                Refusal::BadState | Refusal::BadToken | Refusal::ProviderError
            ) {
                // What `identities` records for the rest, recorded here for these.
                let detail =
                    serde_json::json!({ "via": format!("oidc:{name}"), "reason": reason.as_str() });
                let actor = app::services::audit::Actor {
                    id: None,
                    name: &name,
                    ip,
                };
                let now = crate::clock::now();
                if let Err(e) = app::services::audit::record(
                    &state.db,
                    &actor,
                    identities::ACTION_REFUSED,
                    &name,
                    detail,
                    now,
                )
                .await
                {
                    tracing::error!(error = %e, "cannot audit a refused sign-in");
                }
            }
            refused_page(StatusCode::FORBIDDEN, reason)
        }
        Err(e) => {
            tracing::error!(provider = %name, error = %e, "OpenID sign-in failed");
            refused_page(StatusCode::BAD_GATEWAY, Refusal::ProviderError)
        }
    }
}

enum Completed {
    SignedIn(Response),
    Refused(Refusal),
}

async fn complete(
    state: &AppState,
    oidc: &Oidc,
    provider: &Provider,
    query: CallbackQuery,
    headers: &HeaderMap,
    ip: Option<String>,
) -> Result<Completed, OidcError> {
    let secure = secure(state, headers);
    let browser = pending_logins::browser_from_headers(headers, secure);
    let now = crate::clock::now();
    let pending = match &query.state {
        Some(s) => {
            pending_logins::take(&state.db, s, browser.as_deref(), &provider.config.name, now)
                .await?
        }
        None => None,
    };
    let Some(pending) = pending else {
        return Ok(Completed::Refused(Refusal::BadState));
    };
    if let Some(error) = &query.error {
        tracing::info!(provider = %provider.config.name, error, "the provider refused the sign-in");
        return Ok(Completed::Refused(Refusal::ProviderError));
    }
    let Some(code) = query.code else {
        return Ok(Completed::Refused(Refusal::ProviderError));
    };
    let token = match exchange(state, oidc, provider, code, &pending).await {
        Ok(token) => token,
        Err(OidcError::Token(why)) => {
            tracing::warn!(provider = %provider.config.name, why, "ID token refused");
            return Ok(Completed::Refused(Refusal::BadToken));
        }
        Err(e) => return Err(e),
    };
    let claimed = Claimed {
        provider: &provider.name,
        issuer: &token.issuer,
        subject: &token.subject,
        name: sign_in::account_name(token.preferred_username.as_deref(), token.email.as_deref()),
        role: provider.roles.role(&token.groups),
        ip: ip.clone(),
    };
    match identities::sign_in_oidc(&state.db, &claimed, now).await? {
        Outcome::Refused(reason) => Ok(Completed::Refused(reason)),
        Outcome::SignedIn(user) => {
            let origin = sessions::Origin {
                ip,
                user_agent: headers.get(header::USER_AGENT).map(|v| {
                    String::from_utf8_lossy(v.as_bytes())
                        .chars()
                        .take(255)
                        .collect()
                }),
                provider: Some(provider.config.name.clone()),
                sign_out_url: oidc.sign_out_url(provider, &token.raw).await,
            };
            let session =
                sessions::create(&state.db, user.id, state.auth.session_ttl, &origin, now).await?;
            let next = if user.must_change_password {
                "/account".to_string()
            } else {
                pending.next
            };
            let mut response = Redirect::to(&next).into_response();
            let cookie = sessions::set_cookie(&session, state.auth.session_ttl, secure);
            if let Ok(value) = HeaderValue::from_str(&cookie) {
                response.headers_mut().append(header::SET_COOKIE, value);
            }
            tracing::info!(user = %user.username, provider = %provider.config.name, "signed in");
            Ok(Completed::SignedIn(response))
        }
    }
}

/// What a checked ID token says about the person.
struct Verified {
    raw: String,
    issuer: String,
    subject: String,
    preferred_username: Option<String>,
    email: Option<String>,
    groups: Vec<String>,
}

async fn exchange(
    state: &AppState,
    oidc: &Oidc,
    provider: &Provider,
    code: String,
    pending: &pending_logins::Pending,
) -> Result<Verified, OidcError> {
    let metadata = oidc.metadata(provider, false).await?;
    let secret = oidc.client_secret(provider, state).await?;
    let client = CoreClient::from_provider_metadata(
        (*metadata).clone(),
        ClientId::new(provider.config.client_id.clone()),
        secret.clone(),
    )
    .set_redirect_uri(oidc.callback_url(provider)?);
    let response = client
        .exchange_code(AuthorizationCode::new(code))
        .map_err(|e| OidcError::Discovery(e.to_string()))?
        .set_pkce_verifier(PkceCodeVerifier::new(pending.pkce_verifier.clone()))
        .request_async(&oidc.http)
        .await
        .map_err(|e| OidcError::Token(error_chain(&e)))?;
    let id_token = response
        .id_token()
        .ok_or_else(|| OidcError::Token("the answer holds no ID token".into()))?;
    match verify(oidc, provider, &metadata, secret.clone(), id_token, pending) {
        Ok(verified) => Ok(verified),
        // A key the document does not list: the provider may have rotated; look once more.
        Err(OidcError::Token(why)) if why.contains("key") => {
            let metadata = oidc.metadata(provider, true).await?;
            verify(oidc, provider, &metadata, secret, id_token, pending)
        }
        Err(e) => Err(e),
    }
}

fn verify(
    oidc: &Oidc,
    provider: &Provider,
    metadata: &Metadata,
    secret: Option<ClientSecret>,
    id_token: &CoreIdToken,
    pending: &pending_logins::Pending,
) -> Result<Verified, OidcError> {
    let client = CoreClient::from_provider_metadata(
        (**metadata).clone(),
        ClientId::new(provider.config.client_id.clone()),
        secret,
    );
    let skew = oidc.skew;
    // Expiry is checked against a clock set back by the tolerated skew.
    let verifier = client
        .id_token_verifier()
        .set_time_fn(move || chrono::Utc::now() - skew);
    let claims = id_token
        .claims(&verifier, &Nonce::new(pending.nonce.clone()))
        .map_err(|e| OidcError::Token(error_chain(&e)))?;
    let raw = id_token.to_string();
    // The signature is checked: the payload's other claims (the groups) can be read as they are.
    let payload = raw
        .split('.')
        .nth(1)
        .and_then(|part| {
            use base64::Engine;
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(part)
                .ok()
        })
        .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
        .unwrap_or_default();
    Ok(Verified {
        issuer: claims.issuer().to_string(),
        subject: claims.subject().to_string(),
        preferred_username: claims.preferred_username().map(|u| u.to_string()),
        email: claims.email().map(|e| e.to_string()),
        groups: sign_in::groups_of(payload.get(&provider.config.role_claim)),
        raw,
    })
}

/// The page a refused sign-in answers with, in the reader's language.
fn refused_page(status: StatusCode, reason: Refusal) -> Response {
    let message = match reason {
        Refusal::NoMatchingGroup => app::t!("sign-in-refused-no-group"),
        Refusal::Disabled => app::t!("sign-in-refused-disabled"),
        Refusal::NameTaken => app::t!("sign-in-refused-name-taken"),
        Refusal::NoUsableName => app::t!("sign-in-refused-no-name"),
        Refusal::BadState => app::t!("sign-in-refused-bad-state"),
        Refusal::BadToken => app::t!("sign-in-refused-bad-token"),
        Refusal::ProviderError => app::t!("sign-in-refused-provider"),
    };
    let title = app::t!("sign-in-refused-title");
    let again = app::t!("sign-in-refused-again");
    let lang = app::i18n::current().tag();
    let body = format!(
        "<!doctype html><html lang=\"{lang}\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"robots\" content=\"noindex\"><title>{title}</title></head>\
         <body><main><h1>{title}</h1><p role=\"alert\" data-reason=\"{reason}\">{message}</p>\
         <p><a href=\"/login\">{again}</a></p></main></body></html>",
        title = escape(&title),
        message = escape(&message),
        again = escape(&again),
        reason = reason.as_str(),
    );
    (status, Html(body)).into_response()
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
