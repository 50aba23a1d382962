//! What one attempt does: an HTTP call, a command, or a built-in task — each bounded by the
//! attempt's timeout (and, when the job has one, its stall timeout), each reporting success or
//! a classed failure and the tail of its output.
//!
//! The future [`execute`] returns may be dropped at any point (the fence stopped it, the
//! shutdown grace ran out): a command's whole process group is killed then too, by
//! [`ProcessGroup`]'s `Drop`, and an HTTP call is abandoned with its future.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use app::domain::job::{JobKind, JobSpec, Redirects, placement};
use app::domain::run::{
    AttemptReport, ErrorClass, classify_exit, classify_http_status, parse_retry_after,
};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::time::Instant;

use super::Shared;
use super::builtin::{Progress, TaskContext};
use super::run_log::Sink;
use app::domain::run_log::Stream;

/// Kept of an attempt's output: enough to see what went wrong, bounded for the database.
pub const TAIL_BYTES: usize = 4096;

/// Read of an attempt's output before its secrets are taken out and it is cut to
/// [`TAIL_BYTES`]: a value that straddles the cut is whole in here, so it is redacted, not cut
/// in half and kept in part (a value up to this much longer than the tail).
pub const READ_BYTES: usize = 2 * TAIL_BYTES;

/// How often a running attempt's output is published while it runs.
pub const LIVE_EVERY: Duration = Duration::from_secs(1);

/// Where a running attempt's output goes while it runs: the latest tail (at most
/// [`TAIL_BYTES`], stdout and stderr interleaved, or a built-in's progress note), with the
/// job's secrets taken out like the final tail's. `attempt.rs` writes it to the attempt's row,
/// so the run page shows it from whichever instance serves it.
#[derive(Clone, Default)]
pub struct LiveOutput {
    sender: Option<tokio::sync::watch::Sender<String>>,
    secrets: Vec<(String, String)>,
    /// Starts what writes the output, on the first change (once).
    start: Option<Arc<Mutex<Option<StartWriter>>>>,
}

type StartWriter = Box<dyn FnOnce() + Send>;

impl LiveOutput {
    /// Output goes to `sender`; `start` is called the first time there is any.
    pub fn new(
        sender: tokio::sync::watch::Sender<String>,
        start: impl FnOnce() + Send + 'static,
    ) -> Self {
        LiveOutput {
            sender: Some(sender),
            secrets: Vec::new(),
            start: Some(Arc::new(Mutex::new(Some(Box::new(start))))),
        }
    }

    fn redacting(&self, secrets: &[(String, String)]) -> Self {
        LiveOutput {
            sender: self.sender.clone(),
            secrets: secrets.to_vec(),
            start: self.start.clone(),
        }
    }

    fn publish(&self, text: String) {
        let Some(sender) = &self.sender else {
            return;
        };
        let text = finish_tail(text, &self.secrets);
        let changed = sender.send_if_modified(|current| {
            let changed = *current != text;
            if changed {
                *current = text;
            }
            changed
        });
        if changed && let Some(start) = &self.start {
            let start = match start.lock() {
                Ok(mut slot) => slot.take(),
                Err(poisoned) => poisoned.into_inner().take(),
            };
            if let Some(start) = start {
                start();
            }
        }
    }
}

pub struct AttemptInput {
    pub timeout: Duration,
    pub idempotency_key: String,
    pub run_id: i64,
    /// The attempt's number, from 1.
    pub attempt: i32,
    /// The attempt's row, which its whole output (`run_log`) belongs to.
    pub attempt_id: i64,
    pub job_name: String,
    /// The job's time zone (what "today" means to a built-in task).
    pub timezone: chrono_tz::Tz,
    /// No output (or reported progress) for this long ends the attempt as stalled.
    pub stall: Option<Duration>,
    /// The run's parameters (defaults filled in), or why they cannot be had (a cron run of a
    /// job with a required parameter that has no default).
    pub params: Result<std::collections::BTreeMap<String, serde_json::Value>, String>,
    /// The output while the attempt runs.
    pub live: LiveOutput,
    /// Parameters go in as written (`app::services::held::confirm`), not encoded for their
    /// places.
    pub params_as_written: bool,
    /// The tick the run stands for (`app::domain::tick`).
    pub tick: app::domain::tick::RunTick,
}

