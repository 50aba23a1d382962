//! The channel outbox: every chat or webhook message is a row before it is sent, one per
//! (event, channel), so nothing is lost across restarts and several instances send each one
//! once. The mail outbox (`crate::services::outbox`) is the pattern; what differs is the rate limit.
//!
//! - [`enqueue`] inserts the rows for an event unless its dedupe key exists; call it in the
//!   transaction that records what the event reports. E-mail channels have no rows here: their
//!   addresses come back to be added to the event's mail.
//! - A sender leases a whole channel ([`lease`]), not single rows: one sender at a time talks to
//!   a platform for a channel, so `sent_window` (the times of its latest sends) is kept by one
//!   writer and no minute ever holds more than the platform allows.
//! - [`hold`] marks what the limit held back; [`summarise`] turns what was held into one
//!   summary row when the window frees, so alerts are summarised rather than dropped.
//! - [`record`] writes what a send did, fenced on the channel's lease. A message is sent at
//!   least once and, unless a sender dies between the platform's answer and [`record`], exactly
//!   once; it keeps its `webhook-id` ([`delivery_id`]) across every attempt, so a receiver can
//!   drop the one repeat such a crash can cause.

use chrono::{DateTime, Duration, Utc};
use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, PaginatorTrait,
    QueryFilter, QueryOrder, QuerySelect,
};
use sha2::{Digest, Sha256};

use crate::domain::chat::{ChannelKind, ChatEvent, DeliveryStatus};
use crate::domain::email::EmailAddress;
use crate::entities::channel;
use crate::entities::channel_delivery::{self, Column, Entity, Model};
use crate::i18n::Locale;
use crate::i18n::chat::compose;
use crate::services::sql::{self, Binder};

/// The language a channel's messages are written in: its own, else `default` (the configured
/// `default_locale`). A tag whose catalogue is gone reads as unset.
pub fn channel_locale(channel: &crate::entities::channel::Model, default: Locale) -> Locale {
    channel
        .locale
        .as_deref()
        .and_then(Locale::parse)
        .unwrap_or(default)
}

/// An event on its way to channels.
#[derive(Debug, Clone)]
pub struct NewEvent {
    /// What makes the event itself unique (`alert:12:3:first_failure`); each channel's row adds
    /// the channel's name.
    pub dedupe_key: String,
    pub job_id: Option<i64>,
    pub run_id: Option<i64>,
    /// With links relative to `{console}` (`crate::domain::chat::CONSOLE`).
    pub event: ChatEvent,
    /// The event as written in other languages, for events that carry their own words (a
    /// digest's or a trend's headline and lines); alerts are worded when they are sent.
    pub worded: Vec<(Locale, ChatEvent)>,
}

impl NewEvent {
    /// An event whose words are made for each language there is.
    pub fn in_every_language(
        dedupe_key: String,
        word: impl Fn(Locale) -> ChatEvent,
        default_locale: Locale,
    ) -> NewEvent {
        let worded: Vec<(Locale, ChatEvent)> = Locale::all().map(|l| (l, word(l))).collect();
        let event = worded
            .iter()
            .find(|(l, _)| *l == default_locale)
            .map_or_else(|| word(default_locale), |(_, event)| event.clone());
        NewEvent {
            dedupe_key,
            job_id: None,
            run_id: None,
            event,
            worded,
        }
    }

    fn event_in(&self, locale: Locale) -> &ChatEvent {
        self.worded
            .iter()
            .find(|(l, _)| *l == locale)
            .map_or(&self.event, |(_, event)| event)
    }
}

