use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "sessions")]
pub struct Model {
    /// Hex SHA-256 of the cookie token.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    pub user_id: i64,
    pub created_at: DateTimeUtc,
    pub expires_at: DateTimeUtc,
    /// Updated at most once a minute while the session is used; idle expiry counts from it.
    pub last_seen_at: Option<DateTimeUtc>,
    /// The client's address and browser when the session began, to recognise it in a list.
    pub ip: Option<String>,
    pub user_agent: Option<String>,
    /// The OpenID provider the session began at, and its end-session URL for this session
    /// (with the ID token as `id_token_hint`); unset for a password sign-in.
    pub provider: Option<String>,
    pub sign_out_url: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(
        belongs_to = "super::user::Entity",
        from = "Column::UserId",
        to = "super::user::Column::Id",
        on_delete = "Cascade"
    )]
    User,
}

impl Related<super::user::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::User.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
