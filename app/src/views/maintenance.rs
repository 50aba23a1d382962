//! Maintenance windows and paused jobs as the banner, the Maintenance page and the command
//! line show them.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct WindowView {
    pub id: i64,
    pub starts_at: DateTime<Utc>,
    /// `None`: until someone resumes.
    pub ends_at: Option<DateTime<Utc>>,
    pub reason: String,
    /// `None`: every job.
    pub tag: Option<String>,
    pub created_by: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct MaintenanceStatus {
    /// Windows open now, oldest first.
    pub active: Vec<WindowView>,
    /// Windows still to come, soonest first.
    pub ahead: Vec<WindowView>,
    /// Jobs paused on their own, by name.
    pub paused_jobs: Vec<String>,
}

impl MaintenanceStatus {
    /// The open window that pauses every job, if one is.
    pub fn pausing_all(&self) -> Option<&WindowView> {
        self.active.iter().find(|w| w.tag.is_none())
    }

    /// One line for the banner and the command line: what is paused, by whom, why, until when.
    pub fn summary(&self) -> Option<String> {
        let line = |w: &WindowView| {
            let what = match &w.tag {
                None => "Bulwark is paused".to_string(),
                Some(tag) => format!("Jobs tagged {tag} are paused"),
            };
            let until = match w.ends_at {
                Some(end) => format!(" until {} UTC", end.format("%Y-%m-%d %H:%M")),
                None => " until someone resumes".into(),
            };
            format!(
                "{what} by {} since {} UTC{until}: {}",
                w.created_by,
                w.starts_at.format("%Y-%m-%d %H:%M"),
                w.reason
            )
        };
        let lines: Vec<String> = self.active.iter().map(line).collect();
        (!lines.is_empty()).then(|| lines.join(". "))
    }
}
