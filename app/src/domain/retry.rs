//! The retry contract (`docs/ARCHITECTURE.md` §4), shared by the engine that waits and the
//! editor that draws.
//!
//! A policy has a first interval F, a multiplier M in [1.0, 8.0] with one decimal, at most C
//! retries (1–16), an optional cap on one interval, and a jitter mode. Retry n (1 ≤ n ≤ C)
//! waits
//!
//! ```text
//! d(n) = min(cap, F · M^(n−1))
//! T(C) = Σ d(n)          = F · (M^C − 1)/(M − 1) uncapped, F · C when M = 1
//! ∂d/∂M = F · (n−1) · M^(n−2)      ∂d/∂n = F · M^(n−1) · ln M      (0 where the cap binds)
//! P(recovered within n retries) = 1 − (1 − p)^n
//! ```
//!
//! Jitter spreads each wait: `full` draws from U(0, d), `equal` from d · (0.5 + U(0,1) · 0.5),
//! `decorrelated` from min(cap, U(F, 3 · previous)) where `previous` is the last wait, persisted
//! on the run. Everything here is pure: callers pass the uniform random number in, so the engine
//! and the tests decide where randomness comes from.

use serde::{Deserialize, Serialize};

use super::duration;
use crate::domain::Problem;
use crate::domain::problem::Fact;

// Thresholds where the curve turns dangerous (the wording of the warnings is ours).
const NEAR_FIXED_BELOW: f64 = 1.5;
const EXPLOSIVE_ABOVE: f64 = 4.0;
const UNTUNABLE_RETRIES_ABOVE: u8 = 8;
const STEEP_TOTAL_RETRIES_ABOVE: u8 = 10;

/// The multiplier in tenths, so 1.5 is exactly 15 and round-trips through the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Multiplier(u8);

impl Multiplier {
    pub const MIN_TENTHS: u8 = 10;
    pub const MAX_TENTHS: u8 = 80;

    pub fn from_tenths(tenths: i64) -> Result<Self, RetryError> {
        if (i64::from(Self::MIN_TENTHS)..=i64::from(Self::MAX_TENTHS)).contains(&tenths) {
            Ok(Self(tenths as u8))
        } else {
            Err(RetryError::MultiplierRange(tenths as f64 / 10.0))
        }
    }

    /// Accepts `2`, `2.0`, `1.5`; refuses `2.25` (one decimal at most) and values outside
    /// [1.0, 8.0].
    pub fn parse(text: &str) -> Result<Self, RetryError> {
        let text = text.trim();
        let value: f64 = text
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite())
            .ok_or_else(|| RetryError::MultiplierNotANumber(text.to_string()))?;
        let tenths = value * 10.0;
        if (tenths - tenths.round()).abs() > 1e-6 {
            return Err(RetryError::MultiplierPrecision(text.to_string()));
        }
        Self::from_tenths(tenths.round() as i64)
    }

    pub fn tenths(self) -> u8 {
        self.0
    }

    pub fn value(self) -> f64 {
        f64::from(self.0) / 10.0
    }
}

crate::text_enum! {
    /// How retries spread around the nominal delay.
    #[derive(Default)]
    pub enum Jitter {
        #[default]
        None = "none",
        Full = "full",
        Equal = "equal",
        Decorrelated = "decorrelated",
    }
}

impl Jitter {
    /// A jitter as typed: empty means none.
    pub fn parse_input(text: &str) -> Result<Self, RetryError> {
        match text.trim() {
            "" => Ok(Jitter::None),
            text => Jitter::parse(text).ok_or_else(|| RetryError::Jitter(text.to_string())),
        }
    }
}

/// Why a policy was refused. Each message names the field and the accepted range.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RetryError {
    #[error("first interval {0}")]
    First(duration::DurationError),
    #[error("first interval must be greater than 0")]
    FirstZero,
    #[error("multiplier '{0}' is not a number; it must be between 1.0 and 8.0")]
    MultiplierNotANumber(String),
    #[error("multiplier must be between 1.0 and 8.0, not {0}")]
    MultiplierRange(f64),
    #[error("multiplier '{0}' has more than one decimal; use steps of 0.1 between 1.0 and 8.0")]
    MultiplierPrecision(String),
    #[error("max retries must be a whole number between 1 and 16, not {0}")]
    MaxRetries(String),
    #[error("jitter must be none, full, equal or decorrelated, not '{0}'")]
    Jitter(String),
    #[error("cap {0}")]
    Cap(duration::DurationError),
    #[error("cap ({cap}) must be at least the first interval ({first})")]
    CapBelowFirst { cap: String, first: String },
}

