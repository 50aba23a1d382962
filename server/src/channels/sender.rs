//! The channel sender: every few seconds, leases each channel with messages due and sends them
//! in order, keeping the platform's rate limit (see `app::services::notifications::channel_outbox`).
//!
//! Per leased channel, one round:
//! 1. Messages held back by the rate limit, when two or more wait and a slot is free, become
//!    one summary, sent first (a single held message goes out as itself).
//! 2. Then each due message in order: if the channel is at its limit for the last minute, it
//!    and every message after it are held until the slot frees; otherwise its send is counted
//!    in the channel's window *before* it goes out (a crash then over-counts, never under),
//!    sent, and its answer recorded at once, so a restart re-sends only the one in flight.

use std::collections::VecDeque;
use std::future::Future;
use std::time::{Duration, Instant};

use app::domain::chat::{ChatEvent, may_send};
use app::entities::{channel, channel_delivery};
use app::services::notifications::channel_outbox::{self, Outcome};
use app::services::notifications::channels;
use app::services::secrets::SecretKey;
use chrono::{DateTime, Utc};
use sea_orm::{DatabaseConnection, DbErr, TransactionTrait};

use super::deliver;
use super::platform::Verdict;
use crate::mail::{MAX_ATTEMPTS, backoff};

/// How often the channel outbox is looked at.
pub const POLL: Duration = Duration::from_secs(2);
/// How long a channel's lease lasts: longer than [`PER_LEASE`] sends at their timeout.
const LEASE: chrono::Duration = chrono::Duration::minutes(5);
/// Messages sent per lease, at most (each may take `deliver`'s 10 s timeout).
const PER_LEASE: u64 = 25;

pub struct ChannelSender {
    pub db: DatabaseConnection,
    pub key: SecretKey,
    pub http: reqwest::Client,
    /// Where no message goes (`outbound_deny`).
    pub deny: crate::outbound::Deny,
    /// This instance's name on its leases.
    pub name: String,
    /// The console's address, for the links in messages.
    pub public_url: String,
    /// The language of a channel's messages when it sets none (`default_locale`).
    pub default_locale: app::i18n::Locale,
}

/// Now, as the round sees it: the time the round started at plus the time it has taken (so a
/// test can start a round at any moment and the rate limit still sees real spacing).
struct RoundClock {
    start: DateTime<Utc>,
    started: Instant,
}

impl RoundClock {
    fn now(&self) -> DateTime<Utc> {
        self.start
            + chrono::Duration::from_std(self.started.elapsed()).unwrap_or(chrono::Duration::zero())
    }
}

impl ChannelSender {
    pub fn new(
        db: DatabaseConnection,
        key: SecretKey,
        name: String,
        public_url: String,
        default_locale: app::i18n::Locale,
        deny: crate::outbound::Deny,
    ) -> Self {
        ChannelSender {
            db,
            key,
            http: deliver::client(&deny),
            deny,
            name,
            public_url,
            default_locale,
        }
    }

    /// Sends every message due at `now`; returns how many were attempted.
    pub async fn deliver_due(&self, now: DateTime<Utc>) -> Result<usize, DbErr> {
        let clock = RoundClock {
            start: now,
            started: Instant::now(),
        };
        let mut done = Vec::new();
        let mut attempted = 0;
        while let Some(channel) = channel_outbox::lease(
            &self.db,
            &self.name,
            clock.now(),
            clock.now() + LEASE,
            &done,
        )
        .await?
        {
            done.push(channel.id);
            let worked = self.work(&channel, &clock).await;
            if let Err(e) = channel_outbox::release(&self.db, channel.id, &self.name).await {
                tracing::warn!(channel = %channel.name, error = %e, "could not give the channel's lease back; it runs out by itself");
            }
            attempted += worked?;
        }
        Ok(attempted)
    }

