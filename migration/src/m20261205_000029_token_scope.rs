//! Tokens with a scope, an owner and an end (`app/src/services/tokens.rs`). `scope` is what a
//! token may do (`read`, `trigger`, `admin`), `tags` narrows a trigger token to the jobs with
//! one of them (comma-separated), `owner_id` the account it works for: a token stops working
//! when that account is disabled, demoted below the scope or deleted (a new account of the same
//! name has another id). `last_used_from` is the address of its latest use.
//!
//! Existing tokens keep their powers: a viewer's becomes `read`, an admin's `admin`; the owner
//! is the account that created it when one of that name exists (tokens made by the CLI had
//! none, and work on without one until they end); a token that never ended now ends 90 days
//! after the upgrade, the default for new ones.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // One column per statement: SQLite alters a table one column at a time.
        let columns = [
            string_len(ApiTokens::Scope, 16).default("read").to_owned(),
            text_null(ApiTokens::Tags),
            big_integer_null(ApiTokens::OwnerId),
            string_len_null(ApiTokens::LastUsedFrom, 64),
        ];
        for mut column in columns {
            manager
                .alter_table(
                    Table::alter()
                        .table(ApiTokens::Table)
                        .add_column(&mut column)
                        .to_owned(),
                )
                .await?;
        }
        let db = manager.get_connection();
        db.execute_unprepared(
            "UPDATE api_tokens SET scope = CASE WHEN role = 'admin' THEN 'admin' ELSE 'read' END",
        )
        .await?;
        db.execute_unprepared(
            "UPDATE api_tokens SET owner_id = \
             (SELECT users.id FROM users WHERE users.username = api_tokens.created_by)",
        )
        .await?;
        let ends = chrono::Utc::now() + chrono::Duration::days(90);
        manager
            .exec_stmt(
                Query::update()
                    .table(ApiTokens::Table)
                    .value(ApiTokens::ExpiresAt, ends)
                    .and_where(Expr::col(ApiTokens::ExpiresAt).is_null())
                    .and_where(Expr::col(ApiTokens::RevokedAt).is_null())
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in [
            ApiTokens::LastUsedFrom,
            ApiTokens::OwnerId,
            ApiTokens::Tags,
            ApiTokens::Scope,
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(ApiTokens::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }
}

#[derive(DeriveIden)]
enum ApiTokens {
    Table,
    Scope,
    Tags,
    OwnerId,
    LastUsedFrom,
    ExpiresAt,
    RevokedAt,
}
