//! The daily health digest's facts, read from the runs and attempts and worded as a mail and a
//! chat message above the domain, from nothing but these facts, so the tests and the outbox
//! preview see exactly what is sent.
//!
//! - runs: runs that ended in the window (succeeded, dead or skipped); success rate = succeeded
//!   / runs;
//! - P95 duration: nearest-rank P95 of the durations of attempts that succeeded in the window,
//!   and of the window before, for the trend;
//! - timeouts: attempts in the window whose error class is `timeout`;
//! - retries spent: attempts in the window after a run's first;
//! - slow: attempts in the window flagged too slow (`super::watch::Limits`);
//! - failed queue: every dead run not yet handled, with how long it has waited;
//! - by tag: the runs and success rate of each tag's jobs (a job with two tags counts in both),
//!   when any job has a tag.

use chrono::{DateTime, Utc};

#[derive(Debug, Clone, PartialEq, Default)]
pub struct JobDigest {
    pub job: String,
    pub runs: u64,
    pub succeeded: u64,
    pub p95_ms: Option<u64>,
    pub p95_before_ms: Option<u64>,
    pub timeouts: u64,
    pub retries: u64,
    pub slow: u64,
    pub tags: Vec<String>,
}

/// One tag's jobs over the window (`tag` empty: the jobs without a tag).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagDigest {
    pub tag: String,
    pub jobs: usize,
    pub runs: u64,
    pub succeeded: u64,
}

/// The jobs grouped by tag, tags in order and the untagged last; empty when no job has a tag.
pub fn by_tag(jobs: &[JobDigest]) -> Vec<TagDigest> {
    use std::collections::BTreeMap;
    if jobs.iter().all(|j| j.tags.is_empty()) {
        return Vec::new();
    }
    let mut groups: BTreeMap<(bool, &str), TagDigest> = BTreeMap::new();
    for job in jobs {
        let keys: Vec<&str> = if job.tags.is_empty() {
            vec![""]
        } else {
            job.tags.iter().map(String::as_str).collect()
        };
        for tag in keys {
            let group = groups.entry((tag.is_empty(), tag)).or_insert(TagDigest {
                tag: tag.to_string(),
                jobs: 0,
                runs: 0,
                succeeded: 0,
            });
            group.jobs += 1;
            group.runs += job.runs;
            group.succeeded += job.succeeded;
        }
    }
    groups.into_values().collect()
}

impl JobDigest {
    /// Succeeded runs out of ended runs, in percent; `None` without runs.
    pub fn success_rate(&self) -> Option<f64> {
        (self.runs > 0).then(|| self.succeeded as f64 * 100.0 / self.runs as f64)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct QueuedRun {
    pub job: String,
    pub run_id: i64,
    pub dead_since: DateTime<Utc>,
}

/// One hour of the window: runs that ended in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hour {
    pub start: DateTime<Utc>,
    pub succeeded: u64,
    pub failed: u64,
}

/// A job whose retry policy its own failure history questions (`recovery::worth_a_look`).
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyFinding {
    pub job: String,
    pub job_id: i64,
    pub concern: super::recovery::PolicyConcern,
    pub episodes: u32,
    pub recovered: f64,
    pub total_wait_ms: f64,
    pub longest_recovery_ms: Option<u64>,
}

/// A job that did worse after a change made in the window (`super::job::outcomes::worse`).
#[derive(Debug, Clone, PartialEq)]
pub struct ChangeFinding {
    pub job: String,
    pub job_id: i64,
    pub revision: i32,
    /// Who made the revision: a person or `token:NAME`.
    pub actor: String,
    /// The fields it changed (credentials hidden: a changed secret is not named).
    pub fields: Vec<String>,
    pub worse: super::job::outcomes::Worse,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Digest {
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    pub jobs: Vec<JobDigest>,
    pub queue: Vec<QueuedRun>,
    pub hours: Vec<Hour>,
    /// Retry policies worth a look, by job name.
    pub policies: Vec<PolicyFinding>,
    /// Jobs that got worse after a change in the window, by job name.
    pub worse_after_change: Vec<ChangeFinding>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_are_grouped_by_tag_when_any_has_one() {
        let job = |name: &str, tags: &[&str], runs: u64, succeeded: u64| JobDigest {
            job: name.into(),
            runs,
            succeeded,
            tags: tags.iter().map(|t| t.to_string()).collect(),
            ..Default::default()
        };
        assert!(by_tag(&[job("a", &[], 3, 3)]).is_empty());
        let groups = by_tag(&[
            job("a", &["billing", "ops"], 4, 2),
            job("b", &["billing"], 6, 6),
            job("c", &[], 1, 0),
        ]);
        let seen: Vec<(&str, usize, u64, u64)> = groups
            .iter()
            .map(|g| (g.tag.as_str(), g.jobs, g.runs, g.succeeded))
            .collect();
        assert_eq!(
            seen,
            [("billing", 2, 10, 8), ("ops", 1, 4, 2), ("", 1, 1, 0)]
        );
    }
}
