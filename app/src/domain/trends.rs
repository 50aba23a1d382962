//! Trend alerts across all jobs: what the last minutes look like next to the usual, and when
//! that deserves a mail. Pure: the counts come from `services::trends`.
//!
//! - **spike**: failed attempts in the last 5 minutes at least [`SPIKE_FACTOR`] times their
//!   usual rate (the 24 hours before, per 5 minutes) and at least [`MIN_FAILURES`];
//! - **rate**: more than [`RATE_LIMIT_PERCENT`] of the attempts of the last 15 minutes failed,
//!   over at least [`MIN_ATTEMPTS`] attempts;
//! - **burst**: one error class with at least [`MIN_FAILURES`] failures in the last 5 minutes,
//!   [`SPIKE_FACTOR`] times its usual rate, and most of the recent failures.
//!
//! Each condition is an episode: it mails when it starts, stays quiet while it holds, and ends
//! once it has been clear for [`CLEAR_AFTER_MINUTES`] (so a flapping condition mails once).

use std::collections::BTreeMap;

use super::run::ErrorClass;

pub const SPIKE_FACTOR: f64 = 4.0;
pub const MIN_FAILURES: u64 = 5;
pub const RATE_LIMIT_PERCENT: f64 = 5.0;
pub const MIN_ATTEMPTS: u64 = 20;
pub const CLEAR_AFTER_MINUTES: i64 = 15;

/// Attempt counts over the windows the rules look at.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Window {
    /// Failed attempts in the last 5 minutes, by error class (`None`: none recorded).
    pub failed_5m: BTreeMap<Option<ErrorClass>, u64>,
    /// Attempts and failed attempts in the last 15 minutes.
    pub attempts_15m: u64,
    pub failed_15m: u64,
    /// Failed attempts in the 24 hours before the last 5 minutes, by error class.
    pub failed_baseline: BTreeMap<Option<ErrorClass>, u64>,
}

/// Five-minute slots in the baseline.
const BASELINE_SLOTS: f64 = 24.0 * 12.0;

/// A condition that holds now, with what was seen.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// Stable per condition (`spike`, `rate`, `burst:<class>`): the episode's key.
    pub key: String,
    pub seen: Seen,
}

/// What a condition measured; worded for people above the domain.
#[derive(Debug, Clone, PartialEq)]
pub enum Seen {
    Spike {
        recent: u64,
        usual: f64,
    },
    Rate {
        failed: u64,
        attempts: u64,
        percent: f64,
    },
    Burst {
        class: &'static str,
        count: u64,
        recent: u64,
        usual: f64,
    },
}

pub fn evaluate(w: &Window) -> Vec<Finding> {
    let mut findings = Vec::new();
    let recent: u64 = w.failed_5m.values().sum();
    let usual = w.failed_baseline.values().sum::<u64>() as f64 / BASELINE_SLOTS;
    if recent >= MIN_FAILURES && recent as f64 >= SPIKE_FACTOR * usual {
        findings.push(Finding {
            key: "spike".into(),
            seen: Seen::Spike { recent, usual },
        });
    }
    if w.attempts_15m >= MIN_ATTEMPTS {
        let rate = w.failed_15m as f64 * 100.0 / w.attempts_15m as f64;
        if rate > RATE_LIMIT_PERCENT {
            findings.push(Finding {
                key: "rate".into(),
                seen: Seen::Rate {
                    failed: w.failed_15m,
                    attempts: w.attempts_15m,
                    percent: rate,
                },
            });
        }
    }
    for (class, n) in &w.failed_5m {
        let usual = w.failed_baseline.get(class).copied().unwrap_or(0) as f64 / BASELINE_SLOTS;
        if *n >= MIN_FAILURES && *n as f64 >= SPIKE_FACTOR * usual && *n * 2 > recent {
            let class = class.map_or("unknown", ErrorClass::as_str);
            findings.push(Finding {
                key: format!("burst:{class}"),
                seen: Seen::Burst {
                    class,
                    count: *n,
                    recent,
                    usual,
                },
            });
        }
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classes(pairs: &[(ErrorClass, u64)]) -> BTreeMap<Option<ErrorClass>, u64> {
        pairs.iter().map(|(k, v)| (Some(*k), *v)).collect()
    }

    #[test]
    fn a_quiet_system_raises_nothing() {
        let w = Window {
            failed_5m: classes(&[(ErrorClass::Transient, 1)]),
            attempts_15m: 300,
            failed_15m: 2,
            failed_baseline: classes(&[(ErrorClass::Transient, 288)]),
        };
        assert!(evaluate(&w).is_empty());
    }

    #[test]
    fn a_spike_a_rate_and_a_burst_are_each_named() {
        let w = Window {
            failed_5m: classes(&[(ErrorClass::Timeout, 30), (ErrorClass::Transient, 2)]),
            attempts_15m: 200,
            failed_15m: 40,
            failed_baseline: classes(&[(ErrorClass::Transient, 288)]),
        };
        let keys: Vec<String> = evaluate(&w).into_iter().map(|f| f.key).collect();
        assert_eq!(keys, ["spike", "rate", "burst:timeout"]);
        assert_eq!(
            evaluate(&w)[0].seen,
            Seen::Spike {
                recent: 32,
                usual: 1.0
            }
        );
    }

    #[test]
    fn the_usual_failure_level_is_not_a_spike() {
        // 10 failures every 5 minutes is what this system always does.
        let w = Window {
            failed_5m: classes(&[(ErrorClass::Transient, 10)]),
            attempts_15m: 1000,
            failed_15m: 30,
            failed_baseline: classes(&[(ErrorClass::Transient, 2880)]),
        };
        assert!(evaluate(&w).is_empty());
    }

    #[test]
    fn too_few_attempts_make_no_rate() {
        let w = Window {
            attempts_15m: 10,
            failed_15m: 5,
            ..Window::default()
        };
        assert!(evaluate(&w).iter().all(|f| f.key != "rate"));
    }
}
