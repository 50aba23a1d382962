//! Named secrets, encrypted at rest: each value is sealed with XChaCha20-Poly1305 under the
//! key in `secret_key_file`, its random nonce beside it. The database alone never holds a
//! value in the clear.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Secrets::Table)
                    .col(big_pk_auto(Secrets::Id))
                    .col(string_len_uniq(Secrets::Name, 64))
                    .col(text(Secrets::Nonce))
                    .col(text(Secrets::Ciphertext))
                    .col(timestamp_with_time_zone(Secrets::CreatedAt))
                    .col(timestamp_with_time_zone(Secrets::UpdatedAt))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(Secrets::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
enum Secrets {
    Table,
    Id,
    Name,
    Nonce,
    Ciphertext,
    CreatedAt,
    UpdatedAt,
}
