//! Rollups that keep the Traffic page fast over 90 days (`docs/ARCHITECTURE.md` §5's figures
//! without scanning every minute row). They are derived data: `traffic_statistics` stays the record,
//! and the rollups can be rebuilt from it at any time (the server does so when the configured
//! time zone changes, and after generated traffic is removed).
//!
//! Days and hours are the configured zone's, stored as integers: `hour` is the Unix second at
//! which a local hour starts, `day` a local date as days from the Common Era.
//!
//! - `traffic_hourly`: page views per local hour and part (`h` for people, `b:<source>` for
//!   bots) and whether they were generated — every additive figure and the charts.
//! - `traffic_daily_pages`: page views per local day, view (`all`, `h`, `b`, `b:<source>`) and
//!   path — the top pages.
//! - `traffic_daily_sets`: per local day and part, the sets of IPs, visitors (IP and user agent)
//!   and paths as serialized roaring bitmaps of ids — the distinct counts, exactly.
//! - `traffic_ids`: the ids those bitmaps hold, one per (kind, 64-bit digest of the value), with
//!   the last day each was seen so retention can drop them.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        create_hourly(manager).await?;
        create_daily_pages(manager).await?;
        create_daily_sets(manager).await?;
        create_ids(manager).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            Ids::Table.into_iden(),
            DailySets::Table.into_iden(),
            DailyPages::Table.into_iden(),
            Hourly::Table.into_iden(),
        ] {
            manager
                .drop_table(Table::drop().table(table).to_owned())
                .await?;
        }
        Ok(())
    }
}

/// The Hourly table.
async fn create_hourly(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    manager
        .create_table(
            Table::create()
                .table(Hourly::Table)
                .col(big_integer(Hourly::Hour))
                .col(string_len(Hourly::Part, 40))
                .col(boolean(Hourly::Generated))
                .col(big_integer(Hourly::Views))
                .primary_key(
                    Index::create()
                        .col(Hourly::Hour)
                        .col(Hourly::Part)
                        .col(Hourly::Generated),
                )
                .to_owned(),
        )
        .await?;
    Ok(())
}

/// The DailyPages table and its indexes.
async fn create_daily_pages(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    manager
        .create_table(
            Table::create()
                .table(DailyPages::Table)
                .col(integer(DailyPages::Day))
                .col(string_len(DailyPages::View, 40))
                .col(text(DailyPages::Path))
                .col(big_integer(DailyPages::Views))
                .primary_key(
                    Index::create()
                        .col(DailyPages::Day)
                        .col(DailyPages::View)
                        .col(DailyPages::Path),
                )
                .to_owned(),
        )
        .await?;
    // A day's most viewed paths, read from the top of this index.
    manager
        .create_index(
            Index::create()
                .name("idx_traffic_daily_pages_rank")
                .table(DailyPages::Table)
                .col(DailyPages::View)
                .col(DailyPages::Day)
                .col(DailyPages::Views)
                .to_owned(),
        )
        .await?;
    // One path's total over a range.
    manager
        .create_index(
            Index::create()
                .name("idx_traffic_daily_pages_path")
                .table(DailyPages::Table)
                .col(DailyPages::View)
                .col(DailyPages::Path)
                .col(DailyPages::Day)
                .to_owned(),
        )
        .await?;
    Ok(())
}

/// The DailySets table.
async fn create_daily_sets(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    manager
        .create_table(
            Table::create()
                .table(DailySets::Table)
                .col(integer(DailySets::Day))
                .col(string_len(DailySets::Part, 40))
                .col(big_integer(DailySets::Visits))
                .col(blob(DailySets::Ips))
                .col(blob(DailySets::Visitors))
                .col(blob(DailySets::Paths))
                .primary_key(Index::create().col(DailySets::Day).col(DailySets::Part))
                .to_owned(),
        )
        .await?;
    Ok(())
}

/// The Ids table and its indexes.
async fn create_ids(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    manager
        .create_table(
            Table::create()
                .table(Ids::Table)
                .col(big_pk_auto(Ids::Id))
                .col(small_integer(Ids::Kind))
                .col(big_integer(Ids::Digest))
                .col(integer(Ids::LastDay))
                .to_owned(),
        )
        .await?;
    manager
        .create_index(
            Index::create()
                .name("uq_traffic_ids_kind_digest")
                .table(Ids::Table)
                .col(Ids::Kind)
                .col(Ids::Digest)
                .unique()
                .to_owned(),
        )
        .await?;
    manager
        .create_index(
            Index::create()
                .name("idx_traffic_ids_last_day")
                .table(Ids::Table)
                .col(Ids::LastDay)
                .to_owned(),
        )
        .await
}

#[derive(DeriveIden)]
enum Hourly {
    #[sea_orm(iden = "traffic_hourly")]
    Table,
    Hour,
    Part,
    Generated,
    Views,
}

#[derive(DeriveIden)]
enum DailyPages {
    #[sea_orm(iden = "traffic_daily_pages")]
    Table,
    Day,
    View,
    Path,
    Views,
}

#[derive(DeriveIden)]
enum DailySets {
    #[sea_orm(iden = "traffic_daily_sets")]
    Table,
    Day,
    Part,
    Visits,
    Ips,
    Visitors,
    Paths,
}

#[derive(DeriveIden)]
enum Ids {
    #[sea_orm(iden = "traffic_ids")]
    Table,
    Id,
    Kind,
    Digest,
    LastDay,
}
