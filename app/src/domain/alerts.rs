//! Alert episodes: which mails a job's run outcomes cause (issue: mail that is neither silent
//! nor spam).
//!
//! An episode is a job's stretch of failing runs. A run *fails* when it ends without success
//! after its retries (dead, skipped to the next tick, or handed to a fallback); a failed
//! attempt that a retry then fixes is the retry policy doing its job and mails nobody.
//!
//! | event                       | no open episode                         | open episode                     |
//! |-----------------------------|-----------------------------------------|----------------------------------|
//! | run failed                  | open one, mail **first failure**        | count it; at `escalate_after` failed runs mail **escalation** once |
//! | run succeeded               | nothing                                 | close it, mail **recovered** with the downtime |
//!
//! The first-failure and escalation mails say when the run is in the failed queue and link to
//! it; further failed runs of the same episode add nothing until it recovers, so a job failing
//! every minute sends three mails, not one per minute.

use chrono::{DateTime, Duration, Utc};

/// A job's alert state between runs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AlertState {
    /// Episodes so far (the current one's number while open).
    pub episode: i32,
    pub open: bool,
    pub opened_at: Option<DateTime<Utc>>,
    pub failed_runs: i32,
    pub escalated: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunOutcome {
    Succeeded,
    Failed,
}

/// A mail an outcome calls for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alert {
    FirstFailure,
    Escalation { failed_runs: i32 },
    Recovered { down_for: Duration },
}

impl Alert {
    /// The outbox's `kind` and the last part of the dedupe key.
    pub fn kind(&self) -> &'static str {
        match self {
            Alert::FirstFailure => "first_failure",
            Alert::Escalation { .. } => "escalation",
            Alert::Recovered { .. } => "recovered",
        }
    }
}

/// The state after `outcome`, and the mails it causes.
pub fn step(
    state: &AlertState,
    outcome: RunOutcome,
    escalate_after: i32,
    now: DateTime<Utc>,
) -> (AlertState, Vec<Alert>) {
    let mut next = state.clone();
    let mut alerts = Vec::new();
    match (state.open, outcome) {
        (false, RunOutcome::Succeeded) => {}
        (false, RunOutcome::Failed) => {
            next.episode += 1;
            next.open = true;
            next.opened_at = Some(now);
            next.failed_runs = 1;
            next.escalated = false;
            alerts.push(Alert::FirstFailure);
        }
        (true, RunOutcome::Failed) => next.failed_runs += 1,
        (true, RunOutcome::Succeeded) => {
            next.open = false;
            let down_for = state.opened_at.map_or(Duration::zero(), |at| now - at);
            alerts.push(Alert::Recovered { down_for });
        }
    }
    if next.open && !next.escalated && next.failed_runs >= escalate_after.max(1) {
        next.escalated = true;
        alerts.push(Alert::Escalation {
            failed_runs: next.failed_runs,
        });
    }
    (next, alerts)
}

/// "3 h 12 min", "45 s": how long a job was down, for people.
pub fn human_duration(d: Duration) -> String {
    let s = d.num_seconds().max(0);
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {} s", s / 60, s % 60),
        3600..86_400 => format!("{} h {} min", s / 3600, s % 3600 / 60),
        _ => format!("{} d {} h", s / 86_400, s % 86_400 / 3600),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(minute: i64) -> DateTime<Utc> {
        DateTime::<Utc>::from_timestamp(1_800_000_000 + minute * 60, 0).unwrap()
    }

    fn run(outcomes: &[RunOutcome], escalate_after: i32) -> (AlertState, Vec<Alert>) {
        let mut state = AlertState::default();
        let mut all = Vec::new();
        for (i, outcome) in outcomes.iter().enumerate() {
            let (next, alerts) = step(&state, *outcome, escalate_after, at(i as i64));
            state = next;
            all.extend(alerts);
        }
        (state, all)
    }

    use RunOutcome::{Failed, Succeeded};

    #[test]
    fn five_failures_then_success_mail_three_times() {
        let (state, alerts) = run(&[Failed, Failed, Failed, Failed, Failed, Succeeded], 3);
        assert_eq!(
            alerts,
            vec![
                Alert::FirstFailure,
                Alert::Escalation { failed_runs: 3 },
                Alert::Recovered {
                    down_for: Duration::minutes(5)
                },
            ]
        );
        assert!(!state.open);
        assert_eq!(state.episode, 1);
    }

    #[test]
    fn successes_alone_mail_nobody() {
        assert!(run(&[Succeeded, Succeeded], 3).1.is_empty());
    }

    #[test]
    fn a_new_episode_mails_again_and_escalates_again() {
        let (state, alerts) = run(&[Failed, Succeeded, Failed, Failed], 2);
        assert_eq!(
            alerts.iter().map(Alert::kind).collect::<Vec<_>>(),
            ["first_failure", "recovered", "first_failure", "escalation"]
        );
        assert_eq!(state.episode, 2);
    }

    #[test]
    fn escalating_after_one_mails_both_at_once() {
        let (_, alerts) = run(&[Failed], 1);
        assert_eq!(
            alerts,
            vec![Alert::FirstFailure, Alert::Escalation { failed_runs: 1 }]
        );
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(human_duration(Duration::seconds(45)), "45 s");
        assert_eq!(
            human_duration(Duration::seconds(3 * 3600 + 12 * 60)),
            "3 h 12 min"
        );
        assert_eq!(human_duration(Duration::days(2)), "2 d 0 h");
    }
}
