//! What becomes of a job's due cron ticks. Every tick becomes exactly one run row — pending,
//! skipped or held — decided here by the job's misfire and overlap policies and whether a job
//! it depends on is failing. Pure: the engine's trigger finds the due ticks and writes what
//! [`plan`] decides.

use chrono::{DateTime, Duration, Utc};

pub use super::due::Due;

use super::job::{Misfire, Overlap};
use super::run::RunStatus;

/// Missed ticks recorded per job and pass, at most; older ones are only counted.
pub const MAX_MISSED_RECORDED: usize = 100;

/// A tick and the run it becomes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedTick {
    pub due: Due,
    pub status: RunStatus,
    /// Why it is not simply pending (shown as the run's last error).
    pub note: Option<String>,
}

/// The runs for a job's due ticks, oldest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    pub runs: Vec<PlannedTick>,
    /// Missed ticks beyond [`MAX_MISSED_RECORDED`], left unrecorded (the caller logs them).
    pub unrecorded_missed: usize,
}

/// The situation a job's due ticks are planned in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Situation<'a> {
    pub now: DateTime<Utc>,
    /// A tick older than this when first seen was missed (Bulwark was down).
    pub misfire_after: Duration,
    pub misfire: Misfire,
    pub overlap: Overlap,
    /// The job has a run still going.
    pub busy: bool,
    /// Why the job's runs are held, if a job it depends on is failing.
    pub hold: Option<&'a str>,
    /// The job is watched (`super::watch`): its on-time ticks wait for pings, whatever runs
    /// elsewhere, and its missed ticks are skipped (no ping could reach Bulwark then).
    pub watch: bool,
}

/// Plans the runs of `due` (the job's ticks since its last recorded one, oldest first by fire
/// time).
///
/// - Ticks on a calendar's off days are recorded as skipped, with their reason.
/// - Missed ticks follow the misfire policy: `run_once` runs the newest missed tick unless an
///   on-time tick runs anyway; every other missed tick is recorded as skipped.
/// - A tick that would run is held (`blocked`) while the job is held.
/// - Otherwise, with `overlap = skip`, a tick that comes while a run is going is skipped;
///   with `queue` it waits its turn. Ticks firing at one moment all run (a workday's own and
///   the off days' a calendar moved onto it).
pub fn plan(due: &[Due], s: Situation<'_>) -> Plan {
    let (off, working): (Vec<&Due>, Vec<&Due>) = due.iter().partition(|d| d.off_day.is_some());
    let mut plan = if s.watch {
        plan_watched(&working, s)
    } else {
        plan_working(&working, s)
    };
    let keep_from = off.len().saturating_sub(MAX_MISSED_RECORDED);
    plan.runs
        .extend(off[keep_from..].iter().map(|d| PlannedTick {
            due: (*d).clone(),
            status: RunStatus::Skipped,
            note: d.off_day.clone(),
        }));
    plan.runs.sort_by_key(|p| (p.due.fire, p.due.tick));
    plan.unrecorded_missed += keep_from;
    plan
}

fn plan_working(due: &[&Due], s: Situation<'_>) -> Plan {
    let (missed, on_time): (Vec<&Due>, Vec<&Due>) =
        due.iter().partition(|d| s.now - d.fire > s.misfire_after);
    let run_missed = match (s.misfire, on_time.is_empty()) {
        (Misfire::RunOnce, true) => missed.last().copied(),
        _ => None,
    };
    let keep_from = missed.len().saturating_sub(MAX_MISSED_RECORDED);
    let mut runs = Vec::new();
    let skipped_note = match s.misfire {
        Misfire::RunOnce => {
            "missed while Bulwark was down; a later tick ran instead (misfire: run_once)"
        }
        Misfire::Skip => "missed while Bulwark was down (misfire: skip)",
    };
    for due in missed.iter().skip(keep_from) {
        if Some(*due) != run_missed {
            runs.push(PlannedTick {
                due: (*due).clone(),
                status: RunStatus::Skipped,
                note: Some(skipped_note.into()),
            });
        }
    }
    // When the job became busy: a run planned here makes later ticks skip (overlap: skip),
    // not the ticks firing with it (off days' ticks a calendar moved onto a workday's).
    let mut busy_since = s.busy.then_some(DateTime::<Utc>::MIN_UTC);
    for due in run_missed.into_iter().chain(on_time) {
        let busy = busy_since.is_some_and(|since| since < due.fire);
        let (status, note) = if let Some(reason) = s.hold {
            (RunStatus::Blocked, Some(reason.to_string()))
        } else if busy && s.overlap == Overlap::Skip {
            (
                RunStatus::Skipped,
                Some("the previous run was still active (overlap: skip)".to_string()),
            )
        } else {
            busy_since.get_or_insert(due.fire);
            (RunStatus::Pending, None)
        };
        runs.push(PlannedTick {
            due: due.clone(),
            status,
            note,
        });
    }
    Plan {
        runs,
        unrecorded_missed: keep_from,
    }
}

