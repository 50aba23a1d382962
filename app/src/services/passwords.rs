//! Argon2id hashing, kept off the async executor: one hash costs tens of milliseconds of CPU
//! and 19 MiB of memory.
//!
//! Hashes run behind one semaphore sized to the cores, so a burst of sign-ins costs at most
//! that many hashes' memory at a time; up to [`MAX_WAITING`] more wait their turn (for at most
//! [`MAX_WAIT`]) and the rest are refused at once with [`PasswordError::Busy`]. The last
//! [`RESERVED`] places in that queue are kept for [`Lane::Known`] — a person signing in from
//! where they signed in before — so strangers filling the queue cannot lock them out.
//!
//! They run on threads of their own, one per permit, never on the runtime's blocking pool, and
//! each thread keeps one Argon2 memory for all its hashes. Allocating 19 MiB per hash, as the
//! crate's `PasswordHasher` does, left the memory in the allocator's arena of whichever thread
//! hashed, and fragmented arenas grew with each hash: measured from outside (release build,
//! 300 parallel wrong passwords for one name, 8–10 of them hashed) RSS grew 131–227 MB and
//! stayed. Here it is at most one memory per hashing thread, for the process's life.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex, mpsc};
use std::time::Duration;

use std::cell::RefCell;

use argon2::password_hash::{self, Output, PasswordHash, Salt, SaltString};
use argon2::{Algorithm, Argon2, Block, Params, Version};
use rand_core::OsRng;

#[derive(Debug, thiserror::Error)]
pub enum PasswordError {
    #[error("could not hash the password: {0}")]
    Hash(String),
    #[error("the hashing thread stopped before it answered")]
    Stopped,
    #[error("the server is busy checking other sign-ins; try again in a moment")]
    Busy,
}

/// Sign-ins that may queue for a hash before further ones are refused outright.
pub const MAX_WAITING: usize = 64;
/// Places in the queue only [`Lane::Known`] may take.
pub const RESERVED: usize = 16;

/// Who a hash is for, as the queue tells them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lane {
    /// A name and an address that have signed in together lately (`services/login.rs`).
    Known,
    /// Anyone else.
    Open,
}

/// How long a queued hash waits for its turn before it is refused.
pub const MAX_WAIT: Duration = Duration::from_secs(10);

/// Hashes at once: one per core (what the machine can compute in parallel anyway).
pub fn max_parallel() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

static PERMITS: LazyLock<tokio::sync::Semaphore> =
    LazyLock::new(|| tokio::sync::Semaphore::new(max_parallel()));
static WAITING: AtomicUsize = AtomicUsize::new(0);
static RUNNING: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

/// The most hashes that ever ran at once in this process (the memory they held is this times
/// 19 MiB).
pub fn peak_parallel() -> usize {
    PEAK.load(Ordering::Relaxed)
}

/// Runs `work` on the blocking pool once a permit is free.
async fn bounded<T: Send + 'static>(
    lane: Lane,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, PasswordError> {
    let room = match lane {
        Lane::Known => MAX_WAITING,
        Lane::Open => MAX_WAITING - RESERVED,
    };
    if WAITING.fetch_add(1, Ordering::AcqRel) >= room {
        WAITING.fetch_sub(1, Ordering::AcqRel);
        return Err(PasswordError::Busy);
    }
    let permit = tokio::time::timeout(MAX_WAIT, PERMITS.acquire()).await;
    WAITING.fetch_sub(1, Ordering::AcqRel);
    let permit = match permit {
        Ok(Ok(permit)) => permit,
        // The semaphore is never closed; a timeout is the busy case.
        _ => return Err(PasswordError::Busy),
    };
    // The permit moves into the work, so it is held until the hash has ended even if this
    // future is dropped meanwhile (a client that hung up).
    let (answer, answered) = tokio::sync::oneshot::channel();
    let job: Job = Box::new(move || {
        let _running = Running::start();
        let out = work();
        drop(permit);
        let _ = answer.send(out);
    });
    HASHERS.send(job).map_err(|_| PasswordError::Stopped)?;
    answered.await.map_err(|_| PasswordError::Stopped)
}

type Job = Box<dyn FnOnce() + Send>;

/// Counts a hash as running until it is dropped, a panic's unwinding included.
struct Running;

