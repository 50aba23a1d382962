//! Sign-in limits by source (`app/src/services/login.rs`): `audit_log.source` is the address a
//! sign-in attempt counts against — an IPv4 address, or an IPv6 address's /64, which one
//! household or one rented server holds whole. The full address stays in `ip`. Indexed with
//! the time, for the per-address count and the name's known sources.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(AuditLog::Table)
                    .add_column(string_len_null(AuditLog::Source, 64))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("idx_audit_log_source_at")
                    .table(AuditLog::Table)
                    .col(AuditLog::Source)
                    .col(AuditLog::At)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(
                Index::drop()
                    .name("idx_audit_log_source_at")
                    .table(AuditLog::Table)
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(AuditLog::Table)
                    .drop_column(AuditLog::Source)
                    .to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden)]
enum AuditLog {
    Table,
    Source,
    At,
}
