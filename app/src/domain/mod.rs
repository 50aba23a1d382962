//! Pure domain rules, compiled for the server and the browser alike. Nothing here does I/O.
//!
//! - [`retry`]: the retry contract — delays, totals, sensitivities, jitter, warnings.
//! - [`job`]: a job definition as typed and as validated.
//! - [`duration`]: durations as people type them (`500ms`, `10s`, `1h30m`).
//! - [`cron`]: six-field cron expressions, time zones, fire times.
//! - [`account`]: usernames, roles, passwords.

pub mod account;
pub mod cron;
pub mod duration;
pub mod job;
pub mod retry;
