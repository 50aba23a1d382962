//! How people sign in besides a password: an OpenID provider or a trusted proxy's header.
//!
//! What a provider or a proxy says about a person arrives as claims (a name, groups); the rules
//! here turn them into an account name and a role, or into the reason they are refused. Nothing
//! here reaches the network or the database.

use serde::{Deserialize, Serialize};

use super::account::{Role, Username};

/// How an account signs in, as `bulwark user list`'s `sign_in` column writes it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum SignInMethod {
    Password,
    /// Through the configured OpenID provider of this name.
    Oidc(String),
    /// As named by a trusted proxy's header.
    Header,
}

impl SignInMethod {
    pub fn parse(text: &str) -> Option<SignInMethod> {
        match text {
            "password" => Some(SignInMethod::Password),
            "header" => Some(SignInMethod::Header),
            _ => text
                .strip_prefix("oidc:")
                .filter(|name| ProviderName::parse(name).is_ok())
                .map(|name| SignInMethod::Oidc(name.to_string())),
        }
    }

    pub fn is_password(&self) -> bool {
        matches!(self, SignInMethod::Password)
    }
}

impl std::fmt::Display for SignInMethod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SignInMethod::Password => f.write_str("password"),
            SignInMethod::Oidc(name) => write!(f, "oidc:{name}"),
            SignInMethod::Header => f.write_str("header"),
        }
    }
}

impl From<SignInMethod> for String {
    fn from(method: SignInMethod) -> String {
        method.to_string()
    }
}

impl TryFrom<String> for SignInMethod {
    type Error = String;
    fn try_from(text: String) -> Result<Self, Self::Error> {
        SignInMethod::parse(&text).ok_or(text)
    }
}

/// A provider's name in the configuration, in URLs (`/auth/oidc/{name}`) and in `oidc:NAME`:
/// 1–32 lower-case letters, digits and `-`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ProviderName(String);

impl ProviderName {
    pub const MAX_LEN: usize = 32;

    pub fn parse(text: &str) -> Result<ProviderName, String> {
        let ok = !text.is_empty()
            && text.len() <= Self::MAX_LEN
            && text
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if ok {
            Ok(ProviderName(text.to_string()))
        } else {
            Err(text.to_string())
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// What becomes of someone none of whose groups is mapped to a role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum DefaultRole {
    /// They are a viewer.
    #[default]
    Viewer,
    /// They are refused, and no account is made for them.
    None,
}

/// Groups to roles: an admin group wins over a viewer group, and a person in neither gets the
/// default (or nothing). Group names compare exactly, as providers write them.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GroupRoles {
    pub admin: Vec<String>,
    pub viewer: Vec<String>,
    pub default: DefaultRole,
}

impl GroupRoles {
    pub fn role(&self, groups: &[String]) -> Option<Role> {
        let member = |mapped: &[String]| groups.iter().any(|g| mapped.contains(g));
        if member(&self.admin) {
            Some(Role::Admin)
        } else if member(&self.viewer) {
            Some(Role::Viewer)
        } else {
            match self.default {
                DefaultRole::Viewer => Some(Role::Viewer),
                DefaultRole::None => None,
            }
        }
    }
}

/// The groups a claim holds: a JSON array of strings (Keycloak, Authentik, Entra), a single
/// string, or nothing. Anything else holds no group.
pub fn groups_of(claim: Option<&serde_json::Value>) -> Vec<String> {
    match claim {
        Some(serde_json::Value::Array(items)) => items
            .iter()
            .filter_map(|item| item.as_str().map(str::to_string))
            .collect(),
        Some(serde_json::Value::String(one)) => vec![one.clone()],
        _ => Vec::new(),
    }
}

/// The groups a proxy's header lists: comma-separated (oauth2-proxy, Authelia, Pomerium all
/// join them so), blanks around each dropped.
pub fn groups_of_header(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|g| !g.is_empty())
        .map(str::to_string)
        .collect()
}

/// The account name a provider's person gets: their `preferred_username` (Entra's is an
/// address: the part before `@`), else the part of their e-mail address before `@`, lower-cased
/// (usernames are). `None` when neither makes a valid username.
pub fn account_name(preferred_username: Option<&str>, email: Option<&str>) -> Option<Username> {
    let local = |text: &str| text.split_once('@').map_or(text, |(l, _)| l).to_lowercase();
    let from_email = email.filter(|e| e.contains('@'));
    [preferred_username, from_email]
        .into_iter()
        .flatten()
        .find_map(|name| Username::parse(&local(name)).ok())
}

