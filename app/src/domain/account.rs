//! Who may sign in and what they may do.
//!
//! Values here are parsed, not validated: once a [`Username`] or [`Role`] exists, it is valid.

use serde::{Deserialize, Serialize};
use std::fmt;

crate::text_enum! {
    /// What a signed-in person may do. Viewers read everything; admins also change things.
    pub enum Role {
        Admin = "admin",
        Viewer = "viewer",
    }
}

crate::text_enum! {
    /// Whether an account can sign in, as `bulwark user list` and the Users table show it.
    pub enum AccountState {
        Active = "active",
        Disabled = "disabled",
        /// Signs in, but must choose a new password before anything else.
        MustChangePassword = "must_change_password",
    }
}

impl AccountState {
    pub fn of(disabled: bool, must_change_password: bool) -> AccountState {
        if disabled {
            AccountState::Disabled
        } else if must_change_password {
            AccountState::MustChangePassword
        } else {
            AccountState::Active
        }
    }
}

impl Role {
    /// A role as typed into a form or on the command line.
    pub fn parse_field(value: &str) -> Result<Self, AccountError> {
        Role::parse(value.trim()).ok_or_else(|| AccountError::Role(value.trim().to_string()))
    }

    pub fn can_change(self) -> bool {
        self == Role::Admin
    }
}

/// A login name: 1–64 characters of lowercase letters, digits, `.`, `_` and `-`.
///
/// Kept this narrow so a name is safe in URLs, logs and mail headers without escaping, and so
/// `Alice` and `alice` cannot be two accounts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Username(String);

impl Username {
    pub const MAX_LEN: usize = 64;

