//! Refusals in the reader's language. The domain's errors keep their English `Display` (logs,
//! the command line) and name their catalogue message as a [`Problem`]; forms and server
//! functions show [`Explain::explain`], which words the same facts in the reader's language.

use super::Locale;
use crate::domain::Problem;
use crate::domain::account::AccountError;
use crate::domain::cron::CronError;
use crate::domain::duration::DurationError;
use crate::domain::email::NotAnAddress;
use crate::domain::retry::RetryError;
use crate::domain::traffic_range::RangeError;

/// Something that can be said to a person, in the language they read.
pub trait Explain {
    fn explain(&self, locale: Locale) -> String;
}

impl Explain for Problem {
    fn explain(&self, locale: Locale) -> String {
        locale.say(self)
    }
}

/// The domain's typed refusals, each worded from its [`Problem`].
macro_rules! explained_by_problem {
    ($($error:ty),*) => {$(
        impl Explain for $error {
            fn explain(&self, locale: Locale) -> String {
                locale.say(&self.problem())
            }
        }
    )*};
}
explained_by_problem!(
    DurationError,
    RetryError,
    CronError,
    AccountError,
    RangeError,
    NotAnAddress
);

#[cfg(test)]
mod tests {
    use super::*;

    /// In English the words are the errors' own, so logs and pages agree.
    #[test]
    fn english_explanations_are_the_messages() {
        let errors: Vec<Box<dyn Fn() -> (String, String)>> = vec![
            Box::new(|| {
                let e = DurationError::MissingUnit("10".into());
                (e.to_string(), e.explain(Locale::english()))
            }),
            Box::new(|| {
                let e = RetryError::Cap(DurationError::Malformed("x".into()));
                (e.to_string(), e.explain(Locale::english()))
            }),
            Box::new(|| {
                let e = RetryError::CapBelowFirst {
                    cap: "1s".into(),
                    first: "10s".into(),
                };
                (e.to_string(), e.explain(Locale::english()))
            }),
            Box::new(|| {
                let e = RetryError::MultiplierRange(9.5);
                (e.to_string(), e.explain(Locale::english()))
            }),
            Box::new(|| {
                let e = CronError::FieldCount(5);
                (e.to_string(), e.explain(Locale::english()))
            }),
            Box::new(|| {
                let e = CronError::TimeZone("Mars/Olympus".into());
                (e.to_string(), e.explain(Locale::english()))
            }),
            Box::new(|| {
                let e = RangeError::PastRetention {
                    from: chrono::NaiveDate::from_ymd_opt(2020, 1, 1).expect("date"),
                    earliest: chrono::NaiveDate::from_ymd_opt(2026, 1, 1).expect("date"),
                    days: 400,
                };
                (e.to_string(), e.explain(Locale::english()))
            }),
            Box::new(|| {
                let e = NotAnAddress("nope".into());
                (e.to_string(), e.explain(Locale::english()))
            }),
            Box::new(|| {
                let e = AccountError::Role("root".into());
                (e.to_string(), e.explain(Locale::english()))
            }),
            Box::new(|| {
                let e = AccountError::UsernameChars;
                (e.to_string(), e.explain(Locale::english()))
            }),
        ];
        for error in errors {
            let (display, explained) = error();
            assert_eq!(display, explained);
        }
    }
}