/// How an attempt went.
#[derive(Debug)]
pub struct Execution {
    pub report: AttemptReport,
    pub message: Option<String>,
    pub output_tail: String,
}

impl Execution {
    fn ok(output: String) -> Self {
        Execution {
            report: AttemptReport::succeeded(),
            message: None,
            output_tail: output,
        }
    }

    pub fn failed(class: ErrorClass, message: impl Into<String>, output: String) -> Self {
        Execution {
            report: AttemptReport::failed(class),
            message: Some(message.into()),
            output_tail: output,
        }
    }

    /// The attempt as it can still be written when the database refuses its texts: its
    /// outcome, with the reason in place of its output and message.
    pub fn strip(&mut self, reason: &str) {
        self.output_tail.clear();
        self.message = Some(format!(
            "the attempt's output and message could not be stored: {reason}"
        ));
    }

    fn stalled(stall: Duration, output: String) -> Self {
        Execution {
            report: AttemptReport::stalled(),
            message: Some(format!(
                "no progress for the stall timeout of {} ms",
                stall.as_millis()
            )),
            output_tail: output,
        }
    }
}

/// Runs one attempt of `spec`'s job. Secrets it refers to are filled in just before, and their
/// values taken out again of what the attempt reports, so output and messages only ever hold
/// the references. Parameters are written for their places (`app::domain::job::placement`),
/// or as written for a job an administrator confirmed (`app::services::held`).
pub async fn execute(shared: &Shared, spec: &JobSpec, input: &AttemptInput) -> Execution {
    let params = match &input.params {
        Ok(params) => params,
        Err(message) => {
            return Execution::failed(ErrorClass::Permanent, message.clone(), String::new());
        }
    };
    let (ticked, params) = with_tick(spec, params, &input.tick);
    let (spec, params) = (&ticked, &params);
    let kind = &spec.kind;
    if kind.secret_references().is_empty() && kind.param_references().is_empty() {
        let mut execution = logged(shared, kind, input, &input.live, &[]).await;
        execution.output_tail = finish_tail(execution.output_tail, &[]);
        return execution;
    }
    let opened = if kind.secret_references().is_empty() {
        std::collections::BTreeMap::new()
    } else {
        match open_secrets(shared).await {
            Ok(opened) => opened,
            Err(failed) => return failed,
        }
    };
    let lookup = |name: &str| opened.get(name).cloned();
    let filled = if input.params_as_written {
        kind.with_values(lookup, Some(params))
            .map_err(placement::FillError::Missing)
    } else {
        placement::fill(kind, lookup, params, &spec.parameters)
    };
    let filled = match filled {
        Ok(filled) => filled,
        Err(e) => return Execution::failed(ErrorClass::Permanent, fill_error(e), String::new()),
    };
    let used: Vec<(String, String)> = kind
        .secret_references()
        .into_iter()
        .filter_map(|name| opened.get(&name).map(|value| (name, value.clone())))
        .collect();
    let live = input.live.redacting(&used);
    let mut execution = logged(shared, &filled, input, &live, &used).await;
    execution.output_tail = finish_tail(execution.output_tail, &used);
    execution.message = execution
        .message
        .map(|m| app::domain::secrets::redact(&m, &used));
    execution
}

/// The job with its tick references (`app::domain::tick`) made parameters of their own, and
/// the run's parameters with their values, so they are written for their places like any.
fn with_tick(
    spec: &JobSpec,
    params: &std::collections::BTreeMap<String, serde_json::Value>,
    tick: &app::domain::tick::RunTick,
) -> (
    JobSpec,
    std::collections::BTreeMap<String, serde_json::Value>,
) {
    let (kind, made) = app::domain::job::tick_refs::as_params(&spec.kind, tick);
    let mut spec = spec.clone();
    let mut params = params.clone();
    spec.kind = kind;
    for (parameter, value) in made {
        params.insert(parameter.name.clone(), serde_json::Value::String(value));
        spec.parameters.push(parameter);
    }
    (spec, params)
}

