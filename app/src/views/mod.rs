//! The shapes that cross the wire between the server and the browser.
//!
//! Server functions return these; pages render them; services build them. They compile for
//! both sides and hold no logic beyond small conveniences, so every layer may use them without
//! an import running the wrong way (pages → api → services → domain; views beside all of them).
//! States are the domain's enums ([`crate::domain::run::RunStatus`] and friends), never text.

pub mod api_docs;
pub mod audit;
pub mod backfills;
pub mod calendars;
pub mod channels;
pub mod failed;
pub mod jobs;
pub mod maintenance;
pub mod nodes;
pub mod notifications;
pub mod overview;
pub mod query;
pub mod run_logs;
pub mod runs;
pub mod secrets;
pub mod tokens;
pub mod traffic;
pub mod users;

use serde::{Deserialize, Serialize};

/// A problem with one field of a form, file or filter: the message a person reads beside it,
/// in their language (`crate::api::AppError::fields` words a [`crate::domain::FieldProblem`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

impl FieldError {
    pub fn new(field: &str, message: impl Into<String>) -> Self {
        Self {
            field: field.to_string(),
            message: message.into(),
        }
    }
}
