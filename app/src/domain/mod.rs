//! Pure domain rules, compiled for the server and the browser alike. Nothing here does I/O.

pub mod account;
