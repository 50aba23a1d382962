//! Every schema change Bulwark has made, in order, for SQLite and PostgreSQL alike.
//!
//! A migration is never edited once it has landed: a change to the schema is a new file here,
//! added to [`Migrator::migrations`]. Both backends run the same list in the tests.

pub use sea_orm_migration::prelude::*;

mod m20261130_000001_accounts;
mod m20261130_000002_jobs_runs_attempts;
mod m20261130_000003_engine;
mod m20261130_000004_failed_queue;
mod m20261130_000005_queue_indexes;
mod m20261130_000006_dependants;
mod m20261130_000007_traffic_nodes;
mod m20261130_000008_node_clock;
mod m20261130_000009_generated_traffic;
mod m20261130_000010_traffic_rollups;
mod m20261130_000011_mail;
mod m20261130_000012_trend_alerts;
mod m20261130_000013_traffic_blocks;
mod m20261201_000014_fallback_job;
mod m20261201_000015_engine_v2;
mod m20261201_000016_claim_classes;
mod m20261201_000017_account_admin;
mod m20261201_000018_secrets;
mod m20261201_000019_channels;
mod m20261201_000020_channel_deliveries;
mod m20261201_000021_api_tokens;
mod m20261201_000022_run_requests;
mod m20261201_000023_traffic_sites;
mod m20261202_000024_traffic_fact_blocks;
mod m20261202_000025_maintenance;
mod m20261203_000026_locales;
mod m20261205_000027_run_cancel;
mod m20261205_000028_param_hold;
mod m20261205_000029_token_scope;
mod m20261205_000030_sign_in_source;
mod m20261205_000031_attempts_by_finish;
mod m20261205_000032_hook_when_paused;
mod m20261206_000033_run_logs;
mod m20261206_000034_watch;
mod m20261207_000035_calendars;
mod m20261208_000036_company_sign_in;
mod m20261208_000037_second_factor;
mod m20261209_000038_job_revisions;
mod m20261210_000039_placement;
mod m20261211_000040_shards;
mod m20261211_000041_hot_tables;
mod m20261212_000042_node_pooler;
mod m20261213_000043_traffic_countries;
mod m20261213_000044_traffic_campaigns;
mod m20261214_000045_traffic_statuses;
mod m20261215_000046_traffic_events_goals;
mod m20261216_000047_traffic_reports;
mod m20261217_000048_traffic_shares;
mod m20261218_000049_traffic_daily_views;
mod m20261219_000050_traffic_referrer_prefixes;
mod m20261220_000051_traffic_block_tails;

pub struct Migrator;

#[async_trait::async_trait]
impl MigratorTrait for Migrator {
    fn migrations() -> Vec<Box<dyn MigrationTrait>> {
        vec![
            Box::new(m20261130_000001_accounts::Migration),
            Box::new(m20261130_000002_jobs_runs_attempts::Migration),
            Box::new(m20261130_000003_engine::Migration),
            Box::new(m20261130_000004_failed_queue::Migration),
            Box::new(m20261130_000005_queue_indexes::Migration),
            Box::new(m20261130_000006_dependants::Migration),
            Box::new(m20261130_000007_traffic_nodes::Migration),
            Box::new(m20261130_000008_node_clock::Migration),
            Box::new(m20261130_000009_generated_traffic::Migration),
            Box::new(m20261130_000010_traffic_rollups::Migration),
            Box::new(m20261130_000011_mail::Migration),
            Box::new(m20261130_000012_trend_alerts::Migration),
            Box::new(m20261130_000013_traffic_blocks::Migration),
            Box::new(m20261201_000014_fallback_job::Migration),
            Box::new(m20261201_000015_engine_v2::Migration),
            Box::new(m20261201_000016_claim_classes::Migration),
            Box::new(m20261201_000017_account_admin::Migration),
            Box::new(m20261201_000018_secrets::Migration),
            Box::new(m20261201_000019_channels::Migration),
            Box::new(m20261201_000020_channel_deliveries::Migration),
            Box::new(m20261201_000021_api_tokens::Migration),
            Box::new(m20261201_000022_run_requests::Migration),
            Box::new(m20261201_000023_traffic_sites::Migration),
            Box::new(m20261202_000024_traffic_fact_blocks::Migration),
            Box::new(m20261202_000025_maintenance::Migration),
            Box::new(m20261203_000026_locales::Migration),
            Box::new(m20261205_000027_run_cancel::Migration),
            Box::new(m20261205_000028_param_hold::Migration),
            Box::new(m20261205_000029_token_scope::Migration),
            Box::new(m20261205_000030_sign_in_source::Migration),
            Box::new(m20261205_000031_attempts_by_finish::Migration),
            Box::new(m20261205_000032_hook_when_paused::Migration),
            Box::new(m20261206_000033_run_logs::Migration),
            Box::new(m20261206_000034_watch::Migration),
            Box::new(m20261207_000035_calendars::Migration),
            Box::new(m20261208_000036_company_sign_in::Migration),
            Box::new(m20261208_000037_second_factor::Migration),
            Box::new(m20261209_000038_job_revisions::Migration),
            Box::new(m20261210_000039_placement::Migration),
            Box::new(m20261211_000040_shards::Migration),
            Box::new(m20261211_000041_hot_tables::Migration),
            Box::new(m20261212_000042_node_pooler::Migration),
            Box::new(m20261213_000043_traffic_countries::Migration),
            Box::new(m20261213_000044_traffic_campaigns::Migration),
            Box::new(m20261214_000045_traffic_statuses::Migration),
            Box::new(m20261215_000046_traffic_events_goals::Migration),
            Box::new(m20261216_000047_traffic_reports::Migration),
            Box::new(m20261217_000048_traffic_shares::Migration),
            Box::new(m20261218_000049_traffic_daily_views::Migration),
            Box::new(m20261219_000050_traffic_referrer_prefixes::Migration),
            Box::new(m20261220_000051_traffic_block_tails::Migration),
        ]
    }
}
