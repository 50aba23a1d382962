//! Concurrency pools: `pool = "backups"` on jobs and `[[pool]] name = "backups", size = 2` —
//! at most `size` runs of all the pool's jobs at once, across every node. Runs beyond it wait,
//! oldest due first; a job's own runs still go one at a time (its lane). The claim enforces it
//! (`server/src/engine/claim.rs`), one pool at a time under the pool's row lock.

use serde::{Deserialize, Serialize};

use super::Problem;

/// The largest pool: beyond it a pool limits nothing a node's own `concurrency` does not.
pub const MAX_SIZE: i32 = 10_000;

/// A pool as a jobs file or the API writes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct PoolInput {
    pub name: String,
    pub size: i32,
}

/// A pool, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pool {
    pub name: String,
    pub size: i32,
}

/// A pool's name follows the calendars' rule: letters, digits, `-`, `_` or `.`, at most 64.
pub use super::calendar::valid_name;

impl PoolInput {
    /// The pool, or what is wrong with it: `(field, problem)`.
    pub fn parse(&self) -> Result<Pool, Vec<(&'static str, Problem)>> {
        use crate::problem;
        let mut problems = Vec::new();
        let name = self.name.trim();
        if !valid_name(name) {
            problems.push(("name", problem!("pool-error-name", name = name)));
        }
        if !(1..=MAX_SIZE).contains(&self.size) {
            problems.push((
                "size",
                problem!(
                    "pool-error-size",
                    size = i64::from(self.size),
                    most = i64::from(MAX_SIZE)
                ),
            ));
        }
        if problems.is_empty() {
            Ok(Pool {
                name: name.to_string(),
                size: self.size,
            })
        } else {
            Err(problems)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pool_has_a_name_and_a_size_of_at_least_one() {
        let ok = PoolInput {
            name: " backups ".into(),
            size: 2,
        };
        assert_eq!(
            ok.parse(),
            Ok(Pool {
                name: "backups".into(),
                size: 2
            })
        );
        let bad = PoolInput {
            name: "no space".into(),
            size: 0,
        };
        let fields: Vec<&str> = bad.parse().unwrap_err().iter().map(|(f, _)| *f).collect();
        assert_eq!(fields, ["name", "size"]);
        assert!(
            PoolInput {
                name: "x".into(),
                size: MAX_SIZE + 1
            }
            .parse()
            .is_err()
        );
    }
}