/// Queues `new` for each channel named in `names` (unknown names are logged and passed over: a
/// channel in use cannot be removed, so this is a row edited by hand). Returns the addresses of
/// the e-mail channels among them.
pub async fn enqueue(
    db: &impl ConnectionTrait,
    names: &[String],
    new: &NewEvent,
    now: DateTime<Utc>,
    default_locale: Locale,
) -> Result<Vec<EmailAddress>, DbErr> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let channels = channel::Entity::find()
        .filter(channel::Column::Name.is_in(names.iter().cloned()))
        .all(db)
        .await?;
    for name in names {
        if !channels.iter().any(|c| &c.name == name) {
            tracing::warn!(channel = %name, event = %new.dedupe_key, "no such channel: not sent there");
        }
    }
    let addresses = addresses_of(&channels);
    for c in channels {
        if c.kind == ChannelKind::Email {
            continue;
        }
        let locale = channel_locale(&c, default_locale);
        let event = new.event_in(locale);
        let title = compose(event, locale, c.kind.text_limit()).title;
        let event_json = serde_json::to_string(event)
            .map_err(|e| DbErr::Custom(format!("could not encode the event: {e}")))?;
        Entity::insert(channel_delivery::ActiveModel {
            dedupe_key: Set(format!("{}:{}", new.dedupe_key, c.name)),
            channel_id: Set(c.id),
            channel_name: Set(c.name.clone()),
            kind: Set(new.event.event.as_str().to_string()),
            job_id: Set(new.job_id),
            run_id: Set(new.run_id),
            title: Set(title),
            event: Set(event_json),
            status: Set(DeliveryStatus::Pending),
            held: Set(false),
            merged_into: Set(None),
            attempts: Set(0),
            next_attempt_at: Set(now),
            answer: Set(None),
            created_at: Set(now),
            sent_at: Set(None),
            ..Default::default()
        })
        .on_conflict(
            OnConflict::column(Column::DedupeKey)
                .do_nothing()
                .to_owned(),
        )
        .exec_without_returning(db)
        .await?;
    }
    Ok(addresses)
}

/// The addresses of the e-mail channels among `names`.
pub async fn email_addresses(
    db: &impl ConnectionTrait,
    names: &[String],
) -> Result<Vec<EmailAddress>, DbErr> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let channels = channel::Entity::find()
        .filter(channel::Column::Name.is_in(names.iter().cloned()))
        .filter(channel::Column::Kind.eq(ChannelKind::Email))
        .all(db)
        .await?;
    Ok(addresses_of(&channels))
}

/// The addresses of the e-mail channels among `channels`, each once.
pub fn addresses_of(channels: &[channel::Model]) -> Vec<EmailAddress> {
    let mut addresses = Vec::new();
    for c in channels.iter().filter(|c| c.kind == ChannelKind::Email) {
        for address in c.recipients.split(',').map(str::trim) {
            match EmailAddress::parse(address) {
                Ok(a) if !addresses.contains(&a) => addresses.push(a),
                Ok(_) => {}
                Err(e) => {
                    tracing::error!(channel = %c.name, error = %e, "an address of the channel is unreadable")
                }
            }
        }
    }
    addresses
}

/// How many messages an event (by its dedupe key) has queued, to any channel.
pub async fn queued(db: &impl ConnectionTrait, dedupe_key: &str) -> Result<u64, DbErr> {
    Entity::find()
        .filter(Column::DedupeKey.starts_with(format!("{dedupe_key}:")))
        .count(db)
        .await
}

/// The `webhook-id` of a message: the same for every attempt of it, different for every
/// message (derived from its dedupe key, so even a row re-created from a backup keeps it).
pub fn delivery_id(row: &Model) -> String {
    let digest = Sha256::digest(row.dedupe_key.as_bytes());
    format!("msg_{}", hex::encode(&digest[..12]))
}

/// Leases one channel with messages due at `now` to `sender` until `until`, passing over the
/// channels in `done` (already worked through in this round). A lease another sender holds is
/// respected until it runs out.
pub async fn lease(
    db: &impl ConnectionTrait,
    sender: &str,
    now: DateTime<Utc>,
    until: DateTime<Utc>,
    done: &[i64],
) -> Result<Option<channel::Model>, DbErr> {
    let backend = db.get_database_backend();
    let mut b = Binder::new(backend);
    let sql = format!(
        "UPDATE channels SET claimed_by = {}, claimed_until = {} \
         WHERE id IN (SELECT c.id FROM channels c \
           WHERE (c.claimed_until IS NULL OR c.claimed_until < {}) AND NOT ({}) \
           AND EXISTS (SELECT 1 FROM channel_deliveries d WHERE d.channel_id = c.id \
             AND d.status = {} AND d.next_attempt_at <= {}) \
           ORDER BY c.id LIMIT 1{}) RETURNING id",
        b.bind(sender),
        b.bind(until),
        b.bind(now),
        b.in_ids("c.id", done),
        sql::word(DeliveryStatus::Pending.as_str()),
        b.bind(now),
        sql::skip_locked(backend),
    );
    let Some(row) = db.query_one_raw(b.statement(sql)).await? else {
        return Ok(None);
    };
    let id: i64 = row.try_get("", "id")?;
    channel::Entity::find_by_id(id).one(db).await
}

