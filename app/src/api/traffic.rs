//! The traffic dashboard's data: the figures for a range and the one before it, hits over
//! time, the last hour, and the stored rows. `bulwark traffic stats` reads the same services,
//! so the page and the command agree.

// The dashboard's server function takes each of the page's URL filters as an argument, as the
// form and the URL carry them; the functions the macro writes from it carry the count too.
#![allow(clippy::too_many_arguments)]

use leptos::prelude::*;

use super::AppError;
use super::codec::Json;
use crate::views::traffic::{
    Dashboard, GoalInfo, HitsFilter, HitsPage, LiveMinute, ReportInfo, SitesPage,
};

/// Figures for a range (`range` preset, or `from`–`to`), visitor type, bot category and
/// source, site, country and campaign.
#[server(endpoint = "traffic/dashboard", output = Json)]
pub async fn traffic_dashboard(
    range: Option<String>,
    from: Option<String>,
    to: Option<String>,
    kind: Option<String>,
    category: Option<String>,
    source: Option<String>,
    site: Option<String>,
    country: Option<String>,
    campaign: Option<String>,
    status: Option<String>,
) -> Result<Dashboard, AppError> {
    use crate::domain::filters::TrafficFilter;
    use crate::domain::traffic_range;
    use crate::services::traffic::{self, StatsQuery};
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            let zone = state.timezone;
            let filter = TrafficFilter::parse(
                range.as_deref(),
                from.as_deref(),
                to.as_deref(),
                kind.as_deref(),
                category.as_deref(),
                source.as_deref(),
            )?
            .with_site(site.as_deref())?
            .with_country(country.as_deref())?
            .with_campaign(campaign.as_deref())
            .with_status(status.as_deref())?;
            let range = filter.resolve(crate::clock::now(), zone)?;
            let before = traffic_range::previous(&range, zone);
            let (current, previous, series) = traffic::dashboard(
                &state.db,
                &StatsQuery::new(&filter, &range, zone),
                &StatsQuery::new(&filter, &before, zone),
                range.bucket,
            )
            .await
            .map_err(|e| AppError::internal(&e))?;
            let sites = traffic::sites::list(&state.db, &state.console_host()).await?;
            Ok(Dashboard {
                open: sites.iter().all(|s| s.console),
                sites: sites.into_iter().map(|s| s.host).collect(),
                from: range.from,
                to: range.to,
                timezone: zone.name().to_string(),
                bucket: range.bucket,
                current,
                previous,
                series,
            })
        }
        .await,
    )
}

/// The last 60 minutes, minute by minute, including hits not flushed yet.
#[server(endpoint = "traffic/live", output = Json)]
pub async fn traffic_live() -> Result<Vec<LiveMinute>, AppError> {
    use chrono::{DateTime, DurationRound, Utc};
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            let now = crate::clock::now();
            let minute = now
                .duration_trunc(chrono::Duration::minutes(1))
                .unwrap_or(now);
            let since: DateTime<Utc> = minute - chrono::Duration::minutes(59);
            let unflushed = state
                .live
                .as_ref()
                .map(|live| live.unflushed_since(since))
                .unwrap_or_default();
            Ok(crate::services::traffic::last_hour(&state.db, since, &unflushed).await?)
        }
        .await,
    )
}

/// One page of stored rows for the filters.
#[server(endpoint = "traffic/hits", output = Json)]
pub async fn traffic_hits(filter: HitsFilter, after: Option<String>) -> Result<HitsPage, AppError> {
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            let query = crate::services::traffic::HitsQuery::from_filter(
                &filter,
                state.timezone,
                after.as_deref(),
                crate::views::traffic::HITS_PAGE,
                crate::clock::now(),
            )?;
            let (rows, next) = crate::services::traffic::hits(&state.db, &query).await?;
            Ok(HitsPage {
                rows: rows
                    .into_iter()
                    .map(crate::views::traffic::HitRow::from)
                    .collect(),
                next: next.map(|c| c.encode()),
            })
        }
        .await,
    )
}

#[cfg(feature = "ssr")]
impl From<crate::services::traffic::goals::GoalError> for AppError {
    fn from(e: crate::services::traffic::goals::GoalError) -> Self {
        use crate::services::traffic::goals::GoalError;
        match e {
            GoalError::Invalid(m) => AppError::refused("goal", &m),
            GoalError::Exists { site, name } => AppError::refused(
                "name",
                &crate::problem!("error-goal-exists", site = site, name = name),
            ),
            GoalError::UnknownSite { site } => {
                AppError::NotFound(crate::t!("noun-site", host = site))
            }
            GoalError::NotFound { site, name } => {
                AppError::NotFound(crate::t!("noun-goal", site = site, name = name))
            }
            GoalError::Traffic(e) => AppError::internal(&e),
            GoalError::Db(e) => AppError::internal(&e),
        }
    }
}