impl RetryError {
    /// The refusal as the catalogue words it ([`crate::domain::problem`]).
    pub fn problem(&self) -> crate::domain::Problem {
        use crate::problem;
        match self {
            RetryError::First(e) => problem!("error-retry-first", error = e.problem()),
            RetryError::FirstZero => problem!("error-retry-first-zero"),
            RetryError::MultiplierNotANumber(text) => {
                problem!("error-retry-multiplier-nan", text = text)
            }
            RetryError::MultiplierRange(m) => {
                problem!("error-retry-multiplier-range", m = m.to_string())
            }
            RetryError::MultiplierPrecision(text) => {
                problem!("error-retry-multiplier-precision", text = text)
            }
            RetryError::MaxRetries(text) => problem!("error-retry-max", text = text),
            RetryError::Jitter(text) => problem!("error-retry-jitter", text = text),
            RetryError::Cap(e) => problem!("error-retry-cap", error = e.problem()),
            RetryError::CapBelowFirst { cap, first } => {
                problem!("error-retry-cap-below-first", cap = cap, first = first)
            }
        }
    }
}

impl RetryError {
    /// The form field the message belongs beside.
    pub fn field(&self) -> &'static str {
        match self {
            RetryError::First(_) | RetryError::FirstZero => "first",
            RetryError::MultiplierNotANumber(_)
            | RetryError::MultiplierRange(_)
            | RetryError::MultiplierPrecision(_) => "multiplier",
            RetryError::MaxRetries(_) => "max_retries",
            RetryError::Jitter(_) => "jitter",
            RetryError::Cap(_) | RetryError::CapBelowFirst { .. } => "cap",
        }
    }
}

/// A valid retry policy. Build it with [`RetryPolicy::new`] or [`RetryPolicy::parse`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetryPolicy {
    first_ms: u64,
    multiplier: Multiplier,
    max_retries: u8,
    jitter: Jitter,
    cap_ms: Option<u64>,
}

/// The policy as typed into a form or a command line, before parsing.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct RetryInput {
    pub first: String,
    pub multiplier: String,
    pub max_retries: String,
    pub jitter: String,
    /// Empty for no cap.
    pub cap: String,
}

impl RetryPolicy {
    pub const MAX_RETRIES: u8 = 16;

    /// No wait is ever scheduled further out than this (365 days), whatever the curve or a
    /// server's `Retry-After` says. Uncapped, F · 8^15 runs past what a timestamp (or a u64 of
    /// milliseconds) can hold; a year is far enough to mean "not soon" and near enough for every
    /// database's timestamp arithmetic.
    pub const LONGEST_WAIT_MS: u64 = 365 * 86_400_000;

    pub fn new(
        first_ms: u64,
        multiplier: Multiplier,
        max_retries: u8,
        jitter: Jitter,
        cap_ms: Option<u64>,
    ) -> Result<Self, RetryError> {
        if first_ms == 0 {
            return Err(RetryError::FirstZero);
        }
        if !(1..=Self::MAX_RETRIES).contains(&max_retries) {
            return Err(RetryError::MaxRetries(max_retries.to_string()));
        }
        if let Some(cap) = cap_ms
            && cap < first_ms
        {
            return Err(RetryError::CapBelowFirst {
                cap: duration::format_ms(cap),
                first: duration::format_ms(first_ms),
            });
        }
        Ok(Self {
            first_ms,
            multiplier,
            max_retries,
            jitter,
            cap_ms,
        })
    }

