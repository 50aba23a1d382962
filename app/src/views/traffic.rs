//! The traffic dashboard and hits list as the browser sees them.

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

use crate::domain::traffic_range::Bucket;

/// The dashboard's figures for one range (how each is defined: `docs/ARCHITECTURE.md`,
/// "Traffic").
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct TrafficStats {
    pub visits: i64,
    pub page_views: i64,
    pub unique_ips: i64,
    pub unique_pages: i64,
    pub human: i64,
    pub bot: i64,
    /// Of the page views, how many are synthetic (`bulwark traffic generate`).
    pub generated: i64,
    pub by_source: BTreeMap<String, i64>,
    /// Bots' page views per category of their source.
    pub by_category: BTreeMap<crate::domain::bots::BotCategory, i64>,
    pub top_pages: Vec<TopPage>,
    /// Where people came from, where they landed and what they used.
    pub people: PeopleBreakdown,
    /// People's page views by country (ISO 3166-1 alpha-2; `""`: unknown), the 10 highest.
    pub countries: Vec<Ranked>,
    /// People's page views of tagged landing URLs by campaign, the 10 highest.
    pub campaigns: Vec<CampaignViews>,
    /// People's arrivals by channel (`direct`, `search`, `social`, `ai_assistant`, `email`,
    /// `paid`, `referral`).
    pub channels: Vec<Ranked>,
    /// People's answered page views by the response's status code (hits the collect script
    /// reported have none and are not here).
    pub statuses: Vec<StatusViews>,
    /// The pages people were most often answered 404 for, with who linked to them.
    pub not_found: Vec<NotFound>,
    /// What AI crawlers fetched, and the popular pages none of them did.
    pub ai_crawlers: AiCrawlers,
    /// People's custom events (`bulwark.event`), the 20 sent most; never page views.
    pub events: Vec<EventViews>,
    /// The goals of the sites in range, with their conversions.
    pub goals: Vec<GoalViews>,
}

/// People's events of one name: how many, in how many visits, and their properties' values
/// (the 10 most frequent per event).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct EventViews {
    pub name: String,
    pub count: i64,
    /// Visits (a visitor on a day, per site) that sent it.
    pub visits: i64,
    pub props: Vec<PropViews>,
}

/// How many events carried one value of one property.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct PropViews {
    pub key: String,
    pub value: String,
    pub count: i64,
}

/// A goal over the range: `conversions` (people's page views matching its pattern, or its
/// events), the visits that converted, and `rate` = converting visits / the site's people's
/// visits (0 when it had none).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct GoalViews {
    pub site: String,
    pub name: String,
    /// `page` or `event`.
    pub kind: String,
    /// The page pattern or the event's name.
    pub target: String,
    pub conversions: i64,
    pub visits: i64,
    pub rate: f64,
}

/// A site's goal as defined.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct GoalInfo {
    pub site: String,
    pub name: String,
    /// `page` or `event`.
    pub kind: String,
    /// The page pattern or the event's name.
    pub target: String,
}

/// A site's scheduled report: how often, and to whom.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ReportInfo {
    pub site: String,
    pub every: crate::domain::traffic_report::Every,
    /// Addresses the mail goes to (in the language of mails).
    pub to: Vec<String>,
    /// Channels it goes to, each in its own language (an e-mail channel's addresses get the
    /// mail in that language).
    pub channels: Vec<String>,
}

/// A site's share link as listed (its token is never shown again).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShareInfo {
    pub site: String,
    /// The link asks for a password.
    pub protected: bool,
    pub expires_at: Option<DateTime<Utc>>,
    pub created_by: String,
    pub created_at: DateTime<Utc>,
}

/// People's page views in one hour or day of a shared page's chart.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SharedPoint {
    pub start: DateTime<Utc>,
    pub views: i64,
}

/// What a share link shows: one site's people's figures; bots as one count, no hits, no
/// addresses (`crate::services::traffic::shares`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SharedDashboard {
    pub site: String,
    pub from: NaiveDate,
    pub to: NaiveDate,
    pub timezone: String,
    pub bucket: Bucket,
    /// People's visits and page views, and those of the period as long just before.
    pub people: i64,
    pub page_views: i64,
    pub people_before: i64,
    pub page_views_before: i64,
    /// Bots' hits: a count only.
    pub bots: i64,
    pub series: Vec<SharedPoint>,
    /// People's page views per path.
    pub pages: Vec<Ranked>,
    pub referrers: Vec<Ranked>,
    pub countries: Vec<Ranked>,
    pub campaigns: Vec<CampaignViews>,
    pub channels: Vec<Ranked>,
    pub browsers: Vec<Ranked>,
    pub systems: Vec<Ranked>,
    pub devices: Vec<Ranked>,
    pub expires_at: Option<DateTime<Utc>>,
}

/// Page views answered with one status code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct StatusViews {
    pub status: u16,
    pub views: i64,
}

/// A page people were answered 404 for: how often, and the referrers (whole URLs; `""`: none)
/// that sent them, the 5 most frequent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct NotFound {
    pub site: String,
    pub path: String,
    pub count: i64,
    pub referrers: Vec<Ranked>,
}

