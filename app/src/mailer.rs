//! What the Notifications page needs of the server's mail delivery, which lives in the
//! `server` crate (lettre) and is reached through this trait.

use std::future::Future;
use std::pin::Pin;

/// Why delivering now failed (the database, or the mail server); the sender retries later.
pub type DeliverError = Box<dyn std::error::Error + Send + Sync>;

pub trait Mailer: Send + Sync {
    /// Delivers every mail due now, this instant, instead of at the sender's next round.
    fn deliver_now(&self) -> Pin<Box<dyn Future<Output = Result<(), DeliverError>> + Send + '_>>;
    /// Where mail goes: the SMTP server (password hidden), or the directory .eml files go to.
    fn route(&self) -> String;
    /// The console's address, for links in previews.
    fn public_url(&self) -> String;
}

/// A test's outcome on its way: `(accepted, the platform's answer)`.
pub type Tested<'a> =
    Pin<Box<dyn Future<Output = Result<(bool, String), DeliverError>> + Send + 'a>>;

/// What the Notifications page needs of the server's chat delivery (`server/src/channels/`):
/// a test message to one channel, and the platform's answer.
pub trait ChannelTester: Send + Sync {
    /// Sends a test message to the channel named `name`: `(accepted, the platform's answer)`.
    fn test<'a>(&'a self, name: &'a str) -> Tested<'a>;
}
