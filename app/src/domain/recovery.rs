//! How long a job's outages last, from its own failure episodes: the Kaplan–Meier estimate of
//! the chance an outage is still on after a given time, with Greenwood's standard error.
//!
//! An episode that recovered (a retry succeeded) gives its duration exactly; one that ended
//! dead, skipped or re-triggered by hand only says the outage lasted *at least* that long — it
//! is censored. Kaplan–Meier uses both without pretending the censored ones recovered.
//!
//! Ties follow the usual convention: at one instant, recoveries are counted before censorings,
//! so an episode censored at `t` was still at risk when the others recovered at `t`.

/// One failure episode: how long it lasted, and whether it ended in a recovery (`true`) or
/// was only seen to last at least that long (`false`, censored).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
}