/// Runs the attempt with its whole output going to its log (`run_log`), `secrets` taken out;
/// returns once the log is written.
async fn logged(
    shared: &Shared,
    kind: &JobKind,
    input: &AttemptInput,
    live: &LiveOutput,
    secrets: &[(String, String)],
) -> Execution {
    let owner = app::services::run_logs::Owner {
        run_id: input.run_id,
        attempt_id: input.attempt_id,
    };
    let max = shared.config.run_log_max_bytes;
    let (writer, sink) = super::run_log::start(shared.db.clone(), owner, max, secrets);
    let execution = run(shared, kind, input, live, sink).await;
    writer.finish().await;
    execution
}

/// An attempt's output as it is kept: its secrets taken out of all that was read
/// ([`READ_BYTES`]), then cut to the last [`TAIL_BYTES`] at a character's start.
pub fn finish_tail(text: String, secrets: &[(String, String)]) -> String {
    let text = if secrets.is_empty() {
        text
    } else {
        app::domain::secrets::redact(&text, secrets)
    };
    if text.len() <= TAIL_BYTES {
        return text;
    }
    let mut cut = text.len() - TAIL_BYTES;
    while !text.is_char_boundary(cut) {
        cut += 1;
    }
    text[cut..].to_string()
}

/// Every secret, opened with this node's key; the failed attempt when they cannot be.
async fn open_secrets(
    shared: &Shared,
) -> Result<std::collections::BTreeMap<String, String>, Execution> {
    let Some(key) = &shared.config.secret_key else {
        return Err(Execution::failed(
            ErrorClass::Permanent,
            "the job refers to secrets, and this node has no secret key",
            String::new(),
        ));
    };
    app::services::secrets::open_all(&shared.db, key)
        .await
        // The database is unreachable, or this node's key is not the others': try later.
        .map_err(|e| {
            Execution::failed(
                ErrorClass::Transient,
                format!("cannot open the job's secrets: {e}"),
                String::new(),
            )
        })
}

/// Why a definition could not be filled in, as the attempt's message.
fn fill_error(e: placement::FillError) -> String {
    use placement::FillError;
    match e {
        FillError::Missing(missing) => {
            let (params, secrets): (Vec<String>, Vec<String>) =
                missing.into_iter().partition(|m| m.starts_with("param:"));
            let mut said = Vec::new();
            if !secrets.is_empty() {
                said.push(format!("no secret named {}", secrets.join(", ")));
            }
            if !params.is_empty() {
                said.push(format!("no value for {}", params.join(", ")));
            }
            said.join("; ")
        }
        FillError::Misplaced(m) => format!(
            "parameter {} stands where it is no longer allowed ({}): {}",
            m.param,
            m.field,
            app::domain::job::parse::misplaced_problem(&m)
        ),
        FillError::HeaderBreak { param } => {
            format!("parameter {param} would put a line break in a header")
        }
        FillError::DotSegment { param } => {
            format!("parameter {param} would be '.' or '..' in the URL's path")
        }
        FillError::Origin => "the parameters would send the call to another host".to_string(),
    }
}

