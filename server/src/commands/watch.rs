//! Watched jobs from the shell: `bulwark watch url NAME [--rotate]` prints a job's ping URL,
//! `bulwark exec [NAME] [--ping-url URL] -- CMD…` wraps a command in its pings, and
//! `bulwark import crontab FILE|- --as watch|run` turns a crontab into jobs
//! (`app/src/domain/crontab.rs`).

use std::io::{Read, Write};
use std::path::Path;
use std::process::{ExitCode, Stdio};
use std::time::Duration;

use anyhow::Context;
use app::domain::crontab::{self, Entry, Reason};
use app::domain::job::{JobInput, JobSpec, Kind};
use sea_orm::DatabaseConnection;

use crate::config::Config;

/// The job's ping URL (made if it has none; a new one with `rotate`).
pub async fn ping_url(
    db: &DatabaseConnection,
    config: &Config,
    name: &str,
    rotate: bool,
) -> anyhow::Result<String> {
    let job = super::job_named(db, name).await?;
    if job.kind != Kind::Watch {
        anyhow::bail!(
            "{name} is a {} job: only a watched job (kind = \"watch\") has a ping URL",
            job.kind.as_str()
        );
    }
    let key = config.secret_key()?;
    let token =
        app::services::watch::token(db, &key, &job, rotate, &super::cli(), crate::clock::now())
            .await
            .context("could not make the ping URL")?;
    Ok(format!(
        "{}/ping/{token}",
        config.public_url().trim_end_matches('/')
    ))
}

/// Attempts per ping before `exec` gives up on it (with a warning; the command runs anyway).
const PING_TRIES: u32 = 3;

/// Runs `command` between a start ping and an end ping carrying its exit code and its output
/// (the last `body_max` bytes); streams the output through; exits with the command's code.
/// Bulwark being unreachable never fails the command: a warning, a few quick retries.
pub async fn exec(url: &str, command: &[String], body_max: usize) -> anyhow::Result<ExitCode> {
    let (program, args) = command
        .split_first()
        .ok_or_else(|| anyhow::anyhow!("give the command to run after --"))?;
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .context("could not make an HTTP client")?;
    let rid = format!("{:016x}", fastrand::u64(..));
    let url = url.trim_end_matches('/');
    send(&client, &format!("{url}/start?rid={rid}"), Vec::new()).await;
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("could not start {program}"))?;
    let kept = std::sync::Arc::new(std::sync::Mutex::new(Tail::new(body_max)));
    let out = child.stdout.take().map(|s| relay(s, false, kept.clone()));
    let err = child.stderr.take().map(|s| relay(s, true, kept.clone()));
    let status = child
        .wait()
        .await
        .context("could not wait for the command")?;
    for relay in [out, err].into_iter().flatten() {
        let _ = relay.await;
    }
    let code = exit_code(status);
    let body = kept.lock().map(|t| t.bytes()).unwrap_or_default();
    send(&client, &format!("{url}/{code}?rid={rid}"), body).await;
    Ok(ExitCode::from(code))
}

/// The code a shell would report: the exit status, or 128 + the signal that ended it.
fn exit_code(status: std::process::ExitStatus) -> u8 {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => code.clamp(0, 255) as u8,
        (None, Some(signal)) => (128 + signal).clamp(0, 255) as u8,
        (None, None) => 1,
    }
}

/// The last bytes of the output, both streams as they came.
struct Tail {
    max: usize,
    bytes: std::collections::VecDeque<u8>,
}

impl Tail {
    fn new(max: usize) -> Self {
        Tail {
            max,
            bytes: std::collections::VecDeque::new(),
        }
    }

    fn push(&mut self, data: &[u8]) {
        self.bytes.extend(data);
        let over = self.bytes.len().saturating_sub(self.max);
        self.bytes.drain(..over);
    }

    fn bytes(&self) -> Vec<u8> {
        self.bytes.iter().copied().collect()
    }
}

