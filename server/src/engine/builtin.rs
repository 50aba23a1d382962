//! Built-in tasks: code that ships with Bulwark and runs as a job.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use app::domain::duration;
use app::domain::run::ErrorClass;
use sea_orm::DatabaseConnection;

use crate::cluster;
use crate::traffic::store;

/// What a task gets: its parameters from the job, and the run's idempotency key so it can
/// refuse to do the same work twice.
pub struct TaskContext {
    pub db: DatabaseConnection,
    pub params: BTreeMap<String, String>,
    pub idempotency_key: String,
    /// The job's time zone.
    pub timezone: chrono_tz::Tz,
    /// Where a long task says it is still moving (the job's stall timeout watches it).
    pub progress: Progress,
    /// How long runs, audit entries and mails are kept (the `cleanup` task).
    pub retention: app::services::retention::Retention,
    /// The language of mails and chat messages where nothing else sets one.
    pub default_locale: app::i18n::Locale,
    /// When the `traffic-alerts` task alerts.
    pub traffic_alerts: app::domain::traffic_alerts::Rules,
}

/// A task's sign of life: when it last reported progress, and what it said.
#[derive(Clone)]
pub struct Progress(Arc<std::sync::Mutex<(tokio::time::Instant, String)>>);

impl Progress {
    pub fn new() -> Self {
        Progress(Arc::new(std::sync::Mutex::new((
            tokio::time::Instant::now(),
            String::new(),
        ))))
    }

    /// Says the task is still moving, and where (kept as the attempt's output if it fails).
    pub fn report(&self, note: impl Into<String>) {
        let mut p = self.lock();
        *p = (tokio::time::Instant::now(), note.into());
    }

    pub fn last(&self) -> tokio::time::Instant {
        self.lock().0
    }

