//! How many runs a tick makes across the nodes: one (the usual), one child per matching live
//! node (`run_on_count = "all"`, a broadcast), or `shards = N` children spread over them.
//!
//! A tick of a spread job is a *parent* run that never runs anything itself: the node that
//! claims it gives it its children, each a run of its own (its attempts, retries, lease and
//! log) knowing its place as `BULWARK_SHARD_INDEX` / `BULWARK_SHARD_TOTAL` or `${shard:index}`
//! / `${shard:total}`. The parent ends when they all have ([`Children::outcome`]).

use serde::{Deserialize, Serialize};

use crate::domain::Problem;
use crate::problem;

/// At most this many children a tick: each is a run with its own attempts and lease.
pub const MAX_SHARDS: u16 = 64;

/// How many runs a tick makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Spread {
    #[default]
    One,
    /// One child per matching live node.
    All,
    /// This many children, spread over the matching live nodes in turn.
    Shards(u16),
}

impl Spread {
    /// From the two fields that say it: `run_on_count` (`all` or empty) and `shards` (a whole
    /// number, or empty). On failure, the field at fault and why.
    pub fn parse(run_on_count: &str, shards: &str) -> Result<Spread, (&'static str, Problem)> {
        let all = match run_on_count.trim() {
            "" => false,
            "all" => true,
            other => {
                return Err((
                    "run_on_count",
                    problem!("job-error-run-on-count", value = other),
                ));
            }
        };
        let shards = match shards.trim() {
            "" => None,
            text => match text.parse::<u16>() {
                Ok(n) if (2..=MAX_SHARDS).contains(&n) => Some(n),
                _ => {
                    return Err((
                        "shards",
                        problem!("job-error-shards", value = text, max = MAX_SHARDS),
                    ));
                }
            },
        };
        match (all, shards) {
            (true, Some(_)) => Err(("shards", problem!("job-error-spread-both"))),
            (true, None) => Ok(Spread::All),
            (false, Some(n)) => Ok(Spread::Shards(n)),
            (false, None) => Ok(Spread::One),
        }
    }

    /// `run_on_count` as the jobs file and the form write it.
    pub fn run_on_count(self) -> &'static str {
        match self {
            Spread::All => "all",
            _ => "",
        }
    }

    /// `shards` as a number; 0 for none.
    pub fn shards(self) -> u16 {
        match self {
            Spread::Shards(n) => n,
            _ => 0,
        }
    }

    /// From the job row's two columns; an unknown word reads as one run.
    pub fn from_columns(run_on_count: &str, shards: i32) -> Spread {
        match (run_on_count, u16::try_from(shards)) {
            ("all", _) => Spread::All,
            (_, Ok(n)) if n > 0 => Spread::Shards(n),
            _ => Spread::One,
        }
    }

    /// Whether a tick makes children.
    pub fn fans_out(self) -> bool {
        self != Spread::One
    }

    /// The node each child is meant for, in shard order, given the matching live nodes
    /// (sorted, so that every node reads the same plan): one each for a broadcast, in turn
    /// for shards. `None` for a child no live node was there for.
    pub fn plan<'a>(self, nodes: &[&'a str]) -> Vec<Option<&'a str>> {
        match self {
            Spread::One => Vec::new(),
            Spread::All => nodes.iter().copied().map(Some).collect(),
            Spread::Shards(n) => (0..usize::from(n))
                .map(|i| (!nodes.is_empty()).then(|| nodes[i % nodes.len()]))
                .collect(),
        }
    }
}

/// A child's place among its siblings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct Shard {
    /// From 0.
    pub index: u32,
    pub total: u32,
}

impl Shard {
    /// The value of `${shard:NAME}`: `index` or `total`.
    pub fn value(self, name: &str) -> Option<String> {
        match name {
            "index" => Some(self.index.to_string()),
            "total" => Some(self.total.to_string()),
            _ => None,
        }
    }
}

/// Where a parent's children stand: for each shard, its latest child (a re-triggered child
/// stands in for the one it repeats).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Children {
    pub total: u32,
    pub succeeded: u32,
    pub failed: u32,
    pub cancelled: u32,
    /// Still going.
    pub active: u32,
}

