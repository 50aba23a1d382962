//! Integration tests: the real application on a random port, a real SQLite file, and a fresh
//! PostgreSQL database when `BULWARK_TEST_POSTGRES_URL` is set.

mod helpers;

mod accounts;
mod auth;
mod auth_header;
mod backup;
mod busy_day;
mod calendars;
mod channels;
mod cli;
mod cluster;
mod doc_examples;
mod docs;
mod engine;
mod evidence;
mod failed;
mod faults;
mod health;
mod hooks;
mod isolation;
mod jobs;
mod languages;
mod mail;
mod maintenance;
mod metrics;
mod oidc;
mod oidc_tokens;
mod param_places;
mod params;
mod process;
mod proxy;
mod redirects;
mod rest;
mod retention;
mod revisions;
mod routes;
mod run_logs;
mod second_factor;
mod secrets;
mod smtp;
mod traffic;
mod traffic_stats;
mod upgrade;
mod upkeep;
mod watch;
