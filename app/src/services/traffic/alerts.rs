//! Traffic spike alerts: each site's last whole local hour against its usual
//! ([`crate::domain::traffic_alerts`]), checked by the `traffic-alerts` system job a minute
//! after each flush. Each condition on each site is an episode in `trend_alerts`, as the
//! failure trends are (`crate::services::trends`): one alert when it starts, one recovery when
//! a later hour is clear, to the digest's recipients and channels (Notifications page), each
//! in its language. Nothing is evaluated while every job is paused for maintenance; a
//! condition that ended meanwhile recovers at the first check after.
//!
//! The hour's people's page views and bots' hits come from `traffic_hourly`, its 404s from
//! the minute rows; the usual is the same hour of the [`BASELINE_WEEKS`] weeks before, those
//! before the first hour stored left out.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;
use sea_orm::{ConnectionTrait, DatabaseConnection, DbErr, TransactionTrait};

use super::TrafficError;
use super::rollup_write::place;
use crate::domain::email::EmailAddress;
use crate::domain::traffic_alerts::{BASELINE_WEEKS, Finding, Hour, Rule, Rules, evaluate, key};
use crate::domain::traffic_parts::Part;
use crate::i18n::Locale;
use crate::i18n::traffic_alerts::{self as words, Hour as WordedHour};
use crate::services::notifications::channel_outbox::{self, NewEvent};
use crate::services::outbox::{self, NewMail};
use crate::services::sql::Binder;

const WEEK: i64 = 7 * 24 * 3600;

/// The last whole local hour that ended a minute or more before `now` (a flush has written
/// it): its first second.
pub fn last_hour(now: DateTime<Utc>, zone: Tz) -> i64 {
    place(now - Duration::minutes(1), zone).0 - 3600
}

