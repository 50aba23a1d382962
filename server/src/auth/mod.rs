//! Company sign-in: the configuration's providers and proxy header made into what the web app
//! uses, and checked when the configuration loads (`docs/guide/sign-in.md`).
//!
//! - [`oidc`]: the OpenID Connect code flow — `/auth/oidc/{name}`, its callback and sign-out.

pub mod oidc;

use app::domain::client_addr::Networks;
use app::domain::sign_in::{GroupRoles, ProviderName};
use app::state::HeaderAuth;
use app::views::users::ProviderInfo;

use crate::config::{Config, OidcProvider};

impl Config {
    /// Every configured OpenID provider: the one of the `oidc_*` keys (when `oidc_issuer` is
    /// set), then the `[[oidc]]` tables.
    pub fn oidc_providers(&self) -> Vec<OidcProvider> {
        let single = self.oidc_issuer.as_ref().map(|issuer| OidcProvider {
            name: self.oidc_name.clone(),
            label: self.oidc_label.clone(),
            issuer: issuer.clone(),
            client_id: self.oidc_client_id.clone().unwrap_or_default(),
            client_secret: self.oidc_client_secret.clone(),
            role_claim: self.oidc_role_claim.clone(),
            admin_groups: self.oidc_admin_groups.clone(),
            viewer_groups: self.oidc_viewer_groups.clone(),
            default_role: self.oidc_default_role,
            token_max_days: self.oidc_token_max_days,
        });
        single
            .into_iter()
            .chain(self.oidc.iter().cloned())
            .collect()
    }

    /// What the sign-in page and API tokens need of the providers.
    pub fn provider_infos(&self) -> Vec<ProviderInfo> {
        self.oidc_providers()
            .into_iter()
            .map(|p| ProviderInfo {
                label: p.label.clone().unwrap_or_else(|| p.name.clone()),
                issuer: p.issuer,
                name: p.name,
                token_max_days: p.token_max_days,
            })
            .collect()
    }

    /// Sign-in by a proxy's header, when `auth_header` is set.
    pub fn header_auth(&self) -> Option<HeaderAuth> {
        let header = self.auth_header.clone()?;
        Some(HeaderAuth {
            header,
            groups_header: self.auth_groups_header.clone(),
            // Checked by `check_sign_in` at load: empty only for a Config built by hand.
            proxies: Networks::parse(&self.auth_header_proxies).unwrap_or_default(),
            roles: GroupRoles {
                admin: self.auth_header_admin_groups.clone(),
                viewer: self.auth_header_viewer_groups.clone(),
                default: self.auth_header_default_role,
            },
        })
    }

    /// Refuses a sign-in configuration that could not work, naming the key.
    pub(crate) fn check_sign_in(&self) -> Result<(), String> {
        let providers = self.oidc_providers();
        if self.oidc_issuer.is_none() && self.oidc_client_id.is_some() {
            return Err("oidc_client_id is set but oidc_issuer is not".into());
        }
        let mut names = std::collections::HashSet::new();
        for p in &providers {
            check_provider(p)?;
            if !names.insert(p.name.clone()) {
                return Err(format!("two OpenID providers are named '{}'", p.name));
            }
        }
        if self.auth_header.is_some() {
            if self.auth_header_proxies.is_empty() {
                return Err(
                    "auth_header needs auth_header_proxies: the proxies allowed to set it".into(),
                );
            }
            Networks::parse(&self.auth_header_proxies)
                .map_err(|e| format!("auth_header_proxies: {e}"))?;
            for (key, name) in [
                ("auth_header", self.auth_header.as_deref()),
                ("auth_groups_header", self.auth_groups_header.as_deref()),
            ] {
                if let Some(name) = name
                    && http::HeaderName::from_bytes(name.as_bytes()).is_err()
                {
                    return Err(format!("{key} '{name}' is not a header name"));
                }
            }
        }
        if !self.password_login && providers.is_empty() && self.auth_header.is_none() {
            return Err("password_login = false leaves no way to sign in: configure an OpenID provider (oidc_issuer) or auth_header".into());
        }
        Ok(())
    }
}

fn check_provider(p: &OidcProvider) -> Result<(), String> {
    ProviderName::parse(&p.name).map_err(|name| {
        format!("OpenID provider name '{name}' must be 1–32 lower-case letters, digits or '-'")
    })?;
    let named = |key: &str| format!("{key} of OpenID provider '{}'", p.name);
    let issuer = url::Url::parse(&p.issuer)
        .map_err(|e| format!("{} '{}' is not a URL: {e}", named("oidc_issuer"), p.issuer))?;
    if !matches!(issuer.scheme(), "https" | "http") {
        return Err(format!("{} must be an https:// URL", named("oidc_issuer")));
    }
    if p.client_id.trim().is_empty() {
        return Err(format!("{} is missing", named("oidc_client_id")));
    }
    if p.role_claim.trim().is_empty() {
        return Err(format!("{} is empty", named("oidc_role_claim")));
    }
    if !(1..=365).contains(&p.token_max_days) {
        return Err(format!(
            "{} must be between 1 and 365",
            named("oidc_token_max_days")
        ));
    }
    if let Some(secret) = &p.client_secret
        && oidc::SecretSource::parse(secret).is_none()
    {
        return Err(format!(
            "{} must be a ${{secret:NAME}} reference or the path of a file holding it",
            named("oidc_client_secret")
        ));
    }
    Ok(())
}
