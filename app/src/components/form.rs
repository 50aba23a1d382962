//! A server action's error as a form shows it: beside the field it names, or once under the
//! form when it names none.

use leptos::prelude::*;

use crate::api::AppError;

/// The message for `field` from the action's last answer (`action.value()`), if it is about
/// that field.
pub fn field_error<T, S>(value: S, field: &'static str) -> impl Fn() -> Option<String> + Copy
where
    S: Get<Value = Option<Result<T, AppError>>> + Copy,
{
    move || {
        value
            .get()
            .and_then(Result::err)
            .and_then(|e| e.for_field(field))
    }
}

/// The action's last error when it names no single field (a refusal, a conflict, a failure).
pub fn other_error<T, S>(value: S) -> impl Fn() -> Option<String> + Copy
where
    S: Get<Value = Option<Result<T, AppError>>> + Copy,
{
    move || {
        value
            .get()
            .and_then(Result::err)
            .filter(|e| !matches!(e, AppError::Invalid { .. }))
            .map(|e| e.to_string())
    }
}