async fn run(
    shared: &Shared,
    kind: &JobKind,
    input: &AttemptInput,
    live: &LiveOutput,
    log: Sink,
) -> Execution {
    match kind {
        JobKind::Http {
            method,
            url,
            headers,
            body,
            expected,
            follow_redirects,
        } => {
            if let Some(denied) = shared.http.refusal(url) {
                return Execution::failed(ErrorClass::Permanent, denied.to_string(), String::new());
            }
            let client = shared.http.for_job(*follow_redirects, !body.is_empty());
            let request = Request {
                method,
                url,
                headers,
                body,
            };
            http(client, &request, expected, input, &log).await
        }
        JobKind::Command {
            program,
            args,
            transient_codes,
        } => {
            if !shared.config.allow_commands {
                return Execution::failed(
                    ErrorClass::Permanent,
                    "command jobs are switched off on this node (allow_commands = false)",
                    String::new(),
                );
            }
            command(program, args, transient_codes, input, live, log).await
        }
        // Its runs are never claimed (they await pings); one made before the job became
        // watched has nothing to run here.
        JobKind::Watch(_) => Execution::failed(
            ErrorClass::Permanent,
            "a watched job runs elsewhere: Bulwark only waits for its pings",
            String::new(),
        ),
        JobKind::Builtin { task, params } => {
            let Some(task_impl) = shared.builtins.get(task) else {
                return Execution::failed(
                    ErrorClass::Permanent,
                    format!("there is no built-in task named '{task}'"),
                    String::new(),
                );
            };
            let progress = Progress::new();
            // The run's parameters join the task's own settings, which win on a clash.
            let mut params = params.clone();
            if let Ok(values) = &input.params {
                for (name, value) in values {
                    params
                        .entry(name.clone())
                        .or_insert_with(|| app::domain::job::params::as_text(value));
                }
            }
            let ctx = TaskContext {
                db: shared.db.clone(),
                params,
                idempotency_key: input.idempotency_key.clone(),
                timezone: input.timezone,
                progress: progress.clone(),
                retention: shared.config.retention,
                traffic_alerts: shared.config.traffic_alerts,
                default_locale: shared.config.default_locale,
            };
            let deadline = Instant::now() + input.timeout;
            let task = task_impl.run(ctx);
            tokio::pin!(task);
            let mut publish = tokio::time::interval(LIVE_EVERY);
            loop {
                let stall_at = input.stall.map(|s| progress.last() + s);
                tokio::select! {
                    _ = publish.tick() => live.publish(progress.note()),
                    result = &mut task => break match result {
                        Ok(output) => {
                            log.send(Stream::Stdout, output.as_bytes()).await;
                            Execution::ok(tail(output.as_bytes()))
                        }
                        Err(e) => {
                            log.send(Stream::Stderr, e.message.as_bytes()).await;
                            Execution::failed(e.class, e.message, progress.note())
                        }
                    },
                    () = tokio::time::sleep_until(deadline) => {
                        break timed_out(input.timeout, progress.note());
                    }
                    () = sleep_until_opt(stall_at) => {
                        // Progress may have been reported while we slept.
                        if let Some(stall) = input.stall
                            && progress.last() + stall <= Instant::now()
                        {
                            break Execution::stalled(stall, progress.note());
                        }
                    }
                }
            }
        }
    }
}

fn timed_out(timeout: Duration, output: String) -> Execution {
    Execution::failed(
        ErrorClass::Timeout,
        format!("no result within the timeout of {} ms", timeout.as_millis()),
        output,
    )
}

/// Response bodies are read up to this much; only the tail is kept, and a body that goes on
/// (a stream, a mistake) cannot hold an attempt or the node's memory.
pub const MAX_BODY_BYTES: usize = 8 << 20;

/// The engine's HTTP clients, one per redirect policy (reqwest sets the policy per client).
/// Every one refuses a redirect from https to http, and a 307 or 308 — which re-sends the
/// request's body — to another origin when there is a body; ten hops at most.
pub struct Clients {
    deny: crate::outbound::Deny,
    none: reqwest::Client,
    same_origin: reqwest::Client,
    any: reqwest::Client,
    /// `any`, for a request with a body: a 307 or 308 is followed only within the origin.
    any_keeping_body: reqwest::Client,
}

impl Clients {
    /// Clients that never reach `deny`'s networks, by name, address or redirect.
    pub fn new(deny: &crate::outbound::Deny) -> Clients {
        let client = |policy| client(deny, policy);
        Clients {
            none: client(reqwest::redirect::Policy::none()),
            same_origin: client(policy(deny, false, true)),
            any: client(policy(deny, true, false)),
            any_keeping_body: client(policy(deny, true, true)),
            deny: deny.clone(),
        }
    }

    /// Why a job's URL may not be called (an address in `outbound_deny`), if it may not.
    pub fn refusal(&self, url: &str) -> Option<crate::outbound::Denied> {
        self.deny.refusal(&reqwest::Url::parse(url).ok()?)
    }

    /// The client for a job's choice, and whether its request has a body.
    pub fn for_job(&self, redirects: Redirects, has_body: bool) -> &reqwest::Client {
        match (redirects, has_body) {
            (Redirects::None, _) => &self.none,
            (Redirects::SameOrigin, _) => &self.same_origin,
            (Redirects::Any, false) => &self.any,
            (Redirects::Any, true) => &self.any_keeping_body,
        }
    }
}

impl Default for Clients {
    fn default() -> Self {
        Clients::new(&crate::outbound::Deny::standard())
    }
}

