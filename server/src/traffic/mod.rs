//! Front-end traffic: counting page views, people and bots, without a separate analytics
//! service (`docs/ARCHITECTURE.md` §5).
//!
//! Three ways in, one pipeline:
//! - [`layer`]: a tower layer on the server's own routes;
//! - [`collect`]: `POST /api/collect` (and `/api/collect/event`) and a 1×1 image, fed by a
//!   script other sites embed;
//! - [`import`]: `bulwark traffic import`, Apache/nginx combined logs.
//!
//! Each asks [`rules`] whether a request is a page view, turns it into a bounded [`hit::Hit`],
//! and counts it in a [`buffer::Buffer`]. [`store`] flushes the buffer (classifying user agents
//! with [`bots`] and hashing IPs when privacy is on) as upserts that add counts, and
//! deletes old rows. [`crate::cluster`] carries `traffic flush` to every running server.

pub mod bots;
pub mod buffer;
pub mod clients;
pub mod collect;
pub mod generate;
pub mod geo;
pub mod hit;
pub mod import;
pub mod layer;
pub mod rules;
pub mod store;
pub mod synthetic;

use std::net::IpAddr;

use http::HeaderMap;
use http::header::{ACCEPT_LANGUAGE, REFERER, USER_AGENT};

use std::sync::Arc;

use app::services::traffic::sites::SiteRules;
use buffer::{Buffer, Recorded};
use hit::Hit;
use rules::{Exclusion, Rules};

/// How hits are recognised and kept; `config.rs` fills it from `traffic_*` settings.
#[derive(Debug, Clone)]
pub struct TrafficSettings {
    pub rules: Rules,
    /// Language prefixes of paths that count as locales; empty = any ISO 639-1 code.
    pub path_locales: Vec<String>,
    /// Proxies whose `X-Forwarded-For` entries are believed (`trusted_proxies`).
    pub trusted_proxies: app::domain::client_addr::TrustedProxies,
    /// The buffer's bound, in bytes of keys.
    pub buffer_bytes: usize,
    /// Hits counted per client (address; an IPv6 /64) per minute, in bursts of a tenth of it;
    /// beyond, hits are not counted. `None`: no limit.
    pub client_rate_per_minute: Option<std::num::NonZeroU32>,
    /// The host the console's own pages are counted under (that of `public_url`).
    pub console_host: String,
}

impl Default for TrafficSettings {
    fn default() -> Self {
        TrafficSettings {
            rules: Rules::default(),
            path_locales: Vec::new(),
            trusted_proxies: Default::default(),
            buffer_bytes: 64 << 20,
            client_rate_per_minute: std::num::NonZeroU32::new(600),
            console_host: "localhost".into(),
        }
    }
}

/// The rules and the buffer, shared by the layer, the collect endpoint and the flusher.
pub struct Recorder {
    settings: TrafficSettings,
    pub buffer: Buffer,
    /// A token bucket per client, so one client's flood can neither fill the buffer nor force
    /// early flushes: the rest of its hits are not counted.
    limiter: Option<governor::DefaultKeyedRateLimiter<IpAddr>>,
    /// Registered sites, their exclusions and the console's signed-in addresses, as last
    /// loaded ([`crate::duties`] reloads them every few seconds and on [`Self::sites_changed`]).
    sites: std::sync::RwLock<Arc<SiteRules>>,
    /// Wakes the reloader when this node changed the sites.
    pub sites_changed: tokio::sync::Notify,
}

/// Client buckets kept at most; past it, buckets back at full are forgotten first.
const MAX_CLIENT_BUCKETS: usize = 200_000;

impl Recorder {
    pub fn new(settings: TrafficSettings) -> Recorder {
        let buffer = Buffer::new(settings.buffer_bytes);
        let limiter = settings.client_rate_per_minute.map(|rate| {
            let burst =
                std::num::NonZeroU32::new(rate.get() / 10).unwrap_or(std::num::NonZeroU32::MIN);
            governor::RateLimiter::keyed(governor::Quota::per_minute(rate).allow_burst(burst))
        });
        Recorder {
            settings,
            buffer,
            limiter,
            sites: Default::default(),
            sites_changed: tokio::sync::Notify::new(),
        }
    }

    /// The host the console's own pages are counted under.
    pub fn console_host(&self) -> &str {
        &self.settings.console_host
    }

