//! Retry and timeout policies in words, the way the run page and the Overview say them:
//! "10 s × 2.0, up to 5 retries, full jitter, capped at 10 min; timeout 5 min".

use serde::Deserialize;

use super::Locale;
use crate::domain::job::{TimeoutMode, TimeoutPolicy};
use crate::domain::retry::{Jitter, RetryInput, RetryPolicy};
use crate::t;

/// `10 s × 2.0, up to 5 retries, full jitter, capped at 10 min`.
pub fn retry(locale: Locale, policy: &RetryPolicy) -> String {
    let retries = t!(in locale, "policy-retries", count = policy.max_retries());
    let jitter = match policy.jitter() {
        Jitter::None => t!(in locale, "policy-no-jitter"),
        other => t!(
            in locale,
            "policy-jitter",
            jitter = super::words::jitter_name_in(locale, other)
        ),
    };
    let cap = policy.cap_ms().map_or_else(
        || t!(in locale, "policy-no-cap"),
        |ms| t!(in locale, "policy-cap", cap = locale.duration(ms as f64)),
    );
    t!(
        in locale,
        "policy-retry",
        first = locale.duration(policy.first_ms() as f64),
        m = format!("{:.1}", policy.multiplier().value()),
        retries = retries,
        jitter = jitter,
        cap = cap
    )
}

/// `timeout 5 min`, or how a learned one is found, and the stall limit when there is one.
pub fn timeout(locale: Locale, policy: &TimeoutPolicy) -> String {
    let mut text = match policy.mode {
        TimeoutMode::Static => t!(
            in locale,
            "policy-timeout",
            timeout = locale.duration(policy.static_ms as f64)
        ),
        learned => t!(
            in locale,
            "policy-timeout-learned",
            percentile = learned.as_str().to_ascii_uppercase(),
            window = policy.window,
            factor = format!("{:.1}", f64::from(policy.factor_x10) / 10.0),
            floor = locale.duration(policy.floor_ms as f64),
            cap = locale.duration(policy.hard_cap_ms as f64),
            initial = locale.duration(policy.static_ms as f64)
        ),
    };
    if let Some(stall) = policy.stall_ms {
        text.push_str(&t!(in locale, "policy-stall", stall = locale.duration(stall as f64)));
    }
    text
}

/// The policy a run recorded (`{"retry": …, "timeout": …}`, see `services::runs`) in words;
/// `None` when it does not parse (then the page shows it as stored).
pub fn snapshot(locale: Locale, json: &str) -> Option<String> {
    #[derive(Deserialize)]
    struct Snapshot {
        retry: RetryInput,
        timeout: TimeoutPolicy,
    }
    let snapshot: Snapshot = serde_json::from_str(json).ok()?;
    let retry_policy = RetryPolicy::parse(&snapshot.retry).ok()?;
    Some(t!(
        in locale,
        "policy-snapshot",
        retry = retry(locale, &retry_policy),
        timeout = timeout(locale, &snapshot.timeout)
    ))
}

/// A one-off retry override (a [`RetryInput`] as JSON) in words.
pub fn retry_override(locale: Locale, json: &str) -> Option<String> {
    let input: RetryInput = serde_json::from_str(json).ok()?;
    RetryPolicy::parse(&input).ok().map(|p| retry(locale, &p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(first: &str, multiplier: &str, max: &str, jitter: &str, cap: &str) -> RetryInput {
        RetryInput {
            first: first.into(),
            multiplier: multiplier.into(),
            max_retries: max.into(),
            jitter: jitter.into(),
            cap: cap.into(),
        }
    }

    #[test]
    fn a_recorded_policy_reads_as_a_sentence() {
        let json = serde_json::json!({
            "retry": input("10s", "2.0", "5", "full", "10m"),
            "timeout": TimeoutPolicy {
                static_ms: 300_000,
                mode: TimeoutMode::Static,
                window: 20,
                factor_x10: 15,
                floor_ms: 1_000,
                hard_cap_ms: 600_000,
                stall_ms: None,
            },
        })
        .to_string();
        assert_eq!(
            snapshot(Locale::english(), &json).unwrap(),
            "10 s × 2.0, up to 5 retries, full jitter, capped at 10 min; timeout 5 min"
        );
    }

    #[test]
    fn learned_timeouts_stalls_single_retries_and_no_cap() {
        let policy = RetryPolicy::parse(&input("500ms", "1.5", "1", "", "")).unwrap();
        assert_eq!(
            retry(Locale::english(), &policy),
            "500 ms × 1.5, up to 1 retry, no jitter, no cap"
        );
        let learned = TimeoutPolicy {
            static_ms: 60_000,
            mode: TimeoutMode::P95,
            window: 20,
            factor_x10: 15,
            floor_ms: 1_000,
            hard_cap_ms: 120_000,
            stall_ms: Some(30_000),
        };
        assert_eq!(
            timeout(Locale::english(), &learned),
            "timeout learned: P95 of the last 20 successes × 1.5, between 1 s and 2 min \
             (1 min until there are enough), or 30 s without output"
        );
    }

    #[test]
    fn what_does_not_parse_is_left_to_the_caller() {
        assert_eq!(snapshot(Locale::english(), "{}"), None);
        assert_eq!(snapshot(Locale::english(), "not json"), None);
        assert_eq!(retry_override(Locale::english(), r#"{"first":"x"}"#), None);
    }
}
