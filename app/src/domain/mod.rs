//! Pure domain rules, compiled for the server and the browser alike. Nothing here does I/O.
//!
//! - [`retry`]: the retry contract — delays, totals, sensitivities, jitter, warnings.
//! - [`run`]: the run state machine, error classes, and the decision after each attempt.
//! - [`run_log`]: an attempt's whole output: lines, streams, secrets taken out as it streams.
//! - [`ticks`]: what becomes of a job's due cron ticks (misfire, overlap, holds).
//! - [`timeout`]: static and learned (P95/P99) timeouts, slow-run detection.
//! - [`job`]: a job definition as typed ([`job::input`]), parsed ([`job::parse`]) and shown
//!   with its credentials hidden ([`job::redact`]).
//! - [`secrets`]: `${secret:NAME}` references in jobs: found, filled in, taken out again.
//! - [`email`]: e-mail addresses and lists of them.
//! - [`filters`]: list filters as URLs and the command line type them, parsed by one rule.
//! - [`text_enum`]: the one way a state is written down (database, wire, command line).
//! - [`duration`]: durations as people type them (`500ms`, `10s`, `1h30m`).
//! - [`cron`]: six-field cron expressions, time zones, fire times.
//! - [`crontab`]: a crontab file as cron reads it, for importing.
//! - [`account`]: usernames, roles, passwords.
//! - [`sign_in`]: company sign-in: providers' claims to account names and roles.
//! - [`client_addr`]: which address a request came from, behind trusted proxies.
//! - [`bots`]: User-Agent → person or bot, and which bot.
//! - [`traffic_range`]: date ranges (today … 90 days, custom) and visitor filters for traffic.
//! - [`traffic_alerts`]: traffic spikes, bot floods and 404 bursts per site and hour.
//! - [`traffic_report`]: scheduled traffic reports: their periods, figures and audience.
//! - [`traffic_parts`]: how traffic rollups split people and bot sources, and what each
//!   dashboard filter covers.
//! - [`goals`]: custom events' names and properties, goals and their page patterns.
//! - [`sites`]: sites by host, page keys, referrer domains, excluded addresses.
//! - [`node`]: instances sharing a database: live, lost or stopped; clock skew.
//! - [`alerts`]: failure episodes and the mails they cause.
//! - [`chat`]: alerts as chat messages and webhook events, and the channel kinds.
//! - [`mail`]: what each mail says (subject, text, HTML).
//! - [`digest`]: the daily health digest's figures and its mail.
//! - [`trends`]: failure spikes, rates and bursts across all jobs.
//! - [`maintenance`]: what a pause covers (every job, a tag, one job) and when it ends.
//! - [`watch`]: jobs that run elsewhere and ping: windows, pings, too fast and too slow.

pub mod account;
pub mod alerts;
pub mod api_token;
pub mod backfill;
pub mod bots;
pub mod calendar;
pub mod channels;
pub mod chat;
pub mod client_addr;
pub mod cron;
pub mod crontab;
pub mod digest;
pub mod due;
pub mod duration;
pub mod email;
pub mod filters;
pub mod goals;
pub mod job;
pub mod labels;
pub mod mail;
pub mod maintenance;
pub mod node;
pub mod pool;
pub mod problem;
pub mod recovery;
pub mod retry;
pub mod run;
pub mod run_log;
pub mod secrets;
pub mod sign_in;
pub mod sites;
pub mod text_enum;
pub mod tick;
pub mod ticks;
pub mod timeout;
pub mod traffic_alerts;
pub mod traffic_parts;
pub mod traffic_range;
pub mod traffic_report;
pub mod trends;
pub mod watch;
pub mod zone;

pub use problem::{FieldProblem, Problem};
