//! An attempt's whole output as the run page, the API and the command line read it.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::domain::run_log::Stream;

/// One stored line: its number in the attempt's output (from 1), stream, arrival, and text
/// (invalid UTF-8 shown as U+FFFD; the line's `\n` left off).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogLine {
    pub number: i64,
    pub stream: Stream,
    pub at: DateTime<Utc>,
    pub text: String,
}

/// What is kept of one attempt's output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogSummary {
    pub attempt: i32,
    /// Bytes kept (the marker included, when the log was cut).
    pub bytes: i64,
    /// The last line's number.
    pub last_line: i64,
    /// Left out between the head and the tail of a log over `run_log_max_mb`.
    pub omitted_bytes: i64,
    pub omitted_lines: i64,
    /// Still running: more may come.
    pub running: bool,
}

/// Which lines a page of the log viewer shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Anchor {
    /// The last screen.
    End,
    /// From this line on.
    From(i64),
    /// The screen before this line.
    Before(i64),
}

/// A screen of an attempt's log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogPage {
    pub run: i64,
    pub summary: LogSummary,
    /// How many attempts the run has had.
    pub attempts: i32,
    pub lines: Vec<LogLine>,
    pub more_before: bool,
    pub more_after: bool,
}

/// A line that matched a search across runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct LogMatch {
    pub run: i64,
    pub attempt: i32,
    pub line: i64,
    pub text: String,
    pub job: String,
    #[cfg_attr(feature = "ssr", schema(value_type = String))]
    pub stream: Stream,
    pub at: DateTime<Utc>,
}
