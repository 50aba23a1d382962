//! What each revision of a job did: its runs, how many succeeded, how long they took — and
//! whether a change made things worse, by a rule the job page and the digest share.

use serde::{Deserialize, Serialize};

/// The finished runs of one revision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RevisionOutcome {
    pub revision: i32,
    pub runs: u32,
    pub succeeded: u32,
    /// The 95th percentile of its attempts' durations, in milliseconds.
    pub p95_ms: Option<u64>,
}

impl RevisionOutcome {
    /// The share of runs that succeeded, 0–1; `None` without a run.
    pub fn success_rate(&self) -> Option<f64> {
        (self.runs > 0).then(|| f64::from(self.succeeded) / f64::from(self.runs))
    }
}

/// A finished run: its revision, whether it succeeded, and its attempts' durations.
#[derive(Debug, Clone)]
pub struct FinishedRun {
    pub revision: i32,
    pub succeeded: bool,
    pub durations_ms: Vec<u64>,
}

/// Each revision's outcome, by revision number.
pub fn outcomes(runs: &[FinishedRun]) -> Vec<RevisionOutcome> {
    let mut revisions: Vec<i32> = runs.iter().map(|r| r.revision).collect();
    revisions.sort_unstable();
    revisions.dedup();
    revisions
        .into_iter()
        .map(|revision| {
            let of: Vec<&FinishedRun> = runs.iter().filter(|r| r.revision == revision).collect();
            let durations: Vec<u64> = of
                .iter()
                .flat_map(|r| r.durations_ms.iter().copied())
                .collect();
            RevisionOutcome {
                revision,
                runs: of.len() as u32,
                succeeded: of.iter().filter(|r| r.succeeded).count() as u32,
                // The rank the learned timeouts use (`crate::domain::timeout`).
                p95_ms: (!durations.is_empty())
                    .then(|| crate::domain::timeout::nearest_rank(&durations, 0.95)),
            }
        })
        .collect()
}

/// Runs a revision needs before its outcome is compared: fewer say nothing yet.
pub const MIN_RUNS: u32 = 5;

/// How a revision did worse than the one before it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Worse {
    /// Success rates before and after, 0–1, when the rate fell by 5 points or more.
    pub rate: Option<(f64, f64)>,
    /// P95 durations before and after, when it grew by half and a second at least.
    pub p95_ms: Option<(u64, u64)>,
}

/// Whether `after` did worse than `before`: success rate down 5 points or more, or P95 up by
/// half (and a second at least), each side with [`MIN_RUNS`] runs.
pub fn worse(before: &RevisionOutcome, after: &RevisionOutcome) -> Option<Worse> {
    if before.runs < MIN_RUNS || after.runs < MIN_RUNS {
        return None;
    }
    let rate = before
        .success_rate()
        .zip(after.success_rate())
        .filter(|(b, a)| a + 0.05 <= *b);
    let p95_ms = before
        .p95_ms
        .zip(after.p95_ms)
        .filter(|(b, a)| *a >= b + b / 2 && *a >= b + 1_000);
    (rate.is_some() || p95_ms.is_some()).then_some(Worse { rate, p95_ms })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(revision: i32, succeeded: bool, ms: u64) -> FinishedRun {
        FinishedRun {
            revision,
            succeeded,
            durations_ms: vec![ms],
        }
    }

    #[test]
    fn each_revision_is_counted_and_a_worse_one_is_named() {
        let mut runs: Vec<FinishedRun> = (0..20).map(|_| run(2, true, 100)).collect();
        runs.extend((0..20).map(|i| run(3, i % 4 == 0, 100)));
        let list = outcomes(&runs);
        assert_eq!(list.len(), 2);
        assert_eq!((list[0].runs, list[0].succeeded), (20, 20));
        assert_eq!(list[1].success_rate(), Some(0.25));
        let worse = worse(&list[0], &list[1]).expect("worse");
        assert_eq!(worse.rate, Some((1.0, 0.25)));
        assert_eq!(worse.p95_ms, None);
        // Too few runs say nothing; slower by less than a second neither.
        assert!(super::worse(&list[0], &outcomes(&[run(4, false, 1)])[0]).is_none());
        let slow: Vec<FinishedRun> = (0..10).map(|_| run(5, true, 1_000)).collect();
        assert_eq!(super::worse(&list[0], &outcomes(&slow)[0]), None);
        let slower: Vec<FinishedRun> = (0..10).map(|_| run(5, true, 2_000)).collect();
        assert_eq!(
            super::worse(&list[0], &outcomes(&slower)[0])
                .unwrap()
                .p95_ms,
            Some((100, 2_000))
        );
    }
}
