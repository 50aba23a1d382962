use sea_orm::entity::prelude::*;

/// Hits of one (minute, site, path, method, ip, user agent, referer, locale), counted.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "traffic_statistics")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    /// A digest of the key columns: the upsert's conflict target.
    pub key_hash: String,
    /// The minute the hits fell in.
    pub stat_date: DateTimeUtc,
    pub path: String,
    pub method: String,
    /// The address, or `h:` and its keyed hash when IP privacy is on.
    pub ip: String,
    pub user_agent: String,
    pub referer: String,
    pub locale: String,
    pub is_bot: bool,
    pub spider_source: Option<String>,
    pub count: i64,
    /// Written by `bulwark traffic generate` (demo or benchmark data), not by a visitor.
    pub generated: bool,
    /// The site's host (the console's pages are under the host of `public_url`).
    pub site: String,
    /// Where the visit came from: the referrer's domain, empty when direct, `None` for a step
    /// within the site (`app::domain::sites::referrer_domain`).
    pub ref_domain: Option<String>,
    /// People's browser, operating system and device type; `device` is `bot` for bots.
    pub browser: String,
    pub os: String,
    pub device: String,
    /// The visitor's country (ISO 3166-1 alpha-2), `""` when unknown.
    pub country: String,
    /// The landing URL's campaign tags, `""` when absent.
    pub utm_source: String,
    pub utm_medium: String,
    pub utm_campaign: String,
    /// An arrival's channel (`app::domain::channels`), `""` for a step within the site.
    pub channel: String,
    /// The response's HTTP status code; `0` when nothing saw the response (the collect script).
    pub status: i16,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
