//! The `bulwark` command line. Every command reads the same configuration as `serve`.
//!
//! Exit codes: 0 success, 1 a failure explained on stderr, 2 a usage error (from clap).

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use app::domain::account::{NewPassword, Role, Username};
use app::domain::api_token::Scope;
use app::domain::run::RunStatus;
use app::services::users::CreateUserError;
use clap::{Parser, Subcommand};

use crate::config::{Config, LogFormat};
use crate::startup::Application;
use crate::{db, shutdown, telemetry};

#[derive(Debug, Parser)]
#[command(
    name = "bulwark",
    version = crate::version::LONG.as_str(),
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

#[derive(Debug, clap::Args)]
struct ServeArgs {
    /// Run jobs only: no console, API or traffic collection (`web = false`); `/healthz`,
    /// `/readyz` and `/metrics` still answer, and the node still heart-beats.
    #[arg(long)]
    no_web: bool,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Start the web app and the job engine.
    Serve(ServeArgs),
    /// Apply pending migrations and exit.
    Migrate,
    /// Manage accounts.
    #[command(subcommand)]
    User(UserCommand),
    /// Named secrets jobs refer to as ${secret:NAME} (values from stdin, never shown).
    #[command(subcommand)]
    Secret(SecretCommand),
    /// Notification channels: e-mail, WeCom, DingTalk, Feishu, Slack, signed webhooks.
    #[command(subcommand)]
    Channel(ChannelCommand),
    /// API tokens for pipelines, scripts and Prometheus (`Authorization: Bearer …`).
    #[command(subcommand)]
    Token(TokenCommand),
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
    /// Sites whose page views are counted (collect.js accepts only registered hosts once one
    /// is registered).
    #[command(subcommand)]
    Site(SiteCommand),
    /// The daily health digest.
    #[command(subcommand)]
    Digest(DigestCommand),
    /// Watched jobs: jobs that run elsewhere and ping.
    #[command(subcommand)]
    Watch(WatchCommand),
    /// Run a command between a watched job's pings: start, then its exit code with its output;
    /// exits with the command's code, whether or not Bulwark answers.
    Exec {
        /// The watched job, its ping URL found through this host's configuration.
        name: Option<String>,
        /// The ping URL itself (or BULWARK_PING_URL): nothing else is needed.
        #[arg(long, env = "BULWARK_PING_URL")]
        ping_url: Option<String>,
        /// The command and its arguments, after `--`.
        #[arg(last = true, required = true)]
        command: Vec<String>,
    },
    /// Turn a crontab into jobs.
    #[command(subcommand)]
    Import(ImportCommand),
    /// Work calendars: workdays with holidays and make-up days, for jobs to follow.
    #[command(subcommand)]
    Calendar(CalendarCommand),
    /// Run a job's past ticks over a range of business dates again, one after another by
    /// default; ticks that have a run are left alone.
    Backfill(crate::commands::backfill::Args),
    /// Pause every job for maintenance: no cron run and no retry starts until `resume` (or
    /// --until); running attempts finish, Run now and re-triggers still work.
    Pause {
        /// Why; the banner on every page shows it.
        #[arg(long)]
        reason: String,
        /// When the pause ends by itself: a duration from now (2h, 30m) or a UTC time
        /// (2026-12-24 17:00, or RFC 3339).
        #[arg(long)]
        until: Option<String>,
        /// Only the jobs with this tag.
        #[arg(long)]
        tag: Option<String>,
    },
    /// End every pause open now (windows scheduled ahead stay).
    Resume,
    /// Whether Bulwark is paused, by whom, why and until when; windows ahead; paused jobs.
    Status {
        #[arg(long)]
        json: bool,
    },
    /// Copy the SQLite database to FILE, consistently, while `serve` runs (PostgreSQL: use
    /// pg_dump). Restore by stopping Bulwark and putting the copy where database_url points.
    Backup {
        /// Where the copy goes; an existing file is never overwritten.
        file: PathBuf,
    },
    /// The site's files built into this binary, with their sizes raw and compressed.
    Assets {
        /// Tab-separated bytes, for scripts (`make dist` checks the wasm's budget with it).
        #[arg(long)]
        tsv: bool,
    },
}

