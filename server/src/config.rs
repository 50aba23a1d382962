//! Configuration: an optional TOML file, overridden by `BULWARK_*` environment variables, and
//! `DATABASE_URL` over both. Bad values stop the start with a message that names the key.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use figment::Figment;
use figment::providers::{Env, Format, Serialized, Toml};
use serde::{Deserialize, Serialize};

use app::domain::sign_in::DefaultRole;

use crate::traffic::TrafficSettings;
use crate::traffic::rules::{self, Rules};
use crate::traffic::store::IpPrivacy;

/// Every setting Bulwark reads, with its default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// `sqlite://path?mode=rwc` or `postgres://user@host/db`.
    pub database_url: String,
    /// `transaction` when PostgreSQL is reached through a pooler in transaction mode
    /// (PgBouncer's `pool_mode = transaction`); `none` (default) otherwise.
    pub database_pooler: crate::db::Pooler,
    /// Where the web app listens.
    pub addr: SocketAddr,
    /// A second listener serving only `/metrics`, without a token (bind it where only
    /// Prometheus reaches). Unset: `/metrics` on `addr`, with any API token.
    pub metrics_addr: Option<SocketAddr>,
    /// Serve the site (wasm, JS, CSS, vendored scripts) from this directory, as `make site`
    /// writes it, instead of the copy built into the binary (development). Unset: the
    /// built-in copy, or `target/site` for a binary built without one.
    pub site_root: Option<PathBuf>,
    pub log_format: LogFormat,
    /// How long a sign-in lasts, in hours.
    pub session_hours: u32,
    /// A sign-in ends after this many hours without a request.
    pub session_idle_hours: u32,
    /// Always mark cookies `Secure` (otherwise only when `X-Forwarded-Proto: https`).
    pub secure_cookies: bool,
    /// Apply pending migrations when `serve` starts. Turn off when several instances share a
    /// database and `bulwark migrate` runs once per deploy.
    pub auto_migrate: bool,
    /// Password for the first administrator when the database has no account yet; without it
    /// a random one is generated and printed once.
    pub admin_password: Option<String>,
    /// The key secrets are encrypted with (created, mode 0600, on the first start). Every
    /// instance sharing a database needs the same file; back it up apart from the database.
    pub secret_key_file: PathBuf,
    /// Run the job engine in `serve` (turn off for a web-only instance).
    pub engine: bool,
    /// Whether `command` jobs may run on this instance: without, it never claims them.
    pub allow_commands: bool,
    /// A run waiting this long for a node allowed to run it (its job's `run_on`, or commands
    /// off everywhere) is alerted on, once.
    pub waiting_for_node_alert_seconds: u64,
    /// This instance's labels (`{ role = "db", dc = "sh" }`; in the environment
    /// `role=db,dc=sh`): it runs jobs whose `run_on` asks for no label it lacks.
    #[serde(deserialize_with = "labels_table_or_text")]
    pub node_labels: std::collections::BTreeMap<String, String>,
    /// Serve the console, the API and traffic collection; off (`bulwark serve --no-web`), only
    /// `/healthz`, `/readyz` and `/metrics` answer and the instance only runs jobs.
    pub web: bool,
    /// This instance's name in leases and attempts (default: host, pid and start time).
    pub node_id: Option<String>,
    /// How long a claim on a run lasts without renewal.
    pub lease_seconds: u64,
    /// On shutdown, how long running attempts may take before they are handed back.
    pub grace_seconds: u64,
    /// Attempts running at once on this instance.
    pub concurrency: usize,
    /// Runs (and their attempts) are deleted this many days after they ended; dead runs in
    /// the failed queue stay until someone handles them.
    pub run_retention_days: u32,
    /// Kept of each attempt's output, in MiB: a longer output keeps its first and last half
    /// with a line between saying how much was left out.
    pub run_log_max_mb: u32,
    /// Kept of a watched job's ping body (its output), in KiB.
    pub ping_body_max_kb: u32,
    /// The zone for Bulwark's own schedules (the traffic cleanup at 02:00) and for dates on
    /// the command line.
    pub timezone: String,
    /// The console's language for people whose browser asks for none Bulwark speaks, and of
    /// mails and chat alerts unless their recipients or channel say otherwise: `en`, `zh-CN`
    /// (a catalogue in `app/locales/`).
    pub default_locale: String,
    /// Count front-end page views of this server's routes (the collect endpoint and
    /// `traffic import` work either way).
    pub traffic_capture: bool,
    /// Proxies in front of Bulwark (CIDRs or addresses) whose `X-Forwarded-For` entries are
    /// believed, for sign-in limits and traffic alike; empty: the socket's peer is the client.
    pub trusted_proxies: Vec<String>,
    /// Networks Bulwark's own requests (HTTP jobs, their redirects, chat channels) never
    /// reach, by address or by a name resolving there (`server/src/outbound.rs`); `[]` to
    /// allow all.
    pub outbound_deny: Vec<String>,
    /// Replaced by `trusted_proxies`; still read so an old file gets a message, not a puzzle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traffic_trust_forwarded_for: Option<bool>,
    /// Paths under these prefixes are never page views.
    pub traffic_exclude_prefixes: Vec<String>,
    /// Paths ending in these extensions are static assets, not page views.
    pub traffic_asset_extensions: Vec<String>,
    /// First path segments that name a locale (`/de/…`); empty: any ISO 639-1 code.
    pub traffic_path_locales: Vec<String>,
    /// `raw` stores visitors' IPs, `hash` a keyed hash of them.
    pub traffic_ip: IpPrivacy,
    /// A MaxMind DB file of countries to use instead of the bundled one
    /// (`server/data/geo/README.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub geoip_database: Option<PathBuf>,
    /// When a site's last hour is alerted on (`app/src/domain/traffic_alerts.rs`):
    /// `views_factor` × its usual people's page views, a `bot_share` of its hits from bots,
    /// `not_found_per_hour` 404s; 0 turns a rule off.
    pub traffic_alerts: app::domain::traffic_alerts::Rules,
    /// The in-memory hit buffer's bound, in MiB.
    pub traffic_buffer_mb: usize,
    /// Page views counted per client address (an IPv6 /64) per minute, in bursts of a tenth;
    /// beyond it a flood is not counted (and `POST /api/collect` answers 429). 0: no limit.
    pub traffic_client_rate_per_minute: u32,
    /// The SMTP server: `smtp://user:password@host:587?tls=required` (STARTTLS),
    /// `smtps://user:password@host:465` (TLS), or `smtp://host:25` (plain, local relays only).
    /// Without it mail is kept in the outbox and written as .eml files to `mail_outbox_dir`.
    pub smtp_url: Option<String>,
    /// The sender of every mail, `Name <address>` or an address.
    pub mail_from: String,
    /// Where .eml files go when no SMTP server is configured.
    pub mail_outbox_dir: PathBuf,
    /// The console's address as people reach it, for links in mails (default: `http://` and
    /// `addr`).
    pub public_url: Option<String>,
    /// One OpenID provider (`docs/guide/sign-in.md`): its issuer URL. Several: `[[oidc]]`.
    pub oidc_issuer: Option<String>,
    pub oidc_client_id: Option<String>,
    /// `${secret:NAME}` (the vault) or the path of a file holding it; unset for a public client.
    pub oidc_client_secret: Option<String>,
    /// The claim listing a person's groups.
    pub oidc_role_claim: String,
    pub oidc_admin_groups: Vec<String>,
    pub oidc_viewer_groups: Vec<String>,
    /// `viewer` or `none` (refused, no account made) for someone in no mapped group.
    pub oidc_default_role: DefaultRole,
    /// API tokens of the provider's people expire within this many days.
    pub oidc_token_max_days: u32,
    /// The one provider's name, in `oidc:NAME` and its sign-in URL.
    pub oidc_name: String,
    /// The one provider's button text (default: its name).
    pub oidc_label: Option<String>,
    /// Further providers, each with a `name`.
    pub oidc: Vec<OidcProvider>,
    /// How far an ID token's times may be off this server's clock, in seconds.
    pub oidc_clock_skew_seconds: u32,
    /// The password form and `POST /api/login`; off, only `bulwark user` sets passwords.
    pub password_login: bool,
    /// A header naming the signed-in person (`X-Remote-User`), believed only from
    /// `auth_header_proxies`.
    pub auth_header: Option<String>,
    /// A header listing their groups, comma-separated.
    pub auth_groups_header: Option<String>,
    /// The proxies (addresses or CIDRs) whose `auth_header` is believed: its own list, not
    /// `trusted_proxies`.
    pub auth_header_proxies: Vec<String>,
    /// `viewer` or `none` for someone the header names who has no account and no mapped group.
    pub auth_header_default_role: DefaultRole,
    pub auth_header_admin_groups: Vec<String>,
    pub auth_header_viewer_groups: Vec<String>,
    /// Administrators with a password must add a second factor (TOTP) before anything else.
    pub require_totp_for_admins: bool,
}

