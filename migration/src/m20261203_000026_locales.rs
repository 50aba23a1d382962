//! Languages: `users.locale` is a person's own choice for the console (NULL: follow the
//! browser), `channels.locale` the language a channel's alerts are written in (NULL: the
//! configured `default_locale`). The digest and alert recipients' language is a setting
//! (`mail_locale`), which needs no column.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Users::Table)
                    .add_column(string_len_null(Users::Locale, 35))
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(Channels::Table)
                    .add_column(string_len_null(Channels::Locale, 35))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Channels::Table)
                    .drop_column(Channels::Locale)
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(Users::Table)
                    .drop_column(Users::Locale)
                    .to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden)]
enum Users {
    Table,
    Locale,
}

#[derive(DeriveIden)]
enum Channels {
    Table,
    Locale,
}