impl Children {
    /// Counts the latest child of each shard, given as (shard index, child id, status).
    pub fn count(children: &[(i32, i64, super::super::run::RunStatus)]) -> Children {
        use super::super::run::RunStatus;
        let mut latest: std::collections::BTreeMap<i32, (i64, RunStatus)> = Default::default();
        for &(index, id, status) in children {
            let entry = latest.entry(index).or_insert((id, status));
            if id > entry.0 {
                *entry = (id, status);
            }
        }
        let mut c = Children {
            total: latest.len() as u32,
            ..Children::default()
        };
        for (_, status) in latest.values() {
            match status {
                RunStatus::Succeeded => c.succeeded += 1,
                RunStatus::Cancelled => c.cancelled += 1,
                s if s.is_active() => c.active += 1,
                _ => c.failed += 1,
            }
        }
        c
    }

    /// What the parent becomes: `None` while a child is still going; succeeded when every
    /// shard did, cancelled when the rest were stopped by hand, dead when one failed.
    pub fn outcome(self) -> Option<super::super::run::RunStatus> {
        use super::super::run::RunStatus;
        if self.active > 0 || self.total == 0 {
            None
        } else if self.failed > 0 {
            Some(RunStatus::Dead)
        } else if self.cancelled > 0 {
            Some(RunStatus::Cancelled)
        } else {
            Some(RunStatus::Succeeded)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::run::RunStatus;

    #[test]
    fn the_two_fields_say_one_spread_or_why_not() {
        assert_eq!(Spread::parse("", ""), Ok(Spread::One));
        assert_eq!(Spread::parse("all", ""), Ok(Spread::All));
        assert_eq!(Spread::parse(" ", "4"), Ok(Spread::Shards(4)));
        assert_eq!(Spread::parse("some", "").unwrap_err().0, "run_on_count");
        for bad in ["1", "0", "65", "-2", "two"] {
            assert_eq!(Spread::parse("", bad).unwrap_err().0, "shards", "{bad}");
        }
        assert_eq!(Spread::parse("all", "3").unwrap_err().0, "shards");
        for spread in [Spread::One, Spread::All, Spread::Shards(7)] {
            let shards = spread.shards().to_string();
            let shards = if spread.shards() == 0 { "" } else { &shards };
            assert_eq!(Spread::parse(spread.run_on_count(), shards), Ok(spread));
            assert_eq!(
                Spread::from_columns(spread.run_on_count(), i32::from(spread.shards())),
                spread
            );
        }
    }

    #[test]
    fn a_broadcast_is_one_child_per_node_and_shards_take_the_nodes_in_turn() {
        let nodes = ["b", "c"];
        assert_eq!(Spread::All.plan(&nodes), [Some("b"), Some("c")]);
        assert_eq!(
            Spread::Shards(5).plan(&nodes),
            [Some("b"), Some("c"), Some("b"), Some("c"), Some("b")]
        );
        assert_eq!(Spread::Shards(2).plan(&[]), [None, None]);
        assert!(Spread::One.plan(&nodes).is_empty());
    }

    #[test]
    fn a_parent_ends_when_the_latest_child_of_every_shard_has() {
        use RunStatus::*;
        let going = Children::count(&[(0, 10, Succeeded), (1, 11, Running)]);
        assert_eq!(going.outcome(), None);
        let one_failed = Children::count(&[(0, 10, Succeeded), (1, 11, Dead)]);
        assert_eq!((one_failed.failed, one_failed.total), (1, 2));
        assert_eq!(one_failed.outcome(), Some(Dead));
        // Shard 1 re-triggered (run 12) and done: the parent succeeds.
        let repaired = Children::count(&[(0, 10, Succeeded), (1, 11, Dead), (1, 12, Succeeded)]);
        assert_eq!(repaired.outcome(), Some(Succeeded));
        let stopped = Children::count(&[(0, 10, Succeeded), (1, 11, Cancelled)]);
        assert_eq!(stopped.outcome(), Some(Cancelled));
        assert_eq!(Children::count(&[]).outcome(), None);
    }
}
