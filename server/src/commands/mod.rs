//! CLI commands that are more than a call or two; each file is one command group.

pub mod bench;
pub mod bench_dashboard;
pub mod bench_engine;
pub mod bench_traffic;
pub mod channels;
pub mod digest;
pub mod jobs;
pub mod policy;
pub mod runs;
pub mod secrets;
pub mod traffic;
pub mod users;
