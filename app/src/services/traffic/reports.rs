//! Scheduled traffic reports: each site's settings (`traffic_reports`), a period's figures
//! read as `bulwark traffic stats` reads them ([`gather`]), and the report queued in the mail
//! and channel outboxes ([`queue`]), which deliver it with their retries, limits and restart
//! safety.
//!
//! Every reader gets the report in their language: the addresses typed for the report get
//! the mail in the language of mails (Notifications page), an e-mail channel's addresses get
//! one in the channel's language, a chat channel its message in its own. Each message's dedupe
//! key names the site and the period, so a report is queued once however often [`queue_due`]
//! looks.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use sea_orm::sea_query::OnConflict;
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait,
    QueryFilter, QueryOrder,
};

use super::TrafficError;
use super::sites::{self, SiteError};
use super::stats::{self, StatsQuery};
use crate::domain::chat::ChannelKind;
use crate::domain::email::{self, EmailAddress};
use crate::domain::traffic_range::VisitorType;
use crate::domain::traffic_report::{Audience, Every, Line, Period, Report, TOP, Totals};
use crate::entities::{channel, traffic_report};
use crate::i18n::Locale;
use crate::services::audit::{self, Actor};
use crate::services::notifications::channel_outbox::{self, NewEvent};
use crate::services::notifications::mail_locale;
use crate::services::outbox::{self, NewMail};
use crate::services::sql::begin_write;
use crate::views::traffic::{ReportInfo, TrafficStats};

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("{0}")]
    Invalid(crate::domain::Problem),
    #[error(transparent)]
    Site(#[from] SiteError),
    #[error("no channel named '{0}' (bulwark channel list shows them)")]
    NoChannel(String),
    #[error("{0} has no report")]
    NotFound(String),
    #[error(transparent)]
    Traffic(#[from] TrafficError),
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// What a site's report is to be, as typed.
pub struct NewReport<'a> {
    pub site: &'a str,
    pub every: Every,
    pub to: &'a [String],
    pub channels: &'a [String],
}

fn info(row: traffic_report::Model) -> ReportInfo {
    ReportInfo {
        site: row.site,
        every: row.every,
        to: row
            .recipients
            .split(',')
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .map(str::to_string)
            .collect(),
        channels: serde_json::from_str(&row.channels).unwrap_or_default(),
    }
}

/// Every site's report, by site.
pub async fn list(db: &impl ConnectionTrait) -> Result<Vec<ReportInfo>, DbErr> {
    Ok(traffic_report::Entity::find()
        .order_by_asc(traffic_report::Column::Site)
        .all(db)
        .await?
        .into_iter()
        .map(info)
        .collect())
}

/// One site's report, if it has one.
pub async fn get(
    db: &impl ConnectionTrait,
    typed: &str,
) -> Result<Option<ReportInfo>, ReportError> {
    let site = crate::domain::sites::normalise_host(typed).map_err(ReportError::Invalid)?;
    Ok(traffic_report::Entity::find()
        .filter(traffic_report::Column::Site.eq(site))
        .one(db)
        .await?
        .map(info))
}

/// Sets (or replaces) a site's report, and records who did. The site must be the console's
/// or a registered one, every address must parse, every channel exist.
pub async fn set(
    db: &DatabaseConnection,
    new: NewReport<'_>,
    console: &str,
    who: &Actor<'_>,
    now: DateTime<Utc>,
) -> Result<ReportInfo, ReportError> {
    let site = sites::known(db, new.site, console).await?;
    let audience = Audience::parse(new.to, new.channels).map_err(ReportError::Invalid)?;
    let found = channel::Entity::find()
        .filter(channel::Column::Name.is_in(audience.channels.iter().cloned()))
        .all(db)
        .await?;
    if let Some(missing) = audience
        .channels
        .iter()
        .find(|name| !found.iter().any(|c| &c.name == *name))
    {
        return Err(ReportError::NoChannel(missing.clone()));
    }
    let channels = serde_json::to_string(&audience.channels)
        .map_err(|e| DbErr::Custom(format!("could not encode the channels: {e}")))?;
    let row = traffic_report::ActiveModel {
        site: Set(site.clone()),
        every: Set(new.every),
        recipients: Set(email::join(&audience.to)),
        channels: Set(channels),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    };
    let txn = begin_write(db).await?;
    traffic_report::Entity::insert(row)
        .on_conflict(
            OnConflict::column(traffic_report::Column::Site)
                .update_columns([
                    traffic_report::Column::Every,
                    traffic_report::Column::Recipients,
                    traffic_report::Column::Channels,
                    traffic_report::Column::UpdatedAt,
                ])
                .to_owned(),
        )
        .exec_without_returning(&txn)
        .await?;
    let saved = ReportInfo {
        site: site.clone(),
        every: new.every,
        to: audience.to.iter().map(ToString::to_string).collect(),
        channels: audience.channels,
    };
    let detail =
        serde_json::json!({ "every": saved.every, "to": saved.to, "channels": saved.channels });
    audit::record(&txn, who, "report.set", &site, detail, now).await?;
    txn.commit().await?;
    Ok(saved)
}

/// Stops a site's report, and records who did.
pub async fn off(
    db: &DatabaseConnection,
    typed: &str,
    who: &Actor<'_>,
    now: DateTime<Utc>,
) -> Result<String, ReportError> {
    let site = crate::domain::sites::normalise_host(typed).map_err(ReportError::Invalid)?;
    let txn = begin_write(db).await?;
    let deleted = traffic_report::Entity::delete_many()
        .filter(traffic_report::Column::Site.eq(&site))
        .exec(&txn)
        .await?
        .rows_affected;
    if deleted == 0 {
        return Err(ReportError::NotFound(site));
    }
    audit::record(&txn, who, "report.off", &site, serde_json::json!({}), now).await?;
    txn.commit().await?;
    Ok(site)
}

/// A site's figures over `period`: people's from the same reads as `traffic stats --type
/// human`, bots' as `--type bot`, and people's totals of the period before.
pub async fn gather(
    db: &impl ConnectionTrait,
    site: &str,
    every: Every,
    period: Period,
    zone: Tz,
) -> Result<Report, TrafficError> {
    let query = |p: Period, visitors| StatsQuery {
        visitors,
        site: Some(site.to_string()),
        ..StatsQuery::everyone(p.from, p.to, zone)
    };
    let people = stats::stats(db, &query(period, VisitorType::Human)).await?;
    let bots = stats::totals(db, &query(period, VisitorType::Bot)).await?;
    let before = stats::totals(db, &query(period.before(), VisitorType::Human)).await?;
    Ok(Report {
        site: site.to_string(),
        every,
        period,
        now: totals(&people),
        before: totals(&before),
        pages: top(people.top_pages.iter().map(|p| (p.path.clone(), p.count))),
        referrers: top(people
            .people
            .referrers
            .iter()
            .map(|r| (r.name.clone(), r.views))),
        campaigns: top(people.campaigns.iter().map(|c| {
            (
                format!("{} ({} / {})", c.campaign, c.source, c.medium),
                c.views,
            )
        })),
        countries: top(people.countries.iter().map(|c| (c.name.clone(), c.views))),
        bots: bots.bot,
        bot_categories: bots.by_category.iter().map(|(c, n)| (*c, *n)).collect(),
        not_found: top(people.not_found.iter().map(|n| (n.path.clone(), n.count))),
    })
}

fn totals(stats: &TrafficStats) -> Totals {
    Totals {
        people: stats.visits,
        views: stats.page_views,
    }
}

fn top(lines: impl Iterator<Item = (String, i64)>) -> Vec<Line> {
    lines
        .take(TOP)
        .map(|(name, count)| Line { name, count })
        .collect()
}

/// Queues `report` to its audience, each reader in their language; true when anything was
/// new (false: this period's report was queued already).
pub async fn queue(
    db: &impl ConnectionTrait,
    report: &Report,
    audience: &Audience,
    now: DateTime<Utc>,
    default_locale: Locale,
) -> Result<bool, DbErr> {
    let key = report.key();
    let mut queued = false;
    for (locale, recipients) in mail_readers(db, audience, default_locale)
        .await?
        .into_values()
    {
        let mail = NewMail {
            dedupe_key: format!("{key}:{}", locale.tag()),
            kind: "report".into(),
            job_id: None,
            run_id: None,
            recipients,
            composed: crate::i18n::report::compose(report, locale),
        };
        queued |= outbox::enqueue(db, mail, now).await?;
    }
    if !audience.channels.is_empty() {
        let before = channel_outbox::queued(db, &key).await?;
        let event = NewEvent::in_every_language(
            key.clone(),
            |l| crate::i18n::report::chat_event(report, now, l),
            default_locale,
        );
        channel_outbox::enqueue(db, &audience.channels, &event, now, default_locale).await?;
        queued |= channel_outbox::queued(db, &key).await? > before;
    }
    Ok(queued)
}

/// The mail's readers by language: the report's own addresses in the language of mails, each
/// e-mail channel's in the channel's language; an address reached twice gets the first.
async fn mail_readers(
    db: &impl ConnectionTrait,
    audience: &Audience,
    default_locale: Locale,
) -> Result<BTreeMap<String, (Locale, Vec<EmailAddress>)>, DbErr> {
    let mut readers: Vec<(Locale, EmailAddress)> = Vec::new();
    let own = mail_locale(db, default_locale).await?;
    readers.extend(audience.to.iter().map(|a| (own, a.clone())));
    let email_channels = channel::Entity::find()
        .filter(channel::Column::Name.is_in(audience.channels.iter().cloned()))
        .filter(channel::Column::Kind.eq(ChannelKind::Email))
        .order_by_asc(channel::Column::Name)
        .all(db)
        .await?;
    for c in &email_channels {
        let locale = channel_outbox::channel_locale(c, default_locale);
        for address in channel_outbox::addresses_of(std::slice::from_ref(c)) {
            readers.push((locale, address));
        }
    }
    let mut by_locale: BTreeMap<String, (Locale, Vec<EmailAddress>)> = BTreeMap::new();
    let mut seen = Vec::new();
    for (locale, address) in readers {
        if seen.contains(&address) {
            continue;
        }
        seen.push(address.clone());
        let entry = by_locale
            .entry(locale.tag())
            .or_insert_with(|| (locale, Vec::new()));
        entry.1.push(address);
    }
    Ok(by_locale)
}

/// Queues every site's report for its last whole period before `now` (in `zone`) that is not
/// queued yet. Says what it did.
pub async fn queue_due(
    db: &DatabaseConnection,
    now: DateTime<Utc>,
    zone: Tz,
    default_locale: Locale,
) -> Result<String, ReportError> {
    let today = now.with_timezone(&zone).date_naive();
    let rows = traffic_report::Entity::find()
        .order_by_asc(traffic_report::Column::Site)
        .all(db)
        .await?;
    if rows.is_empty() {
        return Ok("no site has a report (bulwark site report SITE --every week --to …)".into());
    }
    let mut said = Vec::new();
    for row in rows {
        let period = Period::last_before(row.every, today);
        let site = row.site.clone();
        let report = gather(db, &site, row.every, period, zone).await?;
        let saved = info(row);
        let Ok(audience) = Audience::parse(&saved.to, &saved.channels) else {
            // Only a row edited by hand can be empty: `set` refuses one.
            said.push(format!("{site} has nobody to send to"));
            continue;
        };
        // Read first, then one write transaction: mails and messages commit together.
        let txn = begin_write(db).await?;
        let queued = queue(&txn, &report, &audience, now, default_locale).await?;
        txn.commit().await?;
        let (from, to) = (period.from, period.to);
        said.push(if queued {
            format!("{site} {from}..{to} queued")
        } else {
            format!("{site} {from}..{to} was queued already")
        });
    }
    Ok(said.join("; "))
}
