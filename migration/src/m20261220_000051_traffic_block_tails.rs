//! `traffic_block_tails`: for the long-tailed facts the Traffic page sums whole (kind `n`,
//! pages not found; kind `a`, what AI crawlers fetched), every value's views over an aligned
//! block of settled days, one compressed list per site (or `*` for all sites), kind and block
//! (`app/src/services/traffic/tails.rs`). A 90-day range then adds half a dozen stored lists
//! instead of grouping every day's rows. Derived from `traffic_daily_facts` and checked
//! against the days' revisions like `traffic_blocks`, so the table starts empty and fills on
//! first use.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Tails::Table)
                    .col(string_len(Tails::Site, 255))
                    .col(string_len(Tails::Kind, 8))
                    .col(integer(Tails::FirstDay))
                    .col(integer(Tails::Days))
                    .col(big_integer(Tails::Revision))
                    // zstd of the (value, views) list; the format is the module's above.
                    .col(blob(Tails::Sums))
                    .primary_key(
                        Index::create()
                            .col(Tails::Site)
                            .col(Tails::Kind)
                            .col(Tails::FirstDay)
                            .col(Tails::Days),
                    )
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(Tails::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
enum Tails {
    #[sea_orm(iden = "traffic_block_tails")]
    Table,
    Site,
    Kind,
    FirstDay,
    Days,
    Revision,
    Sums,
}
