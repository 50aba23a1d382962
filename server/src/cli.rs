//! The `bulwark` command line. Every command reads the same configuration as `serve`.
//!
//! Exit codes: 0 success, 1 a failure explained on stderr, 2 a usage error (from clap).

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use app::domain::account::{NewPassword, Role, Username};
use app::services::users::{self, CreateUserError};
use clap::{Parser, Subcommand};

use crate::config::{Config, LogFormat};
use crate::traffic::{Recorder, store};
use crate::{cluster, db, shutdown, telemetry, web};

#[derive(Debug, Parser)]
#[command(
    name = "bulwark",
    version,
    about = "Scheduled jobs that must not silently fail"
)]
pub struct Cli {
    /// Configuration file (default: ./bulwark.toml when it exists).
    #[arg(long, global = true, env = "BULWARK_CONFIG")]
    config: Option<PathBuf>,
    /// Log format, overriding the configuration's `log_format`.
    #[arg(long, global = true, value_enum)]
    log_format: Option<LogFormat>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Start the web app.
    Serve,
    /// Apply pending migrations and exit.
    Migrate,
    /// Manage accounts.
    #[command(subcommand)]
    User(UserCommand),
    /// Retry policies.
    #[command(subcommand)]
    Policy(PolicyCommand),
    /// Job definitions.
    #[command(subcommand)]
    Jobs(JobsCommand),
    /// Runs and their attempts.
    #[command(subcommand)]
    Runs(RunsCommand),
    /// Benchmarks that print numbers (they use throwaway databases).
    #[command(subcommand)]
    Bench(BenchCommand),
    /// Front-end traffic.
    #[command(subcommand)]
    Traffic(TrafficCommand),
    /// The daily health digest.
    #[command(subcommand)]
    Digest(DigestCommand),
}

#[derive(Debug, Subcommand)]
enum DigestCommand {
    /// Send the digest of the last 24 hours now (or print it with --dry-run).
    Send {
        /// Send to this address instead of the digest recipients (repeatable).
        #[arg(long)]
        to: Vec<String>,
        /// Print the mail instead of sending it.
        #[arg(long)]
        dry_run: bool,
    },
}

#[derive(Debug, Subcommand)]
enum TrafficCommand {
    /// Classify User-Agents read from stdin, one per line: person or bot, and which bot.
    Classify {
        /// One JSON object per line: {"is_bot": bool, "source": "google" | … | "other" | null}.
        #[arg(long)]
        json: bool,
    },
    /// Count the page views in an access log, by the same rules as the live server.
    Import {
        file: PathBuf,
        /// Apache/nginx "combined" (common-format lines are read too).
        #[arg(long, default_value = "combined", value_parser = ["combined"])]
        format: String,
        /// Print the summary as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Make every running server write its buffered hits now, and report the rows.
    Flush,
    /// Write realistic synthetic traffic, marked as generated (or remove it).
    Generate {
        #[arg(long, default_value_t = 14, value_parser = clap::value_parser!(u32).range(1..=90))]
        days: u32,
        #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
        per_day: u64,
        /// Only when there is no traffic at all yet (what `make run` uses).
        #[arg(long)]
        if_empty: bool,
        /// Delete the generated rows instead.
        #[arg(long, conflicts_with_all = ["days", "per_day", "if_empty"])]
        remove: bool,
    },
    /// The dashboard's figures for a range, computed by the same queries.
    Stats {
        /// today, yesterday, 7d, 30d or 90d (default 7d); or --from and --to.
        #[arg(long, conflicts_with_all = ["from", "to"])]
        range: Option<String>,
        /// First day, YYYY-MM-DD, in the configured time zone.
        #[arg(long, requires = "to")]
        from: Option<String>,
        /// Last day, inclusive.
        #[arg(long, requires = "from")]
        to: Option<String>,
        /// all, human or bot.
        #[arg(long = "type", default_value = "all")]
        visitors: String,
        /// Only this bot source (google, bing, …, other).
        #[arg(long)]
        source: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Delete hits older than the retention period, in batches of 1000.
    Clean {
        #[arg(long, default_value_t = crate::engine::builtin::DEFAULT_RETENTION_DAYS,
              value_parser = clap::value_parser!(u32).range(1..=3650))]
        days: u32,
    },
}

