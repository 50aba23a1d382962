//! Registered sites and what the collectors need to know of them ([`SiteRules`]).
//!
//! Removing a site keeps its counted hits (they stay in the figures for all sites and under its
//! host); it only stops new reports from being accepted.

use std::collections::{HashMap, HashSet};
use std::net::IpAddr;

use chrono::{DateTime, Utc};
use sea_orm::sea_query::{ExprTrait, OnConflict};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder, QuerySelect, Set,
};

use crate::domain::client_addr::canonical;
use crate::domain::sites::{self, Exclusions};
use crate::entities::{session, traffic_site};
use crate::services::audit::{self, Actor};
use crate::services::sql::begin_write;
use crate::views::traffic::SiteInfo;

#[derive(Debug, thiserror::Error)]
pub enum SiteError {
    #[error("{0}")]
    Invalid(crate::domain::Problem),
    /// Excluded addresses that do not parse (`crate::domain::client_addr::Networks`' words).
    #[error("{0}")]
    Excluded(String),
    #[error("{0} is registered already")]
    Exists(String),
    #[error("{0} is not a registered site")]
    NotFound(String),
    #[error(
        "{0} is the console's own host (public_url): it is always counted and cannot be removed"
    )]
    Console(String),
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// Every site: the console's host first (whether or not it has a row), then the registered
/// ones by host.
pub async fn list(db: &impl ConnectionTrait, console: &str) -> Result<Vec<SiteInfo>, DbErr> {
    let rows = traffic_site::Entity::find()
        .order_by_asc(traffic_site::Column::Host)
        .all(db)
        .await?;
    let mut sites = vec![SiteInfo {
        host: console.to_string(),
        excluded: String::new(),
        console: true,
        registered: false,
    }];
    for row in rows {
        if row.host == console {
            sites[0].excluded = row.excluded;
            sites[0].registered = true;
        } else {
            sites.push(SiteInfo {
                host: row.host,
                excluded: row.excluded,
                console: false,
                registered: true,
            });
        }
    }
    Ok(sites)
}

/// A site that can be reported on, as typed: the console's own host or a registered one.
pub async fn known(
    db: &impl ConnectionTrait,
    typed: &str,
    console: &str,
) -> Result<String, SiteError> {
    let host = sites::normalise_host(typed).map_err(SiteError::Invalid)?;
    if host == console {
        return Ok(host);
    }
    let found = traffic_site::Entity::find()
        .filter(traffic_site::Column::Host.eq(&host))
        .one(db)
        .await?;
    found.map(|_| host.clone()).ok_or(SiteError::NotFound(host))
}

fn new_row(host: &str, excluded: String) -> traffic_site::ActiveModel {
    traffic_site::ActiveModel {
        host: Set(host.to_string()),
        excluded: Set(excluded),
        created_at: Set(crate::clock::now()),
        ..Default::default()
    }
}

/// Registers a host as typed (see [`sites::normalise_host`]), and records who did; returns it
/// as stored.
pub async fn add(
    db: &sea_orm::DatabaseConnection,
    typed: &str,
    console: &str,
    who: &Actor<'_>,
    now: DateTime<Utc>,
) -> Result<String, SiteError> {
    let txn = begin_write(db).await?;
    let host = insert(&txn, typed, console).await?;
    audit::record(&txn, who, "site.added", &host, serde_json::json!({}), now).await?;
    txn.commit().await?;
    Ok(host)
}

async fn insert(
    db: &impl ConnectionTrait,
    typed: &str,
    console: &str,
) -> Result<String, SiteError> {
    let host = sites::normalise_host(typed).map_err(SiteError::Invalid)?;
    if host == console {
        return Err(SiteError::Invalid(crate::problem!(
            "error-site-console",
            host = host
        )));
    }
    let inserted = traffic_site::Entity::insert(new_row(&host, String::new()))
        .on_conflict(
            OnConflict::column(traffic_site::Column::Host)
                .do_nothing()
                .to_owned(),
        )
        .exec_without_returning(db)
        .await?;
    if inserted == 0 {
        return Err(SiteError::Exists(host));
    }
    Ok(host)
}

/// Stops accepting reports for a host, ends its scheduled report and its share link, and
/// records who did; its hits stay.
pub async fn remove(
    db: &sea_orm::DatabaseConnection,
    typed: &str,
    console: &str,
    who: &Actor<'_>,
    now: DateTime<Utc>,
) -> Result<String, SiteError> {
    let host = sites::normalise_host(typed).map_err(SiteError::Invalid)?;
    if host == console {
        return Err(SiteError::Console(host));
    }
    let txn = begin_write(db).await?;
    let deleted = traffic_site::Entity::delete_many()
        .filter(traffic_site::Column::Host.eq(&host))
        .exec(&txn)
        .await?
        .rows_affected;
    if deleted == 0 {
        return Err(SiteError::NotFound(host));
    }
    // Its report and its share link would go on showing a site no longer counted.
    crate::entities::traffic_report::Entity::delete_many()
        .filter(crate::entities::traffic_report::Column::Site.eq(&host))
        .exec(&txn)
        .await?;
    crate::entities::traffic_share::Entity::delete_many()
        .filter(crate::entities::traffic_share::Column::Site.eq(&host))
        .exec(&txn)
        .await?;
    audit::record(&txn, who, "site.removed", &host, serde_json::json!({}), now).await?;
    txn.commit().await?;
    Ok(host)
}

