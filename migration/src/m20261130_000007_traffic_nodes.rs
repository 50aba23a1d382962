//! Front-end traffic (`docs/ARCHITECTURE.md` §5), the registry of running instances, and the
//! commands an operator sends them (`bulwark traffic flush` must reach every server's
//! in-memory buffer).
//!
//! - `traffic_statistics`: one row per (minute, path, method, ip, user agent, referer, locale)
//!   with a count that flushes add to. The key's text columns can be long, so uniqueness is on
//!   `key_hash`, a digest of all of them: a unique index over the raw columns would exceed
//!   PostgreSQL's index row limit for long user agents.
//! - `settings`: small named values the application owns (the key that hashes IPs, …).
//! - `nodes`: every `bulwark serve` process, with its heartbeat.
//! - `node_commands` and `node_command_results`: a request to all live nodes, and each node's
//!   answer, so a CLI on any machine can make every server act and report.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        create_traffic(manager).await?;
        create_settings(manager).await?;
        create_nodes(manager).await?;
        create_node_commands(manager).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            NodeCommandResults::Table.into_iden(),
            NodeCommands::Table.into_iden(),
            Nodes::Table.into_iden(),
            Settings::Table.into_iden(),
            Traffic::Table.into_iden(),
        ] {
            manager
                .drop_table(Table::drop().table(table).to_owned())
                .await?;
        }
        Ok(())
    }
}

/// The Traffic table and its indexes.
async fn create_traffic(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    manager
        .create_table(
            Table::create()
                .table(Traffic::Table)
                .col(big_pk_auto(Traffic::Id))
                .col(string_len(Traffic::KeyHash, 32))
                // The minute the hits fell in (seconds are zero).
                .col(timestamp_with_time_zone(Traffic::StatDate))
                .col(text(Traffic::Path))
                .col(string_len(Traffic::Method, 16))
                .col(string_len(Traffic::Ip, 64))
                .col(text(Traffic::UserAgent))
                .col(text(Traffic::Referer))
                .col(string_len(Traffic::Locale, 35))
                .col(boolean(Traffic::IsBot))
                .col(string_len_null(Traffic::SpiderSource, 32))
                .col(big_integer(Traffic::Count))
                .to_owned(),
        )
        .await?;
    manager
        .create_index(
            Index::create()
                .name("uq_traffic_statistics_key_hash")
                .table(Traffic::Table)
                .col(Traffic::KeyHash)
                .unique()
                .to_owned(),
        )
        .await?;
    manager
        .create_index(
            Index::create()
                .name("idx_traffic_statistics_stat_date")
                .table(Traffic::Table)
                .col(Traffic::StatDate)
                .to_owned(),
        )
        .await?;
    Ok(())
}

/// The Settings table.
async fn create_settings(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    manager
        .create_table(
            Table::create()
                .table(Settings::Table)
                .col(string_len(Settings::Key, 64).primary_key())
                .col(text(Settings::Value))
                .col(timestamp_with_time_zone(Settings::UpdatedAt))
                .to_owned(),
        )
        .await?;
    Ok(())
}

/// The Nodes table.
async fn create_nodes(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    manager
        .create_table(
            Table::create()
                .table(Nodes::Table)
                .col(string_len(Nodes::NodeId, 128).primary_key())
                .col(string_len(Nodes::Host, 255))
                .col(integer(Nodes::Pid))
                .col(string_len(Nodes::Version, 32))
                .col(string_len(Nodes::Addr, 64))
                .col(timestamp_with_time_zone(Nodes::StartedAt))
                .col(timestamp_with_time_zone(Nodes::HeartbeatAt))
                .col(timestamp_with_time_zone_null(Nodes::StoppedAt))
                .to_owned(),
        )
        .await?;
    Ok(())
}

/// The NodeCommands table, and the NodeCommandResults table each node answers in.
async fn create_node_commands(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    manager
        .create_table(
            Table::create()
                .table(NodeCommands::Table)
                .col(big_pk_auto(NodeCommands::Id))
                .col(string_len(NodeCommands::Command, 32))
                .col(string_len(NodeCommands::RequestedBy, 128))
                .col(timestamp_with_time_zone(NodeCommands::RequestedAt))
                .to_owned(),
        )
        .await?;
    manager
        .create_table(
            Table::create()
                .table(NodeCommandResults::Table)
                .col(big_integer(NodeCommandResults::CommandId))
                .col(string_len(NodeCommandResults::NodeId, 128))
                .col(timestamp_with_time_zone(NodeCommandResults::FinishedAt))
                .col(boolean(NodeCommandResults::Ok))
                // What the node did, in its own words (rows written, or the error).
                .col(text(NodeCommandResults::Detail))
                .primary_key(
                    Index::create()
                        .col(NodeCommandResults::CommandId)
                        .col(NodeCommandResults::NodeId),
                )
                .foreign_key(
                    ForeignKey::create()
                        .from(NodeCommandResults::Table, NodeCommandResults::CommandId)
                        .to(NodeCommands::Table, NodeCommands::Id)
                        .on_delete(ForeignKeyAction::Cascade),
                )
                .to_owned(),
        )
        .await
}

#[derive(DeriveIden)]
enum Traffic {
    #[sea_orm(iden = "traffic_statistics")]
    Table,
    Id,
    KeyHash,
    StatDate,
    Path,
    Method,
    Ip,
    UserAgent,
    Referer,
    Locale,
    IsBot,
    SpiderSource,
    Count,
}

#[derive(DeriveIden)]
enum Settings {
    Table,
    Key,
    Value,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum Nodes {
    Table,
    NodeId,
    Host,
    Pid,
    Version,
    Addr,
    StartedAt,
    HeartbeatAt,
    StoppedAt,
}

#[derive(DeriveIden)]
enum NodeCommands {
    Table,
    Id,
    Command,
    RequestedBy,
    RequestedAt,
}

#[derive(DeriveIden)]
enum NodeCommandResults {
    Table,
    CommandId,
    NodeId,
    FinishedAt,
    Ok,
    Detail,
}