    pub fn parse(value: &str) -> Result<Self, AccountError> {
        let value = value.trim();
        if value.is_empty() {
            return Err(AccountError::UsernameEmpty);
        }
        if value.chars().count() > Self::MAX_LEN {
            return Err(AccountError::UsernameTooLong);
        }
        if !value
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-'))
        {
            return Err(AccountError::UsernameChars);
        }
        Ok(Self(value.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Username {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A new password, checked before it is hashed. Never logged, never serialised.
pub struct NewPassword(String);

impl NewPassword {
    pub const MIN_LEN: usize = 8;
    /// Argon2 hashes any length, but an unbounded input is a cheap way to burn server CPU.
    pub const MAX_LEN: usize = 1024;

    pub fn parse(value: &str) -> Result<Self, AccountError> {
        let len = value.chars().count();
        if len == 0 {
            return Err(AccountError::PasswordEmpty);
        }
        if len < Self::MIN_LEN {
            return Err(AccountError::PasswordTooShort);
        }
        if len > Self::MAX_LEN {
            return Err(AccountError::PasswordTooLong);
        }
        Ok(Self(value.to_string()))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for NewPassword {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("NewPassword(..)")
    }
}

/// The person behind a request, as every page and server function sees them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CurrentUser {
    pub id: i64,
    pub username: String,
    pub role: Role,
    /// After a reset by an administrator: nothing but choosing a new password is allowed.
    #[serde(default)]
    pub must_change_password: bool,
    /// The console's language they chose (a catalogue tag); `None`: their browser's.
    #[serde(default)]
    pub locale: Option<String>,
    /// An administrator without a second factor where one is required
    /// (`require_totp_for_admins`): nothing but adding one is allowed.
    #[serde(default)]
    pub must_add_second_factor: bool,
}

impl CurrentUser {
    pub fn is_admin(&self) -> bool {
        self.role.can_change()
    }
}

/// Why an account value was refused. Each message names the field and what it accepts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AccountError {
    #[error("username is required")]
    UsernameEmpty,
    #[error("username must be at most 64 characters")]
    UsernameTooLong,
    #[error("username may contain only lowercase letters, digits, '.', '_' and '-'")]
    UsernameChars,
    #[error("role must be 'admin' or 'viewer', not '{0}'")]
    Role(String),
    #[error("password is required")]
    PasswordEmpty,
    #[error("password must be at least 8 characters")]
    PasswordTooShort,
    #[error("password must be at most 1024 characters")]
    PasswordTooLong,
}

impl AccountError {
    /// The refusal as the catalogue words it ([`crate::domain::problem`]).
    pub fn problem(&self) -> crate::domain::Problem {
        use crate::problem;
        match self {
            AccountError::UsernameEmpty => problem!("error-username-empty"),
            AccountError::UsernameTooLong => problem!("error-username-long"),
            AccountError::UsernameChars => problem!("error-username-chars"),
            AccountError::Role(text) => problem!("error-role", text = text),
            AccountError::PasswordEmpty => problem!("error-password-empty"),
            AccountError::PasswordTooShort => problem!("error-password-short"),
            AccountError::PasswordTooLong => problem!("error-password-long"),
        }
    }
}

impl AccountError {
    /// The form field the message belongs beside.
    pub fn field(&self) -> &'static str {
        match self {
            AccountError::UsernameEmpty
            | AccountError::UsernameTooLong
            | AccountError::UsernameChars => "username",
            AccountError::Role(_) => "role",
            AccountError::PasswordEmpty
            | AccountError::PasswordTooShort
            | AccountError::PasswordTooLong => "password",
        }
    }
}

/// Where to go after logging in: only a path on this site, so a crafted login link cannot send
/// a freshly signed-in administrator to another host.
pub fn safe_next_path(next: Option<&str>) -> String {
    match next {
        Some(path)
            if path.starts_with('/')
                && !path.starts_with("//")
                && !path.starts_with("/\\")
                && !path.starts_with("/login")
                && path.len() <= 2048
                && path.chars().all(|c| c.is_ascii_graphic()) =>
        {
            path.to_string()
        }
        _ => "/".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usernames_are_narrow_and_trimmed() {
        assert_eq!(Username::parse(" alice ").unwrap().as_str(), "alice");
        assert_eq!(Username::parse("on-call.2").unwrap().as_str(), "on-call.2");
        assert_eq!(Username::parse(""), Err(AccountError::UsernameEmpty));
        assert_eq!(Username::parse("Alice"), Err(AccountError::UsernameChars));
        assert_eq!(Username::parse("a b"), Err(AccountError::UsernameChars));
        assert_eq!(
            Username::parse(&"a".repeat(65)),
            Err(AccountError::UsernameTooLong)
        );
    }

    #[test]
    fn roles_parse_exactly() {
        assert_eq!(Role::parse_field(" admin"), Ok(Role::Admin));
        assert_eq!(Role::parse_field("viewer"), Ok(Role::Viewer));
        assert_eq!(
            Role::parse_field("root"),
            Err(AccountError::Role("root".into()))
        );
        assert!(Role::Admin.can_change());
        assert!(!Role::Viewer.can_change());
    }

    #[test]
    fn passwords_have_bounds() {
        assert_eq!(
            NewPassword::parse("").unwrap_err(),
            AccountError::PasswordEmpty
        );
        assert_eq!(
            NewPassword::parse("short").unwrap_err(),
            AccountError::PasswordTooShort
        );
        assert!(NewPassword::parse("long enough").is_ok());
        assert_eq!(
            NewPassword::parse(&"x".repeat(1025)).unwrap_err(),
            AccountError::PasswordTooLong
        );
        assert_eq!(
            format!("{:?}", NewPassword::parse("secret-pw").unwrap()),
            "NewPassword(..)"
        );
    }

    #[test]
    fn next_path_stays_on_site() {
        assert_eq!(
            safe_next_path(Some("/runs?status=dead")),
            "/runs?status=dead"
        );
        assert_eq!(safe_next_path(Some("//evil.example")), "/");
        assert_eq!(safe_next_path(Some("/\\evil.example")), "/");
        assert_eq!(safe_next_path(Some("https://evil.example")), "/");
        assert_eq!(safe_next_path(Some("/login")), "/");
        assert_eq!(safe_next_path(Some("/a\nb")), "/");
        assert_eq!(safe_next_path(None), "/");
    }
}
