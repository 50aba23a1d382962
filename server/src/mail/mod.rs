//! Delivering the outbox (issue: mail that reaches the right people).
//!
//! What to send is decided elsewhere and lands in `mail_outbox` ([`app::services::outbox`]);
//! this module delivers it: through SMTP with lettre when `smtp_url` is set, otherwise as .eml
//! files under `mail_outbox_dir` (so `make run` needs no mail server). A failed delivery is
//! retried with backoff ([`backoff`]); the SMTP server's refusal (5xx) is final and kept, with
//! its words, on the row.

pub mod sender;

use std::path::PathBuf;
use std::time::Duration;

use app::domain::mail::with_console;
use app::entities::mail_outbox;
use lettre::message::{Mailbox, MultiPart, header::ContentType};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

#[derive(Debug, thiserror::Error)]
pub enum MailError {
    #[error(
        "smtp_url '{url}' is not usable: {reason} (expected smtp://user:password@host:587?tls=required, smtps://user:password@host:465 or smtp://host:25)"
    )]
    SmtpUrl { url: String, reason: String },
    #[error("mail_from '{0}' is not an address such as Bulwark <bulwark@example.com>")]
    From(String),
    #[error("'{0}' is not an e-mail address")]
    Address(String),
    #[error("the mail could not be built: {0}")]
    Build(String),
    #[error("{0}")]
    Smtp(String),
    #[error("could not write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// How long one SMTP conversation may take.
const SMTP_TIMEOUT: Duration = Duration::from_secs(15);

/// Where and how mail goes.
#[derive(Clone)]
pub struct MailSettings {
    pub transport: Option<AsyncSmtpTransport<Tokio1Executor>>,
    /// `smtp_url` without its password, for messages.
    pub server: Option<String>,
    pub from: Mailbox,
    pub public_url: String,
    pub outbox_dir: PathBuf,
}

impl MailSettings {
    /// Checks `smtp_url` and `mail_from` without connecting or starting anything (it runs
    /// while the configuration loads, before the async runtime exists).
    pub fn validate(mail_from: &str, smtp_url: Option<&str>) -> Result<(), MailError> {
        mail_from
            .parse::<Mailbox>()
            .map_err(|_| MailError::From(mail_from.to_string()))?;
        if let Some(url) = smtp_url.filter(|u| !u.is_empty()) {
            AsyncSmtpTransport::<Tokio1Executor>::from_url(url).map_err(|e| {
                MailError::SmtpUrl {
                    url: redact(url),
                    reason: e.to_string(),
                }
            })?;
        }
        Ok(())
    }

    /// The settings, with a connection pool to the SMTP server (inside the runtime); the
    /// configuration's `Config::mail_settings` (`server/src/config.rs`).
    pub fn new(
        mail_from: &str,
        smtp_url: Option<&str>,
        public_url: String,
        outbox_dir: PathBuf,
    ) -> Result<MailSettings, MailError> {
        let from: Mailbox = mail_from
            .parse()
            .map_err(|_| MailError::From(mail_from.to_string()))?;
        let (transport, server) = match smtp_url.filter(|u| !u.is_empty()) {
            None => (None, None),
            Some(url) => {
                let redacted = redact(url);
                let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(url)
                    .map_err(|e| MailError::SmtpUrl {
                        url: redacted.clone(),
                        reason: e.to_string(),
                    })?
                    .timeout(Some(SMTP_TIMEOUT))
                    .build();
                (Some(transport), Some(redacted))
            }
        };
        Ok(MailSettings {
            transport,
            server,
            from,
            public_url,
            outbox_dir,
        })
    }
}

/// The URL with its password replaced, for logs and messages.
fn redact(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => match rest.rsplit_once('@') {
            Some((credentials, host)) => {
                let user = credentials.split(':').next().unwrap_or("");
                format!("{scheme}://{user}:***@{host}")
            }
            None => url.to_string(),
        },
        None => url.to_string(),
    }
}