/// AI crawlers over the range, and `unvisited`: of the range's top pages, those no AI crawler
/// fetched in the 30 days up to the range's last day (with the top pages' views). Empty when
/// the filter counts no AI crawler.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct AiCrawlers {
    /// Most fetches first.
    pub crawlers: Vec<AiCrawler>,
    pub unvisited: Vec<PageViews>,
}

/// One AI crawler (a bot source of the `ai` category): what it fetched, with status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct AiCrawler {
    pub source: String,
    pub fetches: i64,
    /// Its fetches by status code (`0`: unknown).
    pub statuses: Vec<StatusViews>,
    /// The pages it fetched most, with the status they were answered with (20 at most).
    pub pages: Vec<AiPage>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct AiPage {
    pub site: String,
    pub path: String,
    pub status: u16,
    pub count: i64,
}

/// A page and its views.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct PageViews {
    pub site: String,
    pub path: String,
    pub views: i64,
}

/// A campaign (its `utm_source`, `utm_medium` and `utm_campaign`, each empty when absent) and
/// people's page views of URLs tagged with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct CampaignViews {
    pub source: String,
    pub medium: String,
    pub campaign: String,
    pub views: i64,
}

/// People's page views by where they came from and what they used (bots have none of these).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct PeopleBreakdown {
    /// Arrivals by referring domain; `""` is a direct visit.
    pub referrers: Vec<Ranked>,
    /// Arrivals by the page they landed on (a page key: host and path).
    pub landing_pages: Vec<Ranked>,
    pub browsers: Vec<Ranked>,
    pub systems: Vec<Ranked>,
    /// `desktop`, `phone`, `tablet` or `other`.
    pub devices: Vec<Ranked>,
}

/// A name and its page views, in a list ordered by them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct Ranked {
    pub name: String,
    pub views: i64,
}

/// A site whose page views are counted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct SiteInfo {
    pub host: String,
    /// Addresses and networks not counted, one per line.
    pub excluded: String,
    /// The console's own host (from `public_url`): counted without registering.
    pub console: bool,
    /// Whether a row exists (the console's host may have none).
    pub registered: bool,
}

/// The sites, and what their embed snippets point at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SitesPage {
    pub sites: Vec<SiteInfo>,
    /// Every site's goals, by site and name.
    pub goals: Vec<GoalInfo>,
    /// The sites' scheduled reports, by site.
    pub reports: Vec<ReportInfo>,
    /// The sites' share links, by site.
    pub shares: Vec<ShareInfo>,
    /// The console's address, where `collect.js` is served.
    pub console_url: String,
    /// No site besides the console is registered: the collect endpoints accept any host.
    pub open: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct TopPage {
    /// The site's host.
    pub site: String,
    pub path: String,
    pub count: i64,
    pub human: i64,
    pub bot: i64,
}

/// Hits in one hour or day.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct SeriesPoint {
    pub start: DateTime<Utc>,
    pub human: i64,
    pub bot: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct Dashboard {
    pub from: NaiveDate,
    pub to: NaiveDate,
    pub timezone: String,
    pub bucket: Bucket,
    pub current: TrafficStats,
    /// The same figures for the period of the same length just before.
    pub previous: TrafficStats,
    pub series: Vec<SeriesPoint>,
    /// The sites to choose from: the console's host first, then the registered ones.
    pub sites: Vec<String>,
    /// No site besides the console is registered: any site may report.
    pub open: bool,
}

/// One minute of the last hour: stored hits and those still in this server's memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LiveMinute {
    pub minute: DateTime<Utc>,
    pub human: i64,
    pub bot: i64,
    /// Of those, not yet written to the database.
    pub unflushed: i64,
}

/// A stored row of the hits list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HitRow {
    pub id: i64,
    pub minute: DateTime<Utc>,
    pub site: String,
    pub path: String,
    pub method: String,
    pub ip: String,
    pub user_agent: String,
    pub referer: String,
    pub locale: String,
    pub is_bot: bool,
    pub source: Option<String>,
    pub count: i64,
    /// ISO 3166-1 alpha-2, `""` when unknown.
    pub country: String,
    /// The response's status code, `0` when nothing saw it (the collect script).
    pub status: u16,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HitsPage {
    pub rows: Vec<HitRow>,
    /// Cursor of the next page, if there is one.
    pub next: Option<String>,
}

/// The filters every traffic view shares, as the URL holds them (text, parsed by the server).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HitsFilter {
    pub range: Option<String>,
    pub from: Option<String>,
    pub to: Option<String>,
    /// `type` in URLs.
    #[serde(alias = "type")]
    pub kind: Option<String>,
    pub category: Option<String>,
    pub source: Option<String>,
    /// A site's host; all sites when absent.
    pub site: Option<String>,
    pub path: Option<String>,
    pub ip: Option<String>,
    /// `newest` (default) or `count`.
    pub sort: Option<String>,
}

/// Rows on one page of the hits list.
pub const HITS_PAGE: u64 = 50;
