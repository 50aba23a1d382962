//! Queries and commands over the database: the one place SQL lives.
//!
//! Plain async functions taking a `&DatabaseConnection` (or any `ConnectionTrait`), testable
//! without a server. Expected failures are `thiserror` enums; everything else is `DbErr`.

pub mod alerts;
pub mod audit;
pub mod digest;
pub mod failed;
pub mod jobs;
pub mod login;
pub mod nodes;
pub mod notifications;
pub mod outbox;
pub mod passwords;
pub mod runs;
pub mod sessions;
pub mod traffic;
pub mod traffic_blocks;
pub mod traffic_rollup;
pub mod trends;
pub mod users;
