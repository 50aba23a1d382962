//! Sending one message to a channel and reading the platform's answer.

use std::time::Duration;

use app::domain::chat::{ChannelKind, ChatEvent, EventType};
use app::i18n::Locale;
use app::i18n::chat::compose;
use app::services::notifications::channels::Opened;

use super::platform::{self, Verdict};

/// How long a platform may take to answer.
const TIMEOUT: Duration = Duration::from_secs(10);

/// The client deliveries go through: no redirects (a robot URL that redirects is a wrong URL,
/// and its token must not follow), bounded time.
pub fn client(deny: &crate::outbound::Deny) -> reqwest::Client {
    deny.client_builder()
        .user_agent(concat!("Bulwark/", env!("CARGO_PKG_VERSION")))
        .redirect(reqwest::redirect::Policy::none())
        .timeout(TIMEOUT)
        .build()
        .unwrap_or_default()
}

/// Sends `event` to a chat or webhook channel; `delivery_id` stays the same across retries of
/// one delivery. (E-mail channels go through the mail outbox instead.)
pub async fn send(
    http: &reqwest::Client,
    deny: &crate::outbound::Deny,
    channel: &Opened,
    event: &ChatEvent,
    delivery_id: &str,
    now: chrono::DateTime<chrono::Utc>,
    default_locale: Locale,
) -> Verdict {
    let locale = channel.locale.unwrap_or(default_locale);
    let message = compose(event, locale, channel.kind.text_limit());
    let prepared = platform::prepare(
        channel.kind,
        &channel.url,
        channel.secret.as_deref(),
        event,
        &message,
        delivery_id,
        now,
    );
    let denied = reqwest::Url::parse(&prepared.url)
        .ok()
        .and_then(|url| deny.refusal(&url));
    if let Some(denied) = denied {
        return Verdict::Final(denied.to_string());
    }
    let mut request = http.post(&prepared.url).body(prepared.body);
    for (name, value) in &prepared.headers {
        request = request.header(name, value);
    }
    let response = match request.send().await {
        Ok(response) => response,
        Err(e) if crate::outbound::denial(&e).is_some() => {
            let denied = crate::outbound::denial(&e).map(ToString::to_string);
            return Verdict::Final(denied.unwrap_or_default());
        }
        // The URL carries the robot's token: the error is told without it.
        Err(e) => return Verdict::Retry(format!("no answer: {}", e.without_url())),
    };
    let status = response.status().as_u16();
    let body = answer(response).await;
    platform::judge(channel.kind, status, &body)
}

/// The most of an answer read: a platform's verdict is a short JSON object, and a far side
/// that streams more cannot make a delivery hold memory.
const ANSWER_BYTES: usize = 64 * 1024;

/// The first [`ANSWER_BYTES`] of an answer, read chunk by chunk; the rest is not read.
async fn answer(mut response: reqwest::Response) -> String {
    let mut kept: Vec<u8> = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                let room = ANSWER_BYTES - kept.len();
                kept.extend_from_slice(&chunk[..chunk.len().min(room)]);
                if kept.len() >= ANSWER_BYTES {
                    break;
                }
            }
            Ok(None) => break,
            Err(e) => return format!("(answer unreadable: {})", e.without_url()),
        }
    }
    String::from_utf8_lossy(&kept).into_owned()
}

/// The message `channel test` and the Notifications page's Send test send.
pub fn test_event(console: &str, now: chrono::DateTime<chrono::Utc>) -> ChatEvent {
    let mut event = ChatEvent::general(EventType::Test, "Bulwark test message".into(), now);
    event.more_url = Some(format!("{}/notifications", console.trim_end_matches('/')));
    event
}

/// Whether a kind is delivered by this module (all but e-mail).
pub fn is_chat(kind: ChannelKind) -> bool {
    kind != ChannelKind::Email
}

/// The web app's way to test a channel (`app::mailer::ChannelTester`): the same delivery as
/// `bulwark channel test`.
pub struct Tester {
    pub db: sea_orm::DatabaseConnection,
    pub key: app::services::secrets::SecretKey,
    pub config: crate::config::Config,
}

impl app::mailer::ChannelTester for Tester {
    fn test<'a>(&'a self, name: &'a str) -> app::mailer::Tested<'a> {
        Box::pin(async move {
            deliver_test(&self.db, &self.key, &self.config, name)
                .await
                .map_err(|e| -> app::mailer::DeliverError { e.into() })
        })
    }
}

/// Sends a test message to `name` and records the answer: `(accepted, answer)`. The CLI's
/// `channel test` and the Notifications page's Send test.
pub async fn deliver_test(
    db: &sea_orm::DatabaseConnection,
    key: &app::services::secrets::SecretKey,
    config: &crate::config::Config,
    name: &str,
) -> anyhow::Result<(bool, String)> {
    let channel = app::services::notifications::channels::open(db, key, name).await?;
    let now = crate::clock::now();
    let verdict = if is_chat(channel.kind) {
        let event = test_event(&config.public_url(), now);
        let id = format!("test_{}_{}", channel.id, now.timestamp_millis());
        let deny = config.outbound_deny();
        send(
            &client(&deny),
            &deny,
            &channel,
            &event,
            &id,
            now,
            config.locale(),
        )
        .await
    } else {
        let settings = config.mail_settings()?;
        let sender = crate::mail::sender::Sender {
            db: db.clone(),
            settings,
            name: format!("cli-{}", std::process::id()),
        };
        let recipients = channel
            .to
            .iter()
            .filter_map(|a| app::domain::email::EmailAddress::parse(a).ok())
            .collect();
        let result = app::services::notifications::send_test_mail(
            db,
            Some(&sender as &dyn app::mailer::Mailer),
            "cli",
            recipients,
            now,
            config.locale(),
        )
        .await?;
        if result.delivered {
            Verdict::Accepted(result.answer)
        } else {
            Verdict::Final(result.answer)
        }
    };
    let (accepted, answer) = match &verdict {
        Verdict::Accepted(a) => (true, a.clone()),
        Verdict::Retry(a) | Verdict::Final(a) => (false, a.clone()),
    };
    app::services::notifications::channels::answered(db, channel.id, &answer, now).await?;
    Ok((accepted, answer))
}