    /// Parses every field and reports every problem, each with its field.
    pub fn parse(input: &RetryInput) -> Result<Self, Vec<RetryError>> {
        let mut errors = Vec::new();
        let first = duration::parse_ms(&input.first)
            .map_err(RetryError::First)
            .and_then(|ms| {
                if ms == 0 {
                    Err(RetryError::FirstZero)
                } else {
                    Ok(ms)
                }
            });
        let multiplier = Multiplier::parse(&input.multiplier);
        let max_retries = input
            .max_retries
            .trim()
            .parse::<u8>()
            .ok()
            .filter(|c| (1..=Self::MAX_RETRIES).contains(c))
            .ok_or_else(|| RetryError::MaxRetries(input.max_retries.trim().to_string()));
        let jitter = Jitter::parse_input(&input.jitter);
        let cap = match input.cap.trim() {
            "" | "none" => Ok(None),
            text => duration::parse_ms(text).map(Some).map_err(RetryError::Cap),
        };
        for result in [
            first.as_ref().err(),
            multiplier.as_ref().err(),
            max_retries.as_ref().err(),
            jitter.as_ref().err(),
            cap.as_ref().err(),
        ]
        .into_iter()
        .flatten()
        {
            errors.push(result.clone());
        }
        match (first, multiplier, max_retries, jitter, cap) {
            (Ok(f), Ok(m), Ok(c), Ok(j), Ok(cap)) if errors.is_empty() => {
                RetryPolicy::new(f, m, c, j, cap).map_err(|e| vec![e])
            }
            _ => Err(errors),
        }
    }

    pub fn first_ms(&self) -> u64 {
        self.first_ms
    }
    pub fn multiplier(&self) -> Multiplier {
        self.multiplier
    }
    pub fn max_retries(&self) -> u8 {
        self.max_retries
    }
    pub fn jitter(&self) -> Jitter {
        self.jitter
    }
    pub fn cap_ms(&self) -> Option<u64> {
        self.cap_ms
    }

    /// The same policy as form input, for pre-filling an editor.
    pub fn to_input(&self) -> RetryInput {
        RetryInput {
            first: duration::format_ms(self.first_ms),
            multiplier: format!("{:.1}", self.multiplier.value()),
            max_retries: self.max_retries.to_string(),
            jitter: self.jitter.as_str().to_string(),
            cap: self.cap_ms.map(duration::format_ms).unwrap_or_default(),
        }
    }

    fn cap(&self) -> f64 {
        self.cap_ms.map_or(f64::INFINITY, |c| c as f64)
    }

    /// F · M^(n−1), before the cap.
    fn uncapped(&self, n: u8) -> f64 {
        self.first_ms as f64 * self.multiplier.value().powi(i32::from(n) - 1)
    }

    fn is_capped(&self, n: u8) -> bool {
        self.uncapped(n) > self.cap()
    }

    /// d(n) in milliseconds: the nominal wait before retry `n` (1-based), without jitter.
    pub fn delay_ms(&self, n: u8) -> f64 {
        self.uncapped(n).min(self.cap())
    }

    /// d(1) … d(C).
    pub fn delays_ms(&self) -> Vec<f64> {
        (1..=self.max_retries).map(|n| self.delay_ms(n)).collect()
    }

    /// Running totals: how long after the first failure retry n starts (ignoring run time).
    pub fn cumulative_ms(&self) -> Vec<f64> {
        self.delays_ms()
            .into_iter()
            .scan(0.0, |sum, d| {
                *sum += d;
                Some(*sum)
            })
            .collect()
    }

    /// T(C), the total nominal wait across all retries.
    pub fn total_ms(&self) -> f64 {
        self.delays_ms().iter().sum()
    }

    /// ∂d/∂M at retry n, in ms per unit of M: how much d(n) moves when M moves. Zero where the
    /// cap binds, since a small change of M does not move a capped delay.
    pub fn sensitivity_to_multiplier(&self, n: u8) -> f64 {
        if self.is_capped(n) || n < 2 {
            return 0.0;
        }
        let n = f64::from(n);
        self.first_ms as f64 * (n - 1.0) * self.multiplier.value().powf(n - 2.0)
    }

    /// ∂d/∂n at retry n, in ms per retry: how steeply the curve climbs there. Zero where the
    /// cap binds.
    pub fn sensitivity_to_retries(&self, n: u8) -> f64 {
        if self.is_capped(n) {
            return 0.0;
        }
        self.uncapped(n) * self.multiplier.value().ln()
    }

    /// The interval a retry's actual wait falls in under this policy's jitter, in ms.
    /// `previous_ms` is the wait before the previous retry (decorrelated only; `None` before
    /// the first retry, when it starts from F).
    pub fn jitter_range_ms(&self, n: u8, previous_ms: Option<f64>) -> (f64, f64) {
        let d = self.delay_ms(n);
        let first = self.first_ms as f64;
        match self.jitter {
            Jitter::None => (d, d),
            Jitter::Full => (0.0, d),
            Jitter::Equal => (d * 0.5, d),
            Jitter::Decorrelated => {
                let previous = previous_ms.unwrap_or(first);
                let hi = (3.0 * previous).max(first).min(self.cap());
                (first.min(hi), hi)
            }
        }
    }

