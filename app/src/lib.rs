//! Bulwark's application crate: the UI, its server functions, and the domain both sides share.
//!
//! Compiled twice: with `ssr` into the `bulwark` server, with `hydrate` into the browser's wasm.
//!
//! - [`domain`]: pure rules with no I/O (roles and usernames, later retry math, cron, bots,
//!   date ranges). The browser and the server run the very same functions.
//! - [`api`]: `#[server]` functions. Thin: authorise, validate, call a service, map the error.
//!   [`api::error::AppError`] is the one error type they return; its module says why.
//! - [`services`] (server only): every query and command over the database.
//! - [`entities`] (server only): sea-orm entities, one file per table.
//! - [`pages`] and [`components`]: the UI.
//! - [`state`] (server only): what every server function and render can reach.

pub mod api;
pub mod components;
pub mod domain;
pub mod pages;

#[cfg(feature = "ssr")]
pub mod entities;
#[cfg(feature = "ssr")]
pub mod live;
#[cfg(feature = "ssr")]
pub mod mailer;
#[cfg(feature = "ssr")]
pub mod services;
#[cfg(feature = "ssr")]
pub mod state;

mod app;
pub use app::{App, shell};
