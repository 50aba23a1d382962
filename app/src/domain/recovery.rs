//! How long a job's outages last, from its own failure episodes: the Kaplan–Meier estimate of
//! the chance an outage is still on after a given time, with Greenwood's standard error.
//!
//! An episode that recovered (a retry succeeded) gives its duration exactly; one that ended
//! dead, skipped or re-triggered by hand only says the outage lasted *at least* that long — it
//! is censored. Kaplan–Meier uses both without pretending the censored ones recovered.
//!
//! [`replay`] turns the curve into what a retry policy would have done with those episodes;
//! [`suggest`] searches for the policy that reaches a recovery target with the least waiting.
//!
//! Ties follow the usual convention: at one instant, recoveries are counted before censorings,
//! so an episode censored at `t` was still at risk when the others recovered at `t`.

use serde::{Deserialize, Serialize};

use chrono::{DateTime, Utc};

use super::retry::{Multiplier, RetryPolicy};
use super::run::{ErrorClass, Outcome};

/// One failure episode: how long it lasted, and whether it ended in a recovery (`true`) or
/// was only seen to last at least that long (`false`, censored).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Episode {
    pub duration_ms: u64,
    pub recovered: bool,
}

/// The estimate just after `at_ms`, where at least one episode recovered.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    pub at_ms: u64,
    /// Episodes still on just before `at_ms`.
    pub at_risk: u32,
    /// Episodes that recovered at `at_ms`.
    pub recovered: u32,
    /// The chance an outage is still on after `at_ms`.
    pub still_on: f64,
    /// Greenwood's standard error of `still_on`.
    pub std_err: f64,
}

/// The Kaplan–Meier curve of `episodes`, one step per distinct recovery time, in time order.
pub fn kaplan_meier(episodes: &[Episode]) -> Vec<Step> {
    let mut sorted = episodes.to_vec();
    // Recoveries before censorings at the same instant.
    sorted.sort_by_key(|e| (e.duration_ms, !e.recovered));
    let mut at_risk = sorted.len() as u32;
    let mut still_on = 1.0;
    let mut greenwood = 0.0;
    let mut steps = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let at = sorted[i].duration_ms;
        let same: Vec<&Episode> = sorted[i..]
            .iter()
            .take_while(|e| e.duration_ms == at)
            .collect();
        let recovered = same.iter().filter(|e| e.recovered).count() as u32;
        if recovered > 0 {
            let n = f64::from(at_risk);
            let d = f64::from(recovered);
            still_on *= 1.0 - d / n;
            // Undefined once nobody is left at risk; the curve is at 0 then and so is its error.
            if at_risk > recovered {
                greenwood += d / (n * (n - d));
            }
            steps.push(Step {
                at_ms: at,
                at_risk,
                recovered,
                still_on,
                std_err: still_on * greenwood.sqrt(),
            });
        }
        at_risk -= same.len() as u32;
        i += same.len();
    }
    steps
}

/// The estimated chance that an outage is over by `t_ms` (0 before the first recovery).
pub fn recovered_by(curve: &[Step], t_ms: u64) -> f64 {
    1.0 - curve
        .iter()
        .take_while(|s| s.at_ms <= t_ms)
        .last()
        .map_or(1.0, |s| s.still_on)
}

/// One attempt as far as episodes care: when it started and ended, and how.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AttemptFact {
    pub started_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
    pub outcome: Option<Outcome>,
    pub error_class: Option<ErrorClass>,
}

/// The failure episode a run's attempts (in order) make, if they make one: its first attempt
/// failed with an error worth retrying (not a permanent one). It lasts from that failure to
/// the start of the attempt that succeeded (recovered), or — when no attempt succeeded — to the
/// end of the last failed attempt (censored: dead, skipped, re-triggered by hand, or still
/// retrying). Attempts a dying node interrupted say nothing about the job and are left out.
pub fn episode_of(attempts: &[AttemptFact]) -> Option<Episode> {
    let mut counted = attempts
        .iter()
        .filter(|a| a.outcome != Some(Outcome::Interrupted));
    let first = counted.next()?;
    let retried = matches!(first.outcome, Some(Outcome::Failed | Outcome::TimedOut))
        && first.error_class.is_some_and(ErrorClass::is_retryable);
    if !retried {
        return None;
    }
    let began = first.finished_at?;
    let since = |at: DateTime<Utc>| u64::try_from((at - began).num_milliseconds()).unwrap_or(0);
    let mut last_failure = began;
    for attempt in counted {
        match attempt.outcome {
            Some(Outcome::Succeeded) => {
                return Some(Episode {
                    duration_ms: since(attempt.started_at),
                    recovered: true,
                });
            }
            Some(Outcome::Failed | Outcome::TimedOut) => {
                if let Some(at) = attempt.finished_at {
                    last_failure = at;
                }
            }
            _ => {}
        }
    }
    Some(Episode {
        duration_ms: since(last_failure),
        recovered: false,
    })
}

