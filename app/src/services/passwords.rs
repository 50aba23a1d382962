//! Argon2id hashing, kept off the async executor: one hash costs tens of milliseconds of CPU.

use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use rand_core::OsRng;

#[derive(Debug, thiserror::Error)]
pub enum PasswordError {
    #[error("could not hash the password: {0}")]
    Hash(String),
    #[error("the hashing task stopped unexpectedly: {0}")]
    Task(#[from] tokio::task::JoinError),
}

/// Hashes with Argon2id and the crate's recommended parameters (19 MiB, 2 passes).
pub async fn hash(password: String) -> Result<String, PasswordError> {
    tokio::task::spawn_blocking(move || {
        let salt = SaltString::generate(&mut OsRng);
        Argon2::default()
            .hash_password(password.as_bytes(), &salt)
            .map(|h| h.to_string())
            .map_err(|e| PasswordError::Hash(e.to_string()))
    })
    .await?
}

/// True when `candidate` matches `phc`. A malformed stored hash never matches.
pub async fn verify(phc: String, candidate: String) -> Result<bool, PasswordError> {
    Ok(tokio::task::spawn_blocking(move || {
        PasswordHash::new(&phc)
            .map(|parsed| {
                Argon2::default()
                    .verify_password(candidate.as_bytes(), &parsed)
                    .is_ok()
            })
            .unwrap_or(false)
    })
    .await?)
}

/// A valid hash of nothing anyone knows, verified against when the username does not exist so
/// that "no such user" and "wrong password" take the same time.
pub(crate) async fn burn_time(candidate: String) -> Result<(), PasswordError> {
    static DUMMY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let phc = match DUMMY.get() {
        Some(phc) => phc.clone(),
        None => {
            let phc = hash("bulwark-timing-equaliser".into()).await?;
            DUMMY.get_or_init(|| phc).clone()
        }
    };
    verify(phc, candidate).await.map(|_| ())
}

/// A random password for the first administrator: 20 characters from an alphabet without
/// look-alikes (no 0/O, 1/l/I), about 115 bits.
pub fn generate() -> String {
    use rand_core::RngCore;
    const ALPHABET: &[u8] = b"abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";
    let mut out = String::with_capacity(20);
    while out.len() < 20 {
        let byte = (OsRng.next_u32() & 0xff) as usize;
        // Rejection sampling keeps every character equally likely.
        if byte < 256 - (256 % ALPHABET.len()) {
            out.push(ALPHABET[byte % ALPHABET.len()] as char);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn hash_then_verify() {
        let phc = hash("correct horse".into()).await.unwrap();
        assert!(phc.starts_with("$argon2id$"));
        assert!(verify(phc.clone(), "correct horse".into()).await.unwrap());
        assert!(!verify(phc, "wrong horse".into()).await.unwrap());
        assert!(!verify("not a hash".into(), "x".into()).await.unwrap());
    }

    #[test]
    fn generated_passwords_differ_and_avoid_lookalikes() {
        let a = generate();
        let b = generate();
        assert_eq!(a.len(), 20);
        assert_ne!(a, b);
        assert!(!a.contains(['0', 'O', '1', 'l', 'I']));
    }
}
