//! The mail outbox: every mail is a row first, delivered by a sender that claims it, so
//! nothing is lost across restarts and several instances deliver each mail once.
//!
//! - [`enqueue`] inserts a mail unless one with its dedupe key exists; call it in the same
//!   transaction as the change the mail reports (an alert commits with its run, or not at all).
//! - [`claim`] leases due mails to one sender (`FOR UPDATE SKIP LOCKED` on PostgreSQL; SQLite's
//!   write lock serialises claimers), [`record`] writes what delivery did, fenced on the lease.
//! - A mail is delivered at least once and, unless a sender dies between the SMTP server's
//!   "250 accepted" and [`record`], exactly once; its Message-ID comes from the dedupe key so a
//!   resend after such a crash is recognisable as the same mail.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::OnConflict;
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect,
};

use super::sql::{self, Binder};
use crate::domain::email::{self, EmailAddress};
use crate::domain::mail::{Composed, MailStatus};
use crate::entities::mail_outbox::{self, Column, Entity, Model};
use crate::views::notifications::OutboxRow;

/// A mail about to be queued.
#[derive(Debug, Clone)]
pub struct NewMail {
    pub dedupe_key: String,
    pub kind: String,
    pub job_id: Option<i64>,
    pub run_id: Option<i64>,
    pub recipients: Vec<EmailAddress>,
    pub composed: Composed,
}

/// Queues `mail` unless a mail with its dedupe key exists; returns whether it was queued.
pub async fn enqueue(
    db: &impl ConnectionTrait,
    mail: NewMail,
    now: DateTime<Utc>,
) -> Result<bool, DbErr> {
    let row = mail_outbox::ActiveModel {
        dedupe_key: Set(mail.dedupe_key),
        kind: Set(mail.kind),
        job_id: Set(mail.job_id),
        run_id: Set(mail.run_id),
        recipients: Set(email::join(&mail.recipients)),
        subject: Set(mail.composed.subject),
        body_text: Set(mail.composed.text),
        body_html: Set(Some(mail.composed.html)),
        status: Set(MailStatus::Pending),
        attempts: Set(0),
        next_attempt_at: Set(now),
        created_at: Set(now),
        ..Default::default()
    };
    let inserted = Entity::insert(row)
        .on_conflict(
            OnConflict::column(Column::DedupeKey)
                .do_nothing()
                .to_owned(),
        )
        .exec_without_returning(db)
        .await?;
    Ok(inserted > 0)
}

/// Leases up to `limit` due mails to `sender` until `until`.
pub async fn claim(
    db: &impl ConnectionTrait,
    sender: &str,
    now: DateTime<Utc>,
    until: DateTime<Utc>,
    limit: u64,
) -> Result<Vec<Model>, DbErr> {
    let backend = db.get_database_backend();
    let mut b = Binder::new(backend);
    let sql = format!(
        "UPDATE mail_outbox SET claimed_by = {}, claimed_until = {} \
         WHERE id IN (SELECT id FROM mail_outbox WHERE status = {} \
           AND next_attempt_at <= {} AND (claimed_until IS NULL OR claimed_until < {}) \
           ORDER BY id LIMIT {}{}) RETURNING id",
        b.bind(sender),
        b.bind(until),
        b.bind(MailStatus::Pending.as_str()),
        b.bind(now),
        b.bind(now),
        b.bind(limit as i64),
        sql::skip_locked(backend),
    );
    let ids: Vec<i64> = db
        .query_all_raw(b.statement(sql))
        .await?
        .iter()
        .map(|row| row.try_get("", "id"))
        .collect::<Result<_, _>>()?;
    Entity::find()
        .filter(Column::Id.is_in(ids))
        .order_by_asc(Column::Id)
        .all(db)
        .await
}

/// What one delivery attempt did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivery {
    /// The SMTP server accepted it; its reply.
    Sent { reply: String },
    /// Written as an .eml file (no SMTP server configured).
    Written { path: String },
    /// Try again at `at`.
    Retry { error: String, at: DateTime<Utc> },
    /// Refused for good.
    Failed { error: String },
}

