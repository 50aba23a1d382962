//! Queries and commands over the database: the one place SQL lives.
//!
//! Plain async functions taking a `&DatabaseConnection` (or any `ConnectionTrait`), testable
//! without a server. They take parsed values (the domain's types) and return the wire types
//! of [`crate::views`]; they never import from [`crate::api`]. Expected failures are
//! `thiserror` enums; everything else is `DbErr`. [`sql`] holds the SQLite/PostgreSQL
//! differences for the statements the query builder cannot say.

pub mod alerts;
pub mod audit;
pub mod backfills;
pub mod calendars;
pub mod children;
pub mod evidence;
pub mod failed;
pub mod gauges;
pub mod held;
pub mod hooks;
pub mod identities;
pub mod jobs;
pub mod lanes;
pub mod login;
pub mod maintenance;
pub mod nodes;
pub mod notifications;
pub mod outbox;
pub mod overview;
pub mod passwords;
pub mod pending_logins;
pub mod placement;
pub mod pools;
pub mod retention;
pub mod revisions;
pub mod run_logs;
pub mod runs;
pub mod sealed;
pub mod second_factor;
pub mod secrets;
pub mod sessions;
pub mod sql;
pub mod tokens;
pub mod traffic;
pub mod trends;
pub mod upkeep;
pub mod users;
pub mod watch;
