//! Where a job may run: the labels an instance carries (`node_labels = { role = "db" }`) and
//! the labels a job asks for (`run_on = { role = "db" }`). A node may take a job's runs when it
//! carries every label the job asks for, with the same value; a job that asks for nothing runs
//! anywhere. Written `role=db,dc=sh` wherever a line of text carries them (the editor's field,
//! `BULWARK_NODE_LABELS`, the nodes table), names in order so equal sets read the same.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::Problem;

/// Longest label name or value (as Kubernetes allows).
pub const MAX_LEN: usize = 63;
/// Most labels in one set: a claim names every subset of its node's labels, 2⁸ at most.
pub const MAX_LABELS: usize = 8;

/// A set of `name=value` labels.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Labels(BTreeMap<String, String>);

/// Why a text is not a set of labels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LabelError {
    /// A part with no `=`.
    NoValue(String),
    /// A name that is not lower-case letters, digits, `-`, `_` or `.` (starting with a letter
    /// or digit), or is too long.
    BadName(String),
    /// A value that is empty, too long, or has other characters than letters, digits, `-`,
    /// `_` or `.`.
    BadValue { name: String, value: String },
    /// The same name twice.
    Repeated(String),
    /// More than [`MAX_LABELS`].
    TooMany(usize),
}

impl LabelError {
    /// The refusal as the catalogue words it ([`crate::domain::problem`]).
    pub fn problem(&self) -> Problem {
        use crate::problem;
        match self {
            Self::NoValue(part) => problem!("labels-error-no-value", part = part.as_str()),
            Self::BadName(name) => problem!("labels-error-name", name = name.as_str()),
            Self::BadValue { name, value } => problem!(
                "labels-error-value",
                name = name.as_str(),
                value = value.as_str()
            ),
            Self::Repeated(name) => problem!("labels-error-repeated", name = name.as_str()),
            Self::TooMany(count) => problem!(
                "labels-error-too-many",
                count = *count as i64,
                most = MAX_LABELS as i64
            ),
        }
    }
}

impl fmt::Display for LabelError {
    /// In English, for configuration errors (read before any locale is known).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoValue(part) => write!(f, "`{part}` has no `=value`"),
            Self::BadName(name) => write!(
                f,
                "label name `{name}`: lower-case letters, digits, `-`, `_` and `.`, starting with a letter or digit, at most {MAX_LEN}"
            ),
            Self::BadValue { name, value } => write!(
                f,
                "label `{name}`: value `{value}`: letters, digits, `-`, `_` and `.`, 1 to {MAX_LEN}"
            ),
            Self::Repeated(name) => write!(f, "label `{name}` given twice"),
            Self::TooMany(count) => write!(f, "{count} labels: at most {MAX_LABELS}"),
        }
    }
}

impl std::error::Error for LabelError {}

fn valid_name(name: &str) -> bool {
    name.len() <= MAX_LEN
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-_.".contains(c))
}