/// An OpenID provider as an `[[oidc]]` table: the one-provider keys without `oidc_`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OidcProvider {
    pub name: String,
    #[serde(default)]
    pub label: Option<String>,
    #[serde(alias = "oidc_issuer")]
    pub issuer: String,
    #[serde(alias = "oidc_client_id")]
    pub client_id: String,
    #[serde(default, alias = "oidc_client_secret")]
    pub client_secret: Option<String>,
    #[serde(default = "default_role_claim", alias = "oidc_role_claim")]
    pub role_claim: String,
    #[serde(default, alias = "oidc_admin_groups")]
    pub admin_groups: Vec<String>,
    #[serde(default, alias = "oidc_viewer_groups")]
    pub viewer_groups: Vec<String>,
    #[serde(default, alias = "oidc_default_role")]
    pub default_role: DefaultRole,
    #[serde(default = "default_token_max_days", alias = "oidc_token_max_days")]
    pub token_max_days: u32,
}

fn default_role_claim() -> String {
    "groups".into()
}

fn default_token_max_days() -> u32 {
    30
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum, Default)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    #[default]
    Text,
    Json,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            database_url: "sqlite://data/bulwark.db?mode=rwc".into(),
            database_pooler: crate::db::Pooler::None,
            addr: SocketAddr::from(([127, 0, 0, 1], 3000)),
            metrics_addr: None,
            site_root: None,
            log_format: LogFormat::Text,
            session_hours: 12,
            session_idle_hours: 8,
            secure_cookies: false,
            auto_migrate: true,
            admin_password: None,
            secret_key_file: PathBuf::from("data/secret.key"),
            engine: true,
            allow_commands: true,
            node_labels: Default::default(),
            waiting_for_node_alert_seconds: 300,
            web: true,
            node_id: None,
            lease_seconds: 30,
            grace_seconds: 30,
            concurrency: 16,
            run_retention_days: 90,
            run_log_max_mb: 10,
            ping_body_max_kb: 100,
            timezone: "UTC".into(),
            default_locale: "en".into(),
            traffic_capture: true,
            traffic_alerts: Default::default(),
            traffic_exclude_prefixes: strings(rules::DEFAULT_EXCLUDED_PREFIXES),
            traffic_asset_extensions: strings(rules::DEFAULT_ASSET_EXTENSIONS),
            traffic_path_locales: Vec::new(),
            traffic_ip: IpPrivacy::Raw,
            geoip_database: None,
            trusted_proxies: Vec::new(),
            outbound_deny: strings(&crate::outbound::DEFAULT),
            traffic_trust_forwarded_for: None,
            traffic_buffer_mb: 64,
            traffic_client_rate_per_minute: 600,
            smtp_url: None,
            mail_from: "Bulwark <bulwark@localhost>".into(),
            mail_outbox_dir: PathBuf::from("data/outbox"),
            public_url: None,
            oidc_issuer: None,
            oidc_client_id: None,
            oidc_client_secret: None,
            oidc_role_claim: default_role_claim(),
            oidc_admin_groups: Vec::new(),
            oidc_viewer_groups: Vec::new(),
            oidc_default_role: DefaultRole::Viewer,
            oidc_token_max_days: default_token_max_days(),
            oidc_name: "oidc".into(),
            oidc_label: None,
            oidc: Vec::new(),
            oidc_clock_skew_seconds: 60,
            password_login: true,
            auth_header: None,
            auth_groups_header: None,
            auth_header_proxies: Vec::new(),
            auth_header_default_role: DefaultRole::Viewer,
            auth_header_admin_groups: Vec::new(),
            auth_header_viewer_groups: Vec::new(),
            require_totp_for_admins: false,
        }
    }
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// The `BULWARK_*` variables that are settings. Others with the prefix (such as
/// `BULWARK_CONFIG` or `BULWARK_TEST_POSTGRES_URL`) belong to other tools and are not read here.
const ENV_KEYS: &[&str] = &[
    "database_url",
    "database_pooler",
    "addr",
    "metrics_addr",
    "site_root",
    "log_format",
    "session_hours",
    "session_idle_hours",
    "secure_cookies",
    "auto_migrate",
    "admin_password",
    "secret_key_file",
    "engine",
    "allow_commands",
    "node_labels",
    "waiting_for_node_alert_seconds",
    "web",
    "node_id",
    "lease_seconds",
    "grace_seconds",
    "concurrency",
    "run_retention_days",
    "run_log_max_mb",
    "ping_body_max_kb",
    "timezone",
    "default_locale",
    "traffic_capture",
    "traffic_exclude_prefixes",
    "traffic_asset_extensions",
    "traffic_path_locales",
    "traffic_ip",
    "geoip_database",
    "traffic_trust_forwarded_for",
    "trusted_proxies",
    "outbound_deny",
    "traffic_buffer_mb",
    "traffic_alerts",
    "traffic_client_rate_per_minute",
    "smtp_url",
    "mail_from",
    "mail_outbox_dir",
    "public_url",
    "oidc_issuer",
    "oidc_client_id",
    "oidc_client_secret",
    "oidc_role_claim",
    "oidc_admin_groups",
    "oidc_viewer_groups",
    "oidc_default_role",
    "oidc_token_max_days",
    "oidc_name",
    "oidc_label",
    "oidc_clock_skew_seconds",
    "password_login",
    "auth_header",
    "auth_groups_header",
    "auth_header_proxies",
    "auth_header_default_role",
    "auth_header_admin_groups",
    "auth_header_viewer_groups",
    "require_totp_for_admins",
];

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("configuration file {0} does not exist")]
    MissingFile(PathBuf),
    #[error("invalid configuration: {0}")]
    Invalid(#[from] Box<figment::Error>),
    #[error("invalid configuration: session_hours must be between 1 and 8760, not {0}")]
    SessionHours(u32),
    #[error("invalid configuration: timezone '{0}' is not an IANA zone name such as Europe/Berlin")]
    Timezone(String),
    #[error("invalid configuration: default_locale '{0}' is not a language Bulwark speaks ({1})")]
    Locale(String, String),
    #[error("invalid configuration: {0} must be {1}")]
    Range(&'static str, &'static str),
    #[error("invalid configuration: {0} was replaced; set {1}")]
    Replaced(&'static str, &'static str),
    #[error("invalid configuration: outbound_deny: {0}")]
    OutboundDeny(String),
    #[error("invalid configuration: trusted_proxies: {0}")]
    TrustedProxies(String),
    #[error("invalid configuration: {0}")]
    SignIn(String),
    #[error("invalid configuration: {0}")]
    Mail(#[from] crate::mail::MailError),
    #[error("invalid configuration: node_labels: {0}")]
    NodeLabels(#[from] app::domain::labels::LabelError),
    #[error("invalid configuration: geoip_database: {0}")]
    Geoip(#[from] crate::traffic::geo::GeoError),
    #[error("invalid configuration: {0}")]
    TrafficAlerts(#[from] app::domain::traffic_alerts::BadRule),
}

/// `node_labels` as a TOML table or, from the environment, as `role=db,dc=sh`.
fn labels_table_or_text<'de, D>(
    deserializer: D,
) -> Result<std::collections::BTreeMap<String, String>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Written {
        Table(std::collections::BTreeMap<String, String>),
        Text(String),
    }
    match Written::deserialize(deserializer)? {
        Written::Table(table) => Ok(table),
        Written::Text(text) => app::domain::labels::Labels::parse(&text)
            .map(|labels| {
                labels
                    .pairs()
                    .map(|(n, v)| (n.to_string(), v.to_string()))
                    .collect()
            })
            .map_err(serde::de::Error::custom),
    }
}

impl Config {
    /// The secret key: read, or created on a fresh installation. `serve` then checks it opens
    /// what is stored ([`app::services::sealed::check_key`]).
    pub fn secret_key(&self) -> anyhow::Result<app::services::secrets::SecretKey> {
        let (key, created) =
            app::services::secrets::SecretKey::read_or_create(&self.secret_key_file)?;
        if created {
            tracing::info!(
                path = %self.secret_key_file.display(),
                "created the secret key: back it up, and give every instance the same file"
            );
        }
        Ok(key)
    }

    /// The engine's settings from this configuration.
    /// How mail is sent: `mail_from`, `smtp_url`, links to `public_url`, the outbox directory.
    pub fn mail_settings(&self) -> Result<crate::mail::MailSettings, crate::mail::MailError> {
        crate::mail::MailSettings::new(
            &self.mail_from,
            self.smtp_url.as_deref(),
            self.public_url(),
            self.mail_outbox_dir.clone(),
        )
    }

    pub fn engine_config(&self) -> crate::engine::EngineConfig {
        let mut engine = crate::engine::EngineConfig::new(
            self.node_id
                .clone()
                .unwrap_or_else(crate::engine::default_node_id),
        );
        engine.lease = std::time::Duration::from_secs(self.lease_seconds);
        engine.grace = std::time::Duration::from_secs(self.grace_seconds);
        engine.concurrency = self.concurrency;
        engine.retention.run_days = self.run_retention_days;
        engine.run_log_max_bytes = u64::from(self.run_log_max_mb) << 20;
        engine.allow_commands = self.allow_commands;
        engine.labels = self.labels();
        engine.node_wait_alert =
            std::time::Duration::from_secs(self.waiting_for_node_alert_seconds);
        engine.default_locale = self.locale();
        engine.outbound_deny = self.outbound_deny();
        engine.traffic_alerts = self.traffic_alerts;
        engine
    }

    /// Where outbound requests may not go. [`Config::load`] refuses a list that does not
    /// parse, so a `Config` built by hand with a bad entry falls back to the default list.
    pub fn outbound_deny(&self) -> crate::outbound::Deny {
        app::domain::client_addr::Networks::parse(&self.outbound_deny)
            .map(crate::outbound::Deny::new)
            .unwrap_or_else(|_| crate::outbound::Deny::standard())
    }

    /// This instance's labels. [`Config::load`] refuses ones that do not parse, so these are
    /// empty only for a `Config` built by hand with a bad label.
    pub fn labels(&self) -> app::domain::labels::Labels {
        app::domain::labels::Labels::from_pairs(self.node_labels.clone()).unwrap_or_default()
    }

    /// The configured language. [`Config::load`] refuses one without a catalogue, so this
    /// falls back to English only for a `Config` built by hand.
    pub fn locale(&self) -> app::i18n::Locale {
        app::i18n::Locale::parse(&self.default_locale).unwrap_or_default()
    }

    /// The configured zone. [`Config::load`] refuses a zone that does not parse, so this falls
    /// back to UTC only for a `Config` built by hand with a bad name.
    pub fn zone(&self) -> chrono_tz::Tz {
        app::domain::cron::parse_timezone(&self.timezone).unwrap_or(chrono_tz::Tz::UTC)
    }

    /// The console's address for links in mails.
    pub fn public_url(&self) -> String {
        self.public_url
            .clone()
            .unwrap_or_else(|| format!("http://{}", self.addr))
    }

    /// The host the console's own pages are counted under (that of [`Self::public_url`]).
    pub fn console_host(&self) -> String {
        app::domain::sites::console_host(&self.public_url())
    }

    /// The proxies whose `X-Forwarded-For` is believed. [`Config::load`] refuses a list that
    /// does not parse, so this is empty only for a `Config` built by hand with a bad entry.
    pub fn trusted_proxies(&self) -> app::domain::client_addr::TrustedProxies {
        app::domain::client_addr::TrustedProxies::parse(&self.trusted_proxies).unwrap_or_default()
    }

    /// The traffic pipeline's settings from this configuration.
    pub fn traffic_settings(&self) -> TrafficSettings {
        TrafficSettings {
            rules: Rules::new(
                &self.traffic_exclude_prefixes,
                &self.traffic_asset_extensions,
            ),
            path_locales: self.traffic_path_locales.clone(),
            trusted_proxies: self.trusted_proxies(),
            buffer_bytes: self.traffic_buffer_mb.saturating_mul(1 << 20),
            client_rate_per_minute: std::num::NonZeroU32::new(self.traffic_client_rate_per_minute),
            console_host: self.console_host(),
        }
    }

    /// Reads `file` (which must exist when given explicitly) or `./bulwark.toml` if present,
    /// then the environment.
    pub fn load(file: Option<&Path>) -> Result<Config, ConfigError> {
        let mut figment = Figment::from(Serialized::defaults(Config::default()));
        match file {
            Some(path) if !path.exists() => return Err(ConfigError::MissingFile(path.into())),
            Some(path) => figment = figment.merge(Toml::file_exact(path)),
            None if Path::new("bulwark.toml").exists() => {
                figment = figment.merge(Toml::file_exact("bulwark.toml"));
            }
            None => {}
        }
        let config: Config = figment
            .merge(Env::prefixed("BULWARK_").only(ENV_KEYS))
            .merge(Env::raw().only(&["DATABASE_URL"]))
            .extract()
            .map_err(Box::new)?;
        if !(1..=8760).contains(&config.session_hours) {
            return Err(ConfigError::SessionHours(config.session_hours));
        }
        if !(1..=8760).contains(&config.session_idle_hours) {
            return Err(ConfigError::Range(
                "session_idle_hours",
                "between 1 and 8760",
            ));
        }
        if config.lease_seconds < 3 {
            return Err(ConfigError::Range("lease_seconds", "at least 3"));
        }
        if !(1..=3650).contains(&config.run_retention_days) {
            return Err(ConfigError::Range(
                "run_retention_days",
                "between 1 and 3650",
            ));
        }
        if !(1..=10_240).contains(&config.ping_body_max_kb) {
            return Err(ConfigError::Range(
                "ping_body_max_kb",
                "between 1 and 10240",
            ));
        }
        if !(1..=1024).contains(&config.run_log_max_mb) {
            return Err(ConfigError::Range("run_log_max_mb", "between 1 and 1024"));
        }
        if config.concurrency == 0 {
            return Err(ConfigError::Range("concurrency", "at least 1"));
        }
        if config.traffic_trust_forwarded_for.is_some() {
            return Err(ConfigError::Replaced(
                "traffic_trust_forwarded_for",
                "trusted_proxies = [\"10.0.0.0/8\"] (the addresses of your proxies)",
            ));
        }
        if let Err(e) = app::domain::client_addr::TrustedProxies::parse(&config.trusted_proxies) {
            return Err(ConfigError::TrustedProxies(e));
        }
        if let Err(e) = app::domain::client_addr::Networks::parse(&config.outbound_deny) {
            return Err(ConfigError::OutboundDeny(e));
        }
        config.traffic_alerts.check()?;
        if config.traffic_buffer_mb == 0 {
            return Err(ConfigError::Range("traffic_buffer_mb", "at least 1"));
        }
        if app::domain::cron::parse_timezone(&config.timezone).is_err() {
            return Err(ConfigError::Timezone(config.timezone));
        }
        if app::i18n::Locale::parse(&config.default_locale).is_none() {
            return Err(ConfigError::Locale(
                config.default_locale,
                app::i18n::Locale::tags(),
            ));
        }
        crate::mail::MailSettings::validate(&config.mail_from, config.smtp_url.as_deref())?;
        config.check_sign_in().map_err(ConfigError::SignIn)?;
        app::domain::labels::Labels::from_pairs(config.node_labels.clone())?;
        if let Some(path) = &config.geoip_database {
            crate::traffic::geo::use_database(path)?;
        }
        Ok(config)
    }
}

#[cfg(test)]
// figment's `Jail` closures must return figment's own (large) error type.
#[allow(clippy::result_large_err)]
mod tests {
    use super::*;
    use figment::Jail;

    #[test]
    fn defaults_without_file_or_env() {
        Jail::expect_with(|_| {
            assert_eq!(
                Config::load(None).map_err(|e| e.to_string())?,
                Config::default()
            );
            Ok(())
        });
    }

    /// The production example in docs/deploy loads as it is and says what its comments say.
    #[test]
    fn the_deploy_example_is_a_valid_configuration() {
        Jail::expect_with(|_| {
            let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/deploy/bulwark.toml");
            let config = Config::load(Some(&example)).map_err(|e| e.to_string())?;
            assert_eq!(config.addr.to_string(), "127.0.0.1:3000");
            assert!(config.secure_cookies);
            assert_eq!(config.trusted_proxies, ["127.0.0.1/32", "::1/128"]);
            assert_eq!(config.log_format, LogFormat::Json);
            assert!(
                config
                    .database_url
                    .starts_with("sqlite:///var/lib/bulwark/")
            );
            assert!(config.secret_key_file.starts_with("/var/lib/bulwark"));
            assert_eq!(config.site_root, None, "the site built into the binary");
            Ok(())
        });
    }

    #[test]
    fn env_overrides_file_and_database_url_overrides_both() {
        Jail::expect_with(|jail| {
            jail.create_file(
                "bulwark.toml",
                "addr = \"127.0.0.1:4000\"\ndatabase_url = \"sqlite://file.db\"\n",
            )?;
            jail.set_env("BULWARK_ADDR", "127.0.0.1:5000");
            jail.set_env("BULWARK_TEST_POSTGRES_URL", "postgres://ignored");
            jail.set_env("DATABASE_URL", "postgres://db/x");
            let config = Config::load(None).map_err(|e| e.to_string())?;
            assert_eq!(config.addr.port(), 5000);
            assert_eq!(config.database_url, "postgres://db/x");
            Ok(())
        });
    }

    #[test]
    fn bad_mail_settings_name_their_key() {
        Jail::expect_with(|jail| {
            jail.set_env(
                "BULWARK_SMTP_URL",
                "smtp://ops:s3cret@mail.example.com:587?tls=maybe",
            );
            let message = Config::load(None).unwrap_err().to_string();
            assert!(message.contains("smtp_url"), "{message}");
            assert!(!message.contains("s3cret"), "{message}");
            Ok(())
        });
        Jail::expect_with(|jail| {
            jail.set_env("BULWARK_MAIL_FROM", "not an address");
            let message = Config::load(None).unwrap_err().to_string();
            assert!(message.contains("mail_from"), "{message}");
            Ok(())
        });
    }

    #[test]
    fn bad_values_name_their_key() {
        Jail::expect_with(|jail| {
            jail.set_env("BULWARK_ADDR", "not-an-address");
            let message = Config::load(None).unwrap_err().to_string();
            assert!(message.contains("addr"), "{message}");
            Ok(())
        });
        Jail::expect_with(|jail| {
            jail.create_file("bulwark.toml", "adr = \"127.0.0.1:1\"\n")?;
            let message = Config::load(None).unwrap_err().to_string();
            assert!(message.contains("adr"), "{message}");
            Ok(())
        });
        Jail::expect_with(|jail| {
            jail.set_env("BULWARK_SESSION_HOURS", "0");
            let message = Config::load(None).unwrap_err().to_string();
            assert!(message.contains("session_hours"), "{message}");
            Ok(())
        });
        Jail::expect_with(|jail| {
            jail.set_env("BULWARK_DEFAULT_LOCALE", "fr");
            let message = Config::load(None).unwrap_err().to_string();
            assert!(
                message.contains("default_locale 'fr'") && message.contains("zh-CN"),
                "{message}"
            );
            jail.set_env("BULWARK_DEFAULT_LOCALE", "zh-CN");
            assert_eq!(Config::load(None).unwrap().locale().tag(), "zh-CN");
            Ok(())
        });
    }

    #[test]
    fn node_labels_come_as_a_table_or_as_text() {
        Jail::expect_with(|jail| {
            jail.create_file(
                "bulwark.toml",
                "node_labels = { role = \"db\", dc = \"sh\" }\n",
            )?;
            let config = Config::load(None).map_err(|e| e.to_string())?;
            assert_eq!(config.labels().to_string(), "dc=sh,role=db");
            jail.set_env("BULWARK_NODE_LABELS", "role=web");
            let config = Config::load(None).map_err(|e| e.to_string())?;
            assert_eq!(config.labels().to_string(), "role=web");
            jail.set_env("BULWARK_NODE_LABELS", "Role=web");
            let message = Config::load(None).unwrap_err().to_string();
            assert!(
                message.to_lowercase().contains("node_labels") && message.contains("`Role`"),
                "{message}"
            );
            Ok(())
        });
        Jail::expect_with(|jail| {
            jail.create_file("bulwark.toml", "node_labels = { role = \"a b\" }\n")?;
            let message = Config::load(None).unwrap_err().to_string();
            assert!(message.contains("node_labels"), "{message}");
            Ok(())
        });
    }

    #[test]
    fn traffic_alerts_are_a_table_with_defaults_and_checked() {
        use app::domain::traffic_alerts::Rules;
        Jail::expect_with(|jail| {
            jail.create_file("bulwark.toml", "[traffic_alerts]\nviews_factor = 4.0\n")?;
            let config = Config::load(None).map_err(|e| e.to_string())?;
            let rules = Rules {
                views_factor: 4.0,
                ..Rules::default()
            };
            assert_eq!(config.traffic_alerts, rules);
            jail.create_file("bulwark.toml", "[traffic_alerts]\nbot_share = 90\n")?;
            let message = Config::load(None).unwrap_err().to_string();
            assert!(message.contains("bot_share is a share from 0"), "{message}");
            jail.create_file("bulwark.toml", "[traffic_alerts]\nviews = 4\n")?;
            let message = Config::load(None).unwrap_err().to_string();
            assert!(message.contains("views"), "{message}");
            jail.create_file("bulwark.toml", "")?;
            jail.set_env(
                "BULWARK_TRAFFIC_ALERTS",
                "{views_factor=5,not_found_per_hour=0}",
            );
            let config = Config::load(None).map_err(|e| e.to_string())?;
            assert_eq!(config.traffic_alerts.views_factor, 5.0);
            assert_eq!(config.traffic_alerts.not_found_per_hour, 0);
            assert_eq!(config.traffic_alerts.bot_share, 0.9);
            Ok(())
        });
    }

    #[test]
    fn an_explicit_missing_file_is_an_error() {
        let err = Config::load(Some(Path::new("/nonexistent/bulwark.toml"))).unwrap_err();
        assert!(matches!(err, ConfigError::MissingFile(_)));
    }
}