#[derive(Debug, Subcommand)]
enum BenchCommand {
    /// Run lateness and no-op throughput of the engine on SQLite (and PostgreSQL).
    Engine(crate::commands::bench::BenchArgs),
    /// Failed-queue paging with many dead runs on SQLite (and PostgreSQL).
    Queue(crate::commands::bench::QueueBenchArgs),
    /// Traffic recording cost per request and flush time for many hits (SQLite, PostgreSQL).
    Traffic(crate::commands::bench_traffic::TrafficBenchArgs),
    /// The Traffic page's queries over many days of generated traffic (SQLite, PostgreSQL).
    Dashboard(crate::commands::bench_dashboard::DashboardBenchArgs),
}

#[derive(Debug, Subcommand)]
enum JobsCommand {
    /// Create or update jobs from a TOML file; all or nothing.
    Apply { file: PathBuf },
    /// List jobs with their next fire time.
    List,
    /// Queue a run of a job now.
    Run { name: String },
    /// Add the bundled demo jobs to a database that has no job yet.
    SeedDemo,
}

#[derive(Debug, Subcommand)]
enum RunsCommand {
    /// List runs, newest first, with their attempts.
    List {
        #[arg(long)]
        job: Option<String>,
        #[arg(long, value_parser = ["pending", "running", "retry_wait", "succeeded", "dead", "skipped", "cancelled"])]
        status: Option<String>,
        /// At most this many runs.
        #[arg(long, default_value_t = 50)]
        limit: u64,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
enum PolicyCommand {
    /// Print the retry schedule a policy produces, with its warnings.
    Preview(crate::commands::policy::PreviewArgs),
}

#[derive(Debug, Subcommand)]
enum UserCommand {
    /// Add an account; the password is read from standard input.
    Add {
        #[arg(long)]
        username: String,
        #[arg(long, value_parser = ["admin", "viewer"])]
        role: String,
    },
    /// List accounts.
    List,
}

pub fn run() -> ExitCode {
    let cli = Cli::parse();
    let config = match Config::load(cli.config.as_deref()) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    telemetry::init(cli.log_format.unwrap_or(config.log_format));

    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(dispatch(cli.command, config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn dispatch(command: Command, config: Config) -> anyhow::Result<()> {
    match command {
        Command::Serve => serve(config).await,
        Command::Migrate => {
            let db = db::connect(&config.database_url).await?;
            let applied = db::migrate(&db).await?;
            println!(
                "migrations: {applied} applied, database {} is up to date",
                db::redacted(&config.database_url)
            );
            Ok(())
        }
        Command::User(UserCommand::Add { username, role }) => {
            let username = Username::parse(&username)?;
            let role = Role::parse(&role)?;
            let password = NewPassword::parse(&read_password()?)?;
            let db = db::connect(&config.database_url).await?;
            match users::create(&db, &username, role, &password).await {
                Ok(user) => {
                    println!("added {} ({})", user.username, user.role);
                    Ok(())
                }
                Err(e @ CreateUserError::Taken(_)) => Err(e.into()),
                Err(e) => Err(anyhow::Error::new(e).context("could not add the user")),
            }
        }
        Command::Policy(PolicyCommand::Preview(args)) => crate::commands::policy::preview(&args),
        Command::Bench(BenchCommand::Engine(args)) => crate::commands::bench::engine(&args).await,
        Command::Traffic(TrafficCommand::Classify { json }) => {
            crate::commands::traffic::classify_stdin(json)
        }
        Command::Traffic(TrafficCommand::Import { file, json, .. }) => {
            let db = traffic_db(&config).await?;
            crate::commands::traffic::import(&db, &file, &config, json).await
        }
        Command::Traffic(TrafficCommand::Stats {
            range,
            from,
            to,
            visitors,
            source,
            json,
        }) => {
            let request = crate::commands::traffic::StatsRequest {
                range,
                from,
                to,
                visitors,
                source,
            };
            let db = traffic_db(&config).await?;
            crate::commands::traffic::stats(&db, &config, &request, json).await
        }
        Command::Traffic(TrafficCommand::Generate {
            days,
            per_day,
            if_empty,
            remove,
        }) => {
            let db = traffic_db(&config).await?;
            crate::commands::traffic::generate(&db, days, per_day, if_empty, remove).await
        }
        Command::Traffic(TrafficCommand::Flush) => {
            let db = traffic_db(&config).await?;
            crate::commands::traffic::flush(&db).await
        }
        Command::Traffic(TrafficCommand::Clean { days }) => {
            let db = traffic_db(&config).await?;
            crate::commands::traffic::clean(&db, days).await
        }
        Command::Digest(DigestCommand::Send { to, dry_run }) => {
            let db = db::connect(&config.database_url).await?;
            crate::commands::digest::send(&db, &config, &to, dry_run).await
        }
        Command::Bench(BenchCommand::Queue(args)) => crate::commands::bench::queue(&args).await,
        Command::Bench(BenchCommand::Dashboard(args)) => {
            crate::commands::bench_dashboard::dashboard(&args).await
        }
        Command::Bench(BenchCommand::Traffic(args)) => {
            crate::commands::bench_traffic::traffic(&args).await
        }
        Command::Jobs(command) => {
            let db = db::connect(&config.database_url).await?;
            match command {
                JobsCommand::Apply { file } => crate::commands::jobs::apply(&db, &file).await,
                JobsCommand::List => crate::commands::jobs::list(&db).await,
                JobsCommand::Run { name } => crate::commands::jobs::run(&db, &name).await,
                JobsCommand::SeedDemo => crate::commands::jobs::seed_demo(&db).await,
            }
        }
        Command::Runs(RunsCommand::List {
            job,
            status,
            limit,
            json,
        }) => {
            let db = db::connect(&config.database_url).await?;
            let filter = app::services::runs::RunFilter {
                job,
                status,
                since: None,
                limit,
            };
            crate::commands::runs::list(&db, filter, json).await
        }
        Command::User(UserCommand::List) => {
            let db = db::connect(&config.database_url).await?;
            for user in users::list(&db).await.context("could not list users")? {
                println!(
                    "{}\t{}\t{}",
                    user.username,
                    user.role,
                    user.created_at.to_rfc3339()
                );
            }
            Ok(())
        }
    }
}

/// One line from standard input, without its line ending. Prompts when a person is typing.
fn read_password() -> anyhow::Result<String> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        eprint!("Password (visible as you type; pipe it in to avoid that): ");
        std::io::stderr().flush().ok();
    }
    let mut line = String::new();
    stdin
        .lock()
        .read_line(&mut line)
        .context("could not read the password from standard input")?;
    Ok(line.trim_end_matches(['\n', '\r']).to_string())
}

/// The database, with the traffic rollups in the configured zone (rebuilt if they were not).
async fn traffic_db(config: &Config) -> anyhow::Result<sea_orm::DatabaseConnection> {
    let db = db::connect(&config.database_url).await?;
    ensure_rollups(&db, config).await?;
    Ok(db)
}

async fn ensure_rollups(db: &sea_orm::DatabaseConnection, config: &Config) -> anyhow::Result<()> {
    let zone = app::domain::cron::parse_timezone(&config.timezone)?;
    let started = std::time::Instant::now();
    if app::services::traffic_rollup::ensure(db, zone)
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

async fn serve(config: Config) -> anyhow::Result<()> {
    let db = db::connect(&config.database_url).await?;
    if config.auto_migrate {
        let applied = db::migrate(&db).await?;
        if applied > 0 {
            tracing::info!(applied, "migrations applied");
        }
    }
    ensure_rollups(&db, &config).await?;
    if let Some(admin) = users::ensure_first_admin(&db, config.admin_password.as_deref())
        .await
        .context("could not create the first administrator (BULWARK_ADMIN_PASSWORD)")?
    {
        announce_first_admin(&admin);
    }

    let listener = tokio::net::TcpListener::bind(config.addr)
        .await
        .with_context(|| format!("cannot listen on {} (BULWARK_ADDR)", config.addr))?;
    let site = config.site_root.join("pkg").join("bulwark.js");
    if !site.exists() {
        tracing::warn!(path = %site.display(), "the built site is missing: pages will not become interactive (run `make site`)");
    }
    tracing::info!(addr = %config.addr, database = %db::redacted(&config.database_url), "Bulwark is serving");
    println!("Bulwark is serving on http://{}", config.addr);
    let created = crate::commands::jobs::ensure_system_jobs(&db, &config.timezone).await?;
    if !created.is_empty() {
        tracing::info!(jobs = ?created, "system jobs created");
    }
    // Keep time by the database's clock before the engine compares any timestamp.
    match cluster::clock_skew_ms(&db).await {
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
    let engine_config = config.engine_config();
    let me = cluster::NodeIdentity {
        node_id: engine_config.node_id.clone(),
        addr: config.addr.to_string(),
    };
    let recorder = Arc::new(Recorder::new(config.traffic_settings()));
    let shutdown = shutdown::on_signal();
    let node = tokio::spawn(cluster::run_node(
        db.clone(),
        me.clone(),
        recorder.clone(),
        config.traffic_ip,
        shutdown.clone().wait(),
    ));
    let engine = config.engine.then(|| {
        let engine = crate::engine::Engine::new(db.clone(), engine_config);
        tokio::spawn(engine.run(shutdown.clone().wait()))
    });
    let mailer = crate::mail::sender::Sender {
        db: db.clone(),
        settings: crate::mail::MailSettings::from_config(&config)?,
        name: me.node_id.clone(),
    };
    match &mailer.settings.server {
        Some(server) => tracing::info!(%server, "mail goes through SMTP"),
        None => tracing::info!(
            dir = %config.mail_outbox_dir.display(),
            "no smtp_url: mail is kept in the outbox and written as .eml files"
        ),
    }
    let mail = tokio::spawn(mailer.run(shutdown.clone().wait()));
    let router = web::router(
        web::state(&config, db.clone()),
        web::Traffic {
            recorder: recorder.clone(),
            capture_pages: config.traffic_capture,
        },
    );
    let served = web::serve(listener, router, shutdown.wait()).await;
    if let Some(engine) = engine
        && let Err(e) = engine.await
    {
        tracing::error!(error = %e, "the engine task failed");
    }
    if let Err(e) = node.await {
        tracing::error!(error = %e, "the node task failed");
    }
    if let Err(e) = mail.await {
        tracing::error!(error = %e, "the mail sender failed");
    }
    // The web server has drained: no hit can arrive after this flush.
    match store::flush(&db, &recorder.buffer, config.traffic_ip).await {
        Ok(report) => tracing::info!(
            rows = report.rows,
            hits = report.hits,
            "traffic flushed on shutdown"
        ),
        Err(e) => {
            tracing::error!(error = %e, "the traffic flush on shutdown failed: those hits are lost")
        }
    }
    if let Err(e) = cluster::mark_stopped(&db, &me.node_id).await {
        tracing::warn!(error = %e, "could not mark this node stopped; it will show as lost");
    }
    served.context("the web server stopped with an error")
}

fn announce_first_admin(admin: &users::FirstAdmin) {
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
