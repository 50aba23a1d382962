//! One module per page, named for its route.

pub mod account;
pub mod api_docs;
pub mod audit;
pub mod calendars;
pub mod channels;
pub mod failed;
pub mod home;
pub mod job_backfill;
pub mod job_calendar;
pub mod job_edit;
pub mod job_revisions;
pub mod jobs;
pub mod login;
pub mod maintenance;
pub mod not_found;
pub mod notifications;
pub mod routes;
pub mod run_detail;
pub mod runs;
pub mod second_factor;
pub mod settings;
pub mod tokens;
pub mod traffic;
pub mod traffic_hits;
pub mod traffic_sites;
pub mod user_link;
