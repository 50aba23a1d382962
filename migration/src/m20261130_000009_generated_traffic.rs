//! Synthetic traffic (`bulwark traffic generate`, the demo) is marked, so the dashboard can say
//! so and `traffic generate --remove` can take it out without touching real hits.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Traffic::Table)
                    .add_column(boolean(Traffic::Generated).default(false))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Traffic::Table)
                    .drop_column(Traffic::Generated)
                    .to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden)]
enum Traffic {
    #[sea_orm(iden = "traffic_statistics")]
    Table,
    Generated,
}
