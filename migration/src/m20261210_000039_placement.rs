//! Where a job runs (`app/src/domain/labels.rs`, `app/src/services/placement.rs`).
//!
//! - `nodes.labels`: the instance's `node_labels` as `dc=sh,role=db` (names in order); empty
//!   for none.
//! - `nodes.commands`: whether it runs command jobs (`allow_commands`).
//! - `nodes.web`: whether it serves the console (`bulwark serve --no-web` does not).
//! - `nodes.engine`: whether it runs jobs at all (`engine = false` does not).
//! - `jobs.run_on`: the labels a node must carry to run the job, written the same way; empty:
//!   any node. A claim compares it with the subsets of the node's own labels.
//! - `pools`: concurrency pools by name, each with its `size`: at most that many runs of its
//!   jobs run at once across every node (a claim locks the pool's row to count them).
//! - `jobs.pool`: the pool the job belongs to; empty: none.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Pools::Table)
                    .col(string_len(Pools::Name, 64).primary_key())
                    .col(integer(Pools::Size))
                    .col(timestamp_with_time_zone(Pools::UpdatedAt))
                    .to_owned(),
            )
            .await?;
        for (table, mut def) in [
            (
                Nodes::Table.into_iden(),
                text(Nodes::Labels).default("").to_owned(),
            ),
            (
                Nodes::Table.into_iden(),
                boolean(Nodes::Commands).default(true).to_owned(),
            ),
            (
                Nodes::Table.into_iden(),
                boolean(Nodes::Web).default(true).to_owned(),
            ),
            (
                Nodes::Table.into_iden(),
                boolean(Nodes::Engine).default(true).to_owned(),
            ),
            (
                Jobs::Table.into_iden(),
                text(Jobs::RunOn).default("").to_owned(),
            ),
            (
                Jobs::Table.into_iden(),
                string_len(Jobs::Pool, 64).default("").to_owned(),
            ),
        ] {
            manager
                .alter_table(Table::alter().table(table).add_column(&mut def).to_owned())
                .await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for (table, column) in [
            (Jobs::Table.into_iden(), Jobs::Pool.into_iden()),
            (Jobs::Table.into_iden(), Jobs::RunOn.into_iden()),
            (Nodes::Table.into_iden(), Nodes::Engine.into_iden()),
            (Nodes::Table.into_iden(), Nodes::Web.into_iden()),
            (Nodes::Table.into_iden(), Nodes::Commands.into_iden()),
            (Nodes::Table.into_iden(), Nodes::Labels.into_iden()),
        ] {
            manager
                .alter_table(Table::alter().table(table).drop_column(column).to_owned())
                .await?;
        }
        manager
            .drop_table(Table::drop().table(Pools::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
enum Pools {
    Table,
    Name,
    Size,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum Nodes {
    Table,
    Labels,
    Commands,
    Web,
    Engine,
}

#[derive(DeriveIden)]
enum Jobs {
    Table,
    RunOn,
    Pool,
}
