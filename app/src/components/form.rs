//! A server action's error as a form shows it: beside the field it names, or once under the
//! form when it names none.

use leptos::prelude::*;

use crate::i18n::current;
use crate::i18n::errors::Explain;

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
            .map(|e| e.explain(current()))
    }
}

/// A `<select>` of the languages there are, `chosen` selected, with a first option (value
/// empty) meaning "the default" in the words `default_label` gives.
#[component]
pub fn LocaleSelect(
    #[prop(optional)] id: Option<&'static str>,
    name: &'static str,
    chosen: Option<String>,
    default_label: String,
) -> impl IntoView {
    view! {
        <select id=id name=name>
            <option value="" selected=chosen.is_none()>{default_label}</option>
            {crate::i18n::Locale::all()
                .map(|l| {
                    let selected = chosen.as_deref() == Some(l.tag().as_str());
                    view! { <option value=l.tag() selected=selected lang=l.tag()>{l.name()}</option> }
                })
                .collect_view()}
        </select>
    }
}