/// Records `delivery` for a mail `sender` holds; false when the lease was lost.
pub async fn record(
    db: &impl ConnectionTrait,
    id: i64,
    sender: &str,
    delivery: &Delivery,
    now: DateTime<Utc>,
) -> Result<bool, DbErr> {
    use sea_orm::sea_query::{Expr, ExprTrait};
    let mut update = Entity::update_many()
        .col_expr(Column::Attempts, Expr::col(Column::Attempts).add(1))
        .col_expr(Column::ClaimedBy, Expr::value(Option::<String>::None))
        .col_expr(
            Column::ClaimedUntil,
            Expr::value(Option::<DateTime<Utc>>::None),
        );
    update = match delivery {
        Delivery::Sent { reply } => update
            .col_expr(Column::Status, Expr::value(MailStatus::Sent))
            .col_expr(Column::SentAt, Expr::value(now))
            .col_expr(Column::Reply, Expr::value(reply.clone()))
            .col_expr(Column::LastError, Expr::value(Option::<String>::None)),
        Delivery::Written { path } => update
            .col_expr(Column::Status, Expr::value(MailStatus::Written))
            .col_expr(Column::SentAt, Expr::value(now))
            .col_expr(Column::Reply, Expr::value(format!("written to {path}"))),
        Delivery::Retry { error, at } => update
            .col_expr(Column::NextAttemptAt, Expr::value(*at))
            .col_expr(Column::LastError, Expr::value(error.clone())),
        Delivery::Failed { error } => update
            .col_expr(Column::Status, Expr::value(MailStatus::Failed))
            .col_expr(Column::LastError, Expr::value(error.clone())),
    };
    let result = update
        .filter(Column::Id.eq(id))
        .filter(Column::ClaimedBy.eq(sender))
        .exec(db)
        .await?;
    Ok(result.rows_affected > 0)
}

/// Puts a mail back in the queue, due now, whatever became of it, and records who did; false
/// if there is no such mail.
pub async fn resend(
    db: &sea_orm::DatabaseConnection,
    id: i64,
    who: &super::audit::Actor<'_>,
    now: DateTime<Utc>,
) -> Result<bool, DbErr> {
    use sea_orm::sea_query::Expr;
    let txn = super::sql::begin_write(db).await?;
    let result = Entity::update_many()
        .col_expr(Column::Status, Expr::value(MailStatus::Pending))
        .col_expr(Column::Attempts, Expr::value(0))
        .col_expr(Column::NextAttemptAt, Expr::value(now))
        .col_expr(Column::ClaimedBy, Expr::value(Option::<String>::None))
        .col_expr(
            Column::ClaimedUntil,
            Expr::value(Option::<DateTime<Utc>>::None),
        )
        .filter(Column::Id.eq(id))
        .exec(&txn)
        .await?;
    if result.rows_affected == 0 {
        return Ok(false);
    }
    let (subject, detail) = (format!("mail {id}"), serde_json::json!({}));
    super::audit::record(&txn, who, "mail.resend", &subject, detail, now).await?;
    txn.commit().await?;
    Ok(true)
}

/// The newest mails first, optionally of one status.
pub async fn list(
    db: &impl ConnectionTrait,
    status: Option<MailStatus>,
    limit: u64,
) -> Result<Vec<Model>, DbErr> {
    let mut select = Entity::find();
    if let Some(status) = status {
        select = select.filter(Column::Status.eq(status));
    }
    select.order_by_desc(Column::Id).limit(limit).all(db).await
}

pub async fn get(db: &impl ConnectionTrait, id: i64) -> Result<Option<Model>, DbErr> {
    Entity::find_by_id(id).one(db).await
}

impl From<Model> for OutboxRow {
    fn from(m: Model) -> Self {
        OutboxRow {
            id: m.id,
            created_at: m.created_at,
            kind: m.kind,
            recipients: m.recipients,
            subject: m.subject,
            status: m.status,
            attempts: m.attempts,
            next_attempt_at: m.next_attempt_at,
            sent_at: m.sent_at,
            reply: m.reply,
            last_error: m.last_error,
            run_id: m.run_id,
        }
    }
}
