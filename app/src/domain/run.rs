//! The life of a run, as pure rules: its states, how an attempt's failure is classed, and what
//! happens after each attempt.
//!
//! ```text
//!            claim             success
//!  pending ─────────► running ─────────► succeeded
//!     ▲                 │  │ failure, retries left
//!     │                 │  └──────────────────────► retry_wait ──(next_attempt_at)──► running
//!     │                 │ permanent, or retries spent
//!     │                 └──────────────────────────► dead | skipped (per on_exhausted)
//!  retrigger (from dead)
//! ```
//!
//! A timed-out or interrupted attempt (the worker died: its lease expired) counts as an attempt
//! and is retried like a transient failure; one a graceful shutdown handed back is recorded as
//! interrupted but spends no retry. Permanent failures skip the remaining retries.

use super::retry::RetryPolicy;

crate::text_enum! {
    /// Where a run is in its life. `blocked`: held because a job it depends on is failing.
    pub enum RunStatus {
        Pending = "pending",
        Running = "running",
        RetryWait = "retry_wait",
        Succeeded = "succeeded",
        Dead = "dead",
        Skipped = "skipped",
        Cancelled = "cancelled",
        Blocked = "blocked",
        /// A watched job's tick, waiting for its ping (`super::watch`): never claimed, no
        /// lease, left alone by recovery.
        AwaitingPing = "awaiting_ping",
        /// Due, but no live node may run it (its job's `run_on`, or commands switched off
        /// everywhere): taken as soon as one that may is live.
        WaitingForNode = "waiting_for_node",
    }
}

impl RunStatus {
    /// The statuses of a run that is still going.
    pub const ACTIVE: &'static [RunStatus] = &[
        RunStatus::Pending,
        RunStatus::Running,
        RunStatus::RetryWait,
        RunStatus::WaitingForNode,
    ];

    /// Still going: the run will be (or is being) attempted.
    pub fn is_active(self) -> bool {
        RunStatus::ACTIVE.contains(&self)
    }
}

crate::text_enum! {
    /// Why a run exists. `fallback`: another job's retries ran out and named this job.
    pub enum Trigger {
        Cron = "cron",
        Manual = "manual",
        Retrigger = "retrigger",
        Recovery = "recovery",
        Fallback = "fallback",
        /// A watched job pinged where no tick was expected.
        Ping = "ping",
        /// Made by a backfill for a past tick (`crate::domain::backfill`).
        Backfill = "backfill",
    }
}

crate::text_enum! {
    /// How one attempt ended.
    pub enum Outcome {
        Succeeded = "succeeded",
        Failed = "failed",
        TimedOut = "timed_out",
        Interrupted = "interrupted",
    }
}

impl Outcome {
    /// Every way an attempt can fail (what trend alerts count).
    pub const FAILURES: &'static [Outcome] =
        &[Outcome::Failed, Outcome::TimedOut, Outcome::Interrupted];
}

crate::text_enum! {
    /// Why an attempt failed, which decides whether it is retried.
    pub enum ErrorClass {
        Transient = "transient",
        Permanent = "permanent",
        Timeout = "timeout",
        Interrupted = "interrupted",
        /// A watched job's tick got no ping in time.
        Missed = "missed",
        /// It ended sooner than it ever should (`super::watch::Limits`).
        TooFast = "too_fast",
    }
}

crate::text_enum! {
    /// Why a timed-out attempt was ended.
    pub enum TimeoutKind {
        /// It ran longer than its timeout.
        Timeout = "timeout",
        /// It printed nothing (or a built-in reported no progress) for the stall timeout.
        Stalled = "stalled",
    }
}

crate::text_enum! {
    /// How a dead run left the failed queue.
    pub enum Resolution {
        /// A new run of the job was queued in its place.
        Retriggered = "retriggered",
        /// Someone fixed what it was for by hand.
        Resolved = "resolved",
        /// Someone decided it should simply be dropped.
        Discarded = "discarded",
    }
}

impl ErrorClass {
    pub fn is_retryable(self) -> bool {
        matches!(
            self,
            ErrorClass::Transient | ErrorClass::Timeout | ErrorClass::Interrupted
        )
    }
}

