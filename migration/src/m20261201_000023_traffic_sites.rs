//! Sites kept apart, and what people expect next to the figures.
//!
//! - `traffic_sites`: the hosts whose pages `/api/collect` counts, each with the addresses whose
//!   visits it does not count (`excluded`: IPs and CIDR blocks, one per line). The console's
//!   own host (that of `public_url`) is counted without a row; a row for it only holds its
//!   exclusions.
//! - `traffic_statistics` gains `site` (the host), `ref_domain` (the referrer's domain, empty
//!   for a direct visit, NULL for a step within the site), and `browser`, `os`, `device`
//!   (people's; `device` is `bot` for bots). Rows from before have an empty `device`: the server
//!   describes them at its next start, placing them under the console's host, where every one
//!   of them was counted.
//! - The rollups are derived data, so they are dropped and made again with a `site` column
//!   (`traffic_blocks` keys it as `*` for all sites), and `traffic_daily_facts` holds people's
//!   page views per day, site, kind (`r` referrer domain, `l` landing page, `b` browser, `o`
//!   operating system, `d` device type) and value. The server rebuilds them from the minute
//!   rows at its next start (their layout changed).

use sea_orm_migration::{prelude::*, schema::*};

use crate::{
    m20261130_000010_traffic_rollups as rollups, m20261130_000013_traffic_blocks as blocks,
};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    /// In one transaction on SQLite too: its tables and indexes are dropped and made again
    /// under the same names, and a pooled connection that had read the schema before the drop
    /// would refuse to create them ("already exists"). One connection sees its own changes,
    /// and a failure leaves the earlier schema whole.
    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }

    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Sites::Table)
                    .col(big_pk_auto(Sites::Id))
                    .col(string_len(Sites::Host, 255).unique_key())
                    .col(text(Sites::Excluded).default(""))
                    .col(timestamp_with_time_zone(Sites::CreatedAt))
                    .to_owned(),
            )
            .await?;
        for column in [
            string_len(Rows::Site, 255).default("").to_owned(),
            ColumnDef::new(Rows::RefDomain)
                .string_len(255)
                .null()
                .to_owned(),
            string_len(Rows::Browser, 64).default("").to_owned(),
            string_len(Rows::Os, 64).default("").to_owned(),
            string_len(Rows::Device, 16).default("").to_owned(),
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Rows::Table)
                        .add_column(column)
                        .to_owned(),
                )
                .await?;
        }
        manager
            .create_index(
                Index::create()
                    .name("idx_traffic_statistics_site_date")
                    .table(Rows::Table)
                    .col(Rows::Site)
                    .col(Rows::StatDate)
                    .to_owned(),
            )
            .await?;

        for table in [
            Blocks::Table.into_iden(),
            Ids::Table.into_iden(),
            DailySets::Table.into_iden(),
            DailyPages::Table.into_iden(),
            Hourly::Table.into_iden(),
        ] {
            manager
                .drop_table(Table::drop().table(table).to_owned())
                .await?;
        }
        create_rollups(manager).await?;
        // The rollups are empty now: make the next start rebuild them.
        manager
            .exec_stmt(
                Query::delete()
                    .from_table(Settings::Table)
                    .and_where(Expr::col(Settings::Key).eq("traffic.rollup_layout"))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            Facts::Table.into_iden(),
            Blocks::Table.into_iden(),
            Ids::Table.into_iden(),
            DailySets::Table.into_iden(),
            DailyPages::Table.into_iden(),
            Hourly::Table.into_iden(),
        ] {
            manager
                .drop_table(Table::drop().table(table).to_owned())
                .await?;
        }
        // The earlier schema, empty: the server rebuilds it at start.
        rollups::Migration.up(manager).await?;
        blocks::Migration.up(manager).await?;
        manager
            .drop_index(
                Index::drop()
                    .name("idx_traffic_statistics_site_date")
                    .table(Rows::Table)
                    .to_owned(),
            )
            .await?;
        for column in [
            Rows::Site,
            Rows::RefDomain,
            Rows::Browser,
            Rows::Os,
            Rows::Device,
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Rows::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        manager
            .exec_stmt(
                Query::delete()
                    .from_table(Settings::Table)
                    .and_where(Expr::col(Settings::Key).eq("traffic.rollup_layout"))
                    .to_owned(),
            )
            .await?;
        manager
            .drop_table(Table::drop().table(Sites::Table).to_owned())
            .await
    }
}

async fn create_rollups(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    create_hourly(manager).await?;
    create_daily_pages(manager).await?;
    create_daily_sets(manager).await?;
    create_ids(manager).await?;
    create_blocks(manager).await?;
    create_facts(manager).await
}

/// The views per hour, site and part.
async fn create_hourly(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    manager
        .create_table(
            Table::create()
                .table(Hourly::Table)
                .col(big_integer(Hourly::Hour))
                .col(string_len(Hourly::Site, 255))
                .col(string_len(Hourly::Part, 40))
                .col(boolean(Hourly::Generated))
                .col(big_integer(Hourly::Views))
                .primary_key(
                    Index::create()
                        .col(Hourly::Hour)
                        .col(Hourly::Site)
                        .col(Hourly::Part)
                        .col(Hourly::Generated),
                )
                .to_owned(),
        )
        .await?;
    Ok(())
}