/// Gives the channel's lease back.
pub async fn release(
    db: &impl ConnectionTrait,
    channel_id: i64,
    sender: &str,
) -> Result<(), DbErr> {
    channel::Entity::update_many()
        .col_expr(
            channel::Column::ClaimedBy,
            Expr::value(Option::<String>::None),
        )
        .col_expr(
            channel::Column::ClaimedUntil,
            Expr::value(Option::<DateTime<Utc>>::None),
        )
        .filter(channel::Column::Id.eq(channel_id))
        .filter(channel::Column::ClaimedBy.eq(sender))
        .exec(db)
        .await?;
    Ok(())
}

/// A channel's messages due at `now`, oldest first.
pub async fn due(
    db: &impl ConnectionTrait,
    channel_id: i64,
    now: DateTime<Utc>,
    limit: u64,
) -> Result<Vec<Model>, DbErr> {
    Entity::find()
        .filter(Column::ChannelId.eq(channel_id))
        .filter(Column::Status.eq(DeliveryStatus::Pending))
        .filter(Column::NextAttemptAt.lte(now))
        .order_by_asc(Column::Id)
        .limit(limit)
        .all(db)
        .await
}

/// The times of a channel's sends still inside the last minute.
pub fn window(channel: &channel::Model, now: DateTime<Utc>) -> Vec<DateTime<Utc>> {
    let all: Vec<DateTime<Utc>> = serde_json::from_str(&channel.sent_window).unwrap_or_default();
    all.into_iter()
        .filter(|t| *t > now - Duration::seconds(60))
        .collect()
}

/// Stores the times of the channel's sends in the last minute, fenced on the lease: false when
/// the lease was lost (and the caller must stop sending).
pub async fn save_window(
    db: &impl ConnectionTrait,
    channel_id: i64,
    sender: &str,
    window: &[DateTime<Utc>],
) -> Result<bool, DbErr> {
    let text = serde_json::to_string(window).unwrap_or_else(|_| "[]".into());
    let result = channel::Entity::update_many()
        .col_expr(channel::Column::SentWindow, Expr::value(text))
        .filter(channel::Column::Id.eq(channel_id))
        .filter(channel::Column::ClaimedBy.eq(sender))
        .exec(db)
        .await?;
    Ok(result.rows_affected > 0)
}

/// Holds `ids` back for the rate limit until `at`: they go out together, as one summary.
pub async fn hold(db: &impl ConnectionTrait, ids: &[i64], at: DateTime<Utc>) -> Result<(), DbErr> {
    if ids.is_empty() {
        return Ok(());
    }
    Entity::update_many()
        .col_expr(Column::Held, Expr::value(true))
        .col_expr(Column::NextAttemptAt, Expr::value(at))
        .filter(Column::Id.is_in(ids.iter().copied()))
        .filter(Column::Status.eq(DeliveryStatus::Pending))
        .exec(db)
        .await?;
    Ok(())
}

/// Turns the held messages `held` of a channel into one summary message, due now; returns it.
/// The held rows become `summarised`, pointing at the summary, in the same transaction.
pub async fn summarise(
    db: &impl ConnectionTrait,
    channel: &channel::Model,
    held: &[Model],
    now: DateTime<Utc>,
    default_locale: Locale,
) -> Result<Model, DbErr> {
    let titles: Vec<String> = held.iter().map(|r| r.title.clone()).collect();
    let first = held.iter().map(|r| r.id).min().unwrap_or_default();
    let event = crate::i18n::chat::summary(&titles, now, channel_locale(channel, default_locale));
    let dedupe_key = format!("summary:{first}:{}", channel.name);
    enqueue(
        db,
        std::slice::from_ref(&channel.name),
        &NewEvent {
            dedupe_key: format!("summary:{first}"),
            job_id: None,
            run_id: None,
            event,
            worded: Vec::new(),
        },
        now,
        default_locale,
    )
    .await?;
    let summary = Entity::find()
        .filter(Column::DedupeKey.eq(&dedupe_key))
        .one(db)
        .await?
        .ok_or_else(|| DbErr::RecordNotFound(dedupe_key))?;
    Entity::update_many()
        .col_expr(Column::Status, Expr::value(DeliveryStatus::Summarised))
        .col_expr(Column::MergedInto, Expr::value(summary.id))
        .col_expr(Column::SentAt, Expr::value(now))
        .filter(Column::Id.is_in(held.iter().map(|r| r.id)))
        .filter(Column::Status.eq(DeliveryStatus::Pending))
        .exec(db)
        .await?;
    Ok(summary)
}

