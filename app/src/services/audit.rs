//! The audit log: who did what to which thing, and from where.

use chrono::{DateTime, Utc};
use sea_orm::{ActiveModelTrait, ConnectionTrait, DbErr, Set};

use crate::entities::audit_log;

/// Who an audit row is about. `id` is `None` for anonymous actions (a failed login).
pub struct Actor<'a> {
    pub id: Option<i64>,
    pub name: &'a str,
    pub ip: Option<&'a str>,
}

pub async fn record(
    db: &impl ConnectionTrait,
    actor: &Actor<'_>,
    action: &str,
    subject: &str,
    detail: serde_json::Value,
    at: DateTime<Utc>,
) -> Result<(), DbErr> {
    audit_log::ActiveModel {
        at: Set(at),
        actor_id: Set(actor.id),
        actor: Set(actor.name.chars().take(64).collect()),
        action: Set(action.to_string()),
        subject: Set(subject.to_string()),
        detail: Set(detail.to_string()),
        ip: Set(actor.ip.map(str::to_string)),
        ..Default::default()
    }
    .insert(db)
    .await?;
    Ok(())
}
