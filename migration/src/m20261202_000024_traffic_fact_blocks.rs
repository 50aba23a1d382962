//! People's lists kept in blocks, like the top pages, so a 90-day range reads a dozen short
//! lists instead of summing every day's referrers and landing pages.
//!
//! - `traffic_blocks` gains `facts`: for the people's view (`h`), each kind's most viewed
//!   values over the block with the bound for the rest (JSON); NULL for other views. Blocks are
//!   derived data, so the table is made again with the column placed before the bitmaps (SQLite
//!   walks a large value's overflow pages to reach the columns after it), empty; the server
//!   builds blocks again on first use and on its daily warm-up.
//! - `idx_traffic_daily_facts_value` (kind, value, day, site, views): the exact totals of a few
//!   candidate values over a range are read from the index alone.
//! - `idx_traffic_daily_facts_kind` (kind, day) becomes `idx_traffic_daily_facts_day` (kind,
//!   day, views, value, site): a day's most viewed values are its first entries read backwards,
//!   and a range's sums read the index alone. (With only the index above covering, SQLite
//!   answered one day's list by walking every day of the kind in `value` order: a 90-day table
//!   made "today" cost as much as 90 days.)

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    /// In one transaction on SQLite too, for the reason given in
    /// `m20261201_000023_traffic_sites.rs`: a table is dropped and made again under its name.
    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }

    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        blocks(manager, true).await?;
        manager
            .drop_index(
                Index::drop()
                    .name("idx_traffic_daily_facts_kind")
                    .table(Facts::Table)
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("idx_traffic_daily_facts_day")
                    .table(Facts::Table)
                    .col(Facts::Kind)
                    .col(Facts::Day)
                    .col(Facts::Views)
                    .col(Facts::Value)
                    .col(Facts::Site)
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("idx_traffic_daily_facts_value")
                    .table(Facts::Table)
                    .col(Facts::Kind)
                    .col(Facts::Value)
                    .col(Facts::Day)
                    .col(Facts::Site)
                    .col(Facts::Views)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(
                Index::drop()
                    .name("idx_traffic_daily_facts_value")
                    .table(Facts::Table)
                    .to_owned(),
            )
            .await?;
        manager
            .drop_index(
                Index::drop()
                    .name("idx_traffic_daily_facts_day")
                    .table(Facts::Table)
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
            .await?;
        blocks(manager, false).await
    }
}

/// Makes `traffic_blocks` again, empty, with or without `facts`.
async fn blocks(manager: &SchemaManager<'_>, with_facts: bool) -> Result<(), DbErr> {
    manager
        .drop_table(Table::drop().table(Blocks::Table).to_owned())
        .await?;
    let mut table = Table::create();
    table
        .table(Blocks::Table)
        .col(string_len(Blocks::Site, 255))
        .col(string_len(Blocks::View, 40))
        .col(integer(Blocks::FirstDay))
        .col(integer(Blocks::Days))
        .col(big_integer(Blocks::Revision))
        .col(big_integer(Blocks::Visits))
        .col(big_integer(Blocks::TopBound))
        .col(text(Blocks::Top));
    if with_facts {
        table.col(text_null(Blocks::Facts));
    }
    table
        // The bitmaps last: SQLite walks a large value's overflow pages to reach the columns
        // after it.
        .col(blob(Blocks::Ips))
        .col(blob(Blocks::Paths))
        .primary_key(
            Index::create()
                .col(Blocks::Site)
                .col(Blocks::View)
                .col(Blocks::FirstDay)
                .col(Blocks::Days),
        );
    manager.create_table(table.to_owned()).await
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
    TopBound,
    Top,
    Facts,
    Ips,
    Paths,
}

#[derive(DeriveIden)]
enum Facts {
    #[sea_orm(iden = "traffic_daily_facts")]
    Table,
    Kind,
    Value,
    Day,
    Site,
    Views,
}