/// A watched job's due ticks: those Bulwark was down for are skipped (a ping then had nowhere
/// to go, so its absence says nothing), the rest await their pings.
fn plan_watched(due: &[&Due], s: Situation<'_>) -> Plan {
    let keep_from = due.len().saturating_sub(MAX_MISSED_RECORDED);
    let runs = due[keep_from..]
        .iter()
        .map(|due| {
            if s.now - due.fire > s.misfire_after {
                PlannedTick {
                    due: (*due).clone(),
                    status: RunStatus::Skipped,
                    note: Some("expected while Bulwark was down".into()),
                }
            } else {
                PlannedTick {
                    due: (*due).clone(),
                    status: RunStatus::AwaitingPing,
                    note: None,
                }
            }
        })
        .collect();
    Plan {
        runs,
        unrecorded_missed: keep_from,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: i64) -> Due {
        let tick = DateTime::from_timestamp(1_800_000_000 + s, 0).unwrap();
        Due::at(tick, tick.date_naive())
    }

    fn situation(misfire: Misfire, overlap: Overlap, busy: bool) -> Situation<'static> {
        Situation {
            now: at(1_000).fire,
            misfire_after: Duration::seconds(30),
            misfire,
            overlap,
            busy,
            hold: None,
            watch: false,
        }
    }

    fn statuses(plan: &Plan) -> Vec<(i64, RunStatus)> {
        plan.runs
            .iter()
            .map(|p| (p.due.tick.timestamp() - 1_800_000_000, p.status))
            .collect()
    }

    #[test]
    fn run_once_runs_the_newest_missed_tick_and_records_the_rest() {
        let plan = plan(
            &[at(100), at(200), at(300)],
            situation(Misfire::RunOnce, Overlap::Skip, false),
        );
        assert_eq!(
            statuses(&plan),
            [
                (100, RunStatus::Skipped),
                (200, RunStatus::Skipped),
                (300, RunStatus::Pending)
            ]
        );
    }

    #[test]
    fn an_on_time_tick_runs_instead_of_a_missed_one() {
        let plan = plan(
            &[at(100), at(990)],
            situation(Misfire::RunOnce, Overlap::Skip, false),
        );
        assert_eq!(
            statuses(&plan),
            [(100, RunStatus::Skipped), (990, RunStatus::Pending)]
        );
    }

    #[test]
    fn misfire_skip_records_every_missed_tick_as_skipped() {
        let plan = plan(
            &[at(100), at(200)],
            situation(Misfire::Skip, Overlap::Queue, false),
        );
        assert!(plan.runs.iter().all(|p| p.status == RunStatus::Skipped));
    }

    #[test]
    fn overlap_skip_skips_ticks_while_busy_and_queue_waits() {
        let due = [at(980), at(990)];
        let skip = plan(&due, situation(Misfire::RunOnce, Overlap::Skip, false));
        assert_eq!(
            statuses(&skip),
            [(980, RunStatus::Pending), (990, RunStatus::Skipped)]
        );
        let queue = plan(&due, situation(Misfire::RunOnce, Overlap::Queue, true));
        assert_eq!(
            statuses(&queue),
            [(980, RunStatus::Pending), (990, RunStatus::Pending)]
        );
    }

    #[test]
    fn held_jobs_block_their_ticks() {
        let mut s = situation(Misfire::RunOnce, Overlap::Skip, false);
        s.hold = Some("held: job upstream is failing (run #7)");
        let plan = plan(&[at(990)], s);
        assert_eq!(plan.runs[0].status, RunStatus::Blocked);
        assert_eq!(plan.runs[0].note.as_deref(), s.hold);
    }

    #[test]
    fn watched_ticks_await_pings_whatever_is_busy_or_held() {
        let mut s = situation(Misfire::RunOnce, Overlap::Skip, true);
        s.watch = true;
        s.hold = Some("held");
        let plan = plan(&[at(100), at(980), at(990)], s);
        assert_eq!(
            statuses(&plan),
            [
                (100, RunStatus::Skipped),
                (980, RunStatus::AwaitingPing),
                (990, RunStatus::AwaitingPing)
            ]
        );
    }

    #[test]
    fn off_days_are_skipped_with_their_reason_and_leave_the_misfire_choice_alone() {
        let mut off = at(300);
        off.off_day = Some("2026-10-01 is off".into());
        let plan = plan(
            &[at(100), at(200), off],
            situation(Misfire::RunOnce, Overlap::Skip, false),
        );
        assert_eq!(
            statuses(&plan),
            [
                (100, RunStatus::Skipped),
                (200, RunStatus::Pending),
                (300, RunStatus::Skipped)
            ]
        );
        assert_eq!(plan.runs[2].note.as_deref(), Some("2026-10-01 is off"));
    }

    #[test]
    fn ticks_moved_onto_one_moment_all_run_whatever_the_overlap() {
        let own = at(990);
        let mut moved = at(500);
        moved.fire = own.fire;
        let plan = plan(
            &[moved, own, at(995)],
            situation(Misfire::RunOnce, Overlap::Skip, false),
        );
        assert_eq!(
            statuses(&plan),
            [
                (500, RunStatus::Pending),
                (990, RunStatus::Pending),
                (995, RunStatus::Skipped)
            ]
        );
    }

    #[test]
    fn long_outages_record_a_bounded_number_of_missed_ticks() {
        let due: Vec<_> = (0..500).map(at).collect();
        let plan = plan(&due, situation(Misfire::RunOnce, Overlap::Skip, false));
        assert_eq!(plan.unrecorded_missed, 400);
        assert_eq!(plan.runs.len(), MAX_MISSED_RECORDED);
        assert_eq!(plan.runs.last().map(|p| p.status), Some(RunStatus::Pending));
    }
}