    /// The sites' rules as last loaded.
    pub fn site_rules(&self) -> Arc<SiteRules> {
        match self.sites.read() {
            Ok(rules) => rules.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    pub fn set_site_rules(&self, rules: SiteRules) {
        let rules = Arc::new(rules);
        match self.sites.write() {
            Ok(mut slot) => *slot = rules,
            Err(poisoned) => *poisoned.into_inner() = rules,
        }
    }

    /// Whether `ip` may have one more hit counted now.
    fn within_rate(&self, ip: IpAddr) -> bool {
        let Some(limiter) = &self.limiter else {
            return true;
        };
        if limiter.len() > MAX_CLIENT_BUCKETS {
            limiter.retain_recent();
        }
        limiter.check_key(&rate_key(ip)).is_ok()
    }

    pub fn rules(&self) -> &Rules {
        &self.settings.rules
    }

    /// A request to the console's own pages, if it is a page view, to be counted once its
    /// response is known ([`Recorder::count`]); says why not otherwise. Someone signed in to
    /// the console is not counted.
    pub fn prepare(
        &self,
        method: &str,
        target: &str,
        headers: &HeaderMap,
        peer: Option<IpAddr>,
    ) -> Result<Pending, Exclusion> {
        let path = hit::path_only(target);
        self.settings
            .rules
            .check(method, path, rules::is_prefetch(headers))?;
        // Either cookie marks a console user; whether it is a valid session does not matter.
        if app::services::sessions::token_from_headers(headers, false).is_some() {
            return Err(Exclusion::ConsoleUser);
        }
        let rules = self.site_rules();
        let client = self.client(headers, peer);
        if client.is_some_and(|ip| rules.console.contains(ip)) {
            return Err(Exclusion::Address);
        }
        let site = self.settings.console_host.clone();
        let visit = Visit {
            path,
            campaign: hit::Campaign::of(target),
            site: &site,
            referer: None,
            language: None,
        };
        Ok(self.visit(method, visit, headers, client))
    }

    /// [`Recorder::prepare`] and [`Recorder::count`] at once, with no status (what benches
    /// and tests of the rules use).
    pub fn observe(
        &self,
        method: &str,
        target: &str,
        headers: &HeaderMap,
        peer: Option<IpAddr>,
    ) -> Result<Recorded, Exclusion> {
        Ok(self.count(self.prepare(method, target, headers, peer)?, 0))
    }

    /// Counts a page view (or, with [`Collected::event`], an event) the collect endpoint
    /// reported for a site. A host that may not report is [`Exclusion::UnknownSite`].
    pub fn observe_collected(
        &self,
        report: Collected<'_>,
        headers: &HeaderMap,
        peer: Option<IpAddr>,
    ) -> Result<Recorded, Exclusion> {
        let Collected {
            page,
            site,
            referer,
            language,
            event,
        } = report;
        let rules = self.site_rules();
        let console = self.console_host();
        let excluded = match site {
            Some(site) => rules.accepts(site, console),
            // A report naming no site is only taken while any site may report.
            None if rules.open() => Some(&rules.console),
            None => None,
        }
        .ok_or(Exclusion::UnknownSite)?;
        let path = hit::path_only(page);
        self.settings
            .rules
            .check("GET", path, rules::is_prefetch(headers))?;
        let client = self.client(headers, peer);
        if let Some(ip) = client {
            if excluded.contains(ip) {
                return Err(Exclusion::Address);
            }
            let agent = headers
                .get(USER_AGENT)
                .map(|v| String::from_utf8_lossy(v.as_bytes()))
                .unwrap_or_default();
            if rules.is_console_user(ip, &agent) {
                return Err(Exclusion::ConsoleUser);
            }
        }
        // The request's own Referer is the page itself here; the visit's referrer is only
        // what the script reported.
        let visit = Visit {
            path,
            campaign: hit::Campaign::of(page),
            site: site.unwrap_or(""),
            referer: Some(referer.unwrap_or("")),
            language,
        };
        let mut pending = self.visit("GET", visit, headers, client);
        if let Some(event) = event {
            pending.hit = pending.hit.sent(event);
        }
        // The script cannot see the response: no status.
        Ok(self.count(pending, 0))
    }

    /// A page view's hit, not yet counted.
    fn visit(
        &self,
        method: &str,
        visit: Visit<'_>,
        headers: &HeaderMap,
        client: Option<IpAddr>,
    ) -> Pending {
        let Visit {
            path,
            campaign,
            site,
            referer,
            language,
        } = visit;
        let header = |name| {
            headers
                .get(name)
                .map(|v: &http::HeaderValue| String::from_utf8_lossy(v.as_bytes()))
        };
        let ip = client.map_or_else(|| "unknown".to_string(), |ip| ip.to_string());
        let user_agent = header(USER_AGENT).unwrap_or_default();
        let referer = match referer {
            Some(r) => r.into(),
            None => header(REFERER).unwrap_or_default(),
        };
        let accept_language = header(ACCEPT_LANGUAGE);
        let locale = hit::locale(
            path,
            language.or(accept_language.as_deref()),
            &self.settings.path_locales,
        );
        let (hit, truncated) = Hit::new(
            chrono::Utc::now().timestamp(),
            method,
            path,
            &ip,
            &user_agent,
            &referer,
            locale,
        );
        Pending {
            hit: hit.on(site).tagged(campaign),
            truncated,
            client,
        }
    }

    /// Counts a prepared page view, answered with `status` (`0`: unknown), unless its client
    /// is over its rate.
    pub fn count(&self, pending: Pending, status: u16) -> Recorded {
        if let Some(client) = pending.client
            && !self.within_rate(client)
        {
            self.buffer
                .stats
                .limited
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            return Recorded::Limited;
        }
        self.buffer
            .record(pending.hit.answered(status), 1, pending.truncated)
    }

    fn client(&self, headers: &HeaderMap, peer: Option<IpAddr>) -> Option<IpAddr> {
        let forwarded: Vec<&str> = headers
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .collect();
        Some(self.settings.trusted_proxies.client(peer?, &forwarded))
    }

    #[cfg(test)]
    fn client_ip(&self, headers: &HeaderMap, peer: Option<IpAddr>) -> String {
        self.client(headers, peer)
            .map_or_else(|| "unknown".to_string(), |ip| ip.to_string())
    }
}

/// A page view recognised and not yet counted: the layer counts it when the response's status
/// is known.
#[derive(Debug)]
pub struct Pending {
    hit: Hit,
    truncated: bool,
    client: Option<IpAddr>,
}

/// What the collect endpoint was told: the page's URL or path, its site's host (from that URL
/// or the request's origin), the referrer and language the script sent, and the event when it
/// reported one rather than a page view.
pub struct Collected<'a> {
    pub page: &'a str,
    pub site: Option<&'a str>,
    pub referer: Option<&'a str>,
    pub language: Option<&'a str>,
    pub event: Option<hit::Event>,
}

/// What a page view is of: the page, its campaign tags and site, and what the request or the
/// script said of where it came from and the reader's language.
struct Visit<'a> {
    path: &'a str,
    campaign: hit::Campaign,
    site: &'a str,
    /// The script's referrer; `None`: the request's own `Referer`.
    referer: Option<&'a str>,
    language: Option<&'a str>,
}

