//! Jobs as the list and the editor show them.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::domain::job::{JobInput, JobState, Kind};
use crate::domain::run::RunStatus;

/// A job's time zone for the editor's previews: its offsets as `ZoneTable::encode` writes them
/// (`app/src/i18n/zone.rs`), decoded in the browser.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobZone {
    /// The zone's IANA name as the tz database spells it.
    pub name: String,
    pub spans: String,
}

impl JobZone {
    pub fn table(&self) -> Option<crate::domain::zone::ZoneTable> {
        crate::domain::zone::ZoneTable::decode(&self.name, &self.spans)
    }
}

/// A job as the list shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct JobRow {
    pub id: i64,
    pub name: String,
    pub description: String,
    pub kind: Kind,
    pub cron: String,
    pub timezone: String,
    pub enabled: bool,
    pub last_status: Option<RunStatus>,
    pub runs: u64,
    /// Runs are started with parameters (Run now asks for them on the job's page).
    #[serde(default)]
    pub takes_parameters: bool,
    /// An alert episode is open: the job is failing now.
    #[serde(default)]
    pub failing: bool,
    /// Paused on its own (a maintenance window is not counted here).
    #[serde(default)]
    pub paused: bool,
    #[serde(default)]
    pub tags: Vec<String>,
    /// When the latest run ended, or was recorded while it has not.
    #[serde(default)]
    pub last_at: Option<DateTime<Utc>>,
    /// The statuses of the newest runs (at most [`STRIP`]), oldest first.
    #[serde(default)]
    pub strip: Vec<RunStatus>,
    /// Runs recorded in the last 7 days that succeeded, and that ended at all (succeeded or
    /// dead: skipped and cancelled runs say nothing about the job's health).
    #[serde(default)]
    pub week_succeeded: u64,
    #[serde(default)]
    pub week_ended: u64,
    /// P95 duration of the successful attempts among the newest [`DURATION_RUNS`] runs.
    #[serde(default)]
    pub p95_ms: Option<u64>,
    /// The next tick not yet recorded (`None` while disabled).
    #[serde(default)]
    pub next_fire_at: Option<DateTime<Utc>>,
}

/// Runs in a job's strip. The Jobs list keeps room for this many squares (style/main.css,
/// "The jobs list").
pub const STRIP: usize = 20;
/// Runs whose durations make a job's P95.
pub const DURATION_RUNS: usize = 100;

impl JobRow {
    /// Success rate over 7 days, in percent, when a run ended in that time.
    pub fn success_rate(&self) -> Option<f64> {
        (self.week_ended > 0).then(|| self.week_succeeded as f64 * 100.0 / self.week_ended as f64)
    }
}

/// A job opened in the editor (credentials hidden).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct JobDetail {
    pub id: i64,
    pub input: JobInput,
    pub updated_at: DateTime<Utc>,
    /// Where the job uses a run parameter where it is no longer allowed, each as its field and
    /// what to do (`crate::services::held`); empty for almost every job.
    #[serde(default)]
    pub params_misplaced: Vec<super::FieldError>,
    /// Held (paused) for them; otherwise confirmed to run as written until its next edit.
    #[serde(default)]
    pub params_held: bool,
}

/// A job's trigger URL as its admins see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hook {
    /// The path to POST to, `/hooks/<id>`: only when it has just been made (only its hash is
    /// kept).
    pub path: Option<String>,
    pub signed: bool,
    /// What it does while the job is paused.
    pub when_paused: crate::domain::job::WhenPaused,
}

/// What the Jobs page is asked to show, as its URL says it (`?q=…&kind=…&state=…&tag=…&sort=…`):
/// a link, a bookmark or the Overview's tile opens the same list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobQuery {
    /// Words the name or description contains (any case).
    pub text: String,
    pub kind: Option<Kind>,
    pub state: Option<JobState>,
    pub tag: Option<String>,
    pub sort: JobSort,
    pub descending: bool,
}

crate::text_enum! {
    /// The columns the Jobs page sorts by.
    #[derive(Default)]
    pub enum JobSort {
        #[default]
        Name = "name",
        Last = "last",
        Rate = "rate",
        Duration = "p95",
        Next = "next",
    }
}