/// Copies one of the command's streams to ours as it comes, keeping its tail.
fn relay(
    mut from: impl tokio::io::AsyncRead + Unpin + Send + 'static,
    stderr: bool,
    kept: std::sync::Arc<std::sync::Mutex<Tail>>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        use tokio::io::AsyncReadExt;
        let mut buffer = vec![0u8; 8192];
        while let Ok(n) = from.read(&mut buffer).await {
            if n == 0 {
                break;
            }
            let data = &buffer[..n];
            // Our own reader may have gone; the output is still kept for the ping.
            let _ = if stderr {
                std::io::stderr().write_all(data)
            } else {
                std::io::stdout()
                    .write_all(data)
                    .and_then(|()| std::io::stdout().flush())
            };
            if let Ok(mut tail) = kept.lock() {
                tail.push(data);
            }
        }
    })
}

/// Sends one ping, trying a few times; a failure is a warning on stderr, never an error.
async fn send(client: &reqwest::Client, url: &str, body: Vec<u8>) {
    let mut last = String::new();
    for attempt in 1..=PING_TRIES {
        match client.post(url).body(body.clone()).send().await {
            Ok(answer) if answer.status().is_success() => return,
            Ok(answer) if answer.status().is_client_error() => {
                last = format!("{} answered {}", redacted(url), answer.status());
                break;
            }
            Ok(answer) => last = format!("{} answered {}", redacted(url), answer.status()),
            Err(e) => last = format!("{}: {e}", redacted(url)),
        }
        if attempt < PING_TRIES {
            tokio::time::sleep(Duration::from_millis(500 * u64::from(attempt))).await;
        }
    }
    eprintln!("bulwark exec: warning: could not ping Bulwark ({last}); the command is unaffected");
}

/// A ping URL with its token hidden, for messages.
fn redacted(url: &str) -> String {
    match url.split_once("/ping/") {
        Some((base, rest)) => {
            let after = rest.find(['/', '?']).map_or("", |i| &rest[i..]);
            format!("{base}/ping/…{after}")
        }
        None => url.to_string(),
    }
}

/// How imported crontab lines become jobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ImportAs {
    /// Watched jobs; the crontab is printed rewritten to ping them through `bulwark exec`.
    Watch,
    /// Command jobs Bulwark runs itself.
    Run,
}

/// What the import is told.
pub struct ImportArgs<'a> {
    pub file: &'a Path,
    pub as_: ImportAs,
    pub zone: Option<&'a str>,
    pub dry_run: bool,
}

/// `bulwark import crontab`: every line it can convert becomes a job, in one transaction (a
/// second import of the same crontab changes nothing); the lines it cannot are listed with
/// why, and nothing of those is imported.
pub async fn import_crontab(
    db: &DatabaseConnection,
    config: &Config,
    args: &ImportArgs<'_>,
) -> anyhow::Result<()> {
    let text = read_text(args.file)?;
    let tab = crontab::parse(&text);
    for skipped in &tab.skipped {
        eprintln!(
            "line {}: not imported ({}): {}",
            skipped.line,
            reason(&skipped.reason, args.as_),
            skipped.text
        );
    }
    let mut entries: Vec<&Entry> = tab.entries.iter().collect();
    if args.as_ == ImportAs::Run {
        entries.retain(|e| {
            let keep = e.stdin.is_none();
            if !keep {
                eprintln!(
                    "line {}: not imported (its input after % cannot be given to a command job; use --as watch): {}",
                    e.line, e.command_text
                );
            }
            keep
        });
    }
    let specs = entries
        .iter()
        .map(|e| spec(e, args))
        .collect::<Result<Vec<_>, _>>()?;
    if specs.is_empty() {
        anyhow::bail!("no line of the crontab could be imported");
    }
    let key = super::sealing_key(config, db).await?;
    let applied =
        crate::jobs_file::apply_specs_checked(db, specs, args.dry_run, &super::cli(), &key)
            .await
            .map_err(|problems| {
                anyhow::anyhow!("nothing imported:\n  {}", problems.join("\n  "))
            })?;
    eprintln!(
        "{}created {}, updated {}, unchanged {}",
        if args.dry_run {
            "dry run: would have "
        } else {
            ""
        },
        applied.created.len(),
        applied.updated.len(),
        applied.unchanged.len()
    );
    if args.as_ == ImportAs::Watch {
        print_rewritten(db, config, &text, &entries, args.dry_run).await?;
    }
    Ok(())
}