/// How often each node reloads the sites' rules (a change made on this node applies at once).
pub const SITES_REFRESH: std::time::Duration = std::time::Duration::from_secs(5);

/// Loads the sites' rules into `recorder` now, and again every [`SITES_REFRESH`] and whenever
/// this node changes them, until `stop` completes.
pub async fn keep_sites_current(
    db: sea_orm::DatabaseConnection,
    recorder: Arc<Recorder>,
    stop: impl std::future::Future<Output = ()>,
) {
    tokio::pin!(stop);
    loop {
        load_sites(&db, &recorder).await;
        tokio::select! {
            () = &mut stop => return,
            () = tokio::time::sleep(SITES_REFRESH) => {}
            () = recorder.sites_changed.notified() => {}
        }
    }
}

/// Loads the sites' rules once; on failure the last ones stay (and the error is logged).
pub async fn load_sites(db: &sea_orm::DatabaseConnection, recorder: &Recorder) {
    match app::services::traffic::sites::rules(db, recorder.console_host(), chrono::Utc::now())
        .await
    {
        Ok(rules) => recorder.set_site_rules(rules),
        Err(error) => {
            tracing::warn!(%error, "could not reload the traffic sites; the last ones stay")
        }
    }
}

/// The bucket a client's hits count against: its address, or for IPv6 its /64 (one
/// subscriber's network; a host can rotate through its addresses at will).
fn rate_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => {
            let mut octets = v6.octets();
            octets[8..].fill(0);
            IpAddr::from(octets)
        }
        v4 => v4,
    }
}

