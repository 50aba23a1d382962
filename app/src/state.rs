//! What every render and server function can reach, provided as context by `leptos_routes`.

use axum::extract::FromRef;
use leptos::prelude::LeptosOptions;
use sea_orm::DatabaseConnection;

#[derive(Clone, FromRef)]
pub struct AppState {
    pub leptos_options: LeptosOptions,
    pub db: DatabaseConnection,
    pub auth: AuthSettings,
    /// The console's address (`public_url`): links in mails, the embed snippet, and the host
    /// the console's own traffic is counted under.
    pub public_url: String,
    /// The configured zone: what "today" and a date mean on traffic pages.
    pub timezone: chrono_tz::Tz,
    /// The language of pages for browsers that ask for none Bulwark speaks, and of mails and
    /// chat alerts whose recipients or channel set none.
    pub default_locale: crate::i18n::Locale,
    /// This process's traffic hits not yet written, for the live strip.
    pub live: Option<std::sync::Arc<dyn crate::live::LiveTraffic>>,
    /// Seals the secrets admins set on the Settings page.
    pub secret_key: crate::services::secrets::SecretKey,
    /// Kept of a watched job's ping body, in bytes (`ping_body_max_kb`).
    pub ping_body_max: usize,
    /// Chat and webhook delivery, for a channel's Send test.
    pub channels: Option<std::sync::Arc<dyn crate::mailer::ChannelTester>>,
    /// Mail delivery, for the test mail and previews.
    pub mailer: Option<std::sync::Arc<dyn crate::mailer::Mailer>>,
    /// The REST API's operations, for the API reference page.
    pub api_docs: std::sync::Arc<Vec<crate::views::api_docs::ApiOperation>>,
    /// Where the shell links the site's files from.
    pub assets: AssetUrls,
}

/// The URLs of the built site's files. With the site embedded, each file's URL carries its
/// content hash (`/assets/{hash}/{path}`) so browsers may keep it for good; read from disk
/// (development) the plain path is used.
#[derive(Clone, Debug, Default)]
pub struct AssetUrls {
    hashes: std::sync::Arc<std::collections::HashMap<String, String>>,
    page_chunks: std::sync::Arc<std::collections::HashMap<String, Vec<String>>>,
}

impl AssetUrls {
    /// From each file's path below the site's root to its hash.
    pub fn versioned(hashes: std::collections::HashMap<String, String>) -> Self {
        AssetUrls {
            hashes: std::sync::Arc::new(hashes),
            page_chunks: Default::default(),
        }
    }

    /// With the wasm chunks each group of pages needs (`app/src/pages/routes.rs`), by group,
    /// as file names in `pkg/` without `.wasm`: the shell asks the browser to fetch a page's
    /// chunks together with the main module instead of after it.
    pub fn with_page_chunks(
        mut self,
        chunks: std::collections::HashMap<String, Vec<String>>,
    ) -> Self {
        self.page_chunks = std::sync::Arc::new(chunks);
        self
    }

    pub fn page_chunks(&self) -> &std::collections::HashMap<String, Vec<String>> {
        &self.page_chunks
    }

    /// `path` is relative to the site's root, such as `pkg/bulwark.css`.
    pub fn url(&self, path: &str) -> String {
        match self.hashes.get(path) {
            Some(hash) => format!("/assets/{hash}/{path}"),
            None => format!("/{path}"),
        }
    }

    /// The prefix Leptos's hydration script puts before `/pkg/bulwark.js` and its wasm, which
    /// share one hash with the split loader and the pages' chunks beside them.
    pub fn hydration_root(&self) -> String {
        match self.hashes.get("pkg/bulwark.js") {
            Some(hash) => format!("/assets/{hash}"),
            None => String::new(),
        }
    }
}

impl AppState {
    /// The host the console's own pages are counted under.
    pub fn console_host(&self) -> String {
        crate::domain::sites::console_host(&self.public_url)
    }
}

impl AuthSettings {
    pub fn lifetimes(&self) -> crate::services::sessions::Lifetimes {
        crate::services::sessions::Lifetimes {
            absolute: self.session_ttl,
            idle: self.session_idle,
        }
    }
}

#[derive(Clone, Debug)]
pub struct AuthSettings {
    /// How long a sign-in lasts.
    pub session_ttl: chrono::Duration,
    /// How long a sign-in lasts without a request.
    pub session_idle: chrono::Duration,
    /// Mark cookies `Secure` even without an `X-Forwarded-Proto: https` header (set it when a
    /// TLS proxy in front does not send that header).
    pub secure_cookies: bool,
    /// Proxies whose `X-Forwarded-For` entries name the client (sign-in limits go by it).
    pub trusted_proxies: crate::domain::client_addr::TrustedProxies,
    /// Whether the password form and `POST /api/login` are on (`password_login`).
    pub password_login: bool,
    /// The configured OpenID providers, as the sign-in page and API tokens need them.
    pub providers: Vec<crate::views::users::ProviderInfo>,
    /// A trusted proxy's header naming the person (`auth_header`), when configured.
    pub header: Option<HeaderAuth>,
    /// Administrators with a password must add a second factor before anything else.
    pub require_totp_for_admins: bool,
}

impl AuthSettings {
    /// How long an API token of an account signing in through `provider` may live, in days.
    pub fn token_max_days(&self, provider: &str) -> Option<u32> {
        self.providers
            .iter()
            .find(|p| p.name == provider)
            .map(|p| p.token_max_days)
    }
}

/// Sign-in by a header a trusted proxy sets (`docs/guide/sign-in.md`).
#[derive(Clone, Debug)]
pub struct HeaderAuth {
    /// The header naming the person, such as `X-Remote-User`.
    pub header: String,
    /// The header listing their groups, comma-separated.
    pub groups_header: Option<String>,
    /// The only peers whose headers are believed.
    pub proxies: crate::domain::client_addr::Networks,
    pub roles: crate::domain::sign_in::GroupRoles,
}
