//! A second factor for local accounts (`app/src/services/second_factor.rs`).
//!
//! - `users.totp_seed`: the TOTP seed, sealed with the secret key (listed in
//!   `app/src/services/sealed.rs`, so `bulwark secret rekey` covers it); set at enrolment.
//! - `users.totp_enabled_at`: when the person confirmed a first code; until then the seed is
//!   an enrolment under way and sign-in asks for no code.
//! - `users.totp_last_step`: the time step of the last code accepted: a code is taken once.
//! - `recovery_codes`: the one-time codes shown once at enrolment, as SHA-256 hashes (each is
//!   random and long: no slow hash is needed); `used_at` once spent.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(RecoveryCodes::Table)
                    .col(big_pk_auto(RecoveryCodes::Id))
                    .col(big_integer(RecoveryCodes::UserId))
                    .col(string_len(RecoveryCodes::CodeHash, 64))
                    .col(timestamp_with_time_zone_null(RecoveryCodes::UsedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .from(RecoveryCodes::Table, RecoveryCodes::UserId)
                            .to(Users::Table, Users::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("idx_recovery_codes_user")
                    .table(RecoveryCodes::Table)
                    .col(RecoveryCodes::UserId)
                    .col(RecoveryCodes::CodeHash)
                    .to_owned(),
            )
            .await?;
        for mut def in [
            text_null(Users::TotpSeed),
            timestamp_with_time_zone_null(Users::TotpEnabledAt),
            big_integer_null(Users::TotpLastStep),
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Users::Table)
                        .add_column(&mut def)
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in [Users::TotpLastStep, Users::TotpEnabledAt, Users::TotpSeed] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Users::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        manager
            .drop_table(Table::drop().table(RecoveryCodes::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
enum RecoveryCodes {
    Table,
    Id,
    UserId,
    CodeHash,
    UsedAt,
}

#[derive(DeriveIden)]
enum Users {
    Table,
    Id,
    TotpSeed,
    TotpEnabledAt,
    TotpLastStep,
}
