//! `job_attempts (finished_at)`: the trend watch (`app/src/services/trends.rs`, every minute)
//! counts the attempts that finished in the last 5 and 15 minutes and in the day before.
//! Without this index each of its counts read the whole table, a cost that grew with every
//! attempt kept: under `bulwark bench soak`'s 40 runs a second it made every minute's first
//! ticks later, more so each minute (issue 43).

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

const NAME: &str = "idx_job_attempts_finished_at";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_index(
                Index::create()
                    .name(NAME)
                    .table(JobAttempts::Table)
                    .col(JobAttempts::FinishedAt)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(
                Index::drop()
                    .name(NAME)
                    .table(JobAttempts::Table)
                    .to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden)]
enum JobAttempts {
    Table,
    FinishedAt,
}
