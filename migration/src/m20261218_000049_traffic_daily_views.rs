//! `traffic_daily_views`: page views per local day, site, part and generated flag — the sums
//! of `traffic_hourly`'s rows of each day, so the figures and the daily chart of a long range
//! read a row per day and part instead of one per hour (24 times fewer). The table starts
//! empty; the server's first start after this migration fills it from `traffic_hourly`
//! (`app/src/services/traffic/rebuild.rs`, `ensure`), in the rollups' zone, before it serves.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(DailyViews::Table)
                    .col(integer(DailyViews::Day))
                    .col(string_len(DailyViews::Site, 255))
                    .col(string_len(DailyViews::Part, 40))
                    .col(boolean(DailyViews::Generated))
                    .col(big_integer(DailyViews::Views))
                    .primary_key(
                        Index::create()
                            .col(DailyViews::Day)
                            .col(DailyViews::Site)
                            .col(DailyViews::Part)
                            .col(DailyViews::Generated),
                    )
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(DailyViews::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
enum DailyViews {
    #[sea_orm(iden = "traffic_daily_views")]
    Table,
    Day,
    Site,
    Part,
    Generated,
    Views,
}
