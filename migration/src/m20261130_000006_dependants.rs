//! Jobs can name the jobs that depend on them: while a job's latest run is dead, its
//! dependants' next cron runs are held (`blocked`) until it recovers or an admin releases them.

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
                    // A JSON array of job names.
                    .add_column(text(Jobs::Dependants).default("[]"))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Jobs::Table)
                    .drop_column(Jobs::Dependants)
                    .to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden)]
enum Jobs {
    Table,
    Dependants,
}
