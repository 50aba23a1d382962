//! `#[server]` functions: the browser's only way to read or change anything.
//!
//! Each one is a few lines: find who is asking ([`auth::require_user`] or
//! [`auth::require_admin`]), parse its input into domain types, call a service, and finish
//! through [`respond`] so the HTTP status matches the error.

pub mod auth;
pub mod backfills;
pub mod calendars;
pub mod channels;
pub mod codec;
pub mod error;
pub mod failed;
pub mod jobs;
pub mod maintenance;
pub mod nodes;
pub mod notifications;
pub mod overview;
pub mod revisions;
pub mod run_logs;
pub mod runs;
pub mod second_factor;
pub mod secrets;
pub mod share;
pub mod tokens;
pub mod traffic;
pub mod users;

pub use error::AppError;

/// Sets the HTTP status of a failed server function from its error, then passes the result on.
#[cfg(feature = "ssr")]
pub(crate) fn respond<T>(result: Result<T, AppError>) -> Result<T, AppError> {
    if let Err(e) = &result
        && let (Some(response), Ok(status)) = (
            leptos::prelude::use_context::<leptos_axum::ResponseOptions>(),
            http::StatusCode::from_u16(e.status()),
        )
    {
        response.set_status(status);
    }
    result
}

/// The state every server function reads, provided as context by `leptos_routes`.
/// A status filter as a list's URL holds it: blank is no filter, anything else one of the
/// enum's words or a message naming the field.
#[cfg(feature = "ssr")]
pub(crate) fn status_filter<T>(status: Option<&str>) -> Result<Option<T>, AppError>
where
    T: std::str::FromStr,
    T::Err: std::fmt::Display,
{
    status
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse::<T>()
                .map_err(|e| AppError::invalid("status", format!("status: {e}")))
        })
        .transpose()
}

/// A language chosen in a form: a catalogue's tag, or empty for "the default" (`None`). An
/// unknown tag is refused in the caller's language, naming the ones there are.
#[cfg(feature = "ssr")]
pub(crate) fn locale_field(
    field: &str,
    tag: &str,
) -> Result<Option<crate::i18n::Locale>, AppError> {
    use crate::i18n::Locale;
    match tag.trim() {
        "" => Ok(None),
        tag => Locale::parse(tag).map(Some).ok_or_else(|| {
            AppError::invalid(
                field,
                crate::t!(
                    "account-language-unknown",
                    tag = tag,
                    known = Locale::tags()
                ),
            )
        }),
    }
}

#[cfg(feature = "ssr")]
pub(crate) fn state() -> Result<crate::state::AppState, AppError> {
    leptos::prelude::use_context::<crate::state::AppState>().ok_or_else(|| {
        tracing::error!("AppState missing from the server function context");
        AppError::Internal("server misconfigured: no application state".into())
    })
}

/// The signed-in user as the services that record who changed what want them, with the
/// address this request came from.
#[cfg(feature = "ssr")]
pub(crate) fn actor(
    who: &crate::domain::account::CurrentUser,
) -> crate::services::audit::Actor<'_> {
    crate::services::audit::Actor {
        id: Some(who.id),
        name: &who.username,
        ip: auth::request_ip(),
    }
}

/// Writes an audit-log entry for something `who` just did that changed nothing stored (a test
/// mail, a test message): a change is audited by its service, in the change's transaction.
#[cfg(feature = "ssr")]
pub(crate) async fn audit(
    state: &crate::state::AppState,
    who: &crate::domain::account::CurrentUser,
    action: &str,
    subject: &str,
    detail: serde_json::Value,
) -> Result<(), AppError> {
    crate::services::audit::record(
        &state.db,
        &actor(who),
        action,
        subject,
        detail,
        crate::clock::now(),
    )
    .await?;
    Ok(())
}