/// HTTP statuses that are worth retrying (`docs/ARCHITECTURE.md` §3): the server asked us to
/// come back, or failed in a way that usually passes.
pub fn classify_http_status(status: u16) -> ErrorClass {
    match status {
        408 | 425 | 429 | 500 | 502 | 503 | 504 => ErrorClass::Transient,
        // Not implemented / version not supported will not change by waiting.
        501 | 505 => ErrorClass::Permanent,
        500..=599 => ErrorClass::Transient,
        _ => ErrorClass::Permanent,
    }
}

/// EX_TEMPFAIL from sysexits.h: "try again later".
pub const EX_TEMPFAIL: i32 = 75;

/// A command's failure: killed by a signal (`code` = None) or an exit code in `transient` is
/// transient; any other non-zero exit is permanent.
pub fn classify_exit(code: Option<i32>, transient: &[i32]) -> ErrorClass {
    match code {
        None => ErrorClass::Transient,
        Some(code) if transient.contains(&code) => ErrorClass::Transient,
        Some(_) => ErrorClass::Permanent,
    }
}

/// `Retry-After` as seconds or an HTTP date, in milliseconds from `now`.
pub fn parse_retry_after(value: &str, now: chrono::DateTime<chrono::Utc>) -> Option<u64> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(seconds.saturating_mul(1_000));
    }
    let at = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    Some(
        (at.with_timezone(&chrono::Utc) - now)
            .num_milliseconds()
            .max(0) as u64,
    )
}

/// What the engine learned from one attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptReport {
    pub outcome: Outcome,
    pub class: Option<ErrorClass>,
    /// The server's `Retry-After`, when it sent one.
    pub retry_after_ms: Option<u64>,
    /// For a timeout: which one ended the attempt.
    pub timeout_kind: Option<TimeoutKind>,
}

impl AttemptReport {
    pub fn succeeded() -> Self {
        AttemptReport {
            outcome: Outcome::Succeeded,
            class: None,
            retry_after_ms: None,
            timeout_kind: None,
        }
    }

    pub fn failed(class: ErrorClass) -> Self {
        let outcome = match class {
            ErrorClass::Timeout => Outcome::TimedOut,
            ErrorClass::Interrupted => Outcome::Interrupted,
            _ => Outcome::Failed,
        };
        AttemptReport {
            outcome,
            class: Some(class),
            retry_after_ms: None,
            timeout_kind: (class == ErrorClass::Timeout).then_some(TimeoutKind::Timeout),
        }
    }

    /// Ended for printing nothing (or reporting no progress) for the stall timeout.
    pub fn stalled() -> Self {
        AttemptReport {
            timeout_kind: Some(TimeoutKind::Stalled),
            ..AttemptReport::failed(ErrorClass::Timeout)
        }
    }
}

/// What happens to the run after an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    Succeeded,
    /// Wait `delay_ms`, then attempt again. `retry` is the retry's number (1 = first retry).
    Retry {
        retry: u8,
        delay_ms: u64,
    },
    /// No retry left, or the failure is permanent: the job's `on_exhausted` applies.
    Exhausted,
}

