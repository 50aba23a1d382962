//! Broadcast and shards (`app/src/domain/job/spread.rs`, `server/src/engine/fan_out.rs`).
//!
//! - `jobs.run_on_count`: `all` for one child run per matching live node; empty: one run.
//! - `jobs.shards`: that many child runs spread over the matching nodes; 0: none.
//! - `job_runs.parent_id`: a child run's parent, the run of the tick it is a part of.
//! - `job_runs.shard_index`, `job_runs.shard_total`: a child's place among its siblings; on a
//!   parent, `shard_total` alone says how many children it was given.
//! - `job_runs.node_hint`: the node a child was meant for. Any other matching node takes it
//!   once that node is gone.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for (table, mut def) in [
            (
                Jobs::Table.into_iden(),
                string_len(Jobs::RunOnCount, 8).default("").to_owned(),
            ),
            (
                Jobs::Table.into_iden(),
                integer(Jobs::Shards).default(0).to_owned(),
            ),
            (
                JobRuns::Table.into_iden(),
                big_integer_null(JobRuns::ParentId).to_owned(),
            ),
            (
                JobRuns::Table.into_iden(),
                integer_null(JobRuns::ShardIndex).to_owned(),
            ),
            (
                JobRuns::Table.into_iden(),
                integer_null(JobRuns::ShardTotal).to_owned(),
            ),
            (
                JobRuns::Table.into_iden(),
                string_len_null(JobRuns::NodeHint, 128).to_owned(),
            ),
        ] {
            manager
                .alter_table(Table::alter().table(table).add_column(&mut def).to_owned())
                .await?;
        }
        // A parent's children, read when one of them ends and on the run's page.
        manager
            .create_index(
                Index::create()
                    .name("idx_job_runs_parent")
                    .table(JobRuns::Table)
                    .col(JobRuns::ParentId)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(
                Index::drop()
                    .name("idx_job_runs_parent")
                    .table(JobRuns::Table)
                    .to_owned(),
            )
            .await?;
        for (table, column) in [
            (JobRuns::Table.into_iden(), JobRuns::NodeHint.into_iden()),
            (JobRuns::Table.into_iden(), JobRuns::ShardTotal.into_iden()),
            (JobRuns::Table.into_iden(), JobRuns::ShardIndex.into_iden()),
            (JobRuns::Table.into_iden(), JobRuns::ParentId.into_iden()),
            (Jobs::Table.into_iden(), Jobs::Shards.into_iden()),
            (Jobs::Table.into_iden(), Jobs::RunOnCount.into_iden()),
        ] {
            manager
                .alter_table(Table::alter().table(table).drop_column(column).to_owned())
                .await?;
        }
        Ok(())
    }
}

#[derive(DeriveIden)]
enum Jobs {
    Table,
    RunOnCount,
    Shards,
}

#[derive(DeriveIden)]
enum JobRuns {
    Table,
    ParentId,
    ShardIndex,
    ShardTotal,
    NodeHint,
}