/// A redirect policy: `cross_origin` follows other origins; `keep_body` stops a 307 or 308 to
/// another origin (the two statuses that re-send the body). A stopped redirect's 3xx answer is
/// the attempt's result. A redirect to an address in `deny` is an error.
fn policy(
    deny: &crate::outbound::Deny,
    cross_origin: bool,
    keep_body: bool,
) -> reqwest::redirect::Policy {
    let deny = deny.clone();
    reqwest::redirect::Policy::custom(move |attempt| {
        if let Some(denied) = deny.refusal(attempt.url()) {
            return attempt.error(denied);
        }
        let Some(previous) = attempt.previous().last() else {
            return attempt.follow();
        };
        let first = attempt.previous().first().unwrap_or(previous);
        let same_origin = first.origin() == attempt.url().origin();
        let downgrade = previous.scheme() == "https" && attempt.url().scheme() != "https";
        let resends_body = matches!(attempt.status().as_u16(), 307 | 308);
        if attempt.previous().len() >= 10 {
            attempt.error("more than 10 redirects")
        } else if downgrade
            || (!same_origin && !cross_origin)
            || (!same_origin && keep_body && resends_body)
        {
            attempt.stop()
        } else {
            attempt.follow()
        }
    })
}

fn client(deny: &crate::outbound::Deny, policy: reqwest::redirect::Policy) -> reqwest::Client {
    deny.client_builder()
        .user_agent(concat!("Bulwark/", env!("CARGO_PKG_VERSION")))
        .redirect(policy)
        .build()
        .unwrap_or_default()
}

/// A URL as an error message may show it: no user, password, query or fragment (where
/// credentials and tokens live).
pub fn display_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) => {
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            parsed.set_query(None);
            parsed.set_fragment(None);
            parsed.to_string()
        }
        Err(_) => "(an unparsable URL)".to_string(),
    }
}

/// An HTTP job's request, its parameters and secrets filled in.
struct Request<'a> {
    method: &'a str,
    url: &'a str,
    headers: &'a [(String, String)],
    body: &'a str,
}

async fn http(
    client: &reqwest::Client,
    request: &Request<'_>,
    expected: &[(u16, u16)],
    input: &AttemptInput,
    log: &Sink,
) -> Execution {
    let (url, body, request_headers) = (request.url, request.body, request.headers);
    let Ok(method) = reqwest::Method::from_bytes(request.method.as_bytes()) else {
        let message = format!("invalid method {}", request.method);
        return Execution::failed(ErrorClass::Permanent, message, String::new());
    };
    let mut request = client
        .request(method, url)
        .header("Idempotency-Key", &input.idempotency_key)
        .header("Bulwark-Attempt", input.attempt)
        .timeout(input.timeout);
    for (name, value) in request_headers {
        request = request.header(name, value);
    }
    if !body.is_empty() {
        request = request.body(body.to_string());
    }
    let response = match tokio::time::timeout(input.timeout, request.send()).await {
        Err(_) => return timed_out(input.timeout, String::new()),
        Ok(Err(e)) if e.is_timeout() => return timed_out(input.timeout, String::new()),
        // outbound_deny: a name resolving only there, or a redirect there; no retry helps.
        Ok(Err(e)) if crate::outbound::denial(&e).is_some() => {
            let denied = crate::outbound::denial(&e).map(ToString::to_string);
            return Execution::failed(
                ErrorClass::Permanent,
                format!(
                    "request to {} refused: {}",
                    display_url(url),
                    denied.unwrap_or_default()
                ),
                String::new(),
            );
        }
        Ok(Err(e)) => {
            // Connection refused, DNS, TLS: the far side may be back soon. reqwest's own text
            // names the whole URL, query and all; the message names it without secrets.
            return Execution::failed(
                ErrorClass::Transient,
                format!(
                    "request to {} failed: {}",
                    display_url(url),
                    e.without_url()
                ),
                String::new(),
            );
        }
        Ok(Ok(response)) => response,
    };
    let status = response.status().as_u16();
    let retry_after = response
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| parse_retry_after(v, crate::clock::now()));
    let text = match tokio::time::timeout(input.timeout, body_tail(response, log)).await {
        Ok(text) => text,
        Err(_) => return timed_out(input.timeout, String::new()),
    };
    let output = format!("HTTP {status}\n{text}");
    if expected
        .iter()
        .any(|(lo, hi)| (*lo..=*hi).contains(&status))
    {
        return Execution::ok(output);
    }
    let mut execution = Execution::failed(
        classify_http_status(status),
        format!("HTTP {status} is not an expected status"),
        output,
    );
    execution.report.retry_after_ms = retry_after;
    execution
}