    pub fn note(&self) -> String {
        self.lock().1.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (tokio::time::Instant, String)> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Default for Progress {
    fn default() -> Self {
        Progress::new()
    }
}

/// A failed task says whether trying again could help.
#[derive(Debug)]
pub struct TaskError {
    pub class: ErrorClass,
    pub message: String,
}

impl TaskError {
    /// A failure another attempt may not meet (the database was busy or out of reach).
    pub fn transient(e: impl std::fmt::Display) -> TaskError {
        TaskError {
            class: ErrorClass::Transient,
            message: e.to_string(),
        }
    }
}

pub type TaskFuture = Pin<Box<dyn Future<Output = Result<String, TaskError>> + Send>>;

pub trait BuiltinTask: Send + Sync {
    /// Runs once; `Ok` carries a short output for the attempt's tail.
    fn run(&self, ctx: TaskContext) -> TaskFuture;
}

/// The tasks a `builtin` job can name (their names are listed in `app::domain::job`).
#[derive(Clone)]
pub struct Registry {
    tasks: HashMap<&'static str, Arc<dyn BuiltinTask>>,
}

impl Registry {
    pub fn standard() -> Self {
        let mut tasks: HashMap<&'static str, Arc<dyn BuiltinTask>> = HashMap::new();
        tasks.insert("demo", Arc::new(Demo));
        tasks.insert("noop", Arc::new(Noop));
        tasks.insert("traffic-flush", Arc::new(TrafficFlush));
        tasks.insert("traffic-clean", Arc::new(TrafficClean));
        tasks.insert("mail-digest", Arc::new(MailDigest));
        tasks.insert("mail-trends", Arc::new(MailTrends));
        tasks.insert("traffic-reports", Arc::new(TrafficReports));
        tasks.insert("traffic-alerts", Arc::new(TrafficAlerts));
        tasks.insert("cleanup", Arc::new(Cleanup));
        Registry { tasks }
    }

    pub fn get(&self, name: &str) -> Option<Arc<dyn BuiltinTask>> {
        self.tasks.get(name).cloned()
    }
}

/// Waits `sleep` (default 200ms), then fails transiently with probability `failure_rate`
/// (default 0.3), so a demo shows retries and failures happening. `fail=permanent` makes its
/// failures permanent instead; `progress=false` waits without reporting progress (what a hung
/// task looks like to a stall timeout); `panic=true` panics after the wait (what a crashing
/// task looks like to the engine).
pub struct Demo;

impl BuiltinTask for Demo {
    fn run(&self, ctx: TaskContext) -> TaskFuture {
        Box::pin(async move {
            let param = |key: &str| ctx.params.get(key).map(String::as_str);
            let sleep_ms = match param("sleep") {
                Some(text) => duration::parse_ms(text).map_err(|e| TaskError {
                    class: ErrorClass::Permanent,
                    message: format!("parameter sleep {e}"),
                })?,
                None => 200,
            };
            let rate: f64 = match param("failure_rate") {
                Some(text) => text
                    .parse()
                    .ok()
                    .filter(|r: &f64| (0.0..=1.0).contains(r))
                    .ok_or_else(|| TaskError {
                        class: ErrorClass::Permanent,
                        message: format!(
                            "parameter failure_rate must be between 0 and 1, not '{text}'"
                        ),
                    })?,
                None => 0.3,
            };
            let flag = |key: &str| match param(key) {
                None => Ok(false),
                Some("true") => Ok(true),
                Some("false") => Ok(false),
                Some(text) => Err(TaskError {
                    class: ErrorClass::Permanent,
                    message: format!("parameter {key} must be true or false, not '{text}'"),
                }),
            };
            let reports_progress = param("progress").is_none() || flag("progress")?;
            let panics = flag("panic")?;
            // Progress every 100 ms, so a stall timeout longer than that never ends it.
            let mut slept = 0;
            while slept < sleep_ms {
                let step = (sleep_ms - slept).min(100);
                tokio::time::sleep(Duration::from_millis(step)).await;
                slept += step;
                if reports_progress {
                    ctx.progress
                        .report(format!("slept {slept} of {sleep_ms} ms"));
                }
            }
            if panics {
                panic!("demo panic after {sleep_ms} ms (panic=true)");
            }
            if fastrand::f64() < rate {
                let class =
                    if param("fail").and_then(ErrorClass::parse) == Some(ErrorClass::Permanent) {
                        ErrorClass::Permanent
                    } else {
                        ErrorClass::Transient
                    };
                Err(TaskError {
                    class,
                    message: format!("demo failure (failure_rate {rate})"),
                })
            } else {
                Ok(format!(
                    "demo done in {sleep_ms} ms ({})",
                    ctx.idempotency_key
                ))
            }
        })
    }
}

/// Succeeds at once; measures the engine's own overhead.
pub struct Noop;

impl BuiltinTask for Noop {
    fn run(&self, _ctx: TaskContext) -> TaskFuture {
        Box::pin(async { Ok(String::new()) })
    }
}

/// Makes every live node write its traffic buffer (each writes only its own) and reports the
/// rows; a node that does not answer within 30 s fails the attempt, so it is retried.
pub struct TrafficFlush;

impl BuiltinTask for TrafficFlush {
    fn run(&self, ctx: TaskContext) -> TaskFuture {
        Box::pin(async move {
            let broadcast = cluster::broadcast(
                &ctx.db,
                cluster::TRAFFIC_FLUSH,
                "job traffic-flush",
                Duration::from_secs(30),
            )
            .await
            .map_err(|e| TaskError {
                class: ErrorClass::Transient,
                message: format!("could not reach the nodes through the database: {e}"),
            })?;
            let summary = FlushSummary::of(&broadcast);
            if !broadcast.silent.is_empty() || summary.failed > 0 {
                return Err(TaskError {
                    class: ErrorClass::Transient,
                    message: summary.text,
                });
            }
            Ok(summary.text)
        })
    }
}

/// A broadcast flush in words, with its totals.
pub struct FlushSummary {
    pub rows: u64,
    pub hits: u64,
    pub failed: usize,
    pub text: String,
}

impl FlushSummary {
    pub fn of(broadcast: &cluster::Broadcast) -> FlushSummary {
        let mut summary = FlushSummary {
            rows: 0,
            hits: 0,
            failed: 0,
            text: String::new(),
        };
        if broadcast.asked.is_empty() {
            summary.text = "no server is running: there is no buffered traffic to write".into();
            return summary;
        }
        let mut lines = Vec::new();
        for answer in &broadcast.answers {
            match serde_json::from_str::<cluster::FlushAnswer>(&answer.detail) {
                Ok(cluster::FlushAnswer {
                    report,
                    dropped_since_start,
                    ..
                }) if answer.ok => {
                    summary.rows += report.rows;
                    summary.hits += report.hits;
                    let dropped = if dropped_since_start > 0 {
                        format!(
                            "; {dropped_since_start} hits dropped since it started (buffer full)"
                        )
                    } else {
                        String::new()
                    };
                    lines.push(format!(
                        "{}: {} rows ({} hits) in {} ms{dropped}",
                        answer.node_id, report.rows, report.hits, report.millis
                    ));
                }
                _ => {
                    summary.failed += 1;
                    lines.push(format!("{}: failed: {}", answer.node_id, answer.detail));
                }
            }
        }
        for node in &broadcast.silent {
            lines.push(format!("{node}: did not answer"));
        }
        lines.push(format!(
            "total: {} rows ({} hits) from {} of {} nodes",
            summary.rows,
            summary.hits,
            broadcast.answers.len() - summary.failed,
            broadcast.asked.len()
        ));
        summary.text = lines.join("\n");
        summary
    }
}

/// Deletes traffic rows older than `days` (default 90), in batches, then builds the blocks
/// and tails the Traffic page's long ranges read (`app/src/services/traffic/blocks.rs`,
/// `app/src/services/traffic/tails.rs`), so the first look of the day at 90 days is as fast
/// as the next.
pub struct TrafficClean;

impl BuiltinTask for TrafficClean {
    fn run(&self, ctx: TaskContext) -> TaskFuture {
        Box::pin(async move {
            let days = match ctx.params.get("days") {
                Some(text) => parse_retention_days(text).map_err(|e| TaskError {
                    class: ErrorClass::Permanent,
                    message: e.to_string(),
                })?,
                None => DEFAULT_RETENTION_DAYS,
            };
            let cleaned = store::clean(&ctx.db, crate::clock::now(), days)
                .await
                .map_err(TaskError::transient)?;
            let window = i32::try_from(days).unwrap_or(i32::MAX).saturating_add(1);
            let built = app::services::traffic::warm(&ctx.db, window)
                .await
                .map_err(|e| TaskError {
                    class: ErrorClass::Transient,
                    message: format!("could not build the traffic blocks: {e}"),
                })?;
            Ok(format!(
                "deleted {} traffic rows older than {days} days; built {built} traffic blocks and tails",
                cleaned.rows
            ))
        })
    }
}

pub const DEFAULT_RETENTION_DAYS: u32 = 90;

/// Looks at the failure trends of all jobs (`app::domain::trends`) and mails each new
/// condition once.
pub struct MailTrends;

impl BuiltinTask for MailTrends {
    fn run(&self, ctx: TaskContext) -> TaskFuture {
        Box::pin(async move {
            app::services::trends::check(&ctx.db, crate::clock::now(), ctx.default_locale)
                .await
                .map_err(TaskError::transient)
        })
    }
}

/// Queues the daily health digest for the 24 hours before now (see `app::services::notifications::digest`),
/// once per day in the job's zone, to the digest recipients (Notifications page).
pub struct MailDigest;

impl BuiltinTask for MailDigest {
    fn run(&self, ctx: TaskContext) -> TaskFuture {
        Box::pin(async move {
            let zone = ctx.timezone;
            let now = crate::clock::now();
            let queued = app::services::notifications::digest::queue_daily(
                &ctx.db,
                now,
                zone,
                ctx.default_locale,
            )
            .await
            .map_err(TaskError::transient)?;
            Ok(queued)
        })
    }
}

/// Queues each site's scheduled traffic report for its last whole period in the job's zone
/// (`app::services::traffic::reports`); a period's report is queued once, so a late or
/// repeated run sends nothing twice.
pub struct TrafficReports;

impl BuiltinTask for TrafficReports {
    fn run(&self, ctx: TaskContext) -> TaskFuture {
        Box::pin(async move {
            let now = crate::clock::now();
            app::services::traffic::reports::queue_due(
                &ctx.db,
                now,
                ctx.timezone,
                ctx.default_locale,
            )
            .await
            .map_err(TaskError::transient)
        })
    }
}

/// Checks each site's last whole hour against its usual, and alerts when a spike rule starts
/// or stops holding (`app::services::traffic::alerts`).
pub struct TrafficAlerts;

impl BuiltinTask for TrafficAlerts {
    fn run(&self, ctx: TaskContext) -> TaskFuture {
        Box::pin(async move {
            app::services::traffic::alerts::check(
                &ctx.db,
                ctx.traffic_alerts,
                crate::clock::now(),
                ctx.timezone,
                ctx.default_locale,
            )
            .await
            .map_err(TaskError::transient)
        })
    }
}

/// Deletes what is past its retention: old runs and attempts (never the failed queue's), audit
/// entries, delivered mails, expired sessions (`app::services::retention`).
pub struct Cleanup;

impl BuiltinTask for Cleanup {
    fn run(&self, ctx: TaskContext) -> TaskFuture {
        Box::pin(async move {
            let cleaned =
                app::services::retention::clean(&ctx.db, crate::clock::now(), ctx.retention)
                    .await
                    .map_err(TaskError::transient)?;
            Ok(cleaned.to_string())
        })
    }
}

/// A retention that is not a whole number of days from 1 to 3650.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("days must be a whole number from 1 to 3650, not '{0}'")]
pub struct BadRetention(String);

/// Retention in days: a whole number from 1 to 3650.
pub fn parse_retention_days(text: &str) -> Result<u32, BadRetention> {
    text.trim()
        .parse::<u32>()
        .ok()
        .filter(|d| (1..=3650).contains(d))
        .ok_or_else(|| BadRetention(text.to_string()))
}
