//! `jobs.on_exhausted` held `fallback:<job>` in one text column; the job's name moves to its
//! own column, so `on_exhausted` holds one of a fixed set of words (`dead_letter`,
//! `skip_to_next`, `fallback`) like every other state, and a renamed fallback job is one value.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Jobs::Table)
                    .add_column(text_null(Jobs::FallbackJob))
                    .to_owned(),
            )
            .await?;
        // `substr` counts from 1 on both databases; 'fallback:' is 9 characters.
        manager
            .get_connection()
            .execute_unprepared(
                "UPDATE jobs SET fallback_job = substr(on_exhausted, 10), on_exhausted = 'fallback' \
                 WHERE on_exhausted LIKE 'fallback:%'",
            )
            .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .get_connection()
            .execute_unprepared(
                "UPDATE jobs SET on_exhausted = 'fallback:' || fallback_job \
                 WHERE on_exhausted = 'fallback' AND fallback_job IS NOT NULL",
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(Jobs::Table)
                    .drop_column(Jobs::FallbackJob)
                    .to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden)]
enum Jobs {
    Table,
    FallbackJob,
}
