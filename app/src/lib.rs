//! Bulwark's application crate: the UI, its server functions, and the domain both sides share.
//!
//! Compiled twice: with `ssr` into the `bulwark` server, with `hydrate` into the browser's wasm.
//!
//! The layers, and the only direction imports may run (`docs/ARCHITECTURE.md` draws them):
//! `pages`/`components` → [`api`] → [`services`] → [`domain`], with [`views`] usable by all.
//!
//! - [`domain`]: pure rules with no I/O: the retry contract, the run state machine, cron, job
//!   definitions, bots, date ranges, alert episodes, mail texts. The browser and the server run
//!   the very same functions.
//! - [`i18n`]: the message catalogues (English, 简体中文) and the locale a page is rendered in;
//!   usable by every layer.
//! - [`views`]: the shapes that cross the wire (what server functions return).
//! - [`api`]: `#[server]` functions. Thin: authorise, parse input into domain types, call a
//!   service, map the error. [`api::error::AppError`] is the one error type they return; its
//!   module says why.
//! - [`services`] (server only): every query and command over the database.
//! - [`entities`] (server only): sea-orm entities, one file per table.
//! - [`pages`] and [`components`]: the UI.
//! - [`state`] (server only): what every server function and render can reach.
//! - [`clock`] (server only): the time every node agrees on, the database's.
//! - [`wake`] (server only): telling the engines that runs or schedules changed.

pub mod api;
pub mod components;
pub mod domain;
pub mod i18n;
pub mod pages;
pub mod views;

#[cfg(feature = "ssr")]
pub mod clock;
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
#[cfg(feature = "ssr")]
pub mod wake;

mod app;
pub use app::{App, shell};