/// The last [`READ_BYTES`] of a response body, read chunk by chunk up to [`MAX_BODY_BYTES`];
/// all of it goes to the attempt's log.
async fn body_tail(mut response: reqwest::Response, log: &Sink) -> String {
    let mut kept: Vec<u8> = Vec::with_capacity(TAIL_BYTES * 2);
    let mut read = 0usize;
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                log.send(Stream::Stdout, &chunk).await;
                read += chunk.len();
                kept.extend_from_slice(&chunk);
                if kept.len() > READ_BYTES * 2 {
                    kept.drain(..kept.len() - READ_BYTES);
                }
                if read >= MAX_BODY_BYTES {
                    return format!(
                        "{}\n(body longer than {} MiB: the rest was not read)",
                        tail(&kept),
                        MAX_BODY_BYTES >> 20
                    );
                }
            }
            Ok(None) => return tail(&kept),
            Err(e) => return format!("{}\n(body unreadable: {})", tail(&kept), e.without_url()),
        }
    }
}

/// What a command may see of the server's environment: enough to find programs and format
/// text, never the server's own settings (its database URL, SMTP password, admin password).
const INHERITED_ENV: &[&str] = &["PATH", "HOME", "LANG", "TZ"];

async fn command(
    program: &str,
    args: &[String],
    transient_codes: &[i32],
    input: &AttemptInput,
    live: &LiveOutput,
    log: Sink,
) -> Execution {
    let mut cmd = tokio::process::Command::new(program);
    cmd.env_clear();
    for name in INHERITED_ENV {
        if let Some(value) = std::env::var_os(name) {
            cmd.env(name, value);
        }
    }
    if let Ok(params) = &input.params {
        for (name, value) in params {
            cmd.env(
                app::domain::job::params::env_name(name),
                app::domain::job::params::as_text(value),
            );
        }
    }
    cmd.args(args)
        .env("BULWARK_IDEMPOTENCY_KEY", &input.idempotency_key)
        .env("BULWARK_RUN_ID", input.run_id.to_string())
        .env("BULWARK_ATTEMPT", input.attempt.to_string())
        .env("BULWARK_JOB", &input.job_name)
        .env("BULWARK_SCHEDULED_AT", &input.tick.scheduled_at)
        .env(
            "BULWARK_BUSINESS_DATE",
            input.tick.business_date.to_string(),
        );
    if let Some(shard) = input.tick.shard {
        cmd.env("BULWARK_SHARD_INDEX", shard.index.to_string())
            .env("BULWARK_SHARD_TOTAL", shard.total.to_string());
    }
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    // Its own process group, so everything it started (`sh -c` children) ends with it.
    #[cfg(unix)]
    cmd.process_group(0);
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => {
            return Execution::failed(
                ErrorClass::Permanent,
                format!("cannot start {program}: {e}"),
                String::new(),
            );
        }
    };
    // However this attempt ends — done, timed out, stalled, or dropped by the fence or the end
    // of the shutdown grace — the group is killed when this goes out of scope.
    let group = ProcessGroup(child.id());
    // The run's parameters as one JSON object on standard input, then end of input (a command
    // that does not read it is not held up: the write is small and the pipe is closed).
    if let Some(mut stdin) = child.stdin.take() {
        use tokio::io::AsyncWriteExt;
        let json = serde_json::to_vec(input.params.as_ref().unwrap_or(&Default::default()))
            .unwrap_or_else(|_| b"{}".to_vec());
        tokio::spawn(async move {
            let _ = stdin.write_all(&json).await;
            let _ = stdin.shutdown().await;
        });
    }
    let output = Output::default();
    let readers = spawn_readers(&mut child, &output, log);

    let deadline = Instant::now() + input.timeout;
    let mut publish = tokio::time::interval(LIVE_EVERY);
    let ended = loop {
        let stall_at = input.stall.map(|s| output.last() + s);
        tokio::select! {
            status = child.wait() => break Ended::Exited(status),
            _ = publish.tick() => live.publish(output.tail()),
            () = tokio::time::sleep_until(deadline) => break Ended::TimedOut,
            () = sleep_until_opt(stall_at) => {
                if let Some(stall) = input.stall
                    && output.last() + stall <= Instant::now()
                {
                    break Ended::Stalled(stall);
                }
            }
        }
    };
    drop(group);
    let _ = child.kill().await;
    for reader in readers.into_iter().flatten() {
        drain(reader, &output).await;
    }
    let text = output.tail();
    match ended {
        Ended::TimedOut => timed_out(input.timeout, text),
        Ended::Stalled(stall) => Execution::stalled(stall, text),
        Ended::Exited(Err(e)) => Execution::failed(
            ErrorClass::Transient,
            format!("waiting for {program} failed: {e}"),
            text,
        ),
        Ended::Exited(Ok(status)) if status.success() => Execution::ok(text),
        Ended::Exited(Ok(status)) => {
            let class = classify_exit(status.code(), transient_codes);
            let message = match status.code() {
                Some(code) => format!("{program} exited with code {code}"),
                None => format!("{program} was killed by a signal"),
            };
            Execution::failed(class, message, text)
        }
    }
}