/// A job's failure episodes, each with the revision of its definition the run ran, and the
/// revision in force: the evidence panel can go by what the job is now rather than by
/// definitions since replaced.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JobEpisodes {
    /// The job's revision now.
    pub current: i32,
    /// Newest first: the revision each episode's run ran (`None` for runs from before
    /// revisions were kept) and the episode.
    pub episodes: Vec<(Option<i32>, Episode)>,
}

impl JobEpisodes {
    /// The episodes of every revision, or of the current one only.
    pub fn select(&self, current_only: bool) -> Vec<Episode> {
        self.episodes
            .iter()
            .filter(|(revision, _)| !current_only || *revision == Some(self.current))
            .map(|(_, episode)| *episode)
            .collect()
    }

    /// Whether some episodes come from another revision than the current one: only then does
    /// limiting them to it change anything.
    pub fn spans_revisions(&self) -> bool {
        self.episodes
            .iter()
            .any(|(revision, _)| *revision != Some(self.current))
    }
}

/// Fewer episodes than this say too little: the editor then falls back to the guessed
/// per-attempt success rate and says why.
pub const MIN_EPISODES: usize = 10;

/// A retry that recovers fewer than this share of episodes more than the retry before it adds
/// almost nothing but waiting.
pub const IDLE_GAIN: f64 = 0.01;

/// What a policy would have done with the job's past episodes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Replay {
    pub episodes: u32,
    /// Of them, how many never recovered (dead, skipped, re-triggered by hand).
    pub censored: u32,
    /// The share of episodes over by the start of retry 1, 2, … C: what each retry recovers,
    /// counted together with those before it.
    pub recovered_by_retry: Vec<f64>,
    /// The share the policy recovers in all (after its last retry).
    pub recovered: f64,
    /// The expected wait, from the first failure to the retry that succeeds or to giving up:
    /// the wait before retry n counts only while the outage is still on.
    pub expected_wait_ms: f64,
    /// The longest recovery seen, for comparing with the policy's total wait.
    pub longest_recovery_ms: Option<u64>,
    /// Retries (1-based) that recover less than [`IDLE_GAIN`] more than the one before.
    pub idle_retries: Vec<u8>,
}

impl Replay {
    /// Enough episodes to go by (at least [`MIN_EPISODES`]).
    pub fn is_enough(&self) -> bool {
        self.episodes as usize >= MIN_EPISODES
    }
}

/// Replays `policy` against `episodes`: a retry succeeds when the outage is over by the time it
/// starts (its nominal cumulative wait; jitter averages out and run time is ignored, as in the
/// curve the editor draws).
pub fn replay(policy: &RetryPolicy, episodes: &[Episode]) -> Replay {
    let curve = kaplan_meier(episodes);
    let starts = policy.cumulative_ms();
    let recovered_by_retry: Vec<f64> = starts
        .iter()
        .map(|&at| recovered_by(&curve, at as u64))
        .collect();
    let mut expected_wait_ms = 0.0;
    let mut still_on = 1.0;
    for (delay, recovered) in policy.delays_ms().iter().zip(&recovered_by_retry) {
        expected_wait_ms += delay * still_on;
        still_on = 1.0 - recovered;
    }
    let mut idle_retries = Vec::new();
    let mut before = 0.0;
    for (n, recovered) in (1u8..).zip(&recovered_by_retry) {
        if recovered - before < IDLE_GAIN {
            idle_retries.push(n);
        }
        before = *recovered;
    }
    Replay {
        episodes: episodes.len() as u32,
        censored: episodes.iter().filter(|e| !e.recovered).count() as u32,
        recovered: recovered_by_retry.last().copied().unwrap_or(0.0),
        recovered_by_retry,
        expected_wait_ms,
        longest_recovery_ms: episodes
            .iter()
            .filter(|e| e.recovered)
            .map(|e| e.duration_ms)
            .max(),
        idle_retries,
    }
}

