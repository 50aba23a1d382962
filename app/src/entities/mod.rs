//! sea-orm entities, one file per table. The schema itself lives in the `migration` crate.

pub mod api_token;
pub mod audit_log;
pub mod backfill;
pub mod calendar;
pub mod channel;
pub mod channel_delivery;
pub mod job;
pub mod job_alert;
pub mod job_attempt;
pub mod job_revision;
pub mod job_run;
pub mod mail_outbox;
pub mod maintenance_window;
pub mod node;
pub mod node_command;
pub mod node_command_result;
pub mod oidc_login;
pub mod recovery_code;
pub mod secret;
pub mod session;
pub mod setting;
pub mod traffic_site;
pub mod traffic_statistic;
pub mod trend_alert;
pub mod user;
pub mod user_identity;
