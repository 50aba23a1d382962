//! Built-in tasks: code that ships with Bulwark and runs as a job.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use app::domain::duration;
use app::domain::run::ErrorClass;

/// What a task gets: its parameters from the job, and the run's idempotency key so it can
/// refuse to do the same work twice.
pub struct TaskContext {
    pub params: BTreeMap<String, String>,
    pub idempotency_key: String,
}

/// A failed task says whether trying again could help.
#[derive(Debug)]
pub struct TaskError {
    pub class: ErrorClass,
    pub message: String,
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
        Registry { tasks }
    }

    pub fn get(&self, name: &str) -> Option<Arc<dyn BuiltinTask>> {
        self.tasks.get(name).cloned()
    }
}

/// Waits `sleep` (default 200ms), then fails transiently with probability `failure_rate`
/// (default 0.3), so a demo shows retries and failures happening. `fail=permanent` makes its
/// failures permanent instead.
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
            tokio::time::sleep(Duration::from_millis(sleep_ms)).await;
            if fastrand::f64() < rate {
                let class = if param("fail") == Some("permanent") {
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