/// Comma-separated addresses as mailboxes; the first that does not parse is the error.
pub fn parse_recipients(text: &str) -> Result<Vec<Mailbox>, MailError> {
    let boxes: Vec<Mailbox> = text
        .split([',', ';', '\n'])
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .map(|a| a.parse().map_err(|_| MailError::Address(a.to_string())))
        .collect::<Result<_, _>>()?;
    if boxes.is_empty() {
        return Err(MailError::Address(text.to_string()));
    }
    Ok(boxes)
}

/// The stored mail as a MIME message (text and HTML alternatives), links pointing at the
/// console. Its Message-ID derives from the dedupe key, so a repeat is the same mail.
pub fn build(settings: &MailSettings, mail: &mail_outbox::Model) -> Result<Message, MailError> {
    let mut builder = Message::builder()
        .from(settings.from.clone())
        .subject(mail.subject.clone())
        .message_id(Some(message_id(&mail.dedupe_key)));
    for to in parse_recipients(&mail.recipients)? {
        builder = builder.to(to);
    }
    let text = with_console(&mail.body_text, &settings.public_url);
    let message = match &mail.body_html {
        Some(html) => builder.multipart(MultiPart::alternative_plain_html(
            text,
            with_console(html, &settings.public_url),
        )),
        None => builder.header(ContentType::TEXT_PLAIN).body(text),
    };
    message.map_err(|e| MailError::Build(e.to_string()))
}

/// `<digest@bulwark>` from the dedupe key.
fn message_id(dedupe_key: &str) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(dedupe_key.as_bytes());
    format!("<{}@bulwark>", hex::encode(&digest[..16]))
}

/// What an SMTP exchange ended with.
pub enum SmtpOutcome {
    /// Accepted; the server's reply.
    Accepted(String),
    /// Worth retrying: the server was unreachable, timed out, or answered 4xx.
    Transient(String),
    /// Refused for good (5xx: a bad address, a wrong password…).
    Permanent(String),
}

/// Hands `message` to the SMTP server and says how it went, in the server's words.
pub async fn send_smtp(
    transport: &AsyncSmtpTransport<Tokio1Executor>,
    message: Message,
) -> SmtpOutcome {
    match transport.send(message).await {
        Ok(response) => SmtpOutcome::Accepted(format!(
            "{} {}",
            response.code(),
            response.message().collect::<Vec<_>>().join(" ")
        )),
        Err(e) if e.is_permanent() => SmtpOutcome::Permanent(e.to_string()),
        Err(e) => SmtpOutcome::Transient(e.to_string()),
    }
}

/// The wait before delivery attempt `attempts + 1`: 30 s doubling, at most an hour (the retry
/// contract of `docs/ARCHITECTURE.md` §4 with F = 30 s, M = 2, cap 1 h).
pub fn backoff(attempts: u32) -> Duration {
    let n = attempts.clamp(1, 16);
    Duration::from_secs((30u64 << (n - 1)).min(3600))
}

/// Delivery attempts before a mail is marked failed (about eight hours of trying).
pub const MAX_ATTEMPTS: i32 = 12;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_reach_messages() {
        assert_eq!(
            redact("smtps://ops:s3cret@mail.example.com:465"),
            "smtps://ops:***@mail.example.com:465"
        );
        assert_eq!(redact("smtp://localhost:25"), "smtp://localhost:25");
    }

    #[test]
    fn backoff_doubles_to_an_hour() {
        assert_eq!(backoff(1), Duration::from_secs(30));
        assert_eq!(backoff(2), Duration::from_secs(60));
        assert_eq!(backoff(8), Duration::from_secs(3600));
        assert_eq!(backoff(40), Duration::from_secs(3600));
    }

    #[test]
    fn recipients_must_all_be_addresses() {
        assert_eq!(
            parse_recipients("a@example.com, b@example.com")
                .unwrap()
                .len(),
            2
        );
        assert!(matches!(
            parse_recipients("a@example.com, nope"),
            Err(MailError::Address(a)) if a == "nope"
        ));
    }
}
