//! The one error type server functions return, and the policy for using it.
//!
//! - Failures the person can fix (a bad field, a name already taken) are [`AppError::Invalid`]
//!   with the field's name, so a form shows the message beside that field.
//! - Refusals are their own variants — not signed in, not allowed, too many attempts — so a
//!   page can react (send to login, hide a button) and the HTTP status says what happened.
//! - Anything else (the database is down, a bug) is [`AppError::Internal`]: the whole error goes
//!   to the server log through `tracing`, the browser gets a short message without internals.
//!
//! Services (server-only) use their own `thiserror` enums; server functions map those into
//! this type, so the wire format stays one small enum. The rest of the code base follows the
//! same policy:
//!
//! - Libraries (`app`'s domain and services) return `thiserror` enums that say what went
//!   wrong; a failure that is not a database error is not a `DbErr` (no `DbErr::Custom`).
//! - The binary (`server`) uses `anyhow` with `.context(…)` on every `?` that crosses a
//!   boundary (a file, the database, the network), so an operator reads what was being done.
//! - No `unwrap()` on anything a user or the network can influence; data read back from the
//!   database that does not parse is an error naming the row, never quietly read as empty.
//! - Logs go through `tracing`, with the error and its cause as fields.

use leptos::prelude::{FromServerFnError, ServerFnErrorErr};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
pub enum AppError {
    #[error("please sign in")]
    Unauthenticated,
    #[error("only administrators may {0}")]
    Forbidden(String),
    #[error("{message}")]
    Invalid { field: String, message: String },
    /// Several fields of one form at once.
    #[error("{} field(s) need attention", .0.len())]
    Fields(Vec<crate::views::FieldError>),
    #[error("{0}")]
    TooManyAttempts(String),
    #[error("{0} was not found")]
    NotFound(String),
    /// The request contradicts a rule about the current state (the last administrator).
    #[error("{0}")]
    Conflict(String),
    /// An administrator reset this account's password: only choosing a new one is allowed.
    #[error("choose a new password first (on the Account page)")]
    PasswordChangeRequired,
    #[error("password sign-in is turned off here: use your company sign-in")]
    PasswordLoginOff,
    #[error("add a second factor first (on the Account page)")]
    SecondFactorRequired,
    #[error("{0}")]
    Internal(String),
    #[error("request failed: {0}")]
    ServerFn(ServerFnErrorErr),
}

impl AppError {
    pub fn invalid(field: &str, message: impl Into<String>) -> Self {
        AppError::Invalid {
            field: field.to_string(),
            message: message.into(),
        }
    }

    /// The message to show beside `field` in a form, if this error belongs to it.
    pub fn for_field(&self, field: &str) -> Option<String> {
        match self {
            AppError::Invalid { field: f, message } if f == field => Some(message.clone()),
            AppError::Fields(errors) => {
                let messages: Vec<&str> = errors
                    .iter()
                    .filter(|e| e.field == field)
                    .map(|e| e.message.as_str())
                    .collect();
                (!messages.is_empty()).then(|| messages.join("; "))
            }
            _ => None,
        }
    }

    pub fn status(&self) -> u16 {
        match self {
            AppError::Unauthenticated => 401,
            AppError::Forbidden(_) => 403,
            AppError::Invalid { .. } | AppError::Fields(_) => 422,
            AppError::TooManyAttempts(_) => 429,
            AppError::NotFound(_) => 404,
            AppError::Conflict(_) => 409,
            AppError::PasswordChangeRequired
            | AppError::PasswordLoginOff
            | AppError::SecondFactorRequired => 403,
            AppError::Internal(_) | AppError::ServerFn(_) => 500,
        }
    }
}

impl FromServerFnError for AppError {
    // Read from text like the answers (`codec.rs` says why).
    type Encoder = super::codec::JsonText;

    fn from_server_fn_error(value: ServerFnErrorErr) -> Self {
        AppError::ServerFn(value)
    }
}

/// Refusals the domain and the services found, worded here in the language of the request
/// being answered (a server function's, or the REST call's `crate::i18n::scope`): the edge is
/// where the reader is known.
impl AppError {
    /// `field`'s problem, in the request's language.
    pub fn refused(field: &str, problem: &crate::domain::Problem) -> Self {
        AppError::invalid(field, crate::i18n::current().say(problem))
    }

    /// Every field's problem at once, in the request's language.
    pub fn fields(problems: &[crate::domain::FieldProblem]) -> Self {
        let locale = crate::i18n::current();
        AppError::Fields(
            problems
                .iter()
                .map(|p| crate::views::FieldError::new(&p.field, locale.say(&p.problem)))
                .collect(),
        )
    }
}

impl From<crate::domain::FieldProblem> for AppError {
    fn from(e: crate::domain::FieldProblem) -> Self {
        AppError::refused(&e.field, &e.problem)
    }
}

impl From<crate::domain::account::AccountError> for AppError {
    fn from(e: crate::domain::account::AccountError) -> Self {
        AppError::refused(e.field(), &e.problem())
    }
}

/// What a page shows for a server function's refusal. Messages the server already wrote (a
/// field's problem, a conflict) arrive in the request's language; the fixed refusals are
/// worded here, in the page's.
impl crate::i18n::errors::Explain for AppError {
    fn explain(&self, locale: crate::i18n::Locale) -> String {
        use crate::t;
        match self {
            AppError::Unauthenticated => t!(in locale, "error-sign-in"),
            AppError::Forbidden(action) => {
                t!(in locale, "error-forbidden", action = action.clone())
            }
            AppError::Invalid { message, .. } => message.clone(),
            AppError::Fields(list) => t!(in locale, "error-fields", count = list.len()),
            AppError::TooManyAttempts(message)
            | AppError::Conflict(message)
            | AppError::Internal(message) => message.clone(),
            AppError::NotFound(what) => t!(in locale, "error-not-found", what = what.clone()),
            AppError::PasswordChangeRequired => t!(in locale, "error-password-change-required"),
            AppError::PasswordLoginOff => t!(in locale, "error-password-login-off"),
            AppError::SecondFactorRequired => t!(in locale, "error-second-factor-required"),
            AppError::ServerFn(e) => t!(in locale, "error-request-failed", detail = e.to_string()),
        }
    }
}

#[cfg(feature = "ssr")]
impl From<sea_orm::DbErr> for AppError {
    fn from(e: sea_orm::DbErr) -> Self {
        AppError::internal(&e)
    }
}

#[cfg(feature = "ssr")]
impl AppError {
    /// Logs the full error and returns the opaque variant the browser sees.
    pub fn internal(e: &(dyn std::error::Error + 'static)) -> Self {
        tracing::error!(error = %e, source = ?e.source(), "server function failed");
        AppError::Internal(crate::t!("error-internal"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::i18n::Locale;
    use crate::i18n::errors::Explain;

    /// In English the fixed refusals read as their `Display`, so logs and pages agree.
    #[test]
    fn english_explanations_are_the_messages() {
        let errors = [
            AppError::Forbidden("add users".into()),
            AppError::NotFound("job 7".into()),
            AppError::Fields(vec![crate::views::FieldError::new("name", "x")]),
            AppError::Unauthenticated,
            AppError::PasswordChangeRequired,
        ];
        for e in errors {
            assert_eq!(e.to_string(), e.explain(Locale::english()));
        }
    }
}