/// What a site's exclusions are to become, as typed.
pub struct NewExclusions<'a> {
    pub host: &'a str,
    pub excluded: &'a str,
}

/// Replaces a site's excluded addresses (the console's host gets a row for them if it has
/// none), and records who did; returns them as stored.
pub async fn set_exclusions(
    db: &sea_orm::DatabaseConnection,
    new: NewExclusions<'_>,
    console: &str,
    who: &Actor<'_>,
    now: DateTime<Utc>,
) -> Result<String, SiteError> {
    let host = sites::normalise_host(new.host).map_err(SiteError::Invalid)?;
    let text = Exclusions::parse(new.excluded)
        .map_err(SiteError::Excluded)?
        .to_text();
    let txn = begin_write(db).await?;
    store_exclusions(&txn, &host, &text, console).await?;
    let detail = serde_json::json!({ "excluded": text });
    audit::record(&txn, who, "site.exclusions", new.host, detail, now).await?;
    txn.commit().await?;
    Ok(text)
}

async fn store_exclusions(
    db: &impl ConnectionTrait,
    host: &str,
    text: &str,
    console: &str,
) -> Result<(), SiteError> {
    if host == console {
        traffic_site::Entity::insert(new_row(host, text.to_string()))
            .on_conflict(
                OnConflict::column(traffic_site::Column::Host)
                    .update_column(traffic_site::Column::Excluded)
                    .to_owned(),
            )
            .exec_without_returning(db)
            .await?;
        return Ok(());
    }
    let updated = traffic_site::Entity::update_many()
        .col_expr(
            traffic_site::Column::Excluded,
            sea_orm::sea_query::Expr::value(text),
        )
        .filter(traffic_site::Column::Host.eq(host))
        .exec(db)
        .await?
        .rows_affected;
    if updated == 0 {
        return Err(SiteError::NotFound(host.to_string()));
    }
    Ok(())
}

/// What the collectors check each hit against, loaded from the database and refreshed on
/// every node every few seconds.
#[derive(Debug, Clone, Default)]
pub struct SiteRules {
    /// Registered hosts (not the console's) and their exclusions.
    pub sites: HashMap<String, Exclusions>,
    /// The console's own exclusions.
    pub console: Exclusions,
    /// Address and browser of each session used recently: a visit from both is someone signed
    /// in to the console, looking at their own site. (The browser too, so colleagues behind
    /// one office address are still counted.)
    console_users: HashSet<(IpAddr, String)>,
    /// What an unregistered host excludes while any host may report: nothing.
    unregistered: Exclusions,
}

/// How much of a User-Agent a session keeps (`services::sessions`).
const SESSION_AGENT_CHARS: usize = 255;

impl SiteRules {
    /// Whether a visit from `ip` with `user_agent` is someone signed in to the console.
    pub fn is_console_user(&self, ip: IpAddr, user_agent: &str) -> bool {
        let agent: String = user_agent.chars().take(SESSION_AGENT_CHARS).collect();
        self.console_users.contains(&(canonical(ip), agent))
    }

    /// Whether reports are accepted for any host (no site but the console registered).
    pub fn open(&self) -> bool {
        self.sites.is_empty()
    }

    /// The exclusions of a host, if it may report: the console's host and registered ones
    /// always, any other only while [`Self::open`].
    pub fn accepts(&self, host: &str, console: &str) -> Option<&Exclusions> {
        if host == console {
            return Some(&self.console);
        }
        match self.sites.get(host) {
            Some(exclusions) => Some(exclusions),
            None if self.open() => Some(&self.unregistered),
            None => None,
        }
    }
}

/// How long after a signed-in person's last request their address still counts as theirs.
pub const CONSOLE_USER_WINDOW: chrono::Duration = chrono::Duration::hours(12);

/// Reads the rules as they are now.
pub async fn rules(
    db: &impl ConnectionTrait,
    console: &str,
    now: DateTime<Utc>,
) -> Result<SiteRules, DbErr> {
    let mut rules = SiteRules::default();
    for row in traffic_site::Entity::find().all(db).await? {
        // A stored list was checked when saved; one that no longer parses excludes nothing
        // rather than stopping the counting.
        let exclusions = Exclusions::parse(&row.excluded).unwrap_or_else(|e| {
            tracing::warn!(host = %row.host, error = %e, "a site's exclusions are unreadable");
            Exclusions::default()
        });
        if row.host == console {
            rules.console = exclusions;
        } else {
            rules.sites.insert(row.host, exclusions);
        }
    }
    let since = now - CONSOLE_USER_WINDOW;
    let users: Vec<(Option<String>, Option<String>)> = session::Entity::find()
        .select_only()
        .column(session::Column::Ip)
        .column(session::Column::UserAgent)
        .distinct()
        .filter(session::Column::ExpiresAt.gt(now))
        .filter(
            session::Column::LastSeenAt
                .gt(since)
                .or(session::Column::CreatedAt.gt(since)),
        )
        .into_tuple()
        .all(db)
        .await?;
    rules.console_users = users
        .into_iter()
        .filter_map(|(ip, agent)| Some((canonical(ip?.parse().ok()?), agent.unwrap_or_default())))
        .collect();
    Ok(rules)
}