#[cfg(feature = "ssr")]
impl From<crate::services::traffic::sites::SiteError> for AppError {
    fn from(e: crate::services::traffic::sites::SiteError) -> Self {
        use crate::services::traffic::sites::SiteError;
        match e {
            SiteError::Invalid(m) => AppError::refused("host", &m),
            SiteError::Excluded(m) => AppError::invalid("excluded", m),
            SiteError::Exists(_) | SiteError::Console(_) => {
                AppError::invalid("host", e.to_string())
            }
            SiteError::NotFound(host) => AppError::NotFound(crate::t!("noun-site", host = host)),
            SiteError::Db(e) => AppError::internal(&e),
        }
    }
}

/// The sites whose page views are counted, with what their snippets need.
#[server(endpoint = "traffic/sites", output = Json)]
pub async fn traffic_sites() -> Result<SitesPage, AppError> {
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            let sites =
                crate::services::traffic::sites::list(&state.db, &state.console_host()).await?;
            let goals = crate::services::traffic::goals::list(&state.db, None)
                .await
                .map_err(|e| AppError::internal(&e))?;
            let reports = crate::services::traffic::reports::list(&state.db)
                .await
                .map_err(|e| AppError::internal(&e))?;
            let shares = crate::services::traffic::shares::list(&state.db)
                .await
                .map_err(|e| AppError::internal(&e))?;
            Ok(SitesPage {
                open: sites.iter().all(|s| s.console),
                sites,
                goals,
                reports,
                shares,
                console_url: state.public_url.trim_end_matches('/').to_string(),
            })
        }
        .await,
    )
}

/// The rules the collectors apply changed: this node reloads them at once.
#[cfg(feature = "ssr")]
fn sites_changed(state: &crate::state::AppState) {
    if let Some(live) = &state.live {
        live.sites_changed();
    }
}

/// Registers a site by host; from then on only registered hosts may report.
#[server(endpoint = "traffic/sites/add", output = Json)]
pub async fn add_site(host: String) -> Result<String, AppError> {
    super::respond(
        async {
            let admin = super::auth::require_admin("register sites")?;
            let state = super::state()?;
            let (who, now) = (super::actor(&admin), crate::clock::now());
            let console = state.console_host();
            let host =
                crate::services::traffic::sites::add(&state.db, &host, &console, &who, now).await?;
            sites_changed(&state);
            Ok(host)
        }
        .await,
    )
}

/// Stops counting a site's reports; what it counted stays.
#[server(endpoint = "traffic/sites/remove", output = Json)]
pub async fn remove_site(host: String) -> Result<(), AppError> {
    super::respond(
        async {
            let admin = super::auth::require_admin("remove sites")?;
            let state = super::state()?;
            let (who, now) = (super::actor(&admin), crate::clock::now());
            let console = state.console_host();
            crate::services::traffic::sites::remove(&state.db, &host, &console, &who, now).await?;
            sites_changed(&state);
            Ok(())
        }
        .await,
    )
}

/// Adds a goal to a site: `kind` is `page` (target: a page pattern) or `event` (target: an
/// event's name).
#[server(endpoint = "traffic/goals/add", output = Json)]
pub async fn add_goal(
    site: String,
    name: String,
    kind: String,
    target: String,
) -> Result<GoalInfo, AppError> {
    super::respond(
        async {
            let admin = super::auth::require_admin("add goals")?;
            let state = super::state()?;
            use crate::domain::goals::GoalTarget;
            use crate::services::traffic::goals::{self, NewGoal};
            let target = match kind.as_str() {
                "page" => GoalTarget::parse(Some(&target), None),
                "event" => GoalTarget::parse(None, Some(&target)),
                _ => Err(crate::problem!("error-goal-target")),
            }
            .map_err(|p| AppError::refused("target", &p))?;
            let new = NewGoal {
                site: &site,
                name: &name,
                target,
            };
            let (who, now) = (super::actor(&admin), crate::clock::now());
            Ok(goals::add(&state.db, new, &state.console_host(), &who, now).await?)
        }
        .await,
    )
}

/// Removes a site's goal and its counted conversions.
#[server(endpoint = "traffic/goals/remove", output = Json)]
pub async fn remove_goal(site: String, name: String) -> Result<(), AppError> {
    super::respond(
        async {
            let admin = super::auth::require_admin("remove goals")?;
            let state = super::state()?;
            let (who, now) = (super::actor(&admin), crate::clock::now());
            crate::services::traffic::goals::remove(&state.db, &site, &name, &who, now).await?;
            Ok(())
        }
        .await,
    )
}

#[cfg(feature = "ssr")]
impl From<crate::services::traffic::reports::ReportError> for AppError {
    fn from(e: crate::services::traffic::reports::ReportError) -> Self {
        use crate::services::traffic::reports::ReportError;
        match e {
            ReportError::Invalid(m) => AppError::refused("to", &m),
            ReportError::Site(e) => AppError::from(e),
            ReportError::NoChannel(name) => AppError::refused(
                "channels",
                &crate::problem!("error-report-channel", name = name),
            ),
            ReportError::NotFound(site) => {
                AppError::NotFound(crate::t!("noun-report", site = site))
            }
            ReportError::Traffic(e) => AppError::internal(&e),
            ReportError::Db(e) => AppError::internal(&e),
        }
    }
}

