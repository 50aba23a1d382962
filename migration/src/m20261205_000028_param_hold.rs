//! Parameters as data (`app/src/domain/job/placement.rs`): a job saved before a parameter was
//! kept out of a URL's origin, a command's program or part of an argument is held at start-up
//! instead of failing on every tick. `jobs.params_held` says why (JSON, the places refused)
//! and the job is paused; `jobs.params_as_written` is an administrator's confirmation that it
//! may run as written until its next edit (`bulwark jobs check --confirm NAME`).

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // One column per statement: SQLite alters a table one column at a time.
        manager
            .alter_table(
                Table::alter()
                    .table(Jobs::Table)
                    .add_column(text_null(Jobs::ParamsHeld))
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(Jobs::Table)
                    .add_column(boolean(Jobs::ParamsAsWritten).default(false))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in [Jobs::ParamsAsWritten, Jobs::ParamsHeld] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Jobs::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }
}

#[derive(DeriveIden)]
enum Jobs {
    Table,
    ParamsHeld,
    ParamsAsWritten,
}
