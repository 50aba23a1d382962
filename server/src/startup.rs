//! One way to start Bulwark. `bulwark serve` and the integration tests both build the
//! application here ([`Application::build`], then [`Application::run_until_stopped`]), so the
//! tests run what production runs: the same migrations, first administrator, system jobs,
//! clock, web server, engine, mail sender and node heartbeat, stopped the same way.

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;
use app::services::users::{self, FirstAdmin};
use sea_orm::DatabaseConnection;

use crate::cluster::{self, NodeIdentity};
use crate::config::Config;
use crate::duties::Duties;
use crate::engine::{Engine, EngineConfig};
use crate::shutdown::Shutdown;
use crate::traffic::{Recorder, store};
use crate::{db, mail, web};

/// A built application: connected, migrated, listening, not yet serving.
pub struct Application {
    config: Config,
    db: DatabaseConnection,
    listener: tokio::net::TcpListener,
    /// The `metrics_addr` listener, when one is configured.
    metrics_listener: Option<tokio::net::TcpListener>,
    addr: SocketAddr,
    recorder: Arc<Recorder>,
    me: NodeIdentity,
    engine: Option<EngineConfig>,
    /// The engine's health, made before the engine so `/readyz` and tests can read it.
    engine_health: Arc<crate::engine::supervise::EngineHealth>,
    mail_sender: bool,
    secret_key: app::services::secrets::SecretKey,
}

impl Application {
    /// Connects to the database (migrating it when `auto_migrate` is on), makes sure the
    /// traffic rollups are in the configured zone, the first administrator and the system jobs
    /// exist, sets the clock by the database's, and binds `addr` (port 0: any free port).
    pub async fn build(config: Config) -> anyhow::Result<Application> {
        let (db, pooler) = db::connect_via(&config.database_url, config.database_pooler).await?;
        if config.auto_migrate {
            let applied = db::migrate(&db).await?;
            if applied > 0 {
                tracing::info!(applied, "migrations applied");
            }
        }
        let described = store::describe_old_rows(&db, &config.console_host())
            .await
            .context("could not describe the traffic rows written before sites")?;
        if described > 0 {
            tracing::info!(rows = described, site = %config.console_host(), "traffic rows from before sites placed under the console's host and described");
        }
        ensure_rollups(&db, &config).await?;
        let first_admin = users::ensure_first_admin(&db, config.admin_password.as_deref())
            .await
            .context("could not create the first administrator (BULWARK_ADMIN_PASSWORD)")?;
        // Said at once: a generated password is shown only this once, even if the start fails
        // later (a port already taken).
        if let Some(admin) = &first_admin {
            announce_first_admin(admin);
        }
        let created = crate::system_jobs::ensure(&db, config.zone()).await?;
        if !created.is_empty() {
            tracing::info!(jobs = ?created, "system jobs created");
        }
        set_clock(&db).await;
        let secret_key = config.secret_key()?;
        app::services::sealed::check_key(&db, &secret_key)
            .await
            .with_context(|| format!("secret_key_file {}", config.secret_key_file.display()))?;
        let moved =
            app::services::secrets::move_literal_credentials(&db, &secret_key, crate::clock::now())
                .await
                .context("could not move the jobs' literal credentials into secrets")?;
        for (job, secret) in &moved {
            tracing::info!(%job, %secret, "a credential typed into the job is now a secret");
        }
        let first =
            app::services::jobs::record_first_revisions(&db, &secret_key, crate::clock::now())
                .await
                .context("could not record the jobs' first revisions")?;
        if first > 0 {
            tracing::info!(jobs = first, "jobs given their first revision");
        }
        let hashed = app::services::hooks::hash_stored_ids(&db)
            .await
            .context("could not hash the stored trigger URL ids")?;
        if hashed > 0 {
            tracing::info!(hashed, "trigger URL ids are now kept only as their hash");
        }
        let held = app::services::held::hold_misplaced(&db, crate::clock::now())
            .await
            .context("could not check where the jobs use their parameters")?;
        for job in &held {
            let fields: Vec<&str> = job.misplaced.iter().map(|m| m.field.as_str()).collect();
            tracing::warn!(job = %job.name, ?fields, "job held: it uses a parameter where it is no longer allowed; edit it, or `bulwark jobs check --confirm NAME`");
        }

        let listener = tokio::net::TcpListener::bind(config.addr)
            .await
            .with_context(|| format!("cannot listen on {} (BULWARK_ADDR)", config.addr))?;
        let addr = listener
            .local_addr()
            .context("cannot read the address the web server listens on")?;
        let metrics_listener = match config.metrics_addr {
            None => None,
            Some(addr) => Some(
                tokio::net::TcpListener::bind(addr)
                    .await
                    .with_context(|| format!("cannot listen on metrics_addr {addr}"))?,
            ),
        };
        let mut engine_config = config.engine_config();
        engine_config.secret_key = Some(secret_key.clone());
        engine_config.listen = pooler == db::Pooler::None;
        let me = NodeIdentity {
            node_id: engine_config.node_id.clone(),
            addr: addr.to_string(),
            labels: engine_config.labels.clone(),
            commands: config.allow_commands,
            web: config.web,
            engine: config.engine,
            pooler,
        };
        let recorder = Arc::new(Recorder::new(config.traffic_settings()));
        crate::traffic::load_sites(&db, &recorder).await;
        Ok(Application {
            recorder,
            engine: config.engine.then_some(engine_config),
            engine_health: Default::default(),
            secret_key,
            mail_sender: true,
            config,
            db,
            listener,
            metrics_listener,
            addr,
            me,
        })
    }

