//! Company sign-in (`docs/guide/sign-in.md`).
//!
//! - `users.sign_in`: how the account signs in — `password`, `oidc:NAME` (a provider of the
//!   configuration) or `header` (a trusted proxy's header). Accounts made before are `password`.
//! - `user_identities`: an account's identity at an OpenID provider, keyed by the provider's
//!   issuer and the person's `sub` there — never by a name or an address, which the provider
//!   may hand to someone else.
//! - `oidc_logins`: a sign-in sent to a provider and not yet back: its `state` (hashed), the
//!   browser it was started from (a hash of a cookie), the PKCE verifier, the nonce and the page
//!   to return to. The callback deletes the row it uses, so a replayed callback finds none; rows
//!   live in the database so any instance behind a balancer can take the callback.
//! - `sessions.provider`, `sessions.sign_out_url`: a provider-backed session's provider, and
//!   where signing out sends the browser next to end the session there too (the provider's
//!   end-session endpoint with the ID token the session began with as `id_token_hint`).

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(UserIdentities::Table)
                    .col(big_pk_auto(UserIdentities::Id))
                    .col(big_integer(UserIdentities::UserId))
                    .col(string_len(UserIdentities::Provider, 64))
                    .col(string_len(UserIdentities::Issuer, 255))
                    .col(string_len(UserIdentities::Subject, 255))
                    .col(timestamp_with_time_zone(UserIdentities::CreatedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .from(UserIdentities::Table, UserIdentities::UserId)
                            .to(Users::Table, Users::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .index(
                        Index::create()
                            .name("idx_user_identities_subject")
                            .col(UserIdentities::Issuer)
                            .col(UserIdentities::Subject)
                            .unique(),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(OidcLogins::Table)
                    .col(string_len(OidcLogins::StateHash, 64).primary_key())
                    .col(string_len(OidcLogins::BrowserHash, 64))
                    .col(string_len(OidcLogins::Provider, 64))
                    .col(text(OidcLogins::PkceVerifier))
                    .col(text(OidcLogins::Nonce))
                    .col(text(OidcLogins::Next))
                    .col(timestamp_with_time_zone(OidcLogins::CreatedAt))
                    .to_owned(),
            )
            .await?;
        for (table, mut def) in [
            (
                Users::Table.into_iden(),
                string_len(Users::SignIn, 80).default("password").to_owned(),
            ),
            (Sessions::Table.into_iden(), string_null(Sessions::Provider)),
            (Sessions::Table.into_iden(), text_null(Sessions::SignOutUrl)),
        ] {
            manager
                .alter_table(Table::alter().table(table).add_column(&mut def).to_owned())
                .await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for (table, column) in [
            (
                Sessions::Table.into_iden(),
                Sessions::SignOutUrl.into_iden(),
            ),
            (Sessions::Table.into_iden(), Sessions::Provider.into_iden()),
            (Users::Table.into_iden(), Users::SignIn.into_iden()),
        ] {
            manager
                .alter_table(Table::alter().table(table).drop_column(column).to_owned())
                .await?;
        }
        for table in [
            OidcLogins::Table.into_iden(),
            UserIdentities::Table.into_iden(),
        ] {
            manager
                .drop_table(Table::drop().table(table).to_owned())
                .await?;
        }
        Ok(())
    }
}

#[derive(DeriveIden)]
enum UserIdentities {
    Table,
    Id,
    UserId,
    Provider,
    Issuer,
    Subject,
    CreatedAt,
}

#[derive(DeriveIden)]
enum OidcLogins {
    Table,
    StateHash,
    BrowserHash,
    Provider,
    PkceVerifier,
    Nonce,
    Next,
    CreatedAt,
}

#[derive(DeriveIden)]
enum Users {
    Table,
    Id,
    SignIn,
}

#[derive(DeriveIden)]
enum Sessions {
    Table,
    Provider,
    SignOutUrl,
}