impl app::live::LiveTraffic for Recorder {
    fn unflushed_since(&self, since: chrono::DateTime<chrono::Utc>) -> Vec<app::live::LiveHits> {
        // Classified here, after the buffer's lock is let go.
        let mut live = Vec::new();
        for (agent, minutes) in self.buffer.pending_since(since.timestamp()) {
            let is_bot = bots::classify(&agent).is_bot;
            for (minute, count) in minutes {
                if let Some(minute) = chrono::DateTime::from_timestamp(minute, 0) {
                    live.push(app::live::LiveHits {
                        minute,
                        is_bot,
                        count,
                    });
                }
            }
        }
        live
    }

    fn sites_changed(&self) {
        self.sites_changed.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, value.parse().unwrap());
        }
        map
    }

    #[test]
    fn a_page_view_is_counted_with_its_details() {
        let recorder = Recorder::new(TrafficSettings::default());
        let h = headers(&[
            ("user-agent", "Mozilla/5.0 (X11; Linux x86_64)"),
            ("referer", "https://search.example/"),
            ("accept-language", "de-DE,de;q=0.9"),
        ]);
        let peer = Some("192.0.2.7".parse().unwrap());
        assert_eq!(
            recorder.observe("GET", "/shop?page=2", &h, peer),
            Ok(Recorded::Counted)
        );
        assert_eq!(
            recorder.observe("GET", "/api/x", &h, peer),
            Err(Exclusion::Prefix)
        );
        let taken = recorder.buffer.take();
        let (hit, n) = taken.iter().next().unwrap();
        assert_eq!(*n, 1);
        assert_eq!(hit.path, "/shop");
        assert_eq!(hit.ip, "192.0.2.7");
        assert_eq!(hit.locale, "de-DE");
        assert_eq!(hit.referer, "https://search.example/");
    }

    #[test]
    fn forwarded_for_only_through_trusted_proxies() {
        // The client wrote 198.51.100.1 itself; the trusted proxy appended 203.0.113.9.
        let h = headers(&[("x-forwarded-for", "198.51.100.1, 203.0.113.9")]);
        let peer = Some("10.0.0.1".parse().unwrap());
        let plain = Recorder::new(TrafficSettings::default());
        assert_eq!(plain.client_ip(&h, peer), "10.0.0.1");
        let proxied = Recorder::new(TrafficSettings {
            trusted_proxies: app::domain::client_addr::TrustedProxies::parse(&["10.0.0.0/8"])
                .unwrap(),
            ..TrafficSettings::default()
        });
        assert_eq!(proxied.client_ip(&h, peer), "203.0.113.9");
        assert_eq!(proxied.client_ip(&HeaderMap::new(), None), "unknown");
    }

    #[test]
    fn a_flooding_client_is_not_counted_beyond_its_rate() {
        let recorder = Recorder::new(TrafficSettings {
            client_rate_per_minute: std::num::NonZeroU32::new(60),
            ..TrafficSettings::default()
        });
        let h = headers(&[("user-agent", "Mozilla/5.0")]);
        let flood: IpAddr = "198.51.100.1".parse().unwrap();
        let outcomes: Vec<Recorded> = (0..20)
            .map(|i| {
                recorder
                    .observe("GET", &format!("/p{i}"), &h, Some(flood))
                    .unwrap()
            })
            .collect();
        // A burst of a tenth of the minute's rate, then nothing until tokens come back.
        assert_eq!(
            outcomes.iter().filter(|r| **r == Recorded::Counted).count(),
            6,
            "{outcomes:?}"
        );
        assert_eq!(recorder.buffer.stats().limited, 14);
        // Another client is unaffected; addresses of one IPv6 /64 share a bucket.
        let other: IpAddr = "203.0.113.5".parse().unwrap();
        assert_eq!(
            recorder.observe("GET", "/x", &h, Some(other)),
            Ok(Recorded::Counted)
        );
        let mut v6 = Vec::new();
        for i in 0..10 {
            let ip: IpAddr = format!("2001:db8:1:2::{i:x}").parse().unwrap();
            v6.push(recorder.observe("GET", "/y", &h, Some(ip)).unwrap());
        }
        assert_eq!(v6.iter().filter(|r| **r == Recorded::Counted).count(), 6);
    }

    #[test]
    fn non_utf8_user_agents_are_kept_lossily() {
        let recorder = Recorder::new(TrafficSettings::default());
        let mut h = HeaderMap::new();
        h.insert(
            USER_AGENT,
            http::HeaderValue::from_bytes(b"Mozilla/5.0 \xff\xfe bot").unwrap(),
        );
        recorder.observe("GET", "/", &h, None).unwrap();
        let taken = recorder.buffer.take();
        assert!(taken.keys().next().unwrap().user_agent.contains('\u{fffd}'));
    }
}