/// Why a sign-in through a provider or a proxy was refused, as the audit log keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Refusal {
    /// None of their groups maps to a role and the default is none.
    NoMatchingGroup,
    /// The account is disabled in Bulwark.
    Disabled,
    /// A local account has the name; an administrator must link the two first.
    NameTaken,
    /// The provider gave no name that makes a valid username.
    NoUsableName,
    /// The callback's `state` matches no sign-in this browser started (replayed or forged).
    BadState,
    /// The provider's answer failed a check (signature, issuer, audience, expiry, nonce) or
    /// could not be had.
    BadToken,
    /// The provider reported an error (the person cancelled, or it refused them).
    ProviderError,
}

impl Refusal {
    pub fn as_str(self) -> &'static str {
        match self {
            Refusal::NoMatchingGroup => "no_matching_group",
            Refusal::Disabled => "disabled",
            Refusal::NameTaken => "name_taken",
            Refusal::NoUsableName => "no_usable_name",
            Refusal::BadState => "bad_state",
            Refusal::BadToken => "bad_token",
            Refusal::ProviderError => "provider_error",
        }
    }
}

/// `PROVIDER:SUB` as `bulwark user link` takes it: a provider's name and the person's subject
/// there (which may itself hold colons).
pub fn parse_link(text: &str) -> Option<(ProviderName, String)> {
    let (provider, subject) = text.split_once(':')?;
    let provider = ProviderName::parse(provider).ok()?;
    let subject = subject.trim();
    (!subject.is_empty() && subject.len() <= 255).then(|| (provider, subject.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn admin_groups_win_and_the_default_decides_the_rest() {
        let mut roles = GroupRoles {
            admin: strings(&["ops"]),
            viewer: strings(&["dev"]),
            default: DefaultRole::Viewer,
        };
        assert_eq!(roles.role(&strings(&["dev", "ops"])), Some(Role::Admin));
        assert_eq!(roles.role(&strings(&["dev"])), Some(Role::Viewer));
        assert_eq!(roles.role(&[]), Some(Role::Viewer));
        roles.default = DefaultRole::None;
        assert_eq!(roles.role(&strings(&["sales"])), None);
        assert_eq!(
            roles.role(&strings(&["Ops"])),
            None,
            "names compare exactly"
        );
    }

    #[test]
    fn groups_come_from_arrays_strings_and_headers() {
        let claim = serde_json::json!(["ops", 7, "dev"]);
        assert_eq!(groups_of(Some(&claim)), strings(&["ops", "dev"]));
        assert_eq!(
            groups_of(Some(&serde_json::json!("ops"))),
            strings(&["ops"])
        );
        assert!(groups_of(Some(&serde_json::json!({"ops": true}))).is_empty());
        assert!(groups_of(None).is_empty());
        assert_eq!(groups_of_header(" ops, dev ,,"), strings(&["ops", "dev"]));
    }

    #[test]
    fn names_come_from_the_preferred_username_then_the_mail() {
        let name = |p, e| account_name(p, e).map(|u| u.to_string());
        assert_eq!(name(Some("alice"), Some("a@x.org")), Some("alice".into()));
        assert_eq!(
            name(Some("no spaces!"), Some("al.ice@x.org")),
            Some("al.ice".into())
        );
        assert_eq!(name(Some("Alice@corp.example"), None), Some("alice".into()));
        assert_eq!(name(None, Some("not-an-address")), None);
        assert_eq!(name(None, None), None);
    }

    #[test]
    fn methods_and_links_parse_exactly() {
        for text in ["password", "header", "oidc:corp-sso"] {
            assert_eq!(SignInMethod::parse(text).unwrap().to_string(), text);
        }
        assert_eq!(SignInMethod::parse("oidc:Bad Name"), None);
        assert_eq!(SignInMethod::parse("ldap"), None);
        let (provider, subject) = parse_link("corp:auth0|12:34").unwrap();
        assert_eq!(
            (provider.as_str(), subject.as_str()),
            ("corp", "auth0|12:34")
        );
        assert!(parse_link("corp:").is_none());
        assert!(parse_link("nosubject").is_none());
        assert!(parse_link("UPPER:x").is_none());
    }
}
