//! What one attempt does: an HTTP call, a command, or a built-in task — each bounded by the
//! attempt's timeout, each reporting success or a classed failure and the tail of its output.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use app::domain::job::JobKind;
use app::domain::run::{
    AttemptReport, ErrorClass, classify_exit, classify_http_status, parse_retry_after,
};
use tokio::io::{AsyncRead, AsyncReadExt};

use super::Shared;
use super::builtin::TaskContext;

/// Kept of an attempt's output: enough to see what went wrong, bounded for the database.
pub const TAIL_BYTES: usize = 4096;

pub struct AttemptInput<'a> {
    pub timeout: Duration,
    pub idempotency_key: &'a str,
    pub run_id: i64,
    pub job_name: &'a str,
    /// The job's time zone (what "today" means to a built-in task).
    pub timezone: chrono_tz::Tz,
}

/// How an attempt went.
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

    fn failed(class: ErrorClass, message: impl Into<String>, output: String) -> Self {
        Execution {
            report: AttemptReport::failed(class),
            message: Some(message.into()),
            output_tail: output,
        }
    }
}

pub async fn execute(shared: &Shared, kind: &JobKind, input: &AttemptInput<'_>) -> Execution {
    match kind {
        JobKind::Http {
            method,
            url,
            headers,
            body,
            expected,
        } => http(shared, method, url, headers, body, expected, input).await,
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
            command(program, args, transient_codes, input).await
        }
        JobKind::Builtin { task, params } => {
            let Some(task_impl) = shared.builtins.get(task) else {
                return Execution::failed(
                    ErrorClass::Permanent,
                    format!("there is no built-in task named '{task}'"),
                    String::new(),
                );
            };
            let ctx = TaskContext {
                db: shared.db.clone(),
                params: params.clone(),
                idempotency_key: input.idempotency_key.to_string(),
                timezone: input.timezone,
            };
            match tokio::time::timeout(input.timeout, task_impl.run(ctx)).await {
                Ok(Ok(output)) => Execution::ok(tail(output.as_bytes())),
                Ok(Err(e)) => Execution::failed(e.class, e.message, String::new()),
                Err(_) => timed_out(input.timeout, String::new()),
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

async fn http(
    shared: &Shared,
    method: &str,
    url: &str,
    headers: &[(String, String)],
    body: &str,
    expected: &[(u16, u16)],
    input: &AttemptInput<'_>,
) -> Execution {
    let method = match reqwest::Method::from_bytes(method.as_bytes()) {
        Ok(m) => m,
        Err(_) => {
            return Execution::failed(
                ErrorClass::Permanent,
                format!("invalid method {method}"),
                String::new(),
            );
        }
    };
    let mut request = shared
        .http
        .request(method, url)
        .header("Idempotency-Key", input.idempotency_key)
        .timeout(input.timeout);
    for (name, value) in headers {
        request = request.header(name, value);
    }
    if !body.is_empty() {
        request = request.body(body.to_string());
    }
    let response = match tokio::time::timeout(input.timeout, request.send()).await {
        Err(_) => return timed_out(input.timeout, String::new()),
        Ok(Err(e)) if e.is_timeout() => return timed_out(input.timeout, String::new()),
        Ok(Err(e)) => {
            // Connection refused, DNS, TLS: the far side may be back soon.
            return Execution::failed(
                ErrorClass::Transient,
                format!("request failed: {e}"),
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
    let text = match tokio::time::timeout(input.timeout, response.bytes()).await {
        Ok(Ok(bytes)) => tail(&bytes),
        Ok(Err(e)) => format!("(body unreadable: {e})"),
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

async fn command(
    program: &str,
    args: &[String],
    transient_codes: &[i32],
    input: &AttemptInput<'_>,
) -> Execution {
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args)
        .env("BULWARK_IDEMPOTENCY_KEY", input.idempotency_key)
        .env("BULWARK_RUN_ID", input.run_id.to_string())
        .env("BULWARK_JOB", input.job_name)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    // Its own process group, so a timeout kills what it started too (`sh -c` children).
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
    let buffer = Arc::new(Mutex::new(Vec::<u8>::new()));
    let readers = [
        child
            .stdout
            .take()
            .map(|s| tokio::spawn(collect(s, buffer.clone()))),
        child
            .stderr
            .take()
            .map(|s| tokio::spawn(collect(s, buffer.clone()))),
    ];

    let status = tokio::select! {
        status = child.wait() => Some(status),
        () = tokio::time::sleep(input.timeout) => None,
    };
    if status.is_none() {
        kill_group(&child);
        let _ = child.kill().await;
    }
    for reader in readers.into_iter().flatten() {
        // A grandchild holding the pipe open must not hold the attempt.
        let _ = tokio::time::timeout(Duration::from_secs(1), reader).await;
    }
    let output = buffer.lock().map(|b| tail(&b)).unwrap_or_default();
    match status {
        None => timed_out(input.timeout, output),
        Some(Err(e)) => Execution::failed(
            ErrorClass::Transient,
            format!("waiting for {program} failed: {e}"),
            output,
        ),
        Some(Ok(status)) if status.success() => Execution::ok(output),
        Some(Ok(status)) => {
            let class = classify_exit(status.code(), transient_codes);
            let message = match status.code() {
                Some(code) => format!("{program} exited with code {code}"),
                None => format!("{program} was killed by a signal"),
            };
            Execution::failed(class, message, output)
        }
    }
}

#[cfg(unix)]
fn kill_group(child: &tokio::process::Child) {
    use nix::sys::signal::{Signal, killpg};
    use nix::unistd::Pid;
    if let Some(pid) = child.id().and_then(|p| i32::try_from(p).ok()) {
        let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
    }
}

#[cfg(not(unix))]
fn kill_group(_child: &tokio::process::Child) {}

async fn collect(mut stream: impl AsyncRead + Unpin, buffer: Arc<Mutex<Vec<u8>>>) {
    let mut chunk = [0u8; 4096];
    while let Ok(n) = stream.read(&mut chunk).await {
        if n == 0 {
            break;
        }
        if let Ok(mut b) = buffer.lock() {
            b.extend_from_slice(&chunk[..n]);
            let excess = b.len().saturating_sub(TAIL_BYTES);
            if excess > 0 {
                b.drain(..excess);
            }
        }
    }
}

/// The last [`TAIL_BYTES`] of `bytes` as text (invalid UTF-8 replaced).
pub fn tail(bytes: &[u8]) -> String {
    let start = bytes.len().saturating_sub(TAIL_BYTES);
    String::from_utf8_lossy(&bytes[start..]).into_owned()
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
