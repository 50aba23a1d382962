//! API tokens: for the systems around Bulwark (pipelines, scripts, Prometheus), a bearer token
//! with a role. Only the token's SHA-256 is stored (a token is 256 random bits, so a plain hash
//! is enough and lets each request find its row by index); it is shown once, when created.
//! A revoked token keeps its row, so the audit log's `token:NAME` still names something.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(ApiTokens::Table)
                    .col(big_pk_auto(ApiTokens::Id))
                    .col(string_len(ApiTokens::Name, 64))
                    .col(string_len(ApiTokens::Role, 16))
                    .col(string_len_uniq(ApiTokens::TokenHash, 64))
                    .col(string_len(ApiTokens::CreatedBy, 64))
                    .col(timestamp_with_time_zone(ApiTokens::CreatedAt))
                    .col(timestamp_with_time_zone_null(ApiTokens::ExpiresAt))
                    .col(timestamp_with_time_zone_null(ApiTokens::LastUsedAt))
                    .col(timestamp_with_time_zone_null(ApiTokens::RevokedAt))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("api_tokens_name")
                    .table(ApiTokens::Table)
                    .col(ApiTokens::Name)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(ApiTokens::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
enum ApiTokens {
    Table,
    Id,
    Name,
    Role,
    TokenHash,
    CreatedBy,
    CreatedAt,
    ExpiresAt,
    LastUsedAt,
    RevokedAt,
}