    /// The widest range each retry's wait can fall in, for shading: for decorrelated jitter the
    /// upper bound assumes every earlier draw was the largest possible.
    pub fn jitter_envelope_ms(&self) -> Vec<(f64, f64)> {
        let mut previous_hi: Option<f64> = None;
        (1..=self.max_retries)
            .map(|n| {
                let range = self.jitter_range_ms(n, previous_hi);
                previous_hi = Some(range.1);
                range
            })
            .collect()
    }

    /// The wait before retry n, given a uniform random `unit` in [0, 1). Whole milliseconds,
    /// at most [`Self::LONGEST_WAIT_MS`].
    pub fn sample_delay_ms(&self, n: u8, previous_ms: Option<u64>, unit: f64) -> u64 {
        let unit = unit.clamp(0.0, 1.0);
        let (lo, hi) = self.jitter_range_ms(n, previous_ms.map(|p| p as f64));
        let value = match self.jitter {
            Jitter::None => hi,
            Jitter::Full | Jitter::Decorrelated => lo + (hi - lo) * unit,
            Jitter::Equal => self.delay_ms(n) * (0.5 + unit * 0.5),
        };
        (value.round().clamp(lo.floor(), hi.ceil()) as u64).min(Self::LONGEST_WAIT_MS)
    }

    /// What can go wrong with this curve, given the job's context, with the numbers each
    /// warning's words need.
    pub fn warnings(&self, context: &WarningContext) -> Vec<Warning> {
        let mut out = self.shape_warnings();
        out.extend(self.untunable_warning());
        out.extend(self.steep_total_warning());
        out.extend(self.deadline_warnings(context));
        out
    }

    /// A multiplier so low the waits hardly grow, or so high they explode.
    fn shape_warnings(&self) -> Vec<Warning> {
        let m = self.multiplier.value();
        let c = self.max_retries;
        let mut out = Vec::new();
        if m < NEAR_FIXED_BELOW {
            out.push(Warning {
                kind: WarningKind::NearFixed,
                retries: (1..=c).collect(),
                problem: crate::problem!(
                    "retry-warning-near-fixed",
                    m = format!("{m:.1}"),
                    below = format!("{NEAR_FIXED_BELOW:.1}")
                ),
            });
        }
        if m > EXPLOSIVE_ABOVE {
            out.push(Warning {
                kind: WarningKind::Explosive,
                retries: (2..=c).collect(),
                problem: crate::problem!(
                    "retry-warning-explosive",
                    m = format!("{m:.1}"),
                    retry = c,
                    wait = Fact::wait(self.delay_ms(c)),
                    above = format!("{EXPLOSIVE_ABOVE:.1}")
                ),
            });
        }
        out
    }

    /// So many retries that a tenth more multiplier moves the last wait by a lot.
    fn untunable_warning(&self) -> Option<Warning> {
        let m = self.multiplier.value();
        let c = self.max_retries;
        if c <= UNTUNABLE_RETRIES_ABOVE || m <= 1.0 {
            return None;
        }
        let swing = self.sensitivity_to_multiplier(c) * 0.1;
        let detail = if swing > 0.0 {
            crate::problem!(
                "retry-warning-untunable-swing",
                retry = c,
                swing = Fact::wait(swing)
            )
        } else {
            crate::problem!(
                "retry-warning-untunable-capped",
                retry = c,
                swing = Fact::wait(
                    self.first_ms as f64 * f64::from(c - 1) * m.powi(i32::from(c) - 2) * 0.1
                )
            )
        };
        Some(Warning {
            kind: WarningKind::Untunable,
            retries: (UNTUNABLE_RETRIES_ABOVE + 1..=c).collect(),
            problem: crate::problem!(
                "retry-warning-untunable",
                after = UNTUNABLE_RETRIES_ABOVE,
                detail = detail
            ),
        })
    }

    fn steep_total_warning(&self) -> Option<Warning> {
        let c = self.max_retries;
        (c > STEEP_TOTAL_RETRIES_ABOVE).then(|| Warning {
            kind: WarningKind::SteepTotal,
            retries: (STEEP_TOTAL_RETRIES_ABOVE + 1..=c).collect(),
            problem: crate::problem!(
                "retry-warning-steep-total",
                after = STEEP_TOTAL_RETRIES_ABOVE,
                total = Fact::wait(self.total_ms())
            ),
        })
    }

