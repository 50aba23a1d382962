//! Custom events and goals (`app/src/domain/goals.rs`).
//!
//! - `traffic_events`: events reported through `POST /api/collect/event`, counted per minute
//!   and key like page views, kept apart from them so no page-view figure counts one.
//! - `traffic_goals`: a site's goals, each a page pattern or an event name.
//! - `traffic_daily_events`: people's events per day, site and name, with the day's visitors
//!   who sent one (a roaring bitmap of visitor ids, as in `traffic_daily_sets`).
//! - `traffic_daily_goals`: a page goal's conversions per day, with its converting visitors.
//!   Event goals are read from `traffic_daily_events`.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        create_events(manager).await?;
        create_goals(manager).await?;
        manager
            .create_table(
                Table::create()
                    .table(DailyEvents::Table)
                    .col(integer(DailyEvents::Day))
                    .col(string_len(DailyEvents::Site, 255))
                    .col(text(DailyEvents::Name))
                    .col(big_integer(DailyEvents::Count))
                    .col(blob(DailyEvents::Visitors))
                    .primary_key(
                        Index::create()
                            .col(DailyEvents::Day)
                            .col(DailyEvents::Site)
                            .col(DailyEvents::Name),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(DailyGoals::Table)
                    .col(big_integer(DailyGoals::GoalId))
                    .col(integer(DailyGoals::Day))
                    .col(big_integer(DailyGoals::Conversions))
                    .col(blob(DailyGoals::Visitors))
                    .primary_key(Index::create().col(DailyGoals::GoalId).col(DailyGoals::Day))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            DailyGoals::Table.into_iden(),
            DailyEvents::Table.into_iden(),
            Goals::Table.into_iden(),
            Events::Table.into_iden(),
        ] {
            manager
                .drop_table(Table::drop().table(table).to_owned())
                .await?;
        }
        Ok(())
    }
}

async fn create_events(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    manager
        .create_table(
            Table::create()
                .table(Events::Table)
                .col(big_pk_auto(Events::Id))
                .col(string_len(Events::KeyHash, 32))
                .col(timestamp_with_time_zone(Events::StatDate))
                .col(string_len(Events::Site, 255))
                .col(text(Events::Name))
                .col(text(Events::Path))
                .col(text(Events::Props))
                .col(string_len(Events::Ip, 64))
                .col(text(Events::UserAgent))
                .col(boolean(Events::IsBot))
                .col(string_len(Events::Country, 2))
                .col(big_integer(Events::Count))
                .to_owned(),
        )
        .await?;
    for (name, column) in [
        ("uq_traffic_events_key_hash", Events::KeyHash),
        ("idx_traffic_events_stat_date", Events::StatDate),
    ] {
        let mut index = Index::create();
        index.name(name).table(Events::Table).col(column);
        if column == Events::KeyHash {
            index.unique();
        }
        manager.create_index(index.to_owned()).await?;
    }
    Ok(())
}

async fn create_goals(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    manager
        .create_table(
            Table::create()
                .table(Goals::Table)
                .col(big_pk_auto(Goals::Id))
                .col(string_len(Goals::Site, 255))
                .col(string_len(Goals::Name, 400))
                .col(string_len(Goals::Kind, 8))
                .col(text(Goals::Value))
                .col(timestamp_with_time_zone(Goals::CreatedAt))
                .to_owned(),
        )
        .await?;
    manager
        .create_index(
            Index::create()
                .name("uq_traffic_goals_site_name")
                .table(Goals::Table)
                .col(Goals::Site)
                .col(Goals::Name)
                .unique()
                .to_owned(),
        )
        .await
}

#[derive(DeriveIden, Clone, Copy, PartialEq, Eq)]
enum Events {
    #[sea_orm(iden = "traffic_events")]
    Table,
    Id,
    KeyHash,
    StatDate,
    Site,
    Name,
    Path,
    Props,
    Ip,
    UserAgent,
    IsBot,
    Country,
    Count,
}

#[derive(DeriveIden)]
enum Goals {
    #[sea_orm(iden = "traffic_goals")]
    Table,
    Id,
    Site,
    Name,
    Kind,
    Value,
    CreatedAt,
}

#[derive(DeriveIden)]
enum DailyEvents {
    #[sea_orm(iden = "traffic_daily_events")]
    Table,
    Day,
    Site,
    Name,
    Count,
    Visitors,
}

#[derive(DeriveIden)]
enum DailyGoals {
    #[sea_orm(iden = "traffic_daily_goals")]
    Table,
    GoalId,
    Day,
    Conversions,
    Visitors,
}
