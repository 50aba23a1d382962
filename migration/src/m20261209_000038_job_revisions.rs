//! Job revisions (`app/src/services/revisions.rs`).
//!
//! - `job_revisions`: each saved definition of a job, numbered from 1 per job: the whole
//!   definition sealed with the secret key (`sealed`: it may hold credentials, and a restore
//!   brings them back), the same with credentials hidden (`shown`: what history and diffs read
//!   without the key), the SHA-256 of the definition (`digest`: a save that changes nothing
//!   makes no revision), who made it (a person or `token:NAME`), when, and an optional note.
//!   Jobs that exist at upgrade get their revision 1 at the first start after it (sealing
//!   needs the key, which a migration does not have).
//! - `jobs.revision`: the job's current revision (0 until its first is recorded).
//! - `job_runs.revision`: the revision a run ran, set when the engine takes it.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(JobRevisions::Table)
                    .col(big_pk_auto(JobRevisions::Id))
                    .col(big_integer(JobRevisions::JobId))
                    .col(integer(JobRevisions::Revision))
                    .col(text(JobRevisions::Sealed))
                    .col(text(JobRevisions::Shown))
                    .col(string_len(JobRevisions::Digest, 64))
                    .col(string_len(JobRevisions::Actor, 64))
                    .col(timestamp_with_time_zone(JobRevisions::At))
                    .col(text_null(JobRevisions::Note))
                    .foreign_key(
                        ForeignKey::create()
                            .from(JobRevisions::Table, JobRevisions::JobId)
                            .to(Jobs::Table, Jobs::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .index(
                        Index::create()
                            .name("idx_job_revisions_number")
                            .col(JobRevisions::JobId)
                            .col(JobRevisions::Revision)
                            .unique(),
                    )
                    .to_owned(),
            )
            .await?;
        for (table, mut def) in [
            (
                Jobs::Table.into_iden(),
                integer(Jobs::Revision).default(0).to_owned(),
            ),
            (JobRuns::Table.into_iden(), integer_null(JobRuns::Revision)),
        ] {
            manager
                .alter_table(Table::alter().table(table).add_column(&mut def).to_owned())
                .await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for (table, column) in [
            (JobRuns::Table.into_iden(), JobRuns::Revision.into_iden()),
            (Jobs::Table.into_iden(), Jobs::Revision.into_iden()),
        ] {
            manager
                .alter_table(Table::alter().table(table).drop_column(column).to_owned())
                .await?;
        }
        manager
            .drop_table(Table::drop().table(JobRevisions::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
enum JobRevisions {
    Table,
    Id,
    JobId,
    Revision,
    Sealed,
    Shown,
    Digest,
    Actor,
    At,
    Note,
}

#[derive(DeriveIden)]
enum Jobs {
    Table,
    Id,
    Revision,
}

#[derive(DeriveIden)]
enum JobRuns {
    Table,
    Revision,
}