    async fn work(&self, channel: &channel::Model, clock: &RoundClock) -> Result<usize, DbErr> {
        let rows = channel_outbox::due(&self.db, channel.id, clock.now(), PER_LEASE).await?;
        let opened = match channels::open(&self.db, &self.key, &channel.name).await {
            Ok(opened) => opened,
            Err(e) => {
                // Another node may hold the right key: try again later rather than fail.
                let error = e.to_string();
                tracing::error!(channel = %channel.name, %error, "cannot open the channel");
                for row in &rows {
                    let outcome = self.retry_or_fail(row, error.clone(), clock.now());
                    channel_outbox::record(&self.db, row, &self.name, &outcome, clock.now())
                        .await?;
                }
                return Ok(0);
            }
        };
        let per_minute = channel.kind.per_minute();
        let mut window = channel_outbox::window(channel, clock.now());
        let (held, fresh): (Vec<_>, Vec<_>) = rows.into_iter().partition(|r| r.held);
        let mut queue: VecDeque<channel_delivery::Model> = VecDeque::new();
        let slot_free = per_minute.is_none_or(|pm| may_send(&window, pm, clock.now()).is_ok());
        if held.len() >= 2 && slot_free {
            let txn = self.db.begin().await?;
            let summary =
                channel_outbox::summarise(&txn, channel, &held, clock.now(), self.default_locale)
                    .await?;
            txn.commit().await?;
            tracing::info!(channel = %channel.name, held = held.len(), "held-back alerts summarised in one message");
            queue.push_back(summary);
        } else {
            queue.extend(held);
        }
        queue.extend(fresh);

        let mut attempted = 0;
        while let Some(row) = queue.pop_front() {
            let t = clock.now();
            if let Some(pm) = per_minute
                && let Err(free_at) = may_send(&window, pm, t)
            {
                let ids: Vec<i64> = std::iter::once(row.id)
                    .chain(queue.iter().map(|r| r.id))
                    .collect();
                tracing::info!(channel = %channel.name, held = ids.len(), until = %free_at, "rate limit reached: holding messages for one summary");
                channel_outbox::hold(&self.db, &ids, free_at).await?;
                break;
            }
            window.retain(|sent| *sent > t - chrono::Duration::seconds(60));
            window.push(t);
            if !channel_outbox::save_window(&self.db, channel.id, &self.name, &window).await? {
                tracing::warn!(channel = %channel.name, "lost the channel's lease; stopping");
                break;
            }
            let outcome = match serde_json::from_str::<ChatEvent>(&row.event) {
                Ok(event) => {
                    let event = event.with_console(&self.public_url);
                    let id = channel_outbox::delivery_id(&row);
                    match deliver::send(
                        &self.http,
                        &self.deny,
                        &opened,
                        &event,
                        &id,
                        t,
                        self.default_locale,
                    )
                    .await
                    {
                        Verdict::Accepted(answer) => Outcome::Sent(answer),
                        Verdict::Final(answer) => Outcome::Failed(answer),
                        Verdict::Retry(answer) => self.retry_or_fail(&row, answer, clock.now()),
                    }
                }
                Err(e) => Outcome::Failed(format!("the stored event is unreadable: {e}")),
            };
            match &outcome {
                Outcome::Sent(answer) => {
                    tracing::info!(channel = %channel.name, id = row.id, kind = %row.kind, %answer, "message sent")
                }
                Outcome::Retry(answer, at) => {
                    tracing::warn!(channel = %channel.name, id = row.id, %answer, retry_at = %at, "message not delivered; will retry")
                }
                Outcome::Failed(answer) => {
                    tracing::error!(channel = %channel.name, id = row.id, %answer, "message refused; kept on the Notifications page")
                }
            }
            attempted += 1;
            if !channel_outbox::record(&self.db, &row, &self.name, &outcome, clock.now()).await? {
                tracing::warn!(channel = %channel.name, id = row.id, "lost the channel's lease before recording; stopping");
                break;
            }
        }
        Ok(attempted)
    }

    fn retry_or_fail(
        &self,
        row: &channel_delivery::Model,
        answer: String,
        now: DateTime<Utc>,
    ) -> Outcome {
        let attempt = row.attempts + 1;
        if attempt >= MAX_ATTEMPTS {
            Outcome::Failed(format!("{answer} (gave up after {attempt} attempts)"))
        } else {
            let wait = backoff(u32::try_from(attempt).unwrap_or(1));
            Outcome::Retry(
                answer,
                now + chrono::Duration::from_std(wait).unwrap_or(chrono::Duration::hours(1)),
            )
        }
    }

    /// Sends due messages until `stop` resolves.
    pub async fn run(self, stop: impl Future<Output = ()>) {
        tokio::pin!(stop);
        loop {
            if let Err(e) = self.deliver_due(crate::clock::now()).await {
                tracing::warn!(error = %e, "could not read the channel outbox");
            }
            tokio::select! {
                () = &mut stop => return,
                () = tokio::time::sleep(POLL) => {}
            }
        }
    }
}
