//! The shapes that cross the wire between the server and the browser.
//!
//! Server functions return these; pages render them; services build them. They compile for
//! both sides and hold no logic beyond small conveniences, so every layer may use them without
//! an import running the wrong way (pages → api → services → domain; views beside all of them).
//! States are the domain's enums ([`crate::domain::run::RunStatus`] and friends), never text.

pub mod api_docs;
pub mod audit;
pub mod channels;
pub mod failed;
pub mod jobs;
pub mod maintenance;
pub mod nodes;
pub mod notifications;
pub mod overview;
pub mod runs;
pub mod secrets;
pub mod tokens;
pub mod traffic;
pub mod users;