    /// The retries whose latest possible start passes the next tick or the administrator's
    /// tolerance.
    fn deadline_warnings(&self, context: &WarningContext) -> Vec<Warning> {
        let c = self.max_retries;
        let upper_cumulative: Vec<f64> = self
            .jitter_envelope_ms()
            .iter()
            .scan(0.0, |sum, (_, hi)| {
                *sum += hi;
                Some(*sum)
            })
            .collect();
        let beyond = |limit: u64| -> Vec<u8> {
            upper_cumulative
                .iter()
                .zip(1..=c)
                .filter(|(total, _)| **total > limit as f64)
                .map(|(_, n)| n)
                .collect()
        };
        let mut out = Vec::new();
        if let Some(period) = context.cron_period_ms {
            let late = beyond(period);
            if let Some(first_late) = late.first() {
                out.push(Warning {
                    kind: WarningKind::OverrunsSchedule,
                    problem: crate::problem!(
                        "retry-warning-overruns",
                        retry = *first_late,
                        period = Fact::wait(period as f64)
                    ),
                    retries: late,
                });
            }
        }
        if let Some(tolerance) = context.tolerance_ms {
            let late = beyond(tolerance);
            if let Some(first_late) = late.first() {
                out.push(Warning {
                    kind: WarningKind::ExceedsTolerance,
                    problem: crate::problem!(
                        "retry-warning-tolerance",
                        retry = *first_late,
                        tolerance = Fact::wait(tolerance as f64)
                    ),
                    retries: late,
                });
            }
        }
        out
    }
}

/// P(at least one of `n` retries succeeds) when each succeeds with probability `p`.
pub fn success_probability(p: f64, n: u32) -> f64 {
    let p = p.clamp(0.0, 1.0);
    1.0 - (1.0 - p).powi(n as i32)
}

/// What the warnings compare the curve against.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WarningContext {
    /// Time between two cron ticks of the job, when it is regular.
    pub cron_period_ms: Option<u64>,
    /// The longest total wait the administrator accepts.
    pub tolerance_ms: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WarningKind {
    NearFixed,
    Explosive,
    Untunable,
    SteepTotal,
    OverrunsSchedule,
    ExceedsTolerance,
}

/// One danger in the curve, and the retries (1-based) it concerns.
#[derive(Debug, Clone, PartialEq)]
pub struct Warning {
    pub kind: WarningKind,
    pub retries: Vec<u8>,
    /// What is wrong, for the reader's language.
    pub problem: Problem,
}

