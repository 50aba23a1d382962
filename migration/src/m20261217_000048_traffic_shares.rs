//! Share links (`app/src/services/traffic/shares.rs`): one read-only public link per site at
//! most, known by the hash of its token (the link holds the token itself), with an optional
//! password (its Argon2 hash) and expiry. Revoking deletes the row.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Shares::Table)
                    .col(big_pk_auto(Shares::Id))
                    .col(string_len_uniq(Shares::Site, 255))
                    .col(string_len_uniq(Shares::TokenHash, 64))
                    .col(text_null(Shares::PasswordHash))
                    .col(timestamp_with_time_zone_null(Shares::ExpiresAt))
                    .col(string_len(Shares::CreatedBy, 255))
                    .col(timestamp_with_time_zone(Shares::CreatedAt))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(Shares::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
enum Shares {
    #[sea_orm(iden = "traffic_shares")]
    Table,
    Id,
    Site,
    TokenHash,
    PasswordHash,
    ExpiresAt,
    CreatedBy,
    CreatedAt,
}
