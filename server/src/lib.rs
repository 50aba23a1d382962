//! The `bulwark` binary's library: everything `main` wires together, public so the integration
//! tests can start the real application on a random port.
//!
//! - [`auth`]: company sign-in — OpenID providers and a trusted proxy's header.
//! - [`cli`]: the commands (`serve`, `migrate`, `user add`, …) and their exit codes;
//!   [`commands`] holds the ones with more to say than a few lines.
//! - [`startup`]: building and running the application, one path for `serve` and the tests.
//! - [`jobs_file`]: job definitions as TOML; [`system_jobs`] and [`demo`] are two such files.
//! - [`config`]: `bulwark.toml` overridden by `BULWARK_*` variables and `DATABASE_URL`.
//! - [`db`]: connecting to SQLite or PostgreSQL and applying migrations.
//! - [`engine`]: cron ticks → runs → attempts, durably (its module doc maps the stages).
//! - [`web`]: the axum application — Leptos pages and server functions, the session layer,
//!   the cross-site request check, health endpoints.
//! - [`channels`]: chat robots and signed webhooks: each platform's envelope, signature and
//!   answer.
//! - [`traffic`]: counting front-end page views (layer, collect endpoint, log import), the
//!   in-memory buffer and its flush, retention.
//! - [`clock`]: the time all nodes agree on (the database's clock).
//! - [`cluster`]: the nodes sharing a database, their heartbeats and the commands sent to all.
//! - [`duties`]: the node's own periodic housekeeping (tokio-cron-scheduler).
//! - [`upkeep`]: vacuuming and analysing Bulwark's tables where PostgreSQL's autovacuum is off.
//! - [`telemetry`]: logs through `tracing`, human-readable or JSON.
//! - [`shutdown`]: turning SIGTERM / Ctrl-C into one graceful stop.

pub mod auth;
pub mod bench;
pub mod channels;
pub mod cli;
/// The time all nodes agree on (the database's clock); it lives in `app` so the web app's
/// server functions read the same time as the engine.
pub use app::clock;
pub mod cluster;
pub mod commands;
pub mod config;
pub mod db;
pub mod demo;
pub mod duties;
pub mod engine;
pub mod jobs_file;
pub mod mail;
pub mod metrics;
pub mod outbound;
pub mod rest;
pub mod shutdown;
pub mod startup;
pub mod system_jobs;
pub mod telemetry;
pub mod traffic;
pub mod upkeep;
pub mod version;
pub mod web;
