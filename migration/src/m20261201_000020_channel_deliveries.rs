//! Channels in use: a job names the channels its alerts and its escalations go to, and every
//! chat or webhook message is a row of `channel_deliveries` before it is sent (the mail outbox's
//! pattern: a row per (event, channel), unique on its dedupe key, leased to one sender).
//!
//! A channel is delivered by one sender at a time (`channels.claimed_by` / `claimed_until`), so
//! the platform's rate limit is kept in one place: `sent_window` holds the times of its latest
//! sends (JSON), and messages held back by the limit are marked `held` and sent together as one
//! summary when the window frees (`merged_into` points at that summary).

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // SQLite adds one column per ALTER TABLE.
        for column in [Jobs::AlertChannels, Jobs::EscalateChannels] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Jobs::Table)
                        .add_column(text(column).default("[]"))
                        .to_owned(),
                )
                .await?;
        }
        for column in [
            ColumnDef::new(Channels::ClaimedBy)
                .string_len(128)
                .null()
                .to_owned(),
            ColumnDef::new(Channels::ClaimedUntil)
                .timestamp_with_time_zone()
                .null()
                .to_owned(),
            text(Channels::SentWindow).default("[]").to_owned(),
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Channels::Table)
                        .add_column(column)
                        .to_owned(),
                )
                .await?;
        }
        manager
            .create_table(
                Table::create()
                    .table(ChannelDeliveries::Table)
                    .col(big_pk_auto(ChannelDeliveries::Id))
                    .col(string_len_uniq(ChannelDeliveries::DedupeKey, 255))
                    .col(big_integer(ChannelDeliveries::ChannelId))
                    .col(string_len(ChannelDeliveries::ChannelName, 64))
                    .col(string_len(ChannelDeliveries::Kind, 32))
                    .col(big_integer_null(ChannelDeliveries::JobId))
                    .col(big_integer_null(ChannelDeliveries::RunId))
                    .col(text(ChannelDeliveries::Title))
                    .col(text(ChannelDeliveries::Event))
                    .col(string_len(ChannelDeliveries::Status, 16))
                    .col(boolean(ChannelDeliveries::Held).default(false))
                    .col(big_integer_null(ChannelDeliveries::MergedInto))
                    .col(integer(ChannelDeliveries::Attempts).default(0))
                    .col(timestamp_with_time_zone(ChannelDeliveries::NextAttemptAt))
                    .col(text_null(ChannelDeliveries::Answer))
                    .col(timestamp_with_time_zone(ChannelDeliveries::CreatedAt))
                    .col(timestamp_with_time_zone_null(ChannelDeliveries::SentAt))
                    .to_owned(),
            )
            .await?;
        // What a sender asks: a channel's due rows, oldest first.
        manager
            .create_index(
                Index::create()
                    .name("channel_deliveries_due")
                    .table(ChannelDeliveries::Table)
                    .col(ChannelDeliveries::Status)
                    .col(ChannelDeliveries::ChannelId)
                    .col(ChannelDeliveries::NextAttemptAt)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(ChannelDeliveries::Table).to_owned())
            .await?;
        for column in [
            Channels::ClaimedBy,
            Channels::ClaimedUntil,
            Channels::SentWindow,
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Channels::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        for column in [Jobs::AlertChannels, Jobs::EscalateChannels] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Jobs::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }
}

#[derive(DeriveIden)]
enum Jobs {
    Table,
    AlertChannels,
    EscalateChannels,
}

#[derive(DeriveIden)]
enum Channels {
    Table,
    ClaimedBy,
    ClaimedUntil,
    SentWindow,
}

#[derive(DeriveIden)]
enum ChannelDeliveries {
    Table,
    Id,
    DedupeKey,
    ChannelId,
    ChannelName,
    Kind,
    JobId,
    RunId,
    Title,
    Event,
    Status,
    Held,
    MergedInto,
    Attempts,
    NextAttemptAt,
    Answer,
    CreatedAt,
    SentAt,
}
