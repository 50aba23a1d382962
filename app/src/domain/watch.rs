//! Watched jobs: scheduled work that runs elsewhere (a crontab, a systemd timer, a Kubernetes
//! CronJob) and reports to Bulwark by pinging its URL.
//!
//! Each expected tick becomes a run `awaiting_ping`. A ping settles the open tick whose window
//! (tick ± grace) holds it; `/start` first makes it `running`, so the end ping gives it a
//! duration. A tick with no ping by tick + grace is dead with class `missed`; a run that ends
//! shorter than it ever should is dead with class `too_fast` ([`Limits`]); one that ends longer
//! than it ever should is said to be too slow (run jobs alike).
//!
//! Pure: the pings' handling and the sweep of missed ticks live above.

use chrono::{DateTime, Utc};

use super::timeout::nearest_rank;

pub use super::job::{DEFAULT_GRACE_MS, EVERY_MS, MAX_GRACE_MS, Watch};

/// What a ping says, by the last segment of its URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ping {
    /// `/ping/{token}`: the run succeeded.
    Success,
    /// `/ping/{token}/start`: the run began (its duration counts from here).
    Start,
    /// `/ping/{token}/fail`: the run failed.
    Fail,
    /// `/ping/{token}/{exit-code}`: 0 succeeded, anything else failed.
    Exit(u8),
    /// `/ping/{token}/log`: output only; the run goes on.
    Log,
}

impl Ping {
    /// The ping a URL's last segment names (`None`: the plain URL); `None` for anything else.
    pub fn parse(segment: Option<&str>) -> Option<Ping> {
        match segment {
            None | Some("") => Some(Ping::Success),
            Some("start") => Some(Ping::Start),
            Some("fail") => Some(Ping::Fail),
            Some("log") => Some(Ping::Log),
            Some(code) if code.len() <= 3 && code.bytes().all(|b| b.is_ascii_digit()) => {
                code.parse::<u8>().ok().map(Ping::Exit)
            }
            Some(_) => None,
        }
    }

    /// How the run ends: `Some(true)` succeeded, `Some(false)` failed, `None` it goes on.
    pub fn ends(self) -> Option<bool> {
        match self {
            Ping::Success | Ping::Exit(0) => Some(true),
            Ping::Fail | Ping::Exit(_) => Some(false),
            Ping::Start | Ping::Log => None,
        }
    }

    /// The exit code the ping reports, if any.
    pub fn exit_code(self) -> Option<u8> {
        match self {
            Ping::Exit(code) => Some(code),
            _ => None,
        }
    }
}

/// Whether a ping at `at` falls in the window of the tick at `tick`: within `grace` either side.
pub fn window_holds(tick: DateTime<Utc>, grace_ms: u64, at: DateTime<Utc>) -> bool {
    (at - tick).num_milliseconds().unsigned_abs() <= grace_ms
}

/// Successes a job needs before its history sets a limit.
pub const MIN_SUCCESSES: usize = 10;

/// How far from the usual a learned limit stays, at least.
pub const MIN_GAP_MS: u64 = 1_000;

/// Latest successes the limits read.
pub const HISTORY: u32 = 100;

/// How long a run may be, from the job's settings and its recent successes' durations.
///
/// A run shorter than `min(min_duration, P05 / 2)` is too fast, one longer than
/// `max(max_duration, 1.5 × P99)` too slow: the learned side needs [`MIN_SUCCESSES`], and a
/// setting alone applies from the first run. Both are far enough out that a job's normal
/// spread never reaches them (a backup that "succeeded" in a second did not back anything up),
/// and a learned limit stays [`MIN_GAP_MS`] from the usual too: a job of a few milliseconds is
/// not too slow at forty because a busy host paused it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Limits {
    /// Shorter than this is too fast.
    pub fast_below_ms: Option<u64>,
    /// Longer than this is too slow.
    pub slow_above_ms: Option<u64>,
}

impl Limits {
    pub fn learn(
        min_duration_ms: Option<u64>,
        max_duration_ms: Option<u64>,
        successes_ms: &[u64],
    ) -> Limits {
        let learned = successes_ms.len() >= MIN_SUCCESSES;
        let p05 = nearest_rank_if(learned, successes_ms, 0.05)
            .and_then(|p| Some((p / 2).min(p.checked_sub(MIN_GAP_MS)?)));
        let p99 = nearest_rank_if(learned, successes_ms, 0.99)
            .map(|p| (p.saturating_mul(3) / 2).max(p.saturating_add(MIN_GAP_MS)));
        Limits {
            fast_below_ms: pick(min_duration_ms, p05, u64::min),
            slow_above_ms: pick(max_duration_ms, p99, u64::max),
        }
    }

