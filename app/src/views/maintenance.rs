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

    /// One line for the banner and the command line, in `locale`: what is paused, by whom,
    /// why, until when.
    pub fn summary(&self, locale: crate::i18n::Locale) -> Option<String> {
        let line = |w: &WindowView| {
            let what = match &w.tag {
                None => crate::t!(in locale, "maintenance-banner-all"),
                Some(tag) => crate::t!(in locale, "maintenance-banner-tag", tag = tag.clone()),
            };
            let since = w.starts_at.format("%Y-%m-%d %H:%M").to_string();
            let until = match w.ends_at {
                Some(end) => crate::t!(
                    in locale,
                    "maintenance-banner-until",
                    until = end.format("%Y-%m-%d %H:%M").to_string()
                ),
                None => crate::t!(in locale, "maintenance-banner-open"),
            };
            crate::t!(
                in locale,
                "maintenance-banner",
                what = what,
                by = w.created_by.clone(),
                since = since,
                until = until,
                reason = w.reason.clone()
            )
        };
        let lines: Vec<String> = self.active.iter().map(line).collect();
        (!lines.is_empty()).then(|| lines.join(". "))
    }
}
