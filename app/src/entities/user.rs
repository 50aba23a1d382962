use sea_orm::entity::prelude::*;

use crate::domain::account::Role;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "users")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    #[sea_orm(unique)]
    pub username: String,
    /// Argon2id PHC string; never leaves the server.
    pub password_hash: String,
    pub role: Role,
    pub created_at: DateTimeUtc,
    /// Set while an administrator has disabled the account: no sign-in, no session.
    pub disabled_at: Option<DateTimeUtc>,
    /// Set by a password reset: the user must choose a new password before anything else.
    pub must_change_password: bool,
    pub last_sign_in_at: Option<DateTimeUtc>,
    /// The console's language for this person (a catalogue tag); NULL: the browser's.
    pub locale: Option<String>,
    /// How the account signs in: `password`, `oidc:NAME` or `header`
    /// (`crate::domain::sign_in::SignInMethod`). Only `password` accounts have a usable hash.
    pub sign_in: String,
    /// The TOTP seed, sealed (`crate::services::second_factor`); `None`: no second factor.
    pub totp_seed: Option<String>,
    /// When the second factor was confirmed; until then sign-in asks for no code.
    pub totp_enabled_at: Option<DateTimeUtc>,
    /// The time step of the last code accepted (each is taken once).
    pub totp_last_step: Option<i64>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(has_many = "super::session::Entity")]
    Session,
}

impl Related<super::session::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Session.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}

impl Model {
    /// The person as requests see them once signed in.
    pub fn current(self) -> crate::domain::account::CurrentUser {
        crate::domain::account::CurrentUser {
            id: self.id,
            username: self.username,
            role: self.role,
            must_change_password: self.must_change_password,
            locale: self.locale,
            must_add_second_factor: false,
        }
    }

    /// A local account with no second factor turned on.
    pub fn lacks_second_factor(&self) -> bool {
        self.sign_in == "password" && self.totp_enabled_at.is_none()
    }
}
