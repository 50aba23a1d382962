//! Accounts an administrator manages: a user can be disabled or made to change their password
//! at the next sign-in, and their last sign-in is kept; a session remembers where it came from
//! and when it was last used, so it can expire when idle and be listed and ended by its owner.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // One column per statement: SQLite alters a table one change at a time.
        for column in [
            timestamp_with_time_zone_null(Users::DisabledAt),
            boolean(Users::MustChangePassword).default(false).to_owned(),
            timestamp_with_time_zone_null(Users::LastSignInAt),
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Users::Table)
                        .add_column(column)
                        .to_owned(),
                )
                .await?;
        }
        for column in [
            timestamp_with_time_zone_null(Sessions::LastSeenAt),
            string_len_null(Sessions::Ip, 64),
            string_len_null(Sessions::UserAgent, 255),
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Sessions::Table)
                        .add_column(column)
                        .to_owned(),
                )
                .await?;
        }
        manager
            .get_connection()
            .execute_unprepared("UPDATE sessions SET last_seen_at = created_at")
            .await?;
        // A user's sessions, for listing and ending them.
        manager
            .create_index(
                Index::create()
                    .name("idx_sessions_user")
                    .table(Sessions::Table)
                    .col(Sessions::UserId)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(
                Index::drop()
                    .name("idx_sessions_user")
                    .table(Sessions::Table)
                    .to_owned(),
            )
            .await?;
        for column in [Sessions::LastSeenAt, Sessions::Ip, Sessions::UserAgent] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Sessions::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        for column in [
            Users::DisabledAt,
            Users::MustChangePassword,
            Users::LastSignInAt,
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Users::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }
}

#[derive(DeriveIden)]
enum Users {
    Table,
    DisabledAt,
    MustChangePassword,
    LastSignInAt,
}

#[derive(DeriveIden)]
enum Sessions {
    Table,
    UserId,
    LastSeenAt,
    Ip,
    UserAgent,
}