/// The retry presets the editor offers, from common practice.
pub fn presets() -> Vec<(&'static str, &'static str, RetryPolicy)> {
    let m = |tenths| Multiplier::from_tenths(tenths).expect("preset multipliers are in range");
    let p =
        |f, mult, c, j, cap| RetryPolicy::new(f, m(mult), c, j, cap).expect("presets are valid");
    vec![
        (
            "fast",
            "Fast task: 1 s, ×2, 5 retries, full jitter, cap 30 s — done within a minute",
            p(1_000, 20, 5, Jitter::Full, Some(30_000)),
        ),
        (
            "important",
            "Important task: 30 s, ×2, 8 retries, equal jitter, cap 1 h — keeps trying for hours",
            p(30_000, 20, 8, Jitter::Equal, Some(3_600_000)),
        ),
        (
            "realtime",
            "Real-time callback: 200 ms, ×2, at most 2 retries, no jitter",
            p(200, 20, 2, Jitter::None, None),
        ),
        (
            "standard",
            "Standard exponential backoff: 10 s, ×2, 5 retries, full jitter, cap 10 min",
            p(10_000, 20, 5, Jitter::Full, Some(600_000)),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(first_ms: u64, m_tenths: i64, c: u8) -> RetryPolicy {
        RetryPolicy::new(
            first_ms,
            Multiplier::from_tenths(m_tenths).unwrap(),
            c,
            Jitter::None,
            None,
        )
        .unwrap()
    }

    fn seconds(ms: &[f64]) -> Vec<f64> {
        ms.iter()
            .map(|v| (v / 1_000.0 * 1e6).round() / 1e6)
            .collect()
    }

    // The reference numbers of `docs/ARCHITECTURE.md` §4.

    #[test]
    fn ten_seconds_doubling() {
        let p = policy(10_000, 20, 10);
        assert_eq!(
            seconds(&p.delays_ms()),
            [
                10.0, 20.0, 40.0, 80.0, 160.0, 320.0, 640.0, 1280.0, 2560.0, 5120.0
            ]
        );
    }

    #[test]
    fn one_second_doubling_totals() {
        for (c, total) in [
            (3, 7.0),
            (5, 31.0),
            (10, 1023.0),
            (13, 8191.0),
            (15, 32767.0),
        ] {
            assert_eq!(policy(1_000, 20, c).total_ms() / 1_000.0, total, "T({c})");
        }
    }

    #[test]
    fn gentle_multiplier_tenth_delay() {
        let d10 = policy(1_000, 12, 10).delay_ms(10) / 1_000.0;
        assert!((d10 - 5.16).abs() < 0.005, "d(10) = {d10} F");
    }

    #[test]
    fn multiplier_eight() {
        assert_eq!(
            seconds(&policy(1_000, 80, 5).delays_ms()),
            [1.0, 8.0, 64.0, 512.0, 4096.0]
        );
    }

    #[test]
    fn two_seconds_five_retries() {
        let p = policy(2_000, 20, 5);
        assert_eq!(seconds(&p.delays_ms()), [2.0, 4.0, 8.0, 16.0, 32.0]);
        assert_eq!(p.total_ms(), 62_000.0);
        assert_eq!(seconds(&p.cumulative_ms()), [2.0, 6.0, 14.0, 30.0, 62.0]);
    }

    #[test]
    fn closed_form_matches_the_sum() {
        for (m, c) in [(20, 10), (12, 16), (35, 7), (80, 4)] {
            let p = policy(1_500, m, c);
            let mv = f64::from(m as u8) / 10.0;
            let closed = 1_500.0 * (mv.powi(i32::from(c)) - 1.0) / (mv - 1.0);
            assert!(
                (p.total_ms() - closed).abs() < 1e-6 * closed,
                "M={mv} C={c}"
            );
        }
        assert_eq!(
            policy(1_500, 10, 6).total_ms(),
            1_500.0 * 6.0,
            "M = 1 is F · C"
        );
    }

    #[test]
    fn the_cap_bounds_each_delay() {
        let p = RetryPolicy::new(
            1_000,
            Multiplier::from_tenths(20).unwrap(),
            8,
            Jitter::None,
            Some(10_000),
        )
        .unwrap();
        assert_eq!(
            seconds(&p.delays_ms()),
            [1.0, 2.0, 4.0, 8.0, 10.0, 10.0, 10.0, 10.0]
        );
        assert_eq!(p.sensitivity_to_multiplier(6), 0.0);
        assert_eq!(p.sensitivity_to_retries(6), 0.0);
    }

    #[test]
    fn sensitivities() {
        let p = policy(1_000, 20, 10);
        // ∂d/∂M = F (n−1) M^(n−2): at n = 10, 1 s · 9 · 2^8 = 2304 s per unit of M.
        assert_eq!(p.sensitivity_to_multiplier(10), 2_304_000.0);
        assert_eq!(p.sensitivity_to_multiplier(1), 0.0);
        // ∂d/∂n = F M^(n−1) ln M: at n = 10, 512 s · ln 2.
        assert!((p.sensitivity_to_retries(10) - 512_000.0 * 2f64.ln()).abs() < 1e-6);
        assert_eq!(
            policy(1_000, 10, 3).sensitivity_to_retries(3),
            0.0,
            "flat when M = 1"
        );
    }

    #[test]
    fn probability_of_recovery() {
        assert!((success_probability(0.5, 3) - 0.875).abs() < 1e-12);
        assert_eq!(success_probability(0.0, 5), 0.0);
        assert_eq!(success_probability(1.0, 1), 1.0);
        assert!((success_probability(0.2, 10) - (1.0 - 0.8f64.powi(10))).abs() < 1e-12);
    }

    #[test]
    fn waits_past_a_year_are_scheduled_a_year_out() {
        // Found by the property test: 524 s × 8^15 is 1.8e19 ms, past u64 and any timestamp.
        let steep = |jitter| {
            RetryPolicy::new(
                524_289,
                Multiplier::from_tenths(80).unwrap(),
                16,
                jitter,
                None,
            )
            .unwrap()
        };
        let p = steep(Jitter::None);
        assert!(p.delay_ms(16) > u64::MAX as f64);
        assert_eq!(
            p.sample_delay_ms(16, None, 0.0),
            RetryPolicy::LONGEST_WAIT_MS
        );
        assert_eq!(
            steep(Jitter::Decorrelated).sample_delay_ms(16, Some(u64::MAX), 0.99),
            RetryPolicy::LONGEST_WAIT_MS
        );
    }

    #[test]
    fn jitter_ranges() {
        let with = |j| {
            RetryPolicy::new(
                1_000,
                Multiplier::from_tenths(20).unwrap(),
                4,
                j,
                Some(6_000),
            )
            .unwrap()
        };
        assert_eq!(with(Jitter::Full).jitter_range_ms(3, None), (0.0, 4_000.0));
        assert_eq!(
            with(Jitter::Equal).jitter_range_ms(3, None),
            (2_000.0, 4_000.0)
        );
        assert_eq!(
            with(Jitter::Decorrelated).jitter_range_ms(1, None),
            (1_000.0, 3_000.0)
        );
        assert_eq!(
            with(Jitter::Decorrelated).jitter_range_ms(2, Some(2_500.0)),
            (1_000.0, 6_000.0)
        );
        assert_eq!(
            with(Jitter::Decorrelated).jitter_envelope_ms(),
            [
                (1_000.0, 3_000.0),
                (1_000.0, 6_000.0),
                (1_000.0, 6_000.0),
                (1_000.0, 6_000.0)
            ]
        );
        assert_eq!(with(Jitter::Equal).sample_delay_ms(3, None, 0.0), 2_000);
        assert_eq!(with(Jitter::Equal).sample_delay_ms(3, None, 1.0), 4_000);
        assert_eq!(with(Jitter::None).sample_delay_ms(3, None, 0.3), 4_000);
    }

    #[test]
    fn parsing_names_each_bad_field() {
        let input = |f: &str, m: &str, c: &str, j: &str, cap: &str| RetryInput {
            first: f.into(),
            multiplier: m.into(),
            max_retries: c.into(),
            jitter: j.into(),
            cap: cap.into(),
        };
        let ok = RetryPolicy::parse(&input("500ms", "1.5", "16", "equal", "1h")).unwrap();
        assert_eq!(
            (ok.first_ms(), ok.multiplier().tenths(), ok.max_retries()),
            (500, 15, 16)
        );
        assert_eq!(ok.cap_ms(), Some(3_600_000));
        assert_eq!(RetryPolicy::parse(&ok.to_input()), Ok(ok));

        let errors = RetryPolicy::parse(&input("0s", "8.1", "17", "wild", "soon")).unwrap_err();
        let fields: Vec<_> = errors.iter().map(RetryError::field).collect();
        assert_eq!(
            fields,
            ["first", "multiplier", "max_retries", "jitter", "cap"]
        );
        assert_eq!(
            errors[1].to_string(),
            "multiplier must be between 1.0 and 8.0, not 8.1"
        );
        assert_eq!(
            errors[2].to_string(),
            "max retries must be a whole number between 1 and 16, not 17"
        );

        let errors = RetryPolicy::parse(&input("10", "2.25", "0", "", "")).unwrap_err();
        assert_eq!(
            errors[0].to_string(),
            "first interval '10' needs a unit: ms, s, m or h (for example 10s)"
        );
        assert!(matches!(errors[1], RetryError::MultiplierPrecision(_)));
        assert!(matches!(errors[2], RetryError::MaxRetries(_)));
        assert!(matches!(
            RetryPolicy::parse(&input("1m", "2", "3", "none", "10s")).unwrap_err()[0],
            RetryError::CapBelowFirst { .. }
        ));
        assert!(RetryPolicy::parse(&input("1s", "0.9", "3", "none", "")).is_err());
    }

    #[test]
    fn warnings_follow_the_design_thresholds() {
        let kinds = |p: RetryPolicy, ctx: WarningContext| -> Vec<WarningKind> {
            p.warnings(&ctx).into_iter().map(|w| w.kind).collect()
        };
        let none = WarningContext::default();
        assert_eq!(kinds(policy(1_000, 20, 5), none), []);
        assert_eq!(kinds(policy(1_000, 14, 5), none), [WarningKind::NearFixed]);
        assert_eq!(kinds(policy(1_000, 15, 5), none), []);
        assert_eq!(kinds(policy(1_000, 41, 3), none), [WarningKind::Explosive]);
        assert_eq!(kinds(policy(1_000, 40, 3), none), []);
        assert_eq!(kinds(policy(1_000, 20, 9), none), [WarningKind::Untunable]);
        assert_eq!(
            kinds(policy(1_000, 10, 9), none),
            [WarningKind::NearFixed],
            "M = 1 is tunable"
        );
        assert_eq!(
            kinds(policy(1_000, 80, 16), none),
            [
                WarningKind::Explosive,
                WarningKind::Untunable,
                WarningKind::SteepTotal
            ]
        );

        let untunable = &policy(1_000, 20, 12).warnings(&none)[0];
        assert_eq!(untunable.retries, [9, 10, 11, 12]);

        // F=1 s, M=2, C=5 → cumulative 1, 3, 7, 15, 31 s; an hourly job is fine, a 10 s one not.
        let p = policy(1_000, 20, 5);
        assert_eq!(
            kinds(
                p,
                WarningContext {
                    cron_period_ms: Some(3_600_000),
                    tolerance_ms: None
                }
            ),
            []
        );
        let overrun = p.warnings(&WarningContext {
            cron_period_ms: Some(10_000),
            tolerance_ms: Some(5_000),
        });
        assert_eq!(overrun[0].kind, WarningKind::OverrunsSchedule);
        assert_eq!(overrun[0].retries, [4, 5]);
        assert_eq!(overrun[1].kind, WarningKind::ExceedsTolerance);
        assert_eq!(overrun[1].retries, [3, 4, 5]);
    }

    #[test]
    fn presets_are_valid_and_quiet_where_they_should_be() {
        for (key, _, p) in presets() {
            let warnings = p.warnings(&WarningContext::default());
            assert!(warnings.is_empty(), "{key}: {warnings:?}");
        }
    }

    mod properties {
        use super::super::*;
        use proptest::prelude::*;

        fn any_policy() -> impl Strategy<Value = RetryPolicy> {
            (
                1u64..600_000,
                10i64..=80,
                1u8..=16,
                prop::sample::select(Jitter::ALL.to_vec()),
                prop::option::of(1u64..7_200_000),
            )
                .prop_filter_map("cap below first", |(f, m, c, j, cap)| {
                    RetryPolicy::new(f, Multiplier::from_tenths(m).ok()?, c, j, cap).ok()
                })
        }

        proptest! {
            #[test]
            fn delays_never_decrease_without_jitter(p in any_policy()) {
                let d = p.delays_ms();
                prop_assert!(d.windows(2).all(|w| w[1] >= w[0]), "{d:?}");
            }

            #[test]
            fn delays_never_exceed_the_cap(p in any_policy()) {
                if let Some(cap) = p.cap_ms() {
                    prop_assert!(p.delays_ms().iter().all(|d| *d <= cap as f64));
                    prop_assert!(p.jitter_envelope_ms().iter().all(|(_, hi)| *hi <= cap as f64));
                }
            }

            #[test]
            fn jittered_delays_stay_in_their_range(p in any_policy(), units in prop::collection::vec(0.0f64..1.0, 16)) {
                let mut previous: Option<u64> = None;
                for n in 1..=p.max_retries() {
                    let (lo, hi) = p.jitter_range_ms(n, previous.map(|v| v as f64));
                    let sample = p.sample_delay_ms(n, previous, units[usize::from(n) - 1]);
                    let longest = RetryPolicy::LONGEST_WAIT_MS as f64;
                    let (lo, hi) = (lo.floor().min(longest), hi.ceil().min(longest));
                    prop_assert!(sample as f64 >= lo && sample as f64 <= hi,
                        "retry {n}: {sample} outside [{lo}, {hi}]");
                    if let Some(cap) = p.cap_ms() {
                        prop_assert!(sample <= cap);
                    }
                    previous = Some(sample);
                }
            }

            #[test]
            fn cumulative_ends_at_the_total(p in any_policy()) {
                let cumulative = p.cumulative_ms();
                let last = *cumulative.last().unwrap();
                prop_assert!((last - p.total_ms()).abs() <= 1e-6 * last.max(1.0));
            }
        }
    }
}
