//! The timeout of one attempt: static, or learned from how long recent successes took.

use serde::{Deserialize, Serialize};

use super::job::{Percentile, TimeoutPolicy};

/// Fewer successful samples than this and a learned timeout falls back to the static one.
pub const MIN_SAMPLES: usize = 5;

/// The timeout in force and where it came from, as the UI shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct EffectiveTimeout {
    pub ms: u64,
    pub source: TimeoutSource,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TimeoutSource {
    Static,
    /// Dynamic was asked for, but only `samples` successes exist yet.
    StaticUntilLearned {
        samples: usize,
    },
    Learned {
        percentile: Percentile,
        samples: usize,
        raw_ms: u64,
    },
}

/// `recent_success_ms`: durations of the job's latest successful attempts, newest first.
pub fn effective(policy: &TimeoutPolicy, recent_success_ms: &[u64]) -> EffectiveTimeout {
    let Some(percentile) = policy.mode.percentile() else {
        return EffectiveTimeout {
            ms: policy.static_ms.min(policy.hard_cap_ms),
            source: TimeoutSource::Static,
        };
    };
    let window: Vec<u64> = recent_success_ms
        .iter()
        .copied()
        .take(policy.window as usize)
        .collect();
    if window.len() < MIN_SAMPLES {
        return EffectiveTimeout {
            ms: policy.static_ms.min(policy.hard_cap_ms),
            source: TimeoutSource::StaticUntilLearned {
                samples: window.len(),
            },
        };
    }
    let raw = nearest_rank(&window, percentile.quantile());
    let scaled = raw as f64 * f64::from(policy.factor_x10) / 10.0;
    EffectiveTimeout {
        ms: (scaled.round() as u64).clamp(policy.floor_ms, policy.hard_cap_ms),
        source: TimeoutSource::Learned {
            percentile,
            samples: window.len(),
            raw_ms: raw,
        },
    }
}

/// The nearest-rank percentile: the smallest sample with at least `q` of the samples at or
/// below it.
pub fn nearest_rank(samples: &[u64], q: f64) -> u64 {
    let mut sorted = samples.to_vec();
    sorted.sort_unstable();
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::job::TimeoutMode;

    fn policy(mode: TimeoutMode) -> TimeoutPolicy {
        TimeoutPolicy {
            static_ms: 60_000,
            mode,
            window: 20,
            factor_x10: 15,
            floor_ms: 1_000,
            hard_cap_ms: 120_000,
            stall_ms: None,
        }
    }

    #[test]
    fn static_until_enough_samples() {
        assert_eq!(
            effective(&policy(TimeoutMode::Static), &[5; 50]).source,
            TimeoutSource::Static
        );
        let few = effective(&policy(TimeoutMode::P95), &[100, 200]);
        assert_eq!(
            (few.ms, few.source),
            (60_000, TimeoutSource::StaticUntilLearned { samples: 2 })
        );
    }

    #[test]
    fn learned_from_the_percentile_times_the_factor_within_bounds() {
        let samples: Vec<u64> = (1..=20).map(|i| i * 1_000).collect();
        let t = effective(&policy(TimeoutMode::P95), &samples);
        // P95 of 1..20 s is 19 s; × 1.5 = 28.5 s.
        assert_eq!(t.ms, 28_500);
        assert_eq!(
            t.source,
            TimeoutSource::Learned {
                percentile: Percentile::P95,
                samples: 20,
                raw_ms: 19_000
            }
        );
        assert_eq!(
            effective(&policy(TimeoutMode::P99), &[10; 10]).ms,
            1_000,
            "floor"
        );
        assert_eq!(
            effective(&policy(TimeoutMode::P99), &[600_000; 10]).ms,
            120_000,
            "hard cap"
        );
    }
}
