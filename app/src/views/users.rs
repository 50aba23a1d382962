//! Accounts as the Settings page lists them (never a password hash).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::domain::account::{AccountState, Role};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserRow {
    pub id: i64,
    pub username: String,
    pub role: Role,
    pub state: AccountState,
    pub created_at: DateTime<Utc>,
    pub last_sign_in_at: Option<DateTime<Utc>>,
    /// How the account signs in.
    pub sign_in: crate::domain::sign_in::SignInMethod,
    /// The working API tokens this account owns, with their scopes: what disabling, deleting
    /// or demoting it would stop.
    pub tokens: Vec<(String, crate::domain::api_token::Scope)>,
}

/// One of the signed-in user's sessions, as the account page lists them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionRow {
    /// The session's id (a hash of its cookie; it cannot be turned back into one).
    pub id: String,
    pub created_at: DateTime<Utc>,
    pub last_seen_at: DateTime<Utc>,
    pub ip: Option<String>,
    pub user_agent: Option<String>,
    /// The session this list was asked for from.
    pub current: bool,
}

/// A configured OpenID provider as the sign-in page and token expiry need it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderInfo {
    /// Its name: `/auth/oidc/{name}` starts a sign-in there.
    pub name: String,
    /// Its button's text.
    pub label: String,
    /// Its issuer URL: with a person's `sub`, what identifies them there.
    pub issuer: String,
    /// API tokens of its people expire within this many days.
    pub token_max_days: u32,
}

/// How the sign-in page offers to sign in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignInOptions {
    pub password: bool,
    pub providers: Vec<ProviderInfo>,
}

/// The signed-in person's second factor, as the Account page shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SecondFactorState {
    /// Turned on: sign-in asks for a code.
    pub on: bool,
    /// A local (password) account: only these have one here; a company sign-in has its own.
    pub local: bool,
    /// Required of them (`require_totp_for_admins`) and not yet added.
    pub required: bool,
}

/// An enrolment under way: what the authenticator app reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Enrolling {
    /// The seed in base32, for typing in by hand.
    pub secret: String,
    /// The `otpauth://` link the QR code holds.
    pub link: String,
    /// The QR code as an SVG document.
    pub qr_svg: String,
}