    /// What a successful run of `duration_ms` was.
    pub fn judge(&self, duration_ms: u64) -> Pace {
        match (self.fast_below_ms, self.slow_above_ms) {
            (Some(below), _) if duration_ms < below => Pace::TooFast { below_ms: below },
            (_, Some(above)) if duration_ms > above => Pace::TooSlow { above_ms: above },
            _ => Pace::Usual,
        }
    }
}

fn nearest_rank_if(learned: bool, samples: &[u64], q: f64) -> Option<u64> {
    learned.then(|| nearest_rank(samples, q))
}

fn pick(set: Option<u64>, learned: Option<u64>, join: fn(u64, u64) -> u64) -> Option<u64> {
    match (set, learned) {
        (Some(a), Some(b)) => Some(join(a, b)),
        (a, b) => a.or(b),
    }
}

/// How a run's length compares with its limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pace {
    Usual,
    /// It ended before `below_ms`: dead, class `too_fast`.
    TooFast {
        below_ms: u64,
    },
    /// It took longer than `above_ms`: an alert, the run's outcome unchanged.
    TooSlow {
        above_ms: u64,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + s, 0).unwrap()
    }

    #[test]
    fn pings_by_their_last_segment() {
        assert_eq!(Ping::parse(None), Some(Ping::Success));
        assert_eq!(Ping::parse(Some("start")), Some(Ping::Start));
        assert_eq!(Ping::parse(Some("fail")), Some(Ping::Fail));
        assert_eq!(Ping::parse(Some("log")), Some(Ping::Log));
        assert_eq!(Ping::parse(Some("0")), Some(Ping::Exit(0)));
        assert_eq!(Ping::parse(Some("255")), Some(Ping::Exit(255)));
        for bad in ["256", "-1", "1000", "STARTS", "0x1"] {
            assert_eq!(Ping::parse(Some(bad)), None, "{bad}");
        }
        assert_eq!(Ping::Exit(0).ends(), Some(true));
        assert_eq!(Ping::Exit(3).ends(), Some(false));
        assert_eq!(Ping::Log.ends(), None);
    }

    #[test]
    fn a_window_is_the_tick_plus_or_minus_grace() {
        assert!(window_holds(at(60), 20_000, at(40)));
        assert!(window_holds(at(60), 20_000, at(80)));
        assert!(!window_holds(at(60), 20_000, at(81)));
        assert!(!window_holds(at(60), 20_000, at(39)));
    }

    #[test]
    fn limits_need_ten_successes_unless_set() {
        let few = [2_000; 9];
        assert_eq!(Limits::learn(None, None, &few), Limits::default());
        let set = Limits::learn(Some(1_000), Some(10_000), &few);
        assert_eq!(set.judge(500), Pace::TooFast { below_ms: 1_000 });
        assert_eq!(set.judge(11_000), Pace::TooSlow { above_ms: 10_000 });
        let ten = [4_000; 10];
        let learned = Limits::learn(None, None, &ten);
        assert_eq!(learned.judge(100), Pace::TooFast { below_ms: 2_000 });
        assert_eq!(learned.judge(5_900), Pace::Usual);
        assert_eq!(learned.judge(6_001), Pace::TooSlow { above_ms: 6_000 });
        // Both: the looser of the two.
        let both = Limits::learn(Some(3_000), Some(5_000), &ten);
        assert_eq!(both.fast_below_ms, Some(2_000));
        assert_eq!(both.slow_above_ms, Some(6_000));
        // Short jobs: a second from the usual at least, and nothing too fast under a second.
        let quick = Limits::learn(None, None, &[5; 10]);
        assert_eq!(quick.fast_below_ms, None);
        assert_eq!(quick.slow_above_ms, Some(1_005));
        let two = Limits::learn(None, None, &[2_000; 10]);
        assert_eq!(two.fast_below_ms, Some(1_000));
        assert_eq!(two.slow_above_ms, Some(3_000));
    }

    #[test]
    fn a_thousand_runs_of_one_distribution_raise_nothing() {
        // Normal spread around 2 s (σ 200 ms, Irwin–Hall from a fixed seed): each run judged
        // against the hundred before it, as the engine does.
        let mut rng = fastrand::Rng::with_seed(47);
        let runs: Vec<u64> = (0..1_100)
            .map(|_| {
                let z: f64 = (0..12).map(|_| rng.f64()).sum::<f64>() - 6.0;
                (2_000.0 + 200.0 * z).max(1.0) as u64
            })
            .collect();
        for i in 100..runs.len() {
            let limits = Limits::learn(None, None, &runs[i - 100..i]);
            assert_eq!(limits.judge(runs[i]), Pace::Usual, "run {i}: {}", runs[i]);
        }
    }
}
