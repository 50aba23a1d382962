//! Users, their sessions, and the audit log that records who did what.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        create_users(manager).await?;
        create_sessions(manager).await?;
        create_audit_log(manager).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(AuditLog::Table).to_owned())
            .await?;
        manager
            .drop_table(Table::drop().table(Sessions::Table).to_owned())
            .await?;
        manager
            .drop_table(Table::drop().table(Users::Table).to_owned())
            .await
    }
}

/// The Users table.
async fn create_users(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    manager
        .create_table(
            Table::create()
                .table(Users::Table)
                .col(big_pk_auto(Users::Id))
                .col(string_len_uniq(Users::Username, 64))
                .col(string(Users::PasswordHash))
                .col(string_len(Users::Role, 16))
                .col(timestamp_with_time_zone(Users::CreatedAt))
                .to_owned(),
        )
        .await?;
    Ok(())
}

/// The Sessions table and its indexes.
async fn create_sessions(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    // The primary key is the SHA-256 of the cookie's token: a leaked database row cannot be
    // replayed as a cookie.
    manager
        .create_table(
            Table::create()
                .table(Sessions::Table)
                .col(string_len(Sessions::Id, 64).primary_key())
                .col(big_integer(Sessions::UserId))
                .col(timestamp_with_time_zone(Sessions::CreatedAt))
                .col(timestamp_with_time_zone(Sessions::ExpiresAt))
                .foreign_key(
                    ForeignKey::create()
                        .from(Sessions::Table, Sessions::UserId)
                        .to(Users::Table, Users::Id)
                        .on_delete(ForeignKeyAction::Cascade),
                )
                .to_owned(),
        )
        .await?;
    manager
        .create_index(
            Index::create()
                .name("idx_sessions_expires_at")
                .table(Sessions::Table)
                .col(Sessions::ExpiresAt)
                .to_owned(),
        )
        .await?;
    Ok(())
}

/// The AuditLog table and its indexes.
async fn create_audit_log(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    manager
        .create_table(
            Table::create()
                .table(AuditLog::Table)
                .col(big_pk_auto(AuditLog::Id))
                .col(timestamp_with_time_zone(AuditLog::At))
                .col(big_integer_null(AuditLog::ActorId))
                .col(string_len(AuditLog::Actor, 64))
                .col(string_len(AuditLog::Action, 64))
                .col(string(AuditLog::Subject))
                .col(text(AuditLog::Detail))
                .col(string_len_null(AuditLog::Ip, 64))
                .to_owned(),
        )
        .await?;
    // Serves the login throttle ("failures for this user since ...") and the audit page.
    manager
        .create_index(
            Index::create()
                .name("idx_audit_log_action_subject_at")
                .table(AuditLog::Table)
                .col(AuditLog::Action)
                .col(AuditLog::Subject)
                .col(AuditLog::At)
                .to_owned(),
        )
        .await?;
    manager
        .create_index(
            Index::create()
                .name("idx_audit_log_action_ip_at")
                .table(AuditLog::Table)
                .col(AuditLog::Action)
                .col(AuditLog::Ip)
                .col(AuditLog::At)
                .to_owned(),
        )
        .await
}

#[derive(DeriveIden)]
pub(crate) enum Users {
    Table,
    Id,
    Username,
    PasswordHash,
    Role,
    CreatedAt,
}

#[derive(DeriveIden)]
enum Sessions {
    Table,
    Id,
    UserId,
    CreatedAt,
    ExpiresAt,
}

#[derive(DeriveIden)]
enum AuditLog {
    Table,
    Id,
    At,
    ActorId,
    Actor,
    Action,
    Subject,
    Detail,
    Ip,
}