/// Decides the run's next step after its `attempts`-th attempt that spent a retry (1 = the
/// first try; attempts a graceful shutdown handed back do not count). `previous_delay_ms` is
/// the wait before this attempt (decorrelated jitter draws from it); `unit` is a uniform
/// random number in [0, 1).
pub fn decide(
    policy: &RetryPolicy,
    attempts: u32,
    report: &AttemptReport,
    previous_delay_ms: Option<u64>,
    unit: f64,
) -> Next {
    let Some(class) = report.class else {
        return Next::Succeeded;
    };
    let retries_done = attempts.saturating_sub(1);
    if !class.is_retryable() || retries_done >= u32::from(policy.max_retries()) {
        return Next::Exhausted;
    }
    let retry = (retries_done + 1) as u8;
    let planned = policy.sample_delay_ms(retry, previous_delay_ms, unit);
    Next::Retry {
        retry,
        // A server's Retry-After is honoured, but no further out than the policy's own ceiling:
        // it comes off the network and can be any number.
        delay_ms: planned
            .max(report.retry_after_ms.unwrap_or(0))
            .min(RetryPolicy::LONGEST_WAIT_MS),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::retry::{Jitter, Multiplier};

    fn policy(c: u8) -> RetryPolicy {
        RetryPolicy::new(
            10_000,
            Multiplier::from_tenths(20).unwrap(),
            c,
            Jitter::None,
            None,
        )
        .unwrap()
    }

    #[test]
    fn the_reference_schedule_retries_at_10_20_40_seconds() {
        let p = policy(3);
        let failed = AttemptReport::failed(ErrorClass::Transient);
        let waits: Vec<Next> = (1..=4).map(|a| decide(&p, a, &failed, None, 0.5)).collect();
        assert_eq!(
            waits,
            [
                Next::Retry {
                    retry: 1,
                    delay_ms: 10_000
                },
                Next::Retry {
                    retry: 2,
                    delay_ms: 20_000
                },
                Next::Retry {
                    retry: 3,
                    delay_ms: 40_000
                },
                Next::Exhausted,
            ]
        );
    }

    #[test]
    fn permanent_failures_are_not_retried() {
        assert_eq!(
            decide(
                &policy(5),
                1,
                &AttemptReport::failed(ErrorClass::Permanent),
                None,
                0.0
            ),
            Next::Exhausted
        );
    }

    #[test]
    fn timeouts_and_interruptions_retry_like_transient_failures() {
        for class in [ErrorClass::Timeout, ErrorClass::Interrupted] {
            let report = AttemptReport::failed(class);
            assert!(matches!(
                decide(&policy(2), 1, &report, None, 0.0),
                Next::Retry { retry: 1, .. }
            ));
        }
        assert_eq!(
            AttemptReport::failed(ErrorClass::Timeout).outcome,
            Outcome::TimedOut
        );
    }

    #[test]
    fn retry_after_is_honoured_when_longer() {
        let mut report = AttemptReport::failed(ErrorClass::Transient);
        report.retry_after_ms = Some(60_000);
        assert_eq!(
            decide(&policy(2), 1, &report, None, 0.0),
            Next::Retry {
                retry: 1,
                delay_ms: 60_000
            }
        );
        report.retry_after_ms = Some(1_000);
        assert_eq!(
            decide(&policy(2), 1, &report, None, 0.0),
            Next::Retry {
                retry: 1,
                delay_ms: 10_000
            }
        );
        // `Retry-After: 18446744073709551` must not wrap the engine's timestamp arithmetic.
        report.retry_after_ms = parse_retry_after("18446744073709551", chrono::Utc::now());
        assert_eq!(
            decide(&policy(2), 1, &report, None, 0.0),
            Next::Retry {
                retry: 1,
                delay_ms: RetryPolicy::LONGEST_WAIT_MS
            }
        );
    }

    #[test]
    fn classes() {
        for s in [408, 425, 429, 500, 502, 503, 504] {
            assert_eq!(classify_http_status(s), ErrorClass::Transient, "{s}");
        }
        for s in [400, 401, 403, 404, 410, 422, 501] {
            assert_eq!(classify_http_status(s), ErrorClass::Permanent, "{s}");
        }
        assert_eq!(
            classify_exit(Some(EX_TEMPFAIL), &[EX_TEMPFAIL]),
            ErrorClass::Transient
        );
        assert_eq!(
            classify_exit(Some(1), &[EX_TEMPFAIL]),
            ErrorClass::Permanent
        );
        assert_eq!(classify_exit(None, &[]), ErrorClass::Transient);
    }

    #[test]
    fn retry_after_forms() {
        let now = chrono::DateTime::parse_from_rfc3339("2026-11-30T10:00:00Z")
            .unwrap()
            .to_utc();
        assert_eq!(parse_retry_after("120", now), Some(120_000));
        assert_eq!(
            parse_retry_after("Mon, 30 Nov 2026 10:01:00 GMT", now),
            Some(60_000)
        );
        assert_eq!(parse_retry_after("soon", now), None);
    }

    #[test]
    fn statuses_round_trip() {
        for s in RunStatus::ALL {
            assert_eq!(RunStatus::parse(s.as_str()), Some(*s));
        }
        assert!(RunStatus::RetryWait.is_active());
        assert!(!RunStatus::Dead.is_active());
    }
}