enum Ended {
    Exited(std::io::Result<std::process::ExitStatus>),
    TimedOut,
    Stalled(Duration),
}

async fn sleep_until_opt(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// A command's process group, killed (SIGKILL) when this is dropped.
struct ProcessGroup(Option<u32>);

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        kill_group(self.0);
    }
}

#[cfg(unix)]
fn kill_group(pid: Option<u32>) {
    use nix::sys::signal::{Signal, killpg};
    use nix::unistd::Pid;
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
        // ESRCH (the group is gone already) is the usual answer after a clean exit.
        let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
    }
}

#[cfg(not(unix))]
fn kill_group(_pid: Option<u32>) {}

/// A command's interleaved stdout and stderr (the last [`READ_BYTES`]), when it last printed
/// anything, how much it printed, and how many readers are handing a piece to the log.
#[derive(Clone)]
struct Output(Arc<Mutex<Printed>>);

struct Printed {
    tail: Vec<u8>,
    last: Instant,
    total: u64,
    handing: i32,
}

impl Default for Output {
    fn default() -> Self {
        Output(Arc::new(Mutex::new(Printed {
            tail: Vec::new(),
            last: Instant::now(),
            total: 0,
            handing: 0,
        })))
    }
}

impl Output {
    fn push(&self, bytes: &[u8]) {
        let mut out = self.lock();
        out.tail.extend_from_slice(bytes);
        let excess = out.tail.len().saturating_sub(READ_BYTES);
        if excess > 0 {
            out.tail.drain(..excess);
        }
        out.last = Instant::now();
        out.total += bytes.len() as u64;
    }

    fn handing(&self, change: i32) {
        self.lock().handing += change;
    }

    fn is_handing(&self) -> bool {
        self.lock().handing > 0
    }

    fn total(&self) -> u64 {
        self.lock().total
    }

    fn last(&self) -> Instant {
        self.lock().last
    }

