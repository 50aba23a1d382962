//! Pure domain rules, compiled for the server and the browser alike. Nothing here does I/O.
//!
//! - [`retry`]: the retry contract — delays, totals, sensitivities, jitter, warnings.
//! - [`run`]: the run state machine, error classes, and the decision after each attempt.
//! - [`timeout`]: static and learned (P95/P99) timeouts, slow-run detection.
//! - [`job`]: a job definition as typed and as validated.
//! - [`duration`]: durations as people type them (`500ms`, `10s`, `1h30m`).
//! - [`cron`]: six-field cron expressions, time zones, fire times.
//! - [`account`]: usernames, roles, passwords.
//! - [`bots`]: User-Agent → person or bot, and which bot.
//! - [`traffic_range`]: date ranges (today … 90 days, custom) and visitor filters for traffic.
//! - [`node`]: instances sharing a database: live, lost or stopped; clock skew.
//! - [`alerts`]: failure episodes and the mails they cause.
//! - [`mail`]: what each mail says (subject, text, HTML).
//! - [`trends`]: failure spikes, rates and bursts across all jobs.

pub mod account;
pub mod alerts;
pub mod bots;
pub mod cron;
pub mod duration;
pub mod job;
pub mod mail;
pub mod node;
pub mod retry;
pub mod run;
pub mod timeout;
pub mod traffic_range;
pub mod trends;
