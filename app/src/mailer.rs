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