impl Running {
    fn start() -> Running {
        let running = RUNNING.fetch_add(1, Ordering::AcqRel) + 1;
        PEAK.fetch_max(running, Ordering::Relaxed);
        Running
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        RUNNING.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Where hashes are sent: [`max_parallel`] threads take them in turn. A hash that panics is
/// caught on its thread (its caller gets [`PasswordError::Stopped`]) so the thread lives on.
static HASHERS: LazyLock<mpsc::Sender<Job>> = LazyLock::new(|| {
    let (jobs, queue) = mpsc::channel::<Job>();
    let queue = Arc::new(Mutex::new(queue));
    for i in 0..max_parallel() {
        let queue = queue.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("argon2-{i}"))
            .spawn(move || {
                loop {
                    // The lock is held only to take the next job, never while it runs.
                    let next = queue
                        .lock()
                        .unwrap_or_else(|poisoned| poisoned.into_inner())
                        .recv();
                    let Ok(job) = next else { return };
                    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                }
            });
        if let Err(e) = spawned {
            tracing::error!(error = %e, "could not start a password hashing thread");
        }
    }
    jobs
});

/// Hashes with Argon2id and the crate's recommended parameters (19 MiB, 2 passes).
pub async fn hash(password: String) -> Result<String, PasswordError> {
    bounded(Lane::Known, move || {
        let salt = SaltString::generate(&mut OsRng);
        let argon = Argon2::default();
        hash_with(
            Algorithm::default(),
            Version::default(),
            argon.params(),
            password.as_bytes(),
            salt.as_salt(),
        )
        .map(|h| h.to_string())
        .map_err(|e| PasswordError::Hash(e.to_string()))
    })
    .await?
}

/// True when `candidate` matches `phc`. A malformed stored hash never matches.
pub async fn verify(phc: String, candidate: String) -> Result<bool, PasswordError> {
    verify_in(Lane::Known, phc, candidate).await
}

/// [`verify`] in `lane` of the queue.
pub async fn verify_in(lane: Lane, phc: String, candidate: String) -> Result<bool, PasswordError> {
    bounded(lane, move || matches(&phc, candidate.as_bytes())).await
}

thread_local! {
    /// The hashing thread's Argon2 memory, allocated by its first hash and reused by every
    /// later one (the module doc says why: a fresh 19 MiB each time fragments the thread's
    /// arena, which then grows).
    static MEMORY: RefCell<Vec<Block>> = const { RefCell::new(Vec::new()) };
}

/// Argon2 over `password` and `salt` in this thread's memory: what the crate's
/// `PasswordHasher` computes, without its allocation per hash.
fn hash_with<'a>(
    algorithm: Algorithm,
    version: Version,
    params: &Params,
    password: &[u8],
    salt: Salt<'a>,
) -> password_hash::Result<PasswordHash<'a>> {
    let mut salt_bytes = [0u8; Salt::MAX_LENGTH];
    let salt_bytes = salt.decode_b64(&mut salt_bytes)?;
    let argon = Argon2::new(algorithm, version, params.clone());
    let len = params.output_len().unwrap_or(Params::DEFAULT_OUTPUT_LEN);
    let output = Output::init_with(len, |out| {
        MEMORY.with_borrow_mut(|memory| {
            if memory.len() < params.block_count() {
                memory.resize(params.block_count(), Block::default());
            }
            argon.hash_password_into_with_memory(password, salt_bytes, out, &mut memory[..])
        })?;
        Ok(())
    })?;
    Ok(PasswordHash {
        algorithm: algorithm.ident(),
        version: Some(version.into()),
        params: params.try_into()?,
        salt: Some(salt),
        hash: Some(output),
    })
}

/// Whether `candidate` hashes, with the parameters and salt stored in `phc`, to its hash
/// (compared in constant time by `Output`'s equality).
fn matches(phc: &str, candidate: &[u8]) -> bool {
    let Ok(stored) = PasswordHash::new(phc) else {
        return false;
    };
    let (Some(salt), Some(expected)) = (stored.salt, stored.hash) else {
        return false;
    };
    let (Ok(algorithm), Ok(version), Ok(params)) = (
        Algorithm::try_from(stored.algorithm),
        stored.version.map(Version::try_from).transpose(),
        Params::try_from(&stored),
    ) else {
        return false;
    };
    hash_with(
        algorithm,
        version.unwrap_or_default(),
        &params,
        candidate,
        salt,
    )
    .ok()
    .and_then(|computed| computed.hash)
    .is_some_and(|computed| computed == expected)
}

/// A valid hash of nothing anyone knows, verified against when the username does not exist so
/// that "no such user" and "wrong password" take the same time.
pub(crate) async fn burn_time(lane: Lane, candidate: String) -> Result<(), PasswordError> {
    static DUMMY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let phc = match DUMMY.get() {
        Some(phc) => phc.clone(),
        None => {
            let phc = hash("bulwark-timing-equaliser".into()).await?;
            DUMMY.get_or_init(|| phc).clone()
        }
    };
    verify_in(lane, phc, candidate).await.map(|_| ())
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

    /// Hashes stay the crate's: what it made (with other parameters too) verifies here, and
    /// what is made here verifies with it.
    #[tokio::test]
    async fn hashes_are_the_crates_own() {
        use argon2::password_hash::{PasswordHasher, PasswordVerifier};
        let salt = SaltString::generate(&mut OsRng);
        let older = Argon2::new(
            Algorithm::Argon2id,
            Version::V0x13,
            Params::new(4096, 3, 1, None).unwrap(),
        );
        let theirs = older.hash_password(b"old one", &salt).unwrap().to_string();
        assert!(verify(theirs.clone(), "old one".into()).await.unwrap());
        assert!(!verify(theirs, "old two".into()).await.unwrap());
        let ours = hash("new one".into()).await.unwrap();
        let parsed = PasswordHash::new(&ours).unwrap();
        assert!(
            Argon2::default()
                .verify_password(b"new one", &parsed)
                .is_ok()
        );
        assert!(
            Argon2::default()
                .verify_password(b"new two", &parsed)
                .is_err()
        );
    }

    /// Every hash runs on one of the few hashing threads, whatever the burst, and one that
    /// panics leaves its thread working.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn a_burst_runs_on_the_hashing_threads_alone() {
        let mut burst = tokio::task::JoinSet::new();
        for _ in 0..40 {
            burst.spawn(bounded(Lane::Known, || {
                std::thread::sleep(Duration::from_millis(5));
                std::thread::current().name().map(str::to_string)
            }));
        }
        let names: std::collections::BTreeSet<Option<String>> = burst
            .join_all()
            .await
            .into_iter()
            .map(|r| r.unwrap())
            .collect();
        assert!(names.len() <= max_parallel(), "{names:?}");
        assert!(
            names
                .iter()
                .all(|n| n.as_deref().is_some_and(|n| n.starts_with("argon2-"))),
            "{names:?}"
        );
        for _ in 0..max_parallel() {
            let panicked = bounded(Lane::Known, || panic!("a broken hash")).await;
            assert!(matches!(panicked, Err(PasswordError::Stopped)));
        }
        assert_eq!(bounded(Lane::Known, || 7).await.unwrap(), 7);
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