/// A policy's total wait is "far longer than the outages last" beyond this many times the
/// longest outage it recovered from: the rest only waits on outages that never end.
pub const OVERLONG_FACTOR: f64 = 4.0;

/// Below this share of recovered episodes a policy is worth a look.
pub const LOW_RECOVERY: f64 = 0.9;

/// Why the digest names a job's policy, from its replay against the job's episodes; `None`
/// when the policy is fine or the episodes are too few to say.
pub fn worth_a_look(policy: &RetryPolicy, replay: &Replay) -> Option<PolicyConcern> {
    if !replay.is_enough() {
        return None;
    }
    if replay.recovered < LOW_RECOVERY {
        return Some(PolicyConcern::RecoversTooFew);
    }
    match replay.longest_recovery_ms {
        Some(longest) if policy.total_ms() > OVERLONG_FACTOR * longest as f64 => {
            Some(PolicyConcern::WaitsTooLong)
        }
        _ => None,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PolicyConcern {
    /// It recovers less than [`LOW_RECOVERY`] of the episodes.
    RecoversTooFew,
    /// Its total wait is more than [`OVERLONG_FACTOR`] times the longest recovery.
    WaitsTooLong,
}

/// A policy proposed from the evidence, for the administrator to apply or not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Suggestion {
    pub policy: RetryPolicy,
    pub replay: Replay,
    /// Whether its replay reaches the target; if not, it is the policy that recovers most.
    pub reaches_target: bool,
    /// Whether it stays within the sound ranges (multiplier 1.5–4, 3–10 retries); it leaves
    /// them only when no policy inside reaches the target.
    pub within_sound_ranges: bool,
}

/// The policy with the smallest total wait (then the fewest retries) whose replay recovers at
/// least `target` of `episodes`, keeping `current`'s first interval, jitter and cap: first
/// among multipliers 1.5–4.0 and 3–10 retries, then, if none there reaches the target, among
/// every multiplier and retry count the editor allows; if none reaches it at all, the one that
/// recovers most. `None` without enough episodes.
pub fn suggest(current: &RetryPolicy, episodes: &[Episode], target: f64) -> Option<Suggestion> {
    if episodes.len() < MIN_EPISODES {
        return None;
    }
    let curve = kaplan_meier(episodes);
    let candidates = |tenths: std::ops::RangeInclusive<i64>,
                      retries: std::ops::RangeInclusive<u8>| {
        let current = *current;
        tenths
            .flat_map(move |t| retries.clone().map(move |c| (t, c)))
            .filter_map(move |(t, c)| {
                let multiplier = Multiplier::from_tenths(t).ok()?;
                RetryPolicy::new(
                    current.first_ms(),
                    multiplier,
                    c,
                    current.jitter(),
                    current.cap_ms(),
                )
                .ok()
            })
    };
    let recovered = |policy: &RetryPolicy| {
        policy
            .cumulative_ms()
            .last()
            .map_or(0.0, |&at| recovered_by(&curve, at as u64))
    };
    // Smallest total wait, then fewest retries, then the smaller multiplier.
    let key = |p: &RetryPolicy| (p.total_ms(), p.max_retries(), p.multiplier().tenths());
    let best_reaching = |policies: Vec<RetryPolicy>| {
        policies
            .into_iter()
            .filter(|p| recovered(p) >= target)
            .min_by(|a, b| {
                key(a)
                    .partial_cmp(&key(b))
                    .unwrap_or(std::cmp::Ordering::Equal)
            })
    };
    let sound: Vec<RetryPolicy> = candidates(15..=40, 3..=10).collect();
    let wide: Vec<RetryPolicy> = candidates(10..=80, 1..=RetryPolicy::MAX_RETRIES).collect();
    let (policy, reaches_target, within_sound_ranges) = if let Some(p) = best_reaching(sound) {
        (p, true, true)
    } else if let Some(p) = best_reaching(wide.clone()) {
        (p, true, false)
    } else {
        // Nothing reaches the target: recover as much as possible, with the least waiting.
        let most = wide.iter().map(recovered).fold(0.0, f64::max);
        let p = wide
            .into_iter()
            .filter(|p| recovered(p) >= most)
            .min_by(|a, b| {
                key(a)
                    .partial_cmp(&key(b))
                    .unwrap_or(std::cmp::Ordering::Equal)
            })?;
        let within = (15..=40).contains(&i64::from(p.multiplier().tenths()))
            && (3..=10).contains(&p.max_retries());
        (p, false, within)
    };
    Some(Suggestion {
        replay: replay(&policy, episodes),
        policy,
        reaches_target,
        within_sound_ranges,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ep(duration_ms: u64, recovered: bool) -> Episode {
        Episode {
            duration_ms,
            recovered,
        }
    }

    /// The 6-MP arm of Freireich et al. (1963), the textbook example (Kleinbaum & Klein,
    /// *Survival Analysis*, ch. 2; Collett, *Modelling Survival Data*, §2.1): weeks of
    /// remission, `+` censored: 6 6 6 6+ 7 9+ 10 10+ 11+ 13 16 17+ 19+ 20+ 22 23 25+ 32+ 32+ 34+
    /// 35+.
    #[test]
    fn the_textbook_example_gives_the_textbook_estimates() {
        let weeks: [(u64, bool); 21] = [
            (6, true),
            (6, true),
            (6, true),
            (6, false),
            (7, true),
            (9, false),
            (10, true),
            (10, false),
            (11, false),
            (13, true),
            (16, true),
            (17, false),
            (19, false),
            (20, false),
            (22, true),
            (23, true),
            (25, false),
            (32, false),
            (32, false),
            (34, false),
            (35, false),
        ];
        let episodes: Vec<Episode> = weeks.iter().map(|&(w, r)| ep(w, r)).collect();
        let curve = kaplan_meier(&episodes);
        let expected = [
            (6, 21, 3, 0.857, 0.076),
            (7, 17, 1, 0.807, 0.087),
            (10, 15, 1, 0.753, 0.096),
            (13, 12, 1, 0.690, 0.107),
            (16, 11, 1, 0.627, 0.114),
            (22, 7, 1, 0.538, 0.128),
            (23, 6, 1, 0.448, 0.135),
        ];
        assert_eq!(curve.len(), expected.len());
        for (step, (at, n, d, s, se)) in curve.iter().zip(expected) {
            assert_eq!((step.at_ms, step.at_risk, step.recovered), (at, n, d));
            assert!((step.still_on - s).abs() < 0.0005, "{step:?}");
            assert!((step.std_err - se).abs() < 0.0005, "{step:?}");
        }
        assert!((recovered_by(&curve, 5) - 0.0).abs() < 1e-12);
        assert!((recovered_by(&curve, 12) - (1.0 - 0.753)).abs() < 0.0005);
    }

    #[test]
    fn all_recovered_reaches_certainty_and_all_censored_says_nothing() {
        let all = kaplan_meier(&[ep(1_000, true), ep(2_000, true), ep(2_000, true)]);
        assert_eq!(all.last().map(|s| s.still_on), Some(0.0));
        assert_eq!(recovered_by(&all, 2_000), 1.0);
        assert!((recovered_by(&all, 1_500) - 1.0 / 3.0).abs() < 1e-12);
        assert!(kaplan_meier(&[ep(1_000, false), ep(5_000, false)]).is_empty());
        assert!(kaplan_meier(&[]).is_empty());
    }

    #[test]
    fn an_episode_censored_at_a_recovery_time_was_still_at_risk_then() {
        let curve = kaplan_meier(&[ep(10, false), ep(10, true), ep(20, true)]);
        assert_eq!(curve[0].at_risk, 3);
        assert!((curve[0].still_on - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(curve[1].at_risk, 1);
        assert_eq!(curve[1].still_on, 0.0);
    }

    fn policy(first_ms: u64, tenths: i64, retries: u8) -> RetryPolicy {
        RetryPolicy::new(
            first_ms,
            Multiplier::from_tenths(tenths).unwrap(),
            retries,
            super::super::retry::Jitter::None,
            None,
        )
        .unwrap()
    }

    /// Ten outages, all recovered: half within a second, three within 2.5 s, two within 6 s.
    fn ten_recovered() -> Vec<Episode> {
        let mut episodes = vec![ep(500, true); 5];
        episodes.extend([ep(2_500, true); 3]);
        episodes.extend([ep(6_000, true); 2]);
        episodes
    }

    #[test]
    fn a_policy_replayed_on_recovered_episodes() {
        // Retries start 1 s, 3 s and 7 s after the first failure.
        let replay = replay(&policy(1_000, 20, 3), &ten_recovered());
        assert_eq!((replay.episodes, replay.censored), (10, 0));
        let expected = [0.5, 0.8, 1.0];
        for (got, want) in replay.recovered_by_retry.iter().zip(expected) {
            assert!((got - want).abs() < 1e-12, "{replay:?}");
        }
        assert_eq!(replay.recovered, 1.0);
        // 1 s always, 2 s for the half still failing, 4 s for the fifth still failing.
        assert!((replay.expected_wait_ms - 2_800.0).abs() < 1e-9);
        assert_eq!(replay.longest_recovery_ms, Some(6_000));
        assert!(replay.idle_retries.is_empty());
        assert!(replay.is_enough());
    }

    #[test]
    fn a_policy_replayed_on_censored_and_mixed_episodes() {
        let dead = vec![ep(60_000, false); 12];
        let replay_dead = replay(&policy(1_000, 20, 4), &dead);
        assert_eq!(replay_dead.censored, 12);
        assert_eq!(replay_dead.recovered, 0.0);
        // Nothing recovers, so every wait is waited and every retry is idle.
        assert!((replay_dead.expected_wait_ms - 15_000.0).abs() < 1e-9);
        assert_eq!(replay_dead.idle_retries, vec![1, 2, 3, 4]);
        assert_eq!(replay_dead.longest_recovery_ms, None);

        // A censored episode and a recovery at the same 3 s: the censored one counts as still
        // failing then (at risk), so 1 of 2 recovers; the one later recovers at 20 s.
        let mixed = [ep(3_000, false), ep(3_000, true), ep(20_000, true)];
        let replay_mixed = replay(&policy(1_000, 20, 5), &mixed);
        // Starts at 1, 3, 7, 15, 31 s.
        let expected = [0.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0, 1.0];
        for (got, want) in replay_mixed.recovered_by_retry.iter().zip(expected) {
            assert!((got - want).abs() < 1e-12, "{replay_mixed:?}");
        }
        assert_eq!(replay_mixed.idle_retries, vec![1, 3, 4]);
        assert!(!replay_mixed.is_enough());
    }

    #[test]
    fn the_suggestion_is_the_least_waiting_that_reaches_the_target() {
        let episodes = ten_recovered();
        // 95 % needs the last retry at 6 s or later: three retries at ×1.8 (1 + 1.8 + 3.24 s)
        // wait least; ×1.5 needs four (8.1 s).
        let suggestion = suggest(&policy(1_000, 20, 3), &episodes, 0.95).unwrap();
        assert_eq!(suggestion.policy.multiplier().tenths(), 18);
        assert_eq!(suggestion.policy.max_retries(), 3);
        assert!(suggestion.reaches_target && suggestion.within_sound_ranges);
        assert_eq!(suggestion.replay.recovered, 1.0);

        // Outages of 700 s with waits capped at a minute: ten retries wait 600 s at most, so
        // the suggestion leaves the sound ranges for more retries.
        let long = vec![ep(700_000, true); 10];
        let capped = RetryPolicy::new(
            100,
            Multiplier::from_tenths(20).unwrap(),
            3,
            super::super::retry::Jitter::None,
            Some(60_000),
        )
        .unwrap();
        let suggestion = suggest(&capped, &long, 0.95).unwrap();
        assert!(suggestion.reaches_target);
        assert!(!suggestion.within_sound_ranges);
        assert!(suggestion.policy.max_retries() > 10);
        assert_eq!(suggestion.policy.cap_ms(), Some(60_000));
        assert!(suggestion.policy.cumulative_ms().last().copied().unwrap() >= 700_000.0);

        // Never recovered: nothing reaches the target; fewer than ten: no suggestion.
        let dead = vec![ep(1_000, false); 10];
        assert!(
            !suggest(&policy(1_000, 20, 3), &dead, 0.95)
                .unwrap()
                .reaches_target
        );
        assert_eq!(suggest(&policy(1_000, 20, 3), &episodes[..9], 0.95), None);
    }

    fn attempt(
        start_s: i64,
        end_s: i64,
        outcome: Outcome,
        class: Option<ErrorClass>,
    ) -> AttemptFact {
        let at = |s: i64| DateTime::<Utc>::from_timestamp(1_800_000_000 + s, 0).unwrap();
        AttemptFact {
            started_at: at(start_s),
            finished_at: Some(at(end_s)),
            outcome: Some(outcome),
            error_class: class,
        }
    }

    #[test]
    fn a_runs_attempts_make_an_episode_when_its_first_attempt_failed_retryably() {
        let transient = Some(ErrorClass::Transient);
        // Failed at 1 s, failed again at 11 s, succeeded when tried at 30 s: 29 s.
        let recovered = [
            attempt(0, 1, Outcome::Failed, transient),
            attempt(10, 11, Outcome::Failed, transient),
            attempt(30, 31, Outcome::Succeeded, None),
        ];
        assert_eq!(episode_of(&recovered), Some(ep(29_000, true)));
        // A node that died mid-attempt says nothing about the job.
        let interrupted = [
            attempt(0, 1, Outcome::Interrupted, Some(ErrorClass::Interrupted)),
            attempt(5, 6, Outcome::TimedOut, Some(ErrorClass::Timeout)),
            attempt(20, 21, Outcome::Succeeded, None),
        ];
        assert_eq!(episode_of(&interrupted), Some(ep(14_000, true)));
        // Never recovered: at least until the last failure ended (a permanent error ends it).
        let dead = [
            attempt(0, 1, Outcome::Failed, transient),
            attempt(10, 12, Outcome::Failed, Some(ErrorClass::Permanent)),
        ];
        assert_eq!(episode_of(&dead), Some(ep(11_000, false)));
        // Not episodes: first attempt succeeded, failed permanently, or is still running.
        assert_eq!(episode_of(&[attempt(0, 1, Outcome::Succeeded, None)]), None);
        assert_eq!(
            episode_of(&[attempt(0, 1, Outcome::Failed, Some(ErrorClass::Permanent))]),
            None
        );
        let mut running = attempt(0, 1, Outcome::Failed, transient);
        running.outcome = None;
        assert_eq!(episode_of(&[running]), None);
        assert_eq!(episode_of(&[]), None);
    }

    #[test]
    fn the_digest_names_policies_that_recover_too_few_or_wait_too_long() {
        let episodes = ten_recovered();
        // Recovers all, waits 7 s against outages of at most 6 s: fine.
        let fine = policy(1_000, 20, 3);
        assert_eq!(worth_a_look(&fine, &replay(&fine, &episodes)), None);
        // One retry at 1 s recovers half.
        let hasty = policy(1_000, 20, 1);
        assert_eq!(
            worth_a_look(&hasty, &replay(&hasty, &episodes)),
            Some(PolicyConcern::RecoversTooFew)
        );
        // Ten retries from 1 s at ×2 wait 17 min for outages of 6 s at most.
        let overlong = policy(1_000, 20, 10);
        assert_eq!(
            worth_a_look(&overlong, &replay(&overlong, &episodes)),
            Some(PolicyConcern::WaitsTooLong)
        );
        // Nine episodes say nothing.
        assert_eq!(worth_a_look(&hasty, &replay(&hasty, &episodes[..9])), None);
    }

    #[test]
    fn episodes_can_be_limited_to_the_current_revision() {
        let job = JobEpisodes {
            current: 3,
            episodes: vec![
                (Some(3), ep(10, true)),
                (Some(2), ep(20, true)),
                (None, ep(30, false)),
                (Some(3), ep(40, false)),
            ],
        };
        assert!(job.spans_revisions());
        assert_eq!(job.select(false).len(), 4);
        assert_eq!(job.select(true), vec![ep(10, true), ep(40, false)]);
        // A job whose episodes all ran its current definition has nothing to limit.
        let steady = JobEpisodes {
            current: 3,
            episodes: vec![(Some(3), ep(10, true))],
        };
        assert!(!steady.spans_revisions());
    }
}