fn read_text(file: &Path) -> anyhow::Result<String> {
    if file == Path::new("-") {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("could not read the crontab from standard input")?;
        Ok(text)
    } else {
        std::fs::read_to_string(file).with_context(|| format!("could not read {}", file.display()))
    }
}

fn reason(reason: &Reason, as_: ImportAs) -> String {
    match reason {
        Reason::Reboot => match as_ {
            ImportAs::Watch => {
                "@reboot runs at start-up, not on a schedule Bulwark could watch".into()
            }
            ImportAs::Run => "@reboot runs at start-up, not on a schedule".into(),
        },
        Reason::UnknownMacro(word) => format!("cron knows no @{word}"),
        Reason::TooFewFields => "a line needs five schedule fields and a command".into(),
        Reason::BadSchedule(why) => format!("its schedule does not read: {why}"),
    }
}

/// The job one line becomes.
fn spec(entry: &Entry, args: &ImportArgs<'_>) -> anyhow::Result<JobSpec> {
    let shell = entry.shell.clone().unwrap_or_else(|| "/bin/sh".into());
    let mut input = JobInput {
        name: entry.name.clone(),
        description: format!("from a crontab: {}", entry.command_text),
        cron: entry.cron.clone(),
        timezone: args
            .zone
            .map(str::to_string)
            .or_else(|| entry.zone.clone())
            .unwrap_or_else(|| "UTC".into()),
        alert_to: entry
            .mailto
            .clone()
            .filter(|m| m.contains('@'))
            .unwrap_or_default(),
        ..JobInput::default()
    };
    match args.as_ {
        ImportAs::Watch => input.kind = Kind::Watch.as_str().into(),
        ImportAs::Run => {
            input.kind = Kind::Command.as_str().into();
            input.command_program = shell;
            input.command_args = format!("-c\n{}", entry.command);
        }
    }
    JobSpec::parse(&input).map_err(|problems| {
        let said: Vec<String> = problems
            .iter()
            .map(|p| format!("{}: {}", p.field, p.problem))
            .collect();
        anyhow::anyhow!("line {}: {}", entry.line, said.join("; "))
    })
}

/// The crontab again, each imported line going through `bulwark exec` with its job's ping
/// URL, everything else as it was.
async fn print_rewritten(
    db: &DatabaseConnection,
    config: &Config,
    text: &str,
    entries: &[&Entry],
    dry_run: bool,
) -> anyhow::Result<()> {
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        let Some(entry) = entries.iter().find(|e| e.line == i + 1) else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        let url = if dry_run {
            format!("$(bulwark watch url {})", entry.name)
        } else {
            ping_url(db, config, &entry.name, false).await?
        };
        out.push_str(&rewritten(entry, &url));
        out.push('\n');
    }
    print!("{out}");
    Ok(())
}

/// One crontab line through `bulwark exec`: the command handed to the shell it ran in, in one
/// quoted word (so its pipes and redirections stay its own), the `%` input left where cron
/// reads it.
pub fn rewritten(entry: &Entry, url: &str) -> String {
    let shell = entry.shell.as_deref().unwrap_or("/bin/sh");
    let (command_part, stdin_part) = split_raw(&entry.command_text);
    format!(
        "{} bulwark exec --ping-url {url} -- {shell} -c {}{stdin_part}",
        entry.schedule_text,
        crontab::shell_quoted(command_part.trim_end())
    )
}

/// The raw command text and its `%…` input part, split at the first unescaped `%`.
fn split_raw(text: &str) -> (&str, &str) {
    let bytes = text.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'%' && (i == 0 || bytes[i - 1] != b'\\') {
            return (&text[..i], &text[i..]);
        }
    }
    (text, "")
}
