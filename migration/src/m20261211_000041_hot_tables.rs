//! Autovacuum settings of the hot tables on PostgreSQL (`app/src/services/upkeep.rs`,
//! `HOT_TABLES`, says which and why).
//!
//! By the server's defaults a table is vacuumed once a fifth of its rows are dead and
//! analysed once a tenth changed: a run queue of a million rows carries 200,000 dead ones
//! before a vacuum, and every claim's index scan steps over them. These tables are vacuumed
//! and analysed after 2 % (and at least 1,000 rows), and never slowed by the cost delay, so a
//! vacuum keeps up with a busy day. SQLite has no autovacuum: nothing changes there.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DatabaseBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Kept here rather than read from `app` (which the migrations do not depend on); a test
/// checks that every table of `app`'s list has the settings (`server/tests/api/upkeep.rs`).
const HOT_TABLES: &[&str] = &[
    "job_runs",
    "job_attempts",
    "nodes",
    "mail_outbox",
    "channel_deliveries",
];

const SETTINGS: &[&str] = &[
    "autovacuum_vacuum_scale_factor",
    "autovacuum_vacuum_threshold",
    "autovacuum_analyze_scale_factor",
    "autovacuum_analyze_threshold",
    "autovacuum_vacuum_cost_delay",
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        if manager.get_database_backend() != DatabaseBackend::Postgres {
            return Ok(());
        }
        let db = manager.get_connection();
        for table in HOT_TABLES {
            db.execute_unprepared(&format!(
                "ALTER TABLE {table} SET (autovacuum_vacuum_scale_factor = 0.02, \
                 autovacuum_vacuum_threshold = 1000, autovacuum_analyze_scale_factor = 0.02, \
                 autovacuum_analyze_threshold = 1000, autovacuum_vacuum_cost_delay = 0)"
            ))
            .await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        if manager.get_database_backend() != DatabaseBackend::Postgres {
            return Ok(());
        }
        let db = manager.get_connection();
        for table in HOT_TABLES {
            db.execute_unprepared(&format!(
                "ALTER TABLE {table} RESET ({})",
                SETTINGS.join(", ")
            ))
            .await?;
        }
        Ok(())
    }
}
