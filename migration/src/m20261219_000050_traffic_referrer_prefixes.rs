//! The referrers of a few pages not found, found by seeking instead of scanning: on
//! PostgreSQL, `idx_traffic_daily_facts_prefix`, the referrer facts (kind `f`, values
//! `page␟referrer`) in byte-wise order (`COLLATE "C"`), so the values starting with a page's
//! key and the separator are one range of it whatever the database's collation
//! (`app/src/services/traffic/answers.rs`, `starts_with`). Partial, so it costs a flush only
//! the rows of that kind. SQLite compares text byte-wise already and seeks the range in
//! `idx_traffic_daily_facts_value`: nothing to do there.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DatabaseBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        if manager.get_database_backend() != DatabaseBackend::Postgres {
            return Ok(());
        }
        manager
            .get_connection()
            .execute_unprepared(
                "CREATE INDEX idx_traffic_daily_facts_prefix ON traffic_daily_facts \
                 (value COLLATE \"C\", day, site, views) WHERE kind = 'f'",
            )
            .await
            .map(|_| ())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        if manager.get_database_backend() != DatabaseBackend::Postgres {
            return Ok(());
        }
        manager
            .get_connection()
            .execute_unprepared("DROP INDEX idx_traffic_daily_facts_prefix")
            .await
            .map(|_| ())
    }
}
