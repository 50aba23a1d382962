//! Which minute rows a figure counts: [`StatsQuery`] (a range of local days and the filters),
//! and [`Filter`], its WHERE clause over `traffic_statistics` for the figures summed from the
//! minute rows (`super::stats`, `super::answers`).

use chrono::{DateTime, NaiveDate, Utc};
use chrono_tz::Tz;
use sea_orm::{DatabaseBackend, Statement};

use super::rollup_read::Scope;
use crate::domain::bots::BotCategory;
use crate::domain::filters::TrafficFilter;
use crate::domain::traffic_range::{self, Resolved, VisitorType};
use crate::services::sql::Binder;

/// Which rows the figures count: whole local days `from..=to` in `zone`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatsQuery {
    pub from: NaiveDate,
    pub to: NaiveDate,
    pub zone: Tz,
    pub visitors: VisitorType,
    /// Only this category of bots.
    pub category: Option<BotCategory>,
    /// Only this bot source (`google`, …, `other`).
    pub source: Option<String>,
    /// Only this site (its host).
    pub site: Option<String>,
    /// Only visitors from this country (`""`: unknown). The rollups are not kept per country:
    /// figures under it are summed from the minute rows ([`StatsQuery::reads_rows`]).
    pub country: Option<String>,
    /// Only page views of URLs tagged with this `utm_campaign` (from the minute rows too).
    pub campaign: Option<String>,
    /// Only hits answered with this status code (from the minute rows too).
    pub status: Option<u16>,
}

impl StatsQuery {
    /// The query for a resolved range of a parsed filter.
    pub fn new(filter: &TrafficFilter, range: &Resolved, zone: Tz) -> StatsQuery {
        StatsQuery {
            from: range.from,
            to: range.to,
            zone,
            visitors: filter.visitors,
            category: filter.category,
            source: filter.source.clone(),
            site: filter.site.clone(),
            country: filter.country.clone(),
            campaign: filter.campaign.clone(),
            status: filter.status,
        }
    }

    /// Everyone over `from..=to`.
    pub fn everyone(from: NaiveDate, to: NaiveDate, zone: Tz) -> StatsQuery {
        StatsQuery {
            from,
            to,
            zone,
            visitors: VisitorType::All,
            category: None,
            source: None,
            site: None,
            country: None,
            campaign: None,
            status: None,
        }
    }

    /// Whether the figures come from the minute rows: a filter the rollups do not keep.
    pub fn reads_rows(&self) -> bool {
        self.country.is_some() || self.campaign.is_some() || self.status.is_some()
    }

    /// The first instant of the range.
    pub fn start(&self) -> DateTime<Utc> {
        traffic_range::midnight(self.from, self.zone)
    }

    /// The first instant after the range.
    pub fn end(&self) -> DateTime<Utc> {
        self.to.succ_opt().map_or(DateTime::<Utc>::MAX_UTC, |d| {
            traffic_range::midnight(d, self.zone)
        })
    }

    pub(super) fn scope(&self) -> Scope<'_> {
        Scope {
            from: self.from,
            to: self.to,
            zone: self.zone,
            visitors: self.visitors,
            category: self.category,
            source: self.source.as_deref(),
            site: self.site.as_deref(),
        }
    }
}

/// A WHERE clause with its values, numbered for the backend.
pub(super) struct Filter {
    pub(super) binder: Binder,
    pub(super) sql: String,
}

impl Filter {
    /// The rows of `query`'s visitors between `start` and `end`.
    pub(super) fn new(
        backend: DatabaseBackend,
        start: DateTime<Utc>,
        end: DateTime<Utc>,
        query: &StatsQuery,
    ) -> Filter {
        use crate::domain::bots::{named_outside_other, sources_in};
        let mut binder = Binder::new(backend);
        let mut sql = format!(
            "stat_date >= {} AND stat_date < {}",
            binder.bind(start),
            binder.bind(end)
        );
        match query.visitors {
            VisitorType::All => {}
            VisitorType::Human => sql.push_str(" AND NOT is_bot"),
            VisitorType::Bot => sql.push_str(" AND is_bot"),
        }
        match query.category {
            None => {}
            // Unnamed bots and sources this build does not know.
            Some(BotCategory::Other) => sql.push_str(&format!(
                " AND is_bot AND (spider_source IS NULL OR spider_source NOT IN ({}))",
                binder.bind_list(named_outside_other())
            )),
            Some(category) => sql.push_str(&format!(
                " AND is_bot AND spider_source IN ({})",
                binder.bind_list(sources_in(category))
            )),
        }
        if let Some(source) = &query.source {
            sql.push_str(&format!(
                " AND spider_source = {}",
                binder.bind(source.as_str())
            ));
        }
        if let Some(site) = &query.site {
            sql.push_str(&format!(" AND site = {}", binder.bind(site.as_str())));
        }
        if let Some(country) = &query.country {
            sql.push_str(&format!(" AND country = {}", binder.bind(country.as_str())));
        }
        if let Some(campaign) = &query.campaign {
            sql.push_str(&format!(
                " AND utm_campaign = {}",
                binder.bind(campaign.as_str())
            ));
        }
        if let Some(status) = query.status {
            sql.push_str(&format!(" AND status = {}", binder.bind(i32::from(status))));
        }
        Filter { binder, sql }
    }

    pub(super) fn statement(&self, sql: String) -> Statement {
        self.binder.statement_cloned(sql)
    }
}