fn valid_value(value: &str) -> bool {
    !value.is_empty()
        && value.len() <= MAX_LEN
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

impl Labels {
    /// From `name=value` parts separated by commas or line breaks (blanks around each part
    /// ignored; nothing at all is no labels).
    pub fn parse(text: &str) -> Result<Self, LabelError> {
        let pairs = text
            .split([',', '\n'])
            .map(str::trim)
            .filter(|part| !part.is_empty())
            .map(|part| {
                let (name, value) = part
                    .split_once('=')
                    .ok_or_else(|| LabelError::NoValue(part.to_string()))?;
                Ok((name.trim().to_string(), value.trim().to_string()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Self::from_pairs(pairs)
    }

    /// From names and values, each checked.
    pub fn from_pairs(
        pairs: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Self, LabelError> {
        let mut labels = BTreeMap::new();
        for (name, value) in pairs {
            if !valid_name(&name) {
                return Err(LabelError::BadName(name));
            }
            if !valid_value(&value) {
                return Err(LabelError::BadValue { name, value });
            }
            if labels.contains_key(&name) {
                return Err(LabelError::Repeated(name));
            }
            labels.insert(name, value);
        }
        if labels.len() > MAX_LABELS {
            return Err(LabelError::TooMany(labels.len()));
        }
        Ok(Self(labels))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Names and values, names in order.
    pub fn pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(n, v)| (n.as_str(), v.as_str()))
    }

    /// Whether a node carrying these labels may run a job that asks for `wanted`.
    pub fn satisfy(&self, wanted: &Labels) -> bool {
        wanted
            .pairs()
            .all(|(name, value)| self.0.get(name).is_some_and(|v| v == value))
    }
}

impl Labels {
    /// Every subset of these labels as text (the empty one included): the `run_on` values a
    /// node carrying them may run, which a claim compares `jobs.run_on` with.
    pub fn subsets(&self) -> Vec<String> {
        let pairs: Vec<(&str, &str)> = self.pairs().collect();
        (0u32..1 << pairs.len())
            .map(|mask| {
                let chosen = pairs
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| mask & (1 << i) != 0)
                    .map(|(_, (name, value))| (name.to_string(), value.to_string()));
                Self(chosen.collect()).to_string()
            })
            .collect()
    }
}

impl fmt::Display for Labels {
    /// `dc=sh,role=db`: names in order, so equal sets are equal texts.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (name, value)) in self.pairs().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{name}={value}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_read_the_same_however_written() {
        let a = Labels::parse(" role = db ,dc=sh\n").unwrap();
        let b = Labels::parse("dc=sh\nrole=db").unwrap();
        assert_eq!(a, b);
        assert_eq!(a.to_string(), "dc=sh,role=db");
        assert_eq!(Labels::parse(a.to_string().as_str()).unwrap(), a);
        assert!(Labels::parse("  ").unwrap().is_empty());
    }

    #[test]
    fn bad_labels_say_what_is_wrong() {
        assert_eq!(
            Labels::parse("role"),
            Err(LabelError::NoValue("role".into()))
        );
        assert_eq!(
            Labels::parse("Role=db"),
            Err(LabelError::BadName("Role".into()))
        );
        assert_eq!(
            Labels::parse("role="),
            Err(LabelError::BadValue {
                name: "role".into(),
                value: String::new()
            })
        );
        assert_eq!(
            Labels::parse("role=a b"),
            Err(LabelError::BadValue {
                name: "role".into(),
                value: "a b".into()
            })
        );
        assert_eq!(
            Labels::parse("role=db,role=web"),
            Err(LabelError::Repeated("role".into()))
        );
        assert!(Labels::parse(&format!("{}=x", "a".repeat(64))).is_err());
    }

    #[test]
    fn a_node_names_every_run_on_it_satisfies() {
        let node = Labels::parse("role=db,dc=sh").unwrap();
        let mut subsets = node.subsets();
        subsets.sort();
        assert_eq!(subsets, ["", "dc=sh", "dc=sh,role=db", "role=db"]);
        for text in &subsets {
            assert!(node.satisfy(&Labels::parse(text).unwrap()));
        }
        assert_eq!(Labels::default().subsets(), [""]);
        let most = (0..MAX_LABELS)
            .map(|i| format!("l{i}=v"))
            .collect::<Vec<_>>();
        assert_eq!(Labels::parse(&most.join(",")).unwrap().subsets().len(), 256);
        let over = (0..=MAX_LABELS)
            .map(|i| format!("l{i}=v"))
            .collect::<Vec<_>>();
        assert_eq!(
            Labels::parse(&over.join(",")),
            Err(LabelError::TooMany(MAX_LABELS + 1))
        );
    }

    #[test]
    fn a_node_runs_a_job_when_it_carries_every_label_asked_for() {
        let node = Labels::parse("role=db,dc=sh").unwrap();
        assert!(node.satisfy(&Labels::default()));
        assert!(node.satisfy(&Labels::parse("role=db").unwrap()));
        assert!(node.satisfy(&Labels::parse("role=db,dc=sh").unwrap()));
        assert!(!node.satisfy(&Labels::parse("role=web").unwrap()));
        assert!(!node.satisfy(&Labels::parse("role=db,zone=a").unwrap()));
        assert!(!Labels::default().satisfy(&Labels::parse("role=db").unwrap()));
    }
}