#[derive(Debug, Subcommand)]
enum WatchCommand {
    /// Print a watched job's ping URL alone (made if it has none).
    Url {
        name: String,
        /// Make a new URL; the old one stops working.
        #[arg(long)]
        rotate: bool,
    },
}

#[derive(Debug, Subcommand)]
enum CalendarCommand {
    /// Keep every [[calendar]] of a TOML file (or - for standard input), all or none; one
    /// of the same name is replaced.
    Import { file: PathBuf },
    /// Print a calendar as the [[calendar]] table import reads.
    Export { name: String },
    /// Every calendar, the years it has dates for, and the jobs following it.
    List {
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
enum ImportCommand {
    /// Read a crontab (a file, or - for standard input): each line becomes a job, the lines
    /// that cannot are listed with why; importing it again changes nothing.
    Crontab {
        file: PathBuf,
        /// watch: jobs that keep running from cron and ping (the crontab is printed rewritten
        /// to do so); run: command jobs Bulwark runs itself.
        #[arg(long = "as", value_enum)]
        as_: crate::commands::watch::ImportAs,
        /// The zone of the schedules (default: the crontab's CRON_TZ, else UTC).
        #[arg(long)]
        zone: Option<String>,
        /// Say what would be imported, change nothing.
        #[arg(long)]
        dry_run: bool,
    },
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
        /// One JSON object per line: {"is_bot": bool, "source": "google" | … | "other" | null,
        /// "category": "search" | "ai" | … | null} (docs/BOTS.md lists the sources).
        #[arg(long)]
        json: bool,
    },
    /// Count the page views in an access log, by the same rules as the live server.
    Import {
        file: PathBuf,
        /// Apache/nginx "combined" (common-format lines are read too).
        #[arg(long, default_value = "combined", value_parser = ["combined"])]
        format: String,
        /// The site the log is of (default: this console's host, from public_url).
        #[arg(long)]
        site: Option<String>,
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
        /// Only this category of bots.
        #[arg(long)]
        category: Option<app::domain::bots::BotCategory>,
        /// Only this bot source (google, bing, …, other; docs/BOTS.md lists them).
        #[arg(long)]
        source: Option<String>,
        /// Only this site, by host (default: all sites).
        #[arg(long)]
        site: Option<String>,
        /// Only visitors from this country: a two-letter code (DE, CN …) or `unknown`. Summed
        /// from the stored hits rather than the rollups: slower over long ranges.
        #[arg(long)]
        country: Option<String>,
        /// Only page views of URLs tagged with this utm_campaign (from the stored hits too).
        #[arg(long)]
        campaign: Option<String>,
        /// Only hits answered with this HTTP status code (404 …): hits the collect script
        /// reported have none (from the stored hits too).
        #[arg(long)]
        status: Option<String>,
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
    /// The engine on real `serve` processes: no-op runs/s with 1–3 instances, tick and retry
    /// lateness, on SQLite (and PostgreSQL).
    Engine(crate::bench::engine::EngineBenchArgs),
    /// An ordinary busy day for N minutes: one node (or several on PostgreSQL) under a mixed
    /// load, counting interrupted attempts, repeated side effects, memory and tick lateness.
    Soak(crate::bench::soak::SoakBenchArgs),
    /// Failed-queue paging with many dead runs on SQLite (and PostgreSQL).
    Queue(crate::bench::QueueBenchArgs),
    /// Traffic recording cost per request and flush time for many hits (SQLite, PostgreSQL).
    Traffic(crate::bench::traffic::TrafficBenchArgs),
    /// The Traffic page's queries over many days of generated traffic (SQLite, PostgreSQL).
    Dashboard(crate::bench::dashboard::DashboardBenchArgs),
    /// The bot recogniser against a labelled set: recall, people flagged, sources named right,
    /// and User-Agents classified per second on one core.
    Bots(crate::bench::bots::BotsBenchArgs),
    /// Run logs: storing a 15 MB log, its first screen, a jump, a search over many runs, and
    /// memory while a job prints 1 GB (SQLite, PostgreSQL).
    Logs(crate::bench::logs::LogsBenchArgs),
    /// The shapes installations have: ten thousand ticks at one instant, a hundred thousand
    /// idle jobs, work spread over instances by labels.
    Shapes(crate::bench::shapes::ShapesBenchArgs),
}

#[derive(Debug, Subcommand)]
enum JobsCommand {
    /// Create or update jobs from a TOML file; all or nothing.
    Apply { file: PathBuf },
    /// List jobs with their next fire time.
    List,
    /// Queue a run of a job now.
    Run {
        name: String,
        /// The date the run stands for (BULWARK_BUSINESS_DATE), YYYY-MM-DD; default: today
        /// in the job's zone.
        #[arg(long)]
        business_date: Option<chrono::NaiveDate>,
    },
    /// List the jobs that use a run parameter where it is no longer allowed (held: paused
    /// until edited or confirmed); `--confirm NAME` lets one run as written until its next edit.
    Check {
        #[arg(long, value_name = "NAME")]
        confirm: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Add the bundled demo jobs to a database that has no job yet.
    SeedDemo,
    /// A job's revisions, newest first: number, time, who (a person, `token:NAME`, `cli`),
    /// note.
    History {
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// The fields that differ between two revisions of a job (credentials hidden).
    Diff { name: String, a: i32, b: i32 },
    /// Make revision R's definition (credentials included) the job's again, as a new revision.
    Restore {
        name: String,
        revision: i32,
        /// Kept with the new revision (default: "restored from revision R").
        #[arg(long)]
        note: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
enum RunsCommand {
    /// List runs, newest first, with their attempts.
    List {
        #[arg(long)]
        job: Option<String>,
        #[arg(long, value_enum)]
        status: Option<RunStatus>,
        /// Runs of the jobs with this tag.
        #[arg(long)]
        tag: Option<String>,
        /// At most this many runs.
        #[arg(long, default_value_t = 50)]
        limit: u64,
        #[arg(long)]
        json: bool,
    },
    /// Print an attempt's whole output, as the job wrote it.
    Log {
        /// The run's id.
        id: i64,
        /// Which attempt (default: the last).
        #[arg(long)]
        attempt: Option<i32>,
        /// Keep printing what the attempt writes until it ends.
        #[arg(long)]
        follow: bool,
        /// Start each line with its time and stream.
        #[arg(long)]
        timestamps: bool,
    },
    /// Find lines of runs' output, newest run first.
    Search {
        /// What to look for (at least three characters; case is ignored).
        text: String,
        #[arg(long)]
        job: Option<String>,
        /// Runs started this long ago at most (`7d`, `12h`).
        #[arg(long)]
        since: Option<String>,
        #[arg(long, value_enum)]
        status: Option<RunStatus>,
        /// At most this many lines.
        #[arg(long, default_value_t = 100)]
        limit: usize,
        /// One JSON object per line found: `run`, `attempt`, `line`, `text`.
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
enum ChannelCommand {
    /// Add a channel (`--url -` reads the URL from stdin; `--secret-stdin` the signing secret).
    Add(crate::commands::channels::AddArgs),
    /// Channels with their kind, target host and last answer.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Send a test message: prints "accepted: <answer>" and exits 0, or the answer on stderr
    /// and exits 1.
    Test { name: String },
    /// Delete a channel.
    Remove { name: String },
}

#[derive(Debug, Subcommand)]
enum SiteCommand {
    /// Register a site by host (shop.example.com).
    Add { host: String },
    /// The console's own host and the registered sites, with their excluded addresses.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Stop accepting a site's page views, and end its scheduled report and share link (what it
    /// counted stays).
    Remove { host: String },
    /// A site's goals: pages or events that count as conversions.
    #[command(subcommand)]
    Goal(GoalCommand),
    /// A site's scheduled traffic report by mail and chat: set it, turn it off (--off), or,
    /// with the site alone, show it.
    Report(crate::commands::sites::ReportArgs),
    /// Make a read-only public link to a site's people's figures, printed alone on stdout; a
    /// new link ends the site's old one.
    Share {
        site: String,
        /// Ask visitors for a password, read from standard input (its first line).
        #[arg(long)]
        password_stdin: bool,
        /// When the link stops working: 30d, 12h, 8w or a date such as 2027-06-30 (default:
        /// never).
        #[arg(long)]
        expires: Option<String>,
    },
    /// End a site's share link: it answers 404 from now on.
    Unshare { site: String },
}

#[derive(Debug, Subcommand)]
enum GoalCommand {
    /// Add a goal; a page goal counts at once the page views still kept.
    #[command(group(clap::ArgGroup::new("target").required(true).args(["page", "event"])))]
    Add {
        /// The site's host (the console's own or a registered one).
        site: String,
        /// The goal's name, as the dashboard shows it.
        name: String,
        /// Views of pages matching this pattern: a path where * is any characters within one
        /// segment and ** any characters (/signup/done, /blog/*, /docs/**).
        #[arg(long)]
        page: Option<String>,
        /// Events of this name (`bulwark.event(name)` or POST /api/collect/event).
        #[arg(long)]
        event: Option<String>,
    },
    /// The goals of one site, or of every site.
    List {
        site: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Remove a goal and its counted conversions (the page views and events stay).
    Remove { site: String, name: String },
}

/// A token scope as typed: `read`, `trigger`, `admin`, or a role's word (`viewer`, `admin`).
fn scope_word(text: &str) -> Result<Scope, String> {
    Scope::from_word(text).ok_or_else(|| {
        format!(
            "'{text}' is not a scope: use {} (or viewer for read)",
            Scope::WORDS.join(", ")
        )
    })
}

#[derive(Debug, Subcommand)]
enum TokenCommand {
    /// Create a token; prints it alone on stdout, once.
    Create {
        name: String,
        /// The account it works for: it stops when that account is disabled, deleted or
        /// demoted below the scope.
        #[arg(long)]
        owner: String,
        /// read, trigger (start runs and read them) or admin; `--role viewer|admin` is the
        /// older spelling of read|admin.
        #[arg(long, alias = "role", value_parser = scope_word)]
        scope: Scope,
        /// A trigger token's jobs: those with one of these tags (comma-separated).
        #[arg(long, default_value = "")]
        tags: String,
        /// When it stops working: 30d, 12h, 8w, a date (2027-06-30) or never; 90d if not given.
        #[arg(long, default_value = "")]
        expires: String,
    },
    /// Tokens with their scope, owner, state, creation, expiry and last use (never the token).
    List {
        #[arg(long)]
        json: bool,
    },
    /// Stop a token from working, now.
    Revoke { name: String },
}

#[derive(Debug, Subcommand)]
enum SecretCommand {
    /// Set or replace a secret; the value is read from standard input.
    Set { name: String },
    /// Secret names and when they were set.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Delete a secret.
    Remove { name: String },
    /// Seal every secret with a new key, written to a new file.
    Rekey {
        #[arg(long)]
        new_key_file: std::path::PathBuf,
    },
}

#[derive(Debug, Subcommand)]
enum UserCommand {
    /// Add an account; the password is read from standard input.
    Add {
        #[arg(long)]
        username: String,
        #[arg(long, value_enum)]
        role: Role,
    },
    /// List accounts: username, role, state (active, disabled, must_change_password), last
    /// sign-in, and how they sign in (password, oidc:NAME, header).
    List {
        #[arg(long)]
        json: bool,
    },
    /// Set a user's password (read from standard input) and end their sessions.
    Passwd { username: String },
    /// Make a user an admin or a viewer (never the last enabled admin a viewer).
    Role {
        username: String,
        #[arg(value_enum)]
        role: Role,
    },
    /// Stop a user from signing in and end their sessions.
    Disable { username: String },
    /// Let a disabled user sign in again.
    Enable { username: String },
    /// Delete a user (never the last enabled admin); the audit log keeps their name.
    Delete { username: String },
    /// List a user's live sessions, or with --end end them all.
    Sessions {
        username: String,
        #[arg(long)]
        end: bool,
    },
    /// Let a person of a company sign-in use this account: PROVIDER is an OpenID provider's
    /// name in the configuration, SUB their subject (`sub`) there.
    Link {
        username: String,
        #[arg(long, value_name = "PROVIDER:SUB")]
        oidc: String,
    },
}

pub fn run() -> ExitCode {
    let cli = Cli::parse();
    // `serve` and the benchmarks run jobs, and a job's command may close its stdin before the
    // engine has written the parameters to it: that must stay an error, not end the process.
    if !matches!(cli.command, Command::Serve(_) | Command::Bench(_)) {
        quiet_on_closed_pipe();
    }
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
        Err(e) if e.downcast_ref::<ExitWith>().is_some() => e
            .downcast_ref::<ExitWith>()
            .map_or(ExitCode::FAILURE, |exit| exit.0),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// A command whose reader has gone (`bulwark assets | head`) ends as Unix tools do, killed by
/// SIGPIPE, instead of panicking in `println!` or failing with a "Broken pipe" error. Rust
/// starts with SIGPIPE ignored, so that a closed pipe is an error where one is written to.
fn quiet_on_closed_pipe() {
    use nix::sys::signal::{SigHandler, Signal, signal};
    // SAFETY: called first thing in `run`, before the runtime or any other thread exists, and
    // SIG_DFL installs no handler of ours.
    if let Err(e) = unsafe { signal(Signal::SIGPIPE, SigHandler::SigDfl) } {
        eprintln!("warning: cannot restore SIGPIPE: {e}");
    }
}

async fn dispatch(command: Command, config: Config) -> anyhow::Result<()> {
    match command {
        Command::Serve(args) => serve(args, config).await,
        Command::Migrate => migrate(&config).await,
        Command::Policy(PolicyCommand::Preview(args)) => {
            crate::commands::policy::preview(&args, async || connect(&config).await).await
        }
        Command::Bench(command) => bench(command).await,
        Command::Traffic(command) => traffic(command, &config).await,
        Command::Digest(DigestCommand::Send { to, dry_run }) => {
            let db = connect(&config).await?;
            crate::commands::digest::send(&db, &config, &to, dry_run).await
        }
        Command::Jobs(command) => jobs(command, &config).await,
        Command::Runs(command) => runs(command, &config).await,
        Command::User(command) => user(command, &config).await,
        Command::Channel(command) => channel(command, &config).await,
        Command::Site(command) => site(command, &config).await,
        Command::Pause { reason, until, tag } => {
            let db = connect(&config).await?;
            crate::commands::maintenance::pause(&db, &reason, until.as_deref(), tag.as_deref())
                .await
        }
        Command::Resume => {
            let db = connect(&config).await?;
            crate::commands::maintenance::resume(&db).await
        }
        Command::Backup { file } => {
            let db = db::connect_via(&config.database_url, config.database_pooler)
                .await?
                .0;
            crate::commands::backup::backup(&db, &file).await
        }
        Command::Assets { tsv } => crate::commands::assets::list(tsv),
        Command::Status { json } => {
            let db = connect(&config).await?;
            crate::commands::maintenance::status(&db, json).await
        }
        Command::Token(command) => token(command, &config).await,
        Command::Watch(WatchCommand::Url { name, rotate }) => {
            let url =
                crate::commands::watch::ping_url(&connect(&config).await?, &config, &name, rotate)
                    .await?;
            println!("{url}");
            Ok(())
        }
        Command::Exec {
            name,
            ping_url,
            command,
        } => exec(&config, name, ping_url, &command).await,
        Command::Import(ImportCommand::Crontab {
            file,
            as_,
            zone,
            dry_run,
        }) => {
            let args = crate::commands::watch::ImportArgs {
                file: &file,
                as_,
                zone: zone.as_deref(),
                dry_run,
            };
            crate::commands::watch::import_crontab(&connect(&config).await?, &config, &args).await
        }
        Command::Secret(command) => secret(command, &config).await,
        Command::Calendar(command) => {
            use crate::commands::calendars;
            let db = connect(&config).await?;
            match command {
                CalendarCommand::Import { file } => {
                    let key = crate::commands::sealing_key(&config, &db).await?;
                    calendars::import(&db, &key, &file).await
                }
                CalendarCommand::Export { name } => calendars::export(&db, &name).await,
                CalendarCommand::List { json } => calendars::list(&db, json).await,
            }
        }
        Command::Backfill(args) => {
            crate::commands::backfill::run(&connect(&config).await?, &args).await
        }
    }
}

/// `bulwark exec`: the ping URL given, or the named job's; then the command, whose exit code
/// becomes this process's.
async fn exec(
    config: &Config,
    name: Option<String>,
    ping_url: Option<String>,
    command: &[String],
) -> anyhow::Result<()> {
    let url = match (ping_url, name) {
        (Some(url), _) => url,
        (None, Some(name)) => {
            crate::commands::watch::ping_url(&connect(config).await?, config, &name, false).await?
        }
        (None, None) => anyhow::bail!("give a job's NAME, --ping-url URL or BULWARK_PING_URL"),
    };
    let body_max = config.ping_body_max_kb as usize * 1024;
    let code = crate::commands::watch::exec(&url, command, body_max).await?;
    Err(ExitWith(code).into())
}

/// Ends the process with a code of its own (`bulwark exec`'s command's), saying nothing.
#[derive(Debug)]
pub struct ExitWith(pub ExitCode);

impl std::fmt::Display for ExitWith {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "exit")
    }
}

impl std::error::Error for ExitWith {}

async fn migrate(config: &Config) -> anyhow::Result<()> {
    let db = connect(config).await?;
    let applied = db::migrate(&db).await?;
    println!(
        "migrations: {applied} applied, database {} is up to date",
        db::redacted(&config.database_url)
    );
    Ok(())
}

async fn bench(command: BenchCommand) -> anyhow::Result<()> {
    match command {
        BenchCommand::Engine(args) => crate::bench::engine::engine(&args).await,
        BenchCommand::Queue(args) => crate::bench::queue(&args).await,
        BenchCommand::Soak(args) => crate::bench::soak::soak(&args).await,
        BenchCommand::Dashboard(args) => crate::bench::dashboard::dashboard(&args).await,
        BenchCommand::Bots(args) => crate::bench::bots::bots(&args),
        BenchCommand::Traffic(args) => crate::bench::traffic::traffic(&args).await,
        BenchCommand::Logs(args) => crate::bench::logs::logs(&args).await,
        BenchCommand::Shapes(args) => crate::bench::shapes::shapes(&args).await,
    }
}

async fn traffic(command: TrafficCommand, config: &Config) -> anyhow::Result<()> {
    use crate::commands::traffic;
    // Classifying reads standard input only; everything else works on the database.
    let db = async || traffic_db(config).await;
    match command {
        TrafficCommand::Classify { json } => traffic::classify_stdin(json),
        TrafficCommand::Import {
            file, json, site, ..
        } => traffic::import(&db().await?, &file, config, site.as_deref(), json).await,
        TrafficCommand::Stats {
            range,
            from,
            to,
            visitors,
            category,
            source,
            site,
            country,
            campaign,
            status,
            json,
        } => {
            let request = traffic::StatsRequest {
                range,
                from,
                to,
                visitors,
                category,
                source,
                site,
                country,
                campaign,
                status,
            };
            traffic::stats(&db().await?, config, &request, json).await
        }
        TrafficCommand::Generate {
            days,
            per_day,
            if_empty,
            remove,
        } => {
            let host = config.console_host();
            traffic::generate(&db().await?, &host, days, per_day, if_empty, remove).await
        }
        TrafficCommand::Flush => traffic::flush(&db().await?).await,
        TrafficCommand::Clean { days } => traffic::clean(&db().await?, days).await,
    }
}

async fn jobs(command: JobsCommand, config: &Config) -> anyhow::Result<()> {
    use crate::commands::{jobs, revisions};
    let db = connect(config).await?;
    match command {
        JobsCommand::Apply { file } => {
            jobs::apply(
                &db,
                &crate::commands::sealing_key(config, &db).await?,
                &file,
            )
            .await
        }
        JobsCommand::List => jobs::list(&db).await,
        JobsCommand::Run {
            name,
            business_date,
        } => jobs::run(&db, &name, business_date).await,
        JobsCommand::Check { confirm, json } => jobs::check(&db, confirm.as_deref(), json).await,
        JobsCommand::SeedDemo => {
            crate::demo::seed(&db, &crate::commands::sealing_key(config, &db).await?).await
        }
        JobsCommand::History { name, json } => revisions::history(&db, &name, json).await,
        JobsCommand::Diff { name, a, b } => {
            let key = crate::commands::sealing_key(config, &db).await?;
            revisions::diff(&db, &key, &name, (a, b)).await
        }
        JobsCommand::Restore {
            name,
            revision,
            note,
        } => {
            let key = crate::commands::sealing_key(config, &db).await?;
            revisions::restore(&db, &key, &name, revision, note.as_deref()).await
        }
    }
}

async fn runs(command: RunsCommand, config: &Config) -> anyhow::Result<()> {
    use crate::commands::run_logs;
    let (job, status, tag, limit, json) = match command {
        RunsCommand::List {
            job,
            status,
            tag,
            limit,
            json,
        } => (job, status, tag, limit, json),
        RunsCommand::Log {
            id,
            attempt,
            follow,
            timestamps,
        } => {
            let how = run_logs::Printing { follow, timestamps };
            return run_logs::print(&connect(config).await?, id, attempt, how).await;
        }
        RunsCommand::Search {
            text,
            job,
            since,
            status,
            limit,
            json,
        } => {
            let since = since.as_deref().map(run_logs::since).transpose()?;
            let filter = app::services::run_logs::SearchFilter {
                text,
                job,
                tag: None,
                status,
                since,
                limit,
            };
            return run_logs::search(&connect(config).await?, &filter, json).await;
        }
    };
    let tag = tag
        .map(|t| app::domain::job::tags::parse_tag(&t))
        .transpose()
        .map_err(|e| anyhow::anyhow!("--tag: {e}"))?;
    let db = connect(config).await?;
    let filter = app::services::runs::RunFilter {
        job,
        status,
        tag,
        since: None,
        limit,
        before: None,
    };
    crate::commands::runs::list(&db, filter, json).await
}

async fn channel(command: ChannelCommand, config: &Config) -> anyhow::Result<()> {
    use crate::commands::channels;
    let db = connect(config).await?;
    match command {
        ChannelCommand::Add(args) => channels::add(&db, &config.secret_key()?, args).await,
        ChannelCommand::List { json } => channels::list(&db, &config.secret_key()?, json).await,
        ChannelCommand::Test { name } => {
            if channels::test(&db, &config.secret_key()?, config, &name).await? {
                Ok(())
            } else {
                Err(anyhow::anyhow!(
                    "the channel did not accept the test message"
                ))
            }
        }
        ChannelCommand::Remove { name } => channels::remove(&db, &name).await,
    }
}

async fn site(command: SiteCommand, config: &Config) -> anyhow::Result<()> {
    use crate::commands::sites;
    let db = traffic_db(config).await?;
    match command {
        SiteCommand::Add { host } => sites::add(&db, config, &host).await,
        SiteCommand::List { json } => sites::list(&db, config, json).await,
        SiteCommand::Remove { host } => sites::remove(&db, config, &host).await,
        SiteCommand::Goal(command) => goal(command, &db, config).await,
        SiteCommand::Report(args) => sites::report(&db, config, args).await,
        SiteCommand::Share {
            site,
            password_stdin,
            expires,
        } => {
            let password = password_stdin
                .then(|| read_stdin_line("Password"))
                .transpose()?;
            sites::share(&db, config, &site, password.as_deref(), expires.as_deref()).await
        }
        SiteCommand::Unshare { site } => sites::unshare(&db, &site).await,
    }
}

async fn goal(
    command: GoalCommand,
    db: &sea_orm::DatabaseConnection,
    config: &Config,
) -> anyhow::Result<()> {
    use crate::commands::sites;
    match command {
        GoalCommand::Add {
            site,
            name,
            page,
            event,
        } => {
            let target = sites::GoalTarget::parse(page.as_deref(), event.as_deref())?;
            sites::add_goal(db, config, &site, &name, target).await
        }
        GoalCommand::List { site, json } => sites::goals(db, site.as_deref(), json).await,
        GoalCommand::Remove { site, name } => sites::remove_goal(db, &site, &name).await,
    }
}

async fn token(command: TokenCommand, config: &Config) -> anyhow::Result<()> {
    use crate::commands::tokens;
    let db = connect(config).await?;
    match command {
        TokenCommand::Create {
            name,
            owner,
            scope,
            tags,
            expires,
        } => {
            let new = app::services::tokens::NewToken {
                name: &name,
                scope,
                tags: &tags,
                expires: &expires,
                owner: &owner,
                providers: &config.provider_infos(),
            };
            tokens::create(&db, &new).await
        }
        TokenCommand::List { json } => tokens::list(&db, json).await,
        TokenCommand::Revoke { name } => tokens::revoke(&db, &name).await,
    }
}

async fn secret(command: SecretCommand, config: &Config) -> anyhow::Result<()> {
    use crate::commands::secrets;
    match command {
        SecretCommand::Set { name } => {
            let value = read_stdin_line("Secret value")?;
            let key = config.secret_key()?;
            secrets::set(&connect(config).await?, &key, &name, &value).await
        }
        SecretCommand::List { json } => secrets::list(&connect(config).await?, json).await,
        SecretCommand::Remove { name } => secrets::remove(&connect(config).await?, &name).await,
        SecretCommand::Rekey { new_key_file } => {
            let key = app::services::secrets::SecretKey::read(&config.secret_key_file)?;
            secrets::rekey(&connect(config).await?, &key, &new_key_file).await
        }
    }
}

async fn user(command: UserCommand, config: &Config) -> anyhow::Result<()> {
    use crate::commands::users;
    use app::services::users::Change;

    let change = |username: String, change: Change| (username, change);
    let (username, change) = match command {
        UserCommand::Add { username, role } => {
            let username = Username::parse(&username)?;
            let password = NewPassword::parse(&read_password()?)?;
            let db = connect(config).await?;
            let cli = crate::commands::cli();
            return match app::services::users::add(&db, &username, role, &password, &cli).await {
                Ok(user) => {
                    println!("added {} ({})", user.username, user.role);
                    Ok(())
                }
                Err(e @ CreateUserError::Taken(_)) => Err(e.into()),
                Err(e) => Err(anyhow::Error::new(e).context("could not add the user")),
            };
        }
        UserCommand::List { json } => return users::list(&connect(config).await?, json).await,
        UserCommand::Passwd { username } => {
            let password = read_password()?;
            return users::passwd(&connect(config).await?, &username, &password).await;
        }
        UserCommand::Sessions { username, end } => {
            let lifetimes = app::services::sessions::Lifetimes {
                absolute: chrono::Duration::hours(i64::from(config.session_hours)),
                idle: chrono::Duration::hours(i64::from(config.session_idle_hours)),
            };
            return users::sessions(&connect(config).await?, lifetimes, &username, end).await;
        }
        UserCommand::Link { username, oidc } => {
            return users::link(&connect(config).await?, config, &username, &oidc).await;
        }
        UserCommand::Role { username, role } => change(username, Change::Role(role)),
        UserCommand::Disable { username } => change(username, Change::Disabled(true)),
        UserCommand::Enable { username } => change(username, Change::Disabled(false)),
        UserCommand::Delete { username } => change(username, Change::Delete),
    };
    users::change(&connect(config).await?, &username, change).await
}

/// One line from standard input, without its line ending. Prompts when a person is typing.
fn read_password() -> anyhow::Result<String> {
    read_stdin_line("Password")
}

/// One line from standard input, without its line ending; `what` names it in the prompt a
/// person at a terminal sees.
fn read_stdin_line(what: &str) -> anyhow::Result<String> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        eprint!("{what} (visible as you type; pipe it in to avoid that): ");
        std::io::stderr().flush().ok();
    }
    let mut line = String::new();
    stdin.lock().read_line(&mut line).with_context(|| {
        format!(
            "could not read the {} from standard input",
            what.to_lowercase()
        )
    })?;
    Ok(line.trim_end_matches(['\n', '\r']).to_string())
}

/// The database, with this process keeping time by its clock (what commands write — a manual
/// run, a job's next tick — compares with what the nodes write).
async fn connect(config: &Config) -> anyhow::Result<sea_orm::DatabaseConnection> {
    let db = db::connect_via(&config.database_url, config.database_pooler)
        .await?
        .0;
    crate::startup::set_clock(&db).await;
    Ok(db)
}

/// The database, with the traffic rollups in the configured zone (rebuilt if they were not).
async fn traffic_db(config: &Config) -> anyhow::Result<sea_orm::DatabaseConnection> {
    let db = connect(config).await?;
    crate::startup::ensure_rollups(&db, config).await?;
    Ok(db)
}

async fn serve(args: ServeArgs, mut config: Config) -> anyhow::Result<()> {
    if args.no_web {
        config.web = false;
    }
    let web = config.web;
    let app = Application::build(config).await?;
    if web {
        println!("Bulwark is serving on http://{}", app.addr());
    } else {
        println!(
            "Bulwark runs jobs without the console; health and metrics on http://{}",
            app.addr()
        );
    }
    app.run_until_stopped(shutdown::on_signal()).await
}
