use sea_orm::entity::prelude::*;

use crate::domain::mail::MailStatus;

/// A mail to send, or sent. Column meanings are in the migration that creates the table.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "mail_outbox")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    #[sea_orm(unique)]
    pub dedupe_key: String,
    pub kind: String,
    pub job_id: Option<i64>,
    pub run_id: Option<i64>,
    pub recipients: String,
    pub subject: String,
    pub body_text: String,
    pub body_html: Option<String>,
    pub status: MailStatus,
    pub attempts: i32,
    pub next_attempt_at: DateTimeUtc,
    pub last_error: Option<String>,
    pub reply: Option<String>,
    pub claimed_by: Option<String>,
    pub claimed_until: Option<DateTimeUtc>,
    pub created_at: DateTimeUtc,
    pub sent_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

impl Entity {
    pub async fn find_by_dedupe_key(
        db: &impl ConnectionTrait,
        key: &str,
    ) -> Result<Option<Model>, DbErr> {
        Entity::find()
            .filter(Column::DedupeKey.eq(key))
            .one(db)
            .await
    }
}