/// The views per day and page, with the indexes the top pages read.
async fn create_daily_pages(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    // `path` is the page's key: the path for the console's pages, host and path for a site's,
    // so one key never names two sites' pages.
    manager
        .create_table(
            Table::create()
                .table(DailyPages::Table)
                .col(integer(DailyPages::Day))
                .col(string_len(DailyPages::View, 40))
                .col(text(DailyPages::Path))
                .col(string_len(DailyPages::Site, 255))
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
    for (name, columns) in [
        (
            "idx_traffic_daily_pages_rank",
            vec![DailyPages::View, DailyPages::Day, DailyPages::Views],
        ),
        (
            "idx_traffic_daily_pages_site_rank",
            vec![
                DailyPages::Site,
                DailyPages::View,
                DailyPages::Day,
                DailyPages::Views,
            ],
        ),
        (
            "idx_traffic_daily_pages_path_views",
            vec![
                DailyPages::View,
                DailyPages::Path,
                DailyPages::Day,
                DailyPages::Views,
            ],
        ),
    ] {
        let mut index = Index::create();
        index.name(name).table(DailyPages::Table);
        for column in columns {
            index.col(column);
        }
        manager.create_index(index.to_owned()).await?;
    }
    Ok(())
}

/// The distinct visitors, addresses and pages per day, site and part.
async fn create_daily_sets(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    manager
        .create_table(
            Table::create()
                .table(DailySets::Table)
                .col(integer(DailySets::Day))
                .col(string_len(DailySets::Site, 255))
                .col(string_len(DailySets::Part, 40))
                .col(big_integer(DailySets::Visits))
                .col(big_integer(DailySets::Revision).default(0))
                .col(blob(DailySets::Ips))
                .col(blob(DailySets::Visitors))
                .col(blob(DailySets::Paths))
                .primary_key(
                    Index::create()
                        .col(DailySets::Day)
                        .col(DailySets::Site)
                        .col(DailySets::Part),
                )
                .to_owned(),
        )
        .await?;
    manager
        .create_index(
            Index::create()
                .name("idx_traffic_daily_sets_revision")
                .table(DailySets::Table)
                .col(DailySets::Day)
                .col(DailySets::Revision)
                .to_owned(),
        )
        .await?;
    Ok(())
}

/// The ids the sets number addresses, visitors and pages by.
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
        .await?;
    Ok(())
}

/// Several days' sets merged, so a long range reads a few rows.
async fn create_blocks(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    manager
        .create_table(
            Table::create()
                .table(Blocks::Table)
                .col(string_len(Blocks::Site, 255))
                .col(string_len(Blocks::View, 40))
                .col(integer(Blocks::FirstDay))
                .col(integer(Blocks::Days))
                .col(big_integer(Blocks::Revision))
                .col(big_integer(Blocks::Visits))
                .col(big_integer(Blocks::TopBound))
                .col(text(Blocks::Top))
                // The bitmaps last: SQLite walks a large value's overflow pages to reach the
                // columns after it.
                .col(blob(Blocks::Ips))
                .col(blob(Blocks::Paths))
                .primary_key(
                    Index::create()
                        .col(Blocks::Site)
                        .col(Blocks::View)
                        .col(Blocks::FirstDay)
                        .col(Blocks::Days),
                )
                .to_owned(),
        )
        .await?;
    Ok(())
}

/// The views per day, site and fact (a referrer, a country, a browser).
async fn create_facts(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    manager
        .create_table(
            Table::create()
                .table(Facts::Table)
                .col(integer(Facts::Day))
                .col(string_len(Facts::Site, 255))
                .col(string_len(Facts::Kind, 1))
                .col(text(Facts::Value))
                .col(big_integer(Facts::Views))
                .primary_key(
                    Index::create()
                        .col(Facts::Day)
                        .col(Facts::Site)
                        .col(Facts::Kind)
                        .col(Facts::Value),
                )
                .to_owned(),
        )
        .await?;
    manager
        .create_index(
            Index::create()
                .name("idx_traffic_daily_facts_kind")
                .table(Facts::Table)
                .col(Facts::Kind)
                .col(Facts::Day)
                .to_owned(),
        )
        .await
}

#[derive(DeriveIden)]
enum Sites {
    #[sea_orm(iden = "traffic_sites")]
    Table,
    Id,
    Host,
    Excluded,
    CreatedAt,
}

#[derive(DeriveIden)]
enum Settings {
    Table,
    Key,
}

#[derive(DeriveIden)]
enum Rows {
    #[sea_orm(iden = "traffic_statistics")]
    Table,
    StatDate,
    Site,
    RefDomain,
    Browser,
    Os,
    Device,
}

#[derive(DeriveIden)]
enum Hourly {
    #[sea_orm(iden = "traffic_hourly")]
    Table,
    Hour,
    Site,
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
    Site,
    Views,
}

#[derive(DeriveIden)]
enum DailySets {
    #[sea_orm(iden = "traffic_daily_sets")]
    Table,
    Day,
    Site,
    Part,
    Visits,
    Revision,
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

#[derive(DeriveIden)]
enum Blocks {
    #[sea_orm(iden = "traffic_blocks")]
    Table,
    Site,
    View,
    FirstDay,
    Days,
    Revision,
    Visits,
    Ips,
    Paths,
    Top,
    TopBound,
}

#[derive(DeriveIden)]
enum Facts {
    #[sea_orm(iden = "traffic_daily_facts")]
    Table,
    Day,
    Site,
    Kind,
    Value,
    Views,
}
