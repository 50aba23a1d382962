//! The audit log: who did what to which thing, and from where.

use chrono::{DateTime, Utc};
use sea_orm::{ActiveModelTrait, ConnectionTrait, DbErr, Set};

use crate::entities::audit_log;
use crate::views::audit::AuditEntry;

/// Who an audit row is about. `id` is `None` for anonymous actions (a failed login) and for
/// what no account does (the command line, a job's hook).
#[derive(Debug)]
pub struct Actor<'a> {
    pub id: Option<i64>,
    pub name: &'a str,
    pub ip: Option<String>,
}

impl<'a> Actor<'a> {
    /// An actor without an account or an address: `cli`, `hook:nightly`, `bench`.
    pub fn named(name: &'a str) -> Self {
        Actor {
            id: None,
            name,
            ip: None,
        }
    }
}

/// Writes one entry and returns its id. The actor's name and the subject are cut to what
/// their columns hold (64 and 255 characters), so no typed value can make the write fail.
pub async fn record(
    db: &impl ConnectionTrait,
    actor: &Actor<'_>,
    action: &str,
    subject: &str,
    detail: serde_json::Value,
    at: DateTime<Utc>,
) -> Result<i64, DbErr> {
    let row = audit_log::ActiveModel {
        at: Set(at),
        actor_id: Set(actor.id),
        actor: Set(actor.name.chars().take(64).collect()),
        action: Set(action.to_string()),
        subject: Set(subject.chars().take(255).collect()),
        detail: Set(detail.to_string()),
        ip: Set(actor.ip.clone()),
        ..Default::default()
    }
    .insert(db)
    .await?;
    Ok(row.id)
}

/// The newest entries first, optionally about one subject; sign-in noise left out.
pub async fn recent(
    db: &impl ConnectionTrait,
    subject: Option<&str>,
    limit: u64,
) -> Result<Vec<AuditEntry>, DbErr> {
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};
    let mut query = audit_log::Entity::find()
        .filter(audit_log::Column::Action.not_like("login.%"))
        .order_by_desc(audit_log::Column::At)
        .order_by_desc(audit_log::Column::Id)
        .limit(limit);
    if let Some(subject) = subject {
        query = query.filter(audit_log::Column::Subject.eq(subject));
    }
    Ok(query
        .all(db)
        .await?
        .into_iter()
        .map(|row| AuditEntry {
            at: row.at,
            actor: row.actor,
            action: row.action,
            subject: row.subject,
            detail: row.detail,
        })
        .collect())
}
