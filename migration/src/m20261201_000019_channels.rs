//! Notification channels: a named destination of one kind (e-mail addresses, a chat robot, a
//! signed webhook). A robot's URL carries its token and a signing secret is a credential: both
//! are sealed like secrets (see `app/src/services/channels.rs`); only the URL's host is kept
//! in the clear, to show which endpoint a channel points at.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Channels::Table)
                    .col(big_pk_auto(Channels::Id))
                    .col(string_len_uniq(Channels::Name, 64))
                    .col(string_len(Channels::Kind, 16))
                    .col(string_len_null(Channels::Host, 255))
                    .col(text_null(Channels::Sealed))
                    .col(text(Channels::Recipients))
                    .col(text_null(Channels::LastAnswer))
                    .col(timestamp_with_time_zone_null(Channels::LastDeliveryAt))
                    .col(timestamp_with_time_zone(Channels::CreatedAt))
                    .col(timestamp_with_time_zone(Channels::UpdatedAt))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(Channels::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
enum Channels {
    Table,
    Id,
    Name,
    Kind,
    Host,
    Sealed,
    Recipients,
    LastAnswer,
    LastDeliveryAt,
    CreatedAt,
    UpdatedAt,
}