impl JobQuery {
    /// Reads the URL's parameters; a word the page does not know is no filter.
    pub fn parse(get: impl Fn(&str) -> Option<String>) -> Self {
        let word = |key: &str| {
            get(key)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let sort = word("sort").unwrap_or_default();
        let (descending, column) = match sort.strip_prefix('-') {
            Some(column) => (true, column.to_string()),
            None => (false, sort),
        };
        JobQuery {
            text: word("q").unwrap_or_default(),
            kind: word("kind").and_then(|k| k.parse().ok()),
            state: word("state").and_then(|s| s.parse().ok()),
            tag: word("tag").map(|t| t.to_lowercase()),
            sort: column.parse().unwrap_or_default(),
            descending,
        }
    }

    pub fn is_filtered(&self) -> bool {
        !self.text.is_empty() || self.kind.is_some() || self.state.is_some() || self.tag.is_some()
    }

    pub fn matches(&self, row: &JobRow) -> bool {
        let text = self.text.to_lowercase();
        (text.is_empty()
            || row.name.to_lowercase().contains(&text)
            || row.description.to_lowercase().contains(&text))
            && self.kind.is_none_or(|k| row.kind == k)
            && self.state.is_none_or(|s| match s {
                JobState::Enabled => row.enabled,
                JobState::Disabled => !row.enabled,
                JobState::Paused => row.paused,
                JobState::Failing => row.failing,
            })
            && self.tag.as_ref().is_none_or(|t| row.tags.contains(t))
    }

    /// Sorts by the chosen column; rows without a value (never ran, disabled) go last either
    /// way, and ties keep the name order.
    pub fn sort(&self, rows: &mut [JobRow]) {
        use std::cmp::Ordering;
        fn missing_last<T: PartialOrd>(a: Option<T>, b: Option<T>, descending: bool) -> Ordering {
            match (a, b) {
                (Some(a), Some(b)) => {
                    let order = a.partial_cmp(&b).unwrap_or(Ordering::Equal);
                    if descending { order.reverse() } else { order }
                }
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (None, None) => Ordering::Equal,
            }
        }
        rows.sort_by(|a, b| {
            let by_name = a.name.cmp(&b.name);
            let order = match self.sort {
                JobSort::Name => {
                    if self.descending {
                        by_name.reverse()
                    } else {
                        by_name
                    }
                }
                JobSort::Last => missing_last(a.last_at, b.last_at, self.descending),
                JobSort::Rate => missing_last(a.success_rate(), b.success_rate(), self.descending),
                JobSort::Duration => missing_last(a.p95_ms, b.p95_ms, self.descending),
                JobSort::Next => missing_last(a.next_fire_at, b.next_fire_at, self.descending),
            };
            order.then(by_name)
        });
    }

    /// The URL of this list sorted by `column`: the other direction when it already is.
    pub fn sorted_by(&self, column: JobSort) -> String {
        let descending = self.sort == column && !self.descending;
        let next = JobQuery {
            sort: column,
            descending,
            ..self.clone()
        };
        next.href()
    }

    pub fn href(&self) -> String {
        let mut pairs: Vec<(&str, String)> = Vec::new();
        if !self.text.is_empty() {
            pairs.push(("q", self.text.clone()));
        }
        if let Some(kind) = self.kind {
            pairs.push(("kind", kind.as_str().into()));
        }
        if let Some(state) = self.state {
            pairs.push(("state", state.as_str().into()));
        }
        if let Some(tag) = &self.tag {
            pairs.push(("tag", tag.clone()));
        }
        if self.sort != JobSort::Name || self.descending {
            let sign = if self.descending { "-" } else { "" };
            pairs.push(("sort", format!("{sign}{}", self.sort.as_str())));
        }
        super::query::href("/jobs", pairs.iter().map(|(k, v)| (*k, v.as_str())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str) -> JobRow {
        JobRow {
            id: 1,
            name: name.into(),
            description: String::new(),
            kind: Kind::Http,
            cron: "0 * * * * *".into(),
            timezone: "UTC".into(),
            enabled: true,
            last_status: None,
            runs: 0,
            takes_parameters: false,
            failing: false,
            paused: false,
            tags: Vec::new(),
            last_at: None,
            strip: Vec::new(),
            week_succeeded: 0,
            week_ended: 0,
            p95_ms: None,
            next_fire_at: None,
        }
    }

    fn query(url: &str) -> JobQuery {
        let pairs: Vec<(String, String)> = url
            .split('&')
            .filter_map(|p| p.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        JobQuery::parse(|key| pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone()))
    }

    #[test]
    fn filters_combine_text_kind_state_and_tag() {
        let mut billing = row("nightly-billing");
        billing.tags = vec!["billing".into()];
        billing.failing = true;
        let mut backup = row("backup");
        backup.kind = Kind::Command;
        backup.description = "Copies the BILLING database".into();
        backup.enabled = false;
        let q = query("q=billing");
        assert!(q.matches(&billing) && q.matches(&backup));
        assert!(!query("kind=command").matches(&billing));
        assert!(query("kind=command&state=disabled").matches(&backup));
        assert!(query("state=failing&tag=Billing").matches(&billing));
        assert!(!query("tag=billing").matches(&backup));
        assert!(
            query("state=nonsense").matches(&backup),
            "an unknown word is no filter"
        );
    }

    #[test]
    fn sorting_puts_rows_without_a_value_last_both_ways() {
        let mut a = row("a");
        a.week_ended = 10;
        a.week_succeeded = 5;
        let mut b = row("b");
        b.week_ended = 10;
        b.week_succeeded = 10;
        let c = row("c");
        let mut rows = vec![c.clone(), b.clone(), a.clone()];
        query("sort=rate").sort(&mut rows);
        assert_eq!(
            rows.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(),
            ["a", "b", "c"]
        );
        query("sort=-rate").sort(&mut rows);
        assert_eq!(
            rows.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(),
            ["b", "a", "c"]
        );
        query("sort=-name").sort(&mut rows);
        assert_eq!(
            rows.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(),
            ["c", "b", "a"]
        );
    }

    #[test]
    fn links_keep_the_filters_and_flip_the_direction() {
        let q = query("q=night ly&tag=ops");
        assert_eq!(q.href(), "/jobs?q=night%20ly&tag=ops");
        let q = query("tag=ops&sort=p95");
        assert_eq!(q.sorted_by(JobSort::Duration), "/jobs?tag=ops&sort=-p95");
        assert_eq!(q.sorted_by(JobSort::Rate), "/jobs?tag=ops&sort=rate");
        assert_eq!(JobQuery::default().href(), "/jobs");
    }
}

crate::text_enum! {
    /// What the Jobs page does to the jobs an admin selected.
    pub enum BulkAction {
        Enable = "enable",
        Disable = "disable",
        Pause = "pause",
        Resume = "resume",
        /// Adds the tag given with it.
        Tag = "tag",
        /// Removes the tag given with it.
        Untag = "untag",
    }
}

impl BulkAction {
    /// The audit log's word for what happened to each job.
    pub fn audit_action(self) -> &'static str {
        match self {
            BulkAction::Enable => "job.enabled",
            BulkAction::Disable => "job.disabled",
            BulkAction::Pause => "job.paused",
            BulkAction::Resume => "job.resumed",
            BulkAction::Tag => "job.tagged",
            BulkAction::Untag => "job.untagged",
        }
    }
}

/// A job's recent attempts' durations, with what its successes have taught (the job page's
/// duration chart).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Durations {
    /// Oldest first.
    pub points: Vec<DurationPoint>,
    /// Percentiles of the latest successes (`crate::domain::watch::HISTORY` of them), once
    /// there are enough.
    pub p05_ms: Option<u64>,
    pub p95_ms: Option<u64>,
    pub p99_ms: Option<u64>,
    /// Shorter than this is too fast (a watched job's), longer than this too slow.
    pub fast_below_ms: Option<u64>,
    pub slow_above_ms: Option<u64>,
}

/// One finished attempt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DurationPoint {
    pub finished_at: DateTime<Utc>,
    pub duration_ms: u64,
    pub succeeded: bool,
    pub run_id: i64,
}

/// One revision of a job, as its history lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct RevisionRow {
    pub revision: i32,
    /// A person's name, `token:NAME`, `cli`, or `bulwark` for a job's first at the upgrade.
    pub actor: String,
    pub at: DateTime<Utc>,
    pub note: Option<String>,
}

/// A revision with what its runs did, as the job page's history shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RevisionView {
    pub row: RevisionRow,
    pub outcome: Option<crate::domain::job::outcomes::RevisionOutcome>,
    /// Worse than the revision before it (`crate::domain::job::outcomes::worse`).
    pub worse: Option<crate::domain::job::outcomes::Worse>,
}

/// Where a job asking for some labels could run now (the editor, beside `run_on`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Placement {
    /// Live nodes that run jobs.
    pub live: usize,
    /// Of them, those that may run it, by id.
    pub matching: Vec<String>,
}