    /// Where the web server listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn db(&self) -> &DatabaseConnection {
        &self.db
    }

    /// This process's traffic buffer.
    pub fn recorder(&self) -> Arc<Recorder> {
        self.recorder.clone()
    }

    /// Whether the engine works (and, for fault tests, a way to kill one of its tasks).
    pub fn engine_health(&self) -> Arc<crate::engine::supervise::EngineHealth> {
        self.engine_health.clone()
    }

    /// The engine's settings, for a caller that tunes them before the start (tests poll
    /// faster); `None` when the engine is off.
    pub fn engine_config_mut(&mut self) -> Option<&mut EngineConfig> {
        self.engine.as_mut()
    }

    /// Whether this process delivers the mail and channel outboxes (on by default). Tests that
    /// deliver themselves, to see exactly what one delivery round does, turn it off.
    pub fn with_mail_sender(mut self, on: bool) -> Self {
        self.mail_sender = on;
        self
    }

    /// Serves until `shutdown` fires: the web app, the engine (unless `engine = false`), the
    /// mail sender and the node's heartbeat. Then the web server drains, the engine gives
    /// running attempts their grace period and hands back the rest, the traffic buffer is
    /// written, and the node is marked stopped.
    pub async fn run_until_stopped(self, shutdown: Shutdown) -> anyhow::Result<()> {
        let site = web::assets::Site::choose(self.config.site_root.as_deref());
        describe(&site);
        let background = self.start_background(&shutdown).await?;
        let Application {
            config,
            db,
            listener,
            metrics_listener,
            recorder,
            me,
            engine,
            engine_health,
            secret_key,
            ..
        } = self;
        crate::metrics::set_node(&me.node_id);
        let state = web::state(&config, db.clone(), secret_key, &site);
        let metrics = metrics_listener.map(|listener| {
            tracing::info!(addr = ?config.metrics_addr, "metrics served without a token on metrics_addr");
            let router = crate::web::metrics::router(crate::web::metrics::Scrape {
                app: state.clone(),
                recorder: recorder.clone(),
                open: true,
            });
            tokio::spawn(web::serve(listener, router, shutdown.clone().wait()))
        });
        let traffic = web::Traffic {
            recorder: recorder.clone(),
            capture_pages: config.traffic_capture,
        };
        let health = engine.is_some().then_some(engine_health);
        // The callback's base: `public_url`, else the address bound (port 0 made real).
        let public_url = config
            .public_url
            .clone()
            .unwrap_or_else(|| format!("http://{}", me.addr));
        let oidc = crate::auth::oidc::Oidc::new(&config, public_url)
            .context("cannot set up the OpenID providers")?;
        let router = if config.web {
            web::router(state, traffic, site, health, oidc)
        } else {
            web::jobs_only_router(state, recorder.clone(), health)
        };
        tracing::info!(addr = %me.addr, database = %db::redacted(&config.database_url), "Bulwark is serving");
        let served = web::serve(listener, router, shutdown.wait()).await;
        if let Some(metrics) = metrics
            && let Ok(Err(e)) = metrics.await
        {
            tracing::error!(error = %e, "the metrics listener stopped with an error");
        }
        let duties = background.wait().await;
        // The web server has drained: no hit can arrive after this flush.
        flush_traffic(&db, &recorder, config.traffic_ip).await;
        if let Err(e) = cluster::mark_stopped(&db, &me.node_id).await {
            tracing::warn!(error = %e, "could not mark this node stopped; it will show as lost");
        }
        duties.stop().await;
        served.context("the web server stopped with an error")
    }

    /// Starts what runs beside the web server.
    async fn start_background(&self, shutdown: &Shutdown) -> anyhow::Result<Background> {
        let duties = Duties::start()
            .await
            .context("cannot start the node's scheduler of duties")?;
        let db = &self.db;
        let mut node_duties = cluster::start(
            &duties,
            db.clone(),
            self.me.clone(),
            self.recorder.clone(),
            self.config.traffic_ip,
        )
        .await;
        node_duties.extend(crate::upkeep::start(&duties, db.clone()).await);
        let sites = tokio::spawn(crate::traffic::keep_sites_current(
            db.clone(),
            self.recorder.clone(),
            shutdown.clone().wait(),
        ));
        let engine = self.engine.clone().map(|engine_config| {
            let engine = Engine::new(db.clone(), engine_config)
                .with_duties(duties.clone())
                .with_health(self.engine_health.clone());
            tokio::spawn(engine.run(shutdown.clone().wait()))
        });
        let (mail, chat) = if self.mail_sender {
            let (mail, chat) = self.senders()?;
            (
                Some(tokio::spawn(mail.run(shutdown.clone().wait()))),
                Some(tokio::spawn(chat.run(shutdown.clone().wait()))),
            )
        } else {
            (None, None)
        };
        Ok(Background {
            duties,
            node_duties,
            sites,
            engine,
            mail,
            chat,
        })
    }

    /// The mail and channel outboxes' senders.
    fn senders(
        &self,
    ) -> anyhow::Result<(mail::sender::Sender, crate::channels::sender::ChannelSender)> {
        let config = &self.config;
        let mailer = mail::sender::Sender {
            db: self.db.clone(),
            settings: config.mail_settings()?,
            name: self.me.node_id.clone(),
        };
        match &mailer.settings.server {
            Some(server) => tracing::info!(%server, "mail goes through SMTP"),
            None => tracing::info!(
                dir = %config.mail_outbox_dir.display(),
                "no smtp_url: mail is kept in the outbox and written as .eml files"
            ),
        }
        let chat = crate::channels::sender::ChannelSender::new(
            self.db.clone(),
            self.secret_key.clone(),
            self.me.node_id.clone(),
            config.public_url(),
            config.locale(),
            config.outbound_deny(),
        );
        Ok((mailer, chat))
    }
}