/// Sets a site's scheduled report: `every` is `day` or `week`; `to` holds addresses and
/// `channels` channel names, each comma-separated.
#[server(endpoint = "traffic/reports/set", output = Json)]
pub async fn set_report(
    site: String,
    every: String,
    to: String,
    channels: String,
) -> Result<ReportInfo, AppError> {
    super::respond(
        async {
            let admin = super::auth::require_admin("set reports")?;
            let state = super::state()?;
            use crate::domain::traffic_report::Every;
            use crate::services::traffic::reports::{self, NewReport};
            let every = Every::parse(&every).ok_or_else(|| {
                AppError::refused(
                    "every",
                    &crate::problem!("error-report-every", text = every.clone()),
                )
            })?;
            let (to, channels) = ([to], [channels]);
            let new = NewReport {
                site: &site,
                every,
                to: &to,
                channels: &channels,
            };
            let (who, now) = (super::actor(&admin), crate::clock::now());
            Ok(reports::set(&state.db, new, &state.console_host(), &who, now).await?)
        }
        .await,
    )
}

/// Stops a site's scheduled report.
#[server(endpoint = "traffic/reports/off", output = Json)]
pub async fn report_off(site: String) -> Result<(), AppError> {
    super::respond(
        async {
            let admin = super::auth::require_admin("stop reports")?;
            let state = super::state()?;
            let (who, now) = (super::actor(&admin), crate::clock::now());
            crate::services::traffic::reports::off(&state.db, &site, &who, now).await?;
            Ok(())
        }
        .await,
    )
}

#[cfg(feature = "ssr")]
impl From<crate::services::traffic::shares::ShareError> for AppError {
    fn from(e: crate::services::traffic::shares::ShareError) -> Self {
        use crate::services::traffic::shares::ShareError;
        match e {
            ShareError::Site(e) => AppError::from(e),
            ShareError::Console(_) => {
                AppError::refused("site", &crate::problem!("error-share-console"))
            }
            ShareError::Password(e) => AppError::refused("password", &e.problem()),
            ShareError::NotFound(site) => AppError::NotFound(crate::t!("noun-site", host = site)),
            ShareError::Hash(e) => AppError::internal(&e),
            ShareError::Traffic(e) => AppError::internal(&e),
            ShareError::Db(e) => AppError::internal(&e),
        }
    }
}

/// Makes a site's share link (ending the one it had), with an optional password and expiry
/// (`30d`, `12h`, `8w`, a date; blank: never); returns the link, shown only now.
#[server(endpoint = "traffic/shares/create", output = Json)]
pub async fn create_share(
    site: String,
    password: String,
    expires: String,
) -> Result<String, AppError> {
    super::respond(
        async {
            let admin = super::auth::require_admin("share sites")?;
            let state = super::state()?;
            use crate::services::traffic::shares::{self, NewShare};
            let now = crate::clock::now();
            let expires_at = match expires.trim() {
                "" => None,
                typed => crate::domain::api_token::parse_expiry(typed, now)
                    .map_err(|p| AppError::refused("expires", &p))?,
            };
            let new = NewShare {
                site: &site,
                password: Some(password.as_str()).filter(|p| !p.is_empty()),
                expires_at,
            };
            let who = super::actor(&admin);
            let token = shares::create(&state.db, new, &state.console_host(), &who, now).await?;
            Ok(format!(
                "{}/share/{token}",
                state.public_url.trim_end_matches('/')
            ))
        }
        .await,
    )
}

/// Ends a site's share link: it answers 404 from now on.
#[server(endpoint = "traffic/shares/revoke", output = Json)]
pub async fn revoke_share(site: String) -> Result<(), AppError> {
    super::respond(
        async {
            let admin = super::auth::require_admin("revoke share links")?;
            let state = super::state()?;
            let (who, now) = (super::actor(&admin), crate::clock::now());
            crate::services::traffic::shares::revoke(&state.db, &site, &who, now).await?;
            Ok(())
        }
        .await,
    )
}

/// Replaces the addresses whose visits a site does not count.
#[server(endpoint = "traffic/sites/exclusions", output = Json)]
pub async fn set_site_exclusions(host: String, excluded: String) -> Result<String, AppError> {
    super::respond(
        async {
            let admin = super::auth::require_admin("change a site's exclusions")?;
            let state = super::state()?;
            use crate::services::traffic::sites::{self, NewExclusions, SiteError};
            let (who, now) = (super::actor(&admin), crate::clock::now());
            let new = NewExclusions {
                host: &host,
                excluded: &excluded,
            };
            let stored = sites::set_exclusions(&state.db, new, &state.console_host(), &who, now)
                .await
                .map_err(|e| match e {
                    SiteError::Invalid(m) => AppError::refused("excluded", &m),
                    other => AppError::from(other),
                })?;
            sites_changed(&state);
            Ok(stored)
        }
        .await,
    )
}
