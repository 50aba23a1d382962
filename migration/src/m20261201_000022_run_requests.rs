//! Runs started from outside: a run keeps the parameters it was started with (`params`, JSON)
//! and the caller's `Idempotency-Key` (`request_key`, unique per job, so twenty requests with
//! one key make one run); a job declares its parameters (`parameters`, JSON) and may have a
//! trigger URL (`hook_id`, the unguessable part of `/hooks/<id>`, and an optional signing
//! secret, sealed like other secrets).

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in [
            ColumnDef::new(JobRuns::RequestKey)
                .string_len(200)
                .null()
                .to_owned(),
            ColumnDef::new(JobRuns::Params).text().null().to_owned(),
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(JobRuns::Table)
                        .add_column(column)
                        .to_owned(),
                )
                .await?;
        }
        manager
            .create_index(
                Index::create()
                    .name("uq_job_runs_request_key")
                    .table(JobRuns::Table)
                    .col(JobRuns::JobId)
                    .col(JobRuns::RequestKey)
                    .unique()
                    .to_owned(),
            )
            .await?;
        for column in [
            text(Jobs::Parameters).default("[]").to_owned(),
            ColumnDef::new(Jobs::HookId)
                .string_len(64)
                .null()
                .to_owned(),
            ColumnDef::new(Jobs::HookSecret).text().null().to_owned(),
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Jobs::Table)
                        .add_column(column)
                        .to_owned(),
                )
                .await?;
        }
        manager
            .create_index(
                Index::create()
                    .name("uq_jobs_hook_id")
                    .table(Jobs::Table)
                    .col(Jobs::HookId)
                    .unique()
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(
                Index::drop()
                    .name("uq_jobs_hook_id")
                    .table(Jobs::Table)
                    .to_owned(),
            )
            .await?;
        for column in [Jobs::Parameters, Jobs::HookId, Jobs::HookSecret] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Jobs::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        manager
            .drop_index(
                Index::drop()
                    .name("uq_job_runs_request_key")
                    .table(JobRuns::Table)
                    .to_owned(),
            )
            .await?;
        for column in [JobRuns::RequestKey, JobRuns::Params] {
            manager
                .alter_table(
                    Table::alter()
                        .table(JobRuns::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }
}

#[derive(DeriveIden)]
enum JobRuns {
    Table,
    JobId,
    RequestKey,
    Params,
}

#[derive(DeriveIden)]
enum Jobs {
    Table,
    Parameters,
    HookId,
    HookSecret,
}
