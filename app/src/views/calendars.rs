//! Work calendars as the Settings page and the REST API list them.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::domain::calendar::CalendarInput;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct CalendarSummary {
    /// The calendar as a file writes it.
    pub calendar: CalendarInput,
    /// `mon-fri`, or the workdays' names separated by commas.
    pub base: String,
    /// The years it has dates for.
    pub years: Vec<i32>,
    /// How many off days and make-up workdays it lists.
    pub off: usize,
    pub on: usize,
    /// The jobs following it.
    pub jobs: Vec<String>,
    pub updated_at: DateTime<Utc>,
}
