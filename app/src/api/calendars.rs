//! Work calendars on the Settings page and in the job editor: everyone reads them (the
//! editor's preview marks their days), admins keep and remove them.

use leptos::prelude::*;

use super::AppError;
use super::codec::Json;
use crate::domain::calendar::CalendarInput;
use crate::views::calendars::CalendarSummary;

/// A refused calendar in the request's language.
#[cfg(feature = "ssr")]
impl From<crate::services::calendars::CalendarServiceError> for AppError {
    fn from(e: crate::services::calendars::CalendarServiceError) -> Self {
        use crate::services::calendars::CalendarServiceError;
        match e {
            CalendarServiceError::Invalid(problems) => {
                let locale = crate::i18n::current();
                let words: Vec<String> = problems.iter().map(|p| locale.say(p)).collect();
                AppError::invalid("calendar", words.join("; "))
            }
            CalendarServiceError::NotFound(name) => {
                AppError::NotFound(crate::t!("noun-calendar", name = name))
            }
            other => AppError::internal(&other),
        }
    }
}

#[server(endpoint = "calendars/list", output = Json)]
pub async fn list_calendars() -> Result<Vec<CalendarSummary>, AppError> {
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            Ok(crate::services::calendars::list(&state.db).await?)
        }
        .await,
    )
}

/// One calendar as a file writes it, for the editor's preview.
#[server(endpoint = "calendars/get", output = Json)]
pub async fn get_calendar(name: String) -> Result<CalendarInput, AppError> {
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            Ok(crate::services::calendars::get(&state.db, &name)
                .await?
                .to_input())
        }
        .await,
    )
}

/// Creates or replaces a calendar from the page's form: its base (`mon-fri`, or weekday
/// names), and its off days and make-up days one a line, `YYYY-MM-DD name`.
#[server(endpoint = "calendars/save", output = Json)]
pub async fn save_calendar(
    name: String,
    base: String,
    off: String,
    on: String,
) -> Result<String, AppError> {
    use crate::domain::calendar::{BaseInput, dates_from_lines};
    super::respond(
        async {
            let admin = super::auth::require_admin("change calendars")?;
            let input = CalendarInput {
                name,
                base: BaseInput::Text(base),
                off: dates_from_lines(&off),
                on: dates_from_lines(&on),
            };
            let state = super::state()?;
            let who = super::actor(&admin);
            let saved =
                crate::services::calendars::save(&state.db, &input, &who, crate::clock::now())
                    .await?;
            Ok(saved.name)
        }
        .await,
    )
}

#[server(endpoint = "calendars/remove", output = Json)]
pub async fn remove_calendar(name: String) -> Result<(), AppError> {
    super::respond(
        async {
            let admin = super::auth::require_admin("remove calendars")?;
            let state = super::state()?;
            let who = super::actor(&admin);
            crate::services::calendars::delete(&state.db, &name, &who, crate::clock::now()).await?;
            Ok(())
        }
        .await,
    )
}