/// Every site's counts for the hour starting at `start` (a Unix second), with `also` present
/// even without traffic (sites whose episodes are open, so they can end).
pub async fn hours(
    db: &impl ConnectionTrait,
    start: i64,
    also: &[String],
) -> Result<Vec<Hour>, DbErr> {
    let mut sites: BTreeMap<String, Hour> = also
        .iter()
        .map(|site| {
            (
                site.clone(),
                Hour {
                    site: site.clone(),
                    ..Hour::default()
                },
            )
        })
        .collect();
    let people = Part::Human.code();
    let mut b = Binder::new(db.get_database_backend());
    let sql = format!(
        "SELECT site, hour, CAST(SUM(CASE WHEN part = {p} THEN views ELSE 0 END) AS BIGINT) AS people, \
           CAST(SUM(CASE WHEN part = {p} THEN 0 ELSE views END) AS BIGINT) AS bots \
         FROM traffic_hourly WHERE hour IN ({hours}) GROUP BY site, hour",
        p = b.bind(people.as_str()),
        hours = (0..=BASELINE_WEEKS)
            .map(|weeks| b.bind(start - weeks * WEEK))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let first = first_hour(db).await?;
    // The hour's counts, and people's views in the same hour of the weeks before.
    let mut before: BTreeMap<(String, i64), u64> = BTreeMap::new();
    for row in db.query_all_raw(b.statement(sql)).await? {
        let site: String = row.try_get("", "site")?;
        let hour: i64 = row.try_get("", "hour")?;
        let views = row.try_get::<i64>("", "people")?.max(0) as u64;
        let counts = sites.entry(site.clone()).or_insert_with(|| Hour {
            site,
            ..Hour::default()
        });
        if hour == start {
            counts.views = views;
            counts.bots = row.try_get::<i64>("", "bots")?.max(0) as u64;
        } else {
            before.insert((counts.site.clone(), hour), views);
        }
    }
    // The usual: each week before that the database holds, 0 where the site had none.
    let weeks: Vec<i64> = (1..=BASELINE_WEEKS)
        .map(|w| start - w * WEEK)
        .filter(|h| first.is_some_and(|first| *h >= first))
        .collect();
    for counts in sites.values_mut() {
        counts.usual_views = weeks
            .iter()
            .map(|h| before.get(&(counts.site.clone(), *h)).copied().unwrap_or(0))
            .collect();
    }
    for (site, n) in not_found(db, start).await? {
        if let Some(counts) = sites.get_mut(&site) {
            counts.not_found = n;
        } else {
            sites.insert(
                site.clone(),
                Hour {
                    site,
                    not_found: n,
                    ..Hour::default()
                },
            );
        }
    }
    Ok(sites.into_values().collect())
}

/// The first hour any traffic is stored for.
async fn first_hour(db: &impl ConnectionTrait) -> Result<Option<i64>, DbErr> {
    let b = Binder::new(db.get_database_backend());
    let row = db
        .query_one_raw(b.statement("SELECT MIN(hour) AS first FROM traffic_hourly".into()))
        .await?;
    Ok(row.and_then(|r| r.try_get::<Option<i64>>("", "first").ok().flatten()))
}

/// Hits answered 404 per site in the hour starting at `start`.
async fn not_found(db: &impl ConnectionTrait, start: i64) -> Result<Vec<(String, u64)>, DbErr> {
    let at = |s: i64| DateTime::<Utc>::from_timestamp(s, 0).unwrap_or_default();
    let mut b = Binder::new(db.get_database_backend());
    let sql = format!(
        "SELECT site, CAST(SUM(count) AS BIGINT) AS n FROM traffic_statistics \
         WHERE stat_date >= {} AND stat_date < {} AND status = 404 GROUP BY site",
        b.bind(at(start)),
        b.bind(at(start + 3600))
    );
    db.query_all_raw(b.statement(sql))
        .await?
        .iter()
        .map(|row| {
            Ok((
                row.try_get("", "site")?,
                row.try_get::<i64>("", "n")?.max(0) as u64,
            ))
        })
        .collect()
}

/// Who hears of traffic alerts: the digest's recipients and channels.
struct Audience {
    to: Vec<EmailAddress>,
    channels: Vec<String>,
    mail_locale: Locale,
    default_locale: Locale,
}

/// Checks every site's last whole hour at `now` ([`check_hour`]).
pub async fn check(
    db: &DatabaseConnection,
    rules: Rules,
    now: DateTime<Utc>,
    zone: Tz,
    default_locale: Locale,
) -> Result<String, TrafficError> {
    check_hour(db, rules, last_hour(now, zone), now, zone, default_locale).await
}

/// Checks every site's hour starting at `start` (a Unix second): opens an episode (and queues
/// its alert) for each condition that starts, ends (with a recovery) each that no longer
/// holds. Says what it did.
pub async fn check_hour(
    db: &DatabaseConnection,
    rules: Rules,
    start: i64,
    now: DateTime<Utc>,
    zone: Tz,
    default_locale: Locale,
) -> Result<String, TrafficError> {
    if crate::services::maintenance::paused(db, now).await?.all {
        return Ok("every job is paused for maintenance: traffic alerts wait".into());
    }
    let open = crate::services::trends::open_keys(db, "traffic:").await?;
    let open_sites: Vec<String> = open.iter().filter_map(|k| site_of(k)).collect();
    let findings: Vec<Finding> = hours(db, start, &open_sites)
        .await?
        .iter()
        .flat_map(|hour| evaluate(&rules, hour))
        .collect();
    let audience = audience(db, default_locale).await?;
    let hour = WordedHour {
        start: DateTime::<Utc>::from_timestamp(start, 0).unwrap_or_default(),
        zone,
    };
    // Read first, then one transaction that writes first (see `services::trends::check`).
    let txn = db.begin().await?;
    let (mut started, mut ended) = (Vec::new(), Vec::new());
    for finding in &findings {
        let key = finding.key();
        let change = if finding.holds {
            crate::services::trends::open_key(&txn, &key, now)
                .await?
                .map(|e| (e, false))
        } else if open.contains(&key) {
            crate::services::trends::close_key(&txn, &key)
                .await?
                .map(|e| (e, true))
        } else {
            None
        };
        let Some((episode, recovered)) = change else {
            continue;
        };
        send(&txn, finding, recovered, episode, &hour, &audience, now).await?;
        if recovered { &mut ended } else { &mut started }.push(key);
    }
    txn.commit().await?;
    Ok(format!(
        "{} site(s) checked for {}; started: {}; ended: {}",
        findings
            .iter()
            .map(|f| &f.site)
            .collect::<std::collections::BTreeSet<_>>()
            .len(),
        hour.start.with_timezone(&zone).format("%Y-%m-%d %H:00"),
        if started.is_empty() {
            "none".into()
        } else {
            started.join(", ")
        },
        if ended.is_empty() {
            "none".into()
        } else {
            ended.join(", ")
        },
    ))
}

/// The site of an episode key `traffic:SITE:RULE`.
fn site_of(key: &str) -> Option<String> {
    let rest = key.strip_prefix("traffic:")?;
    let (site, rule) = rest.rsplit_once(':')?;
    Rule::ALL
        .iter()
        .any(|r| r.as_str() == rule)
        .then(|| site.to_string())
}

async fn audience(db: &DatabaseConnection, default_locale: Locale) -> Result<Audience, DbErr> {
    use crate::services::notifications;
    let mut to = notifications::recipients(db).await?;
    let channels = notifications::channels(db).await?;
    for address in channel_outbox::email_addresses(db, &channels).await? {
        if !to.contains(&address) {
            to.push(address);
        }
    }
    Ok(Audience {
        to,
        channels,
        mail_locale: notifications::mail_locale(db, default_locale).await?,
        default_locale,
    })
}

/// Queues one alert or recovery to the audience, under a key naming the episode.
async fn send(
    db: &impl ConnectionTrait,
    finding: &Finding,
    recovered: bool,
    episode: i32,
    hour: &WordedHour,
    audience: &Audience,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    let what = if recovered { "recovered" } else { "alert" };
    let dedupe_key = format!(
        "traffic-{what}:{}:{episode}",
        key(&finding.site, finding.rule)
    );
    if audience.to.is_empty() && audience.channels.is_empty() {
        tracing::warn!(alert = %dedupe_key, "no recipients or channels for traffic alerts (the digest's): not sent");
        return Ok(());
    }
    let event = NewEvent::in_every_language(
        dedupe_key.clone(),
        |l| words::chat_event(finding, recovered, hour, now, l),
        audience.default_locale,
    );
    channel_outbox::enqueue(db, &audience.channels, &event, now, audience.default_locale).await?;
    if audience.to.is_empty() {
        return Ok(());
    }
    let mail = NewMail {
        dedupe_key,
        kind: format!("traffic-{what}"),
        job_id: None,
        run_id: None,
        recipients: audience.to.clone(),
        composed: words::compose(finding, recovered, hour, audience.mail_locale),
    };
    outbox::enqueue(db, mail, now).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_whole_hour_is_one_a_flush_has_written() {
        let at = |t: &str| t.parse::<DateTime<Utc>>().unwrap();
        let hour = |s: i64| DateTime::<Utc>::from_timestamp(s, 0).unwrap();
        let utc = chrono_tz::UTC;
        assert_eq!(
            hour(last_hour(at("2026-12-07T15:01:30Z"), utc)),
            at("2026-12-07T14:00:00Z")
        );
        assert_eq!(
            hour(last_hour(at("2026-12-07T15:00:30Z"), utc)),
            at("2026-12-07T13:00:00Z")
        );
        // A zone half an hour off the hour.
        let india = chrono_tz::Asia::Kolkata;
        assert_eq!(
            hour(last_hour(at("2026-12-07T15:31:30Z"), india)),
            at("2026-12-07T14:30:00Z")
        );
    }

    #[test]
    fn an_episode_key_names_its_site() {
        assert_eq!(
            site_of("traffic:shop.example:views").as_deref(),
            Some("shop.example")
        );
        assert_eq!(site_of("traffic:[::1]:not_found").as_deref(), Some("[::1]"));
        assert_eq!(site_of("spike"), None);
        assert_eq!(site_of("traffic:shop.example:other"), None);
    }
}
