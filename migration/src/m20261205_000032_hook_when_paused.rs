//! What a job's trigger URL does while the job is paused (`app/src/domain/job/mod.rs`,
//! `WhenPaused`): `refuse` answers 409, as every trigger URL did before; `queue` makes the run,
//! which waits until the pause ends — `job_runs.waits_for_pause`, since other runs started by
//! hand are not held back by a pause (`server/src/engine/claim.rs`, `unpaused`).

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
                    .add_column(string(Jobs::HookWhenPaused).default("refuse"))
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(JobRuns::Table)
                    .add_column(boolean(JobRuns::WaitsForPause).default(false))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(JobRuns::Table)
                    .drop_column(JobRuns::WaitsForPause)
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(Jobs::Table)
                    .drop_column(Jobs::HookWhenPaused)
                    .to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden)]
enum Jobs {
    Table,
    HookWhenPaused,
}

#[derive(DeriveIden)]
enum JobRuns {
    Table,
    WaitsForPause,
}