/// What runs beside the web server: the node's duties, the sites reloader, the engine and the
/// two outbox senders. Started before the server serves, awaited once it has drained.
struct Background {
    duties: Duties,
    node_duties: Vec<uuid::Uuid>,
    sites: tokio::task::JoinHandle<()>,
    engine: Option<tokio::task::JoinHandle<()>>,
    mail: Option<tokio::task::JoinHandle<()>>,
    chat: Option<tokio::task::JoinHandle<()>>,
}

impl Background {
    /// Waits for each task to end (the shutdown has told them to), logging any that failed;
    /// returns the scheduler of duties, stopped last.
    async fn wait(self) -> Duties {
        let failed = |what: &str, e: tokio::task::JoinError| {
            tracing::error!(error = %e, "the {what} failed");
        };
        if let Some(engine) = self.engine
            && let Err(e) = engine.await
        {
            failed("engine task", e);
        }
        for id in &self.node_duties {
            self.duties.remove(id).await;
        }
        if let Err(e) = self.sites.await {
            failed("traffic sites reloader", e);
        }
        if let Some(mail) = self.mail
            && let Err(e) = mail.await
        {
            failed("mail sender", e);
        }
        if let Some(chat) = self.chat
            && let Err(e) = chat.await
        {
            failed("channel sender", e);
        }
        self.duties
    }
}

/// Says where the site's files come from, or that they are missing.
fn describe(site: &web::assets::Site) {
    match site.describe() {
        Some(from) => tracing::info!(site = %from, "the site's files"),
        None => tracing::warn!(
            "the built site is missing: pages will not become interactive (run `make site`, \
             or build with `make build`, which puts it in the binary)"
        ),
    }
}

/// Writes what is left of the traffic buffer.
async fn flush_traffic(db: &DatabaseConnection, recorder: &Recorder, privacy: store::IpPrivacy) {
    match store::flush(db, &recorder.buffer, privacy).await {
        Ok(report) => tracing::info!(
            rows = report.rows,
            hits = report.hits,
            "traffic flushed on shutdown"
        ),
        Err(e) => {
            tracing::error!(error = %e, "the traffic flush on shutdown failed: those hits are lost")
        }
    }
}

/// Makes sure the traffic rollups are in the configured zone (rebuilding them if not).
pub async fn ensure_rollups(db: &DatabaseConnection, config: &Config) -> anyhow::Result<()> {
    let started = std::time::Instant::now();
    if app::services::traffic::rebuild::ensure(db, config.zone())
        .await
        .context("could not rebuild the traffic rollups")?
    {
        tracing::info!(
            zone = %config.timezone,
            millis = started.elapsed().as_millis() as u64,
            "traffic rollups rebuilt"
        );
    }
    Ok(())
}

/// How to sign in the first time, on standard output (`make run` shows it).
fn announce_first_admin(admin: &FirstAdmin) {
    match &admin.generated_password {
        Some(password) => println!(
            "\n  First start: created the administrator '{}'.\n  Password (shown only this once): {password}\n  Add more accounts on the Settings page or with `bulwark user add`.\n",
            admin.username
        ),
        None => println!(
            "\n  First start: created the administrator '{}' with the password from BULWARK_ADMIN_PASSWORD.\n",
            admin.username
        ),
    }
}

/// Keeps time by the database's clock before anything compares a timestamp.
pub(crate) async fn set_clock(db: &DatabaseConnection) {
    match cluster::clock_skew_ms(db).await {
        Ok(skew) => {
            crate::clock::set_offset_ms(skew);
            if skew.abs() > app::domain::node::SKEW_WARNING_MS {
                tracing::warn!(
                    skew_ms = skew,
                    "this machine's clock differs from the database's; Bulwark keeps time by the database"
                );
            }
        }
        Err(e) => {
            tracing::warn!(error = %e, "could not read the database's clock; using this machine's")
        }
    }
}