    fn tail(&self) -> String {
        tail(&self.lock().tail)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Printed> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A task per stream of `child`, reading it into `output` and `log`.
fn spawn_readers(
    child: &mut tokio::process::Child,
    output: &Output,
    log: Sink,
) -> [Option<tokio::task::JoinHandle<()>>; 2] {
    let to = |which| (output.clone(), log.clone(), which);
    [
        child
            .stdout
            .take()
            .map(|s| tokio::spawn(collect(s, to(Stream::Stdout)))),
        child
            .stderr
            .take()
            .map(|s| tokio::spawn(collect(s, to(Stream::Stderr)))),
    ]
}

/// Reads one of a command's streams into its tail and its log.
async fn collect(mut stream: impl AsyncRead + Unpin, (output, log, which): (Output, Sink, Stream)) {
    let mut chunk = vec![0u8; 64 * 1024];
    while let Ok(n) = stream.read(&mut chunk).await {
        if n == 0 {
            break;
        }
        output.push(&chunk[..n]);
        output.handing(1);
        log.send(which, &chunk[..n]).await;
        output.handing(-1);
    }
}

/// Waits, once the command has exited, for a reader to hand on what is left in its pipe.
/// While it waits on the log (the database is slow) or still reads, it is waited for; a
/// reader that has read nothing for a second is left: a grandchild holds the pipe open, and
/// must not hold the attempt.
async fn drain(mut reader: tokio::task::JoinHandle<()>, output: &Output) {
    let mut read = output.total();
    loop {
        match tokio::time::timeout(Duration::from_secs(1), &mut reader).await {
            Ok(_) => return,
            Err(_) if output.is_handing() || output.total() != read => read = output.total(),
            Err(_) => return,
        }
    }
}

/// The last [`READ_BYTES`] of `bytes` as text both databases store: invalid UTF-8 replaced by
/// U+FFFD, and NUL — which PostgreSQL's `text` refuses, and with it the whole write-back of the
/// batch the attempt was in — by U+2400 (␀), with a last line saying what was replaced. The
/// bytes themselves are left as the job wrote them (the run page shows the tail; a stored
/// log keeps the bytes).
pub fn tail(bytes: &[u8]) -> String {
    let cut = bytes.len().saturating_sub(READ_BYTES);
    // Past the rest of a character the cut went through (up to three continuation bytes): a
    // broken first character is the cut's doing, not the job's.
    let start = (cut..bytes.len())
        .take(4)
        .find(|&i| cut == 0 || bytes[i] & 0b1100_0000 != 0b1000_0000)
        .unwrap_or(cut);
    storable_text(&bytes[start..])
}

/// `bytes` as text both databases store (see [`tail`]).
pub fn storable_text(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let invalid = matches!(text, std::borrow::Cow::Owned(_));
    let nul = text.contains('\0');
    if !invalid && !nul {
        return text.into_owned();
    }
    let mut text = text.replace('\0', "\u{2400}");
    text.push_str(match (nul, invalid) {
        (true, true) => "\n(Bulwark: NUL bytes are shown as \u{2400}, invalid UTF-8 as \u{FFFD})",
        (true, false) => "\n(Bulwark: NUL bytes are shown as \u{2400})",
        _ => "\n(Bulwark: invalid UTF-8 is shown as \u{FFFD})",
    });
    text
}

/// The one-minute load average, when the system tells it.
pub fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_is_kept_as_text_both_databases_store() {
        assert_eq!(tail(b"plain\n"), "plain\n");
        let odd = tail(b"a\0b\xff");
        assert_eq!(
            odd,
            "a\u{2400}b\u{FFFD}\n(Bulwark: NUL bytes are shown as \u{2400}, invalid UTF-8 as \u{FFFD})"
        );
        assert!(!odd.contains('\0'));
        assert!(tail(b"x\0").ends_with("(Bulwark: NUL bytes are shown as \u{2400})"));
    }

    #[test]
    fn a_cut_through_a_character_is_not_invalid_output() {
        // 'é' is two bytes: an odd number of them before a cut at READ_BYTES (and then at
        // TAIL_BYTES) from the end leaves half a character at the start.
        let text = format!("x{}", "é".repeat(READ_BYTES));
        let read = tail(text.as_bytes());
        let kept = finish_tail(read.clone(), &[]);
        for text in [&read, &kept] {
            assert!(
                !text.contains('\u{FFFD}') && !text.contains("Bulwark:"),
                "{text}"
            );
        }
        assert!(read.len() <= READ_BYTES && read.len() >= READ_BYTES - 3);
        assert!(kept.len() <= TAIL_BYTES && kept.len() >= TAIL_BYTES - 3);
    }

    #[test]
    fn a_secret_across_the_cut_is_taken_out_whole() {
        let secret = "tok-0123456789abcdef";
        let secrets = vec![("API".to_string(), secret.to_string())];
        // The value starts eight bytes before the last TAIL_BYTES: cut first, its last twelve
        // characters would be kept in the clear.
        let mut printed = format!("lead {secret}");
        let filler = TAIL_BYTES - (secret.len() - 8);
        printed.push_str(&"-".repeat(filler));
        let kept = finish_tail(tail(printed.as_bytes()), &secrets);
        assert!(kept.len() <= TAIL_BYTES);
        assert!(!kept.contains("456789abcdef"), "{}", &kept[..40]);
        assert!(kept.contains("API}"), "{}", &kept[..40]);
    }
}