/// What one attempt did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The platform accepted it; its answer.
    Sent(String),
    /// Try again at the time given.
    Retry(String, DateTime<Utc>),
    /// Refused for good; the answer.
    Failed(String),
}

/// Records what an attempt at `id` did, fenced on the lease `sender` holds on its channel;
/// false when the lease was lost. The channel keeps the answer as its last one.
pub async fn record(
    db: &impl ConnectionTrait,
    row: &Model,
    sender: &str,
    outcome: &Outcome,
    now: DateTime<Utc>,
) -> Result<bool, DbErr> {
    let leased = channel::Entity::find()
        .filter(channel::Column::Id.eq(row.channel_id))
        .filter(channel::Column::ClaimedBy.eq(sender))
        .count(db)
        .await?
        > 0;
    if !leased {
        return Ok(false);
    }
    use sea_orm::sea_query::ExprTrait;
    let mut update = Entity::update_many()
        .col_expr(Column::Attempts, Expr::col(Column::Attempts).add(1))
        .col_expr(Column::Held, Expr::value(false));
    let answer = match outcome {
        Outcome::Sent(answer) => {
            update = update
                .col_expr(Column::Status, Expr::value(DeliveryStatus::Sent))
                .col_expr(Column::SentAt, Expr::value(now));
            answer
        }
        Outcome::Retry(answer, at) => {
            update = update.col_expr(Column::NextAttemptAt, Expr::value(*at));
            answer
        }
        Outcome::Failed(answer) => {
            update = update.col_expr(Column::Status, Expr::value(DeliveryStatus::Failed));
            answer
        }
    };
    let answer: String = answer.chars().take(1000).collect();
    update
        .col_expr(Column::Answer, Expr::value(answer.clone()))
        .filter(Column::Id.eq(row.id))
        .exec(db)
        .await?;
    super::channels::answered(db, row.channel_id, &answer, now).await?;
    Ok(true)
}

/// Puts a message back in the queue, due now, whatever became of it, and records who did;
/// false if there is no such message. (It keeps its `webhook-id`: to a receiver it is the same
/// message again.)
pub async fn resend(
    db: &sea_orm::DatabaseConnection,
    id: i64,
    who: &crate::services::audit::Actor<'_>,
    now: DateTime<Utc>,
) -> Result<bool, DbErr> {
    let txn = sql::begin_write(db).await?;
    let result = Entity::update_many()
        .col_expr(Column::Status, Expr::value(DeliveryStatus::Pending))
        .col_expr(Column::Attempts, Expr::value(0))
        .col_expr(Column::Held, Expr::value(false))
        .col_expr(Column::MergedInto, Expr::value(Option::<i64>::None))
        .col_expr(Column::NextAttemptAt, Expr::value(now))
        .filter(Column::Id.eq(id))
        .exec(&txn)
        .await?;
    if result.rows_affected == 0 {
        return Ok(false);
    }
    let subject = format!("message {id}");
    let detail = serde_json::json!({});
    crate::services::audit::record(&txn, who, "channel.resend", &subject, detail, now).await?;
    txn.commit().await?;
    Ok(true)
}

/// The newest messages first, optionally of one status.
pub async fn list(
    db: &impl ConnectionTrait,
    status: Option<DeliveryStatus>,
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

impl From<Model> for crate::views::channels::DeliveryRow {
    fn from(m: Model) -> Self {
        crate::views::channels::DeliveryRow {
            id: m.id,
            created_at: m.created_at,
            channel: m.channel_name,
            kind: m.kind,
            title: m.title,
            status: m.status,
            attempts: m.attempts,
            next_attempt_at: m.next_attempt_at,
            sent_at: m.sent_at,
            answer: m.answer,
            held: m.held,
            merged_into: m.merged_into,
            run_id: m.run_id,
        }
    }
}
