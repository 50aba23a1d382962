//! Blocks: unions of whole days of `traffic_daily_sets` and `traffic_daily_pages`, so a 30- or
//! 90-day range reads a dozen rows instead of one per day and part (see
//! `app::services::traffic_blocks`). Derived from the daily rollups and rebuilt from them
//! whenever they change, so nothing here needs a rebuild from the minute rows.
//!
//! - `idx_traffic_daily_pages_path` gains `views`, so a path's total is read from the index.
//! - `traffic_daily_sets.revision` counts the writes to a day's row; a block keeps the sum over
//!   its days, and a block whose sum differs from the days' current one is stale.
//! - `traffic_blocks`: per view (`all`, `h`, `b`, `b:<source>`) and aligned run of days
//!   (`first_day`, `days`, a power of two), the visits, the IP and path bitmaps, and a list of
//!   paths with an upper bound on the views of every path not in it.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(DailySets::Table)
                    .add_column(big_integer(DailySets::Revision).default(0))
                    .to_owned(),
            )
            .await?;
        // The revisions are read for every range; from the table, SQLite would walk each
        // row's bitmaps (the new column comes after them) to reach them.
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
        // A path's total over a range, from the index alone: with `views` in it, the top
        // pages' candidates are summed without a table lookup per path and day.
        manager
            .create_index(
                Index::create()
                    .name("idx_traffic_daily_pages_path_views")
                    .table(DailyPages::Table)
                    .col(DailyPages::View)
                    .col(DailyPages::Path)
                    .col(DailyPages::Day)
                    .col(DailyPages::Views)
                    .to_owned(),
            )
            .await?;
        manager
            .drop_index(
                Index::drop()
                    .name("idx_traffic_daily_pages_path")
                    .table(DailyPages::Table)
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(Blocks::Table)
                    .col(string_len(Blocks::View, 40))
                    .col(integer(Blocks::FirstDay))
                    .col(integer(Blocks::Days))
                    .col(big_integer(Blocks::Revision))
                    .col(big_integer(Blocks::Visits))
                    // No path missing from `top` has more views than this in the block.
                    .col(big_integer(Blocks::TopBound))
                    // JSON: [[path, at most this many views], …], most first.
                    .col(text(Blocks::Top))
                    // The bitmaps last: SQLite walks a large value's overflow pages to reach
                    // the columns after it.
                    .col(blob(Blocks::Ips))
                    .col(blob(Blocks::Paths))
                    .primary_key(
                        Index::create()
                            .col(Blocks::View)
                            .col(Blocks::FirstDay)
                            .col(Blocks::Days),
                    )
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(Blocks::Table).to_owned())
            .await?;
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
        manager
            .drop_index(
                Index::drop()
                    .name("idx_traffic_daily_pages_path_views")
                    .table(DailyPages::Table)
                    .to_owned(),
            )
            .await?;
        manager
            .drop_index(
                Index::drop()
                    .name("idx_traffic_daily_sets_revision")
                    .table(DailySets::Table)
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(DailySets::Table)
                    .drop_column(DailySets::Revision)
                    .to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden)]
enum DailySets {
    #[sea_orm(iden = "traffic_daily_sets")]
    Table,
    Day,
    Revision,
}

#[derive(DeriveIden)]
enum DailyPages {
    #[sea_orm(iden = "traffic_daily_pages")]
    Table,
    View,
    Path,
    Day,
    Views,
}

#[derive(DeriveIden)]
enum Blocks {
    #[sea_orm(iden = "traffic_blocks")]
    Table,
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
