//! sea-orm entities, one file per table. The schema itself lives in the `migration` crate.

pub mod audit_log;
pub mod job;
pub mod job_attempt;
pub mod job_run;
pub mod session;
pub mod user;
