//! Refusals in the reader's language. The errors keep their English `Display` (logs, the
//! command line); forms and server functions show [`Explain::explain`], which words the same
//! facts from the catalogue in the language of the page or request.

use crate::api::AppError;
use crate::domain::account::AccountError;
use crate::domain::cron::CronError;
use crate::domain::duration::DurationError;
use crate::domain::email::NotAnAddress;
use crate::domain::retry::RetryError;
use crate::domain::traffic_range::RangeError;
use crate::t;

pub trait Explain {
    fn explain(&self) -> String;
}

impl Explain for DurationError {
    fn explain(&self) -> String {
        match self {
            DurationError::Empty => t!("error-duration-empty"),
            DurationError::MissingUnit(text) => t!("error-duration-unit", text = text.clone()),
            DurationError::Malformed(text) => t!("error-duration-malformed", text = text.clone()),
            DurationError::SubMillisecond(text) => t!("error-duration-fine", text = text.clone()),
            DurationError::TooLong(text) => t!("error-duration-long", text = text.clone()),
        }
    }
}

impl Explain for RetryError {
    fn explain(&self) -> String {
        match self {
            RetryError::First(e) => t!("error-retry-first", error = e.explain()),
            RetryError::FirstZero => t!("error-retry-first-zero"),
            RetryError::MultiplierNotANumber(text) => {
                t!("error-retry-multiplier-nan", text = text.clone())
            }
            RetryError::MultiplierRange(m) => t!("error-retry-multiplier-range", m = m.to_string()),
            RetryError::MultiplierPrecision(text) => {
                t!("error-retry-multiplier-precision", text = text.clone())
            }
            RetryError::MaxRetries(text) => t!("error-retry-max", text = text.clone()),
            RetryError::Jitter(text) => t!("error-retry-jitter", text = text.clone()),
            RetryError::Cap(e) => t!("error-retry-cap", error = e.explain()),
            RetryError::CapBelowFirst { cap, first } => t!(
                "error-retry-cap-below-first",
                cap = cap.clone(),
                first = first.clone()
            ),
        }
    }
}

impl Explain for CronError {
    fn explain(&self) -> String {
        match self {
            CronError::Empty => t!("error-cron-empty"),
            CronError::FieldCount(n) => t!("error-cron-fields", count = *n),
            CronError::Invalid(detail) => t!("error-cron-invalid", detail = detail.clone()),
            CronError::NeverFires => t!("error-cron-never"),
            CronError::TimeZone(name) => t!("error-cron-zone", zone = name.clone()),
        }
    }
}

impl Explain for AccountError {
    fn explain(&self) -> String {
        match self {
            AccountError::UsernameEmpty => t!("error-username-empty"),
            AccountError::UsernameTooLong => t!("error-username-long"),
            AccountError::UsernameChars => t!("error-username-chars"),
            AccountError::Role(text) => t!("error-role", text = text.clone()),
            AccountError::PasswordEmpty => t!("error-password-empty"),
            AccountError::PasswordTooShort => t!("error-password-short"),
            AccountError::PasswordTooLong => t!("error-password-long"),
        }
    }
}

impl Explain for RangeError {
    fn explain(&self) -> String {
        match self {
            RangeError::Date(text) => t!("error-range-date", text = text.clone()),
            RangeError::Preset(text) => t!("error-range-preset", text = text.clone()),
            RangeError::HalfOpen => t!("error-range-half-open"),
            RangeError::Reversed { from, to } => t!(
                "error-range-reversed",
                from = from.to_string(),
                to = to.to_string()
            ),
            RangeError::Future { to, today } => t!(
                "error-range-future",
                to = to.to_string(),
                today = today.to_string()
            ),
            RangeError::PastRetention {
                from,
                earliest,
                days,
            } => t!(
                "error-range-retention",
                from = from.to_string(),
                earliest = earliest.to_string(),
                days = *days
            ),
            RangeError::VisitorType(text) => t!("error-range-type", text = text.clone()),
        }
    }
}

impl Explain for NotAnAddress {
    fn explain(&self) -> String {
        t!("error-email", text = self.0.clone())
    }
}

/// What a page shows for a server function's refusal. Messages the server already wrote (a
/// field's problem, a conflict) arrive in the request's language; the fixed refusals are
/// worded here, in the page's.
impl Explain for AppError {
    fn explain(&self) -> String {
        match self {
            AppError::Unauthenticated => t!("error-sign-in"),
            AppError::Forbidden(action) => t!("error-forbidden", action = action.clone()),
            AppError::Invalid { message, .. } => message.clone(),
            AppError::Fields(list) => t!("error-fields", count = list.len()),
            AppError::TooManyAttempts(message)
            | AppError::Conflict(message)
            | AppError::Internal(message) => message.clone(),
            AppError::NotFound(what) => t!("error-not-found", what = what.clone()),
            AppError::PasswordChangeRequired => t!("error-password-change-required"),
            AppError::ServerFn(e) => t!("error-request-failed", detail = e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// In English the words are the errors' own, so logs and pages agree.
    #[test]
    fn english_explanations_are_the_messages() {
        let errors: Vec<Box<dyn Fn() -> (String, String)>> = vec![
            Box::new(|| {
                let e = DurationError::MissingUnit("10".into());
                (e.to_string(), e.explain())
            }),
            Box::new(|| {
                let e = RetryError::Cap(DurationError::Malformed("x".into()));
                (e.to_string(), e.explain())
            }),
            Box::new(|| {
                let e = RetryError::CapBelowFirst {
                    cap: "1s".into(),
                    first: "10s".into(),
                };
                (e.to_string(), e.explain())
            }),
            Box::new(|| {
                let e = RetryError::MultiplierRange(9.5);
                (e.to_string(), e.explain())
            }),
            Box::new(|| {
                let e = CronError::FieldCount(5);
                (e.to_string(), e.explain())
            }),
            Box::new(|| {
                let e = CronError::TimeZone("Mars/Olympus".into());
                (e.to_string(), e.explain())
            }),
            Box::new(|| {
                let e = RangeError::PastRetention {
                    from: chrono::NaiveDate::from_ymd_opt(2020, 1, 1).expect("date"),
                    earliest: chrono::NaiveDate::from_ymd_opt(2026, 1, 1).expect("date"),
                    days: 400,
                };
                (e.to_string(), e.explain())
            }),
            Box::new(|| {
                let e = NotAnAddress("nope".into());
                (e.to_string(), e.explain())
            }),
            Box::new(|| {
                let e = AccountError::Role("root".into());
                (e.to_string(), e.explain())
            }),
            Box::new(|| {
                let e = AccountError::UsernameChars;
                (e.to_string(), e.explain())
            }),
            Box::new(|| {
                let e = AppError::Forbidden("add users".into());
                (e.to_string(), e.explain())
            }),
            Box::new(|| {
                let e = AppError::NotFound("job 7".into());
                (e.to_string(), e.explain())
            }),
            Box::new(|| {
                let e = AppError::Fields(vec![crate::domain::FieldError::new("name", "x")]);
                (e.to_string(), e.explain())
            }),
            Box::new(|| {
                (
                    AppError::Unauthenticated.to_string(),
                    AppError::Unauthenticated.explain(),
                )
            }),
            Box::new(|| {
                let e = AppError::PasswordChangeRequired;
                (e.to_string(), e.explain())
            }),
        ];
        for error in errors {
            let (display, explained) = error();
            assert_eq!(display, explained);
        }
    }
}
