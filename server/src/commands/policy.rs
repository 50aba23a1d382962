//! `bulwark policy preview`: the schedule a retry policy produces, as a table or JSON, and with
//! `--job` what it would have done with that job's past failures.

use anyhow::Context as _;
use app::domain::duration::{self, human_ms};
use app::domain::recovery::{MIN_EPISODES, Replay, replay};
use app::domain::retry::{RetryInput, RetryPolicy, Warning, WarningContext, WarningKind};
use sea_orm::DatabaseConnection;
use serde::Serialize;

#[derive(Debug, clap::Args)]
pub struct PreviewArgs {
    /// First interval F, e.g. 500ms, 10s, 5m.
    #[arg(long, required_unless_present = "job")]
    first: Option<String>,
    /// Multiplier M, 1.0–8.0 in steps of 0.1.
    #[arg(long, required_unless_present = "job")]
    multiplier: Option<String>,
    /// Max retries C, 1–16.
    #[arg(long, required_unless_present = "job")]
    max_retries: Option<String>,
    /// none, full, equal or decorrelated.
    #[arg(long)]
    jitter: Option<String>,
    /// Cap on one interval, e.g. 1h.
    #[arg(long)]
    cap: Option<String>,
    /// Replay the policy against this job's failure history (what share of its past outages it
    /// would have recovered, after how long). Fields not given are the job's own policy.
    #[arg(long)]
    job: Option<String>,
    /// Warn when the total wait exceeds this (e.g. the job's cron period).
    #[arg(long)]
    tolerance: Option<String>,
    /// Print JSON: delays_s, cumulative_s, total_s, warnings (and replay, with --job).
    #[arg(long)]
    json: bool,
}

/// What the policy would have done with the job's past failure episodes.
#[derive(Debug, Serialize)]
pub struct ReplayJson {
    pub episodes: u32,
    pub censored: u32,
    /// The share of episodes recovered by retry 1, 2, …
    pub recovered_by_retry: Vec<f64>,
    pub recovered: f64,
    pub expected_wait_s: f64,
    /// At least ten episodes: fewer say too little to go by.
    pub enough: bool,
    /// Retries (1-based) that recover under 1 % more than the one before.
    pub idle_retries: Vec<u8>,
}

impl From<&Replay> for ReplayJson {
    fn from(r: &Replay) -> Self {
        ReplayJson {
            episodes: r.episodes,
            censored: r.censored,
            recovered_by_retry: r.recovered_by_retry.clone(),
            recovered: r.recovered,
            expected_wait_s: r.expected_wait_ms / 1_000.0,
            enough: r.is_enough(),
            idle_retries: r.idle_retries.clone(),
        }
    }
}

/// A warning as other tools read it: its kind, the retries it concerns and, in English, why.
#[derive(Debug, Serialize)]
pub struct WarningJson {
    pub kind: WarningKind,
    pub retries: Vec<u8>,
    pub message: String,
}

impl From<Warning> for WarningJson {
    fn from(w: Warning) -> Self {
        WarningJson {
            kind: w.kind,
            retries: w.retries,
            message: w.problem.to_string(),
        }
    }
}

/// The JSON shape other tools read (`docs/ARCHITECTURE.md` §8).
#[derive(Debug, Serialize)]
pub struct Preview {
    pub delays_s: Vec<f64>,
    pub cumulative_s: Vec<f64>,
    pub total_s: f64,
    /// [low, high] of each retry's wait under the jitter mode.
    pub ranges_s: Vec<[f64; 2]>,
    pub warnings: Vec<WarningJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay: Option<ReplayJson>,
}

pub fn build(policy: &RetryPolicy, context: &WarningContext) -> Preview {
    let s = |ms: f64| ms / 1_000.0;
    Preview {
        delays_s: policy.delays_ms().into_iter().map(s).collect(),
        cumulative_s: policy.cumulative_ms().into_iter().map(s).collect(),
        total_s: s(policy.total_ms()),
        ranges_s: policy
            .jitter_envelope_ms()
            .into_iter()
            .map(|(lo, hi)| [s(lo), s(hi)])
            .collect(),
        warnings: policy
            .warnings(context)
            .into_iter()
            .map(Into::into)
            .collect(),
        replay: None,
    }
}

/// `db` is opened only for `--job`.
pub async fn preview(
    args: &PreviewArgs,
    db: impl AsyncFnOnce() -> anyhow::Result<DatabaseConnection>,
) -> anyhow::Result<()> {
    // With --job, the fields not given are the job's own; the job's episodes come along.
    let (base, episodes) = match &args.job {
        Some(name) => {
            let db = db().await?;
            let job = super::job_named(&db, name.as_str()).await?;
            let spec = app::services::jobs::to_spec(&job)
                .map_err(|e| anyhow::anyhow!("job '{name}' cannot be read: {e}"))?;
            let episodes = app::services::evidence::episodes(&db, job.id)
                .await
                .context("could not read the job's runs")?;
            (spec.retry.to_input(), Some(episodes))
        }
        None => (RetryInput::default(), None),
    };
    let input = RetryInput {
        first: args.first.clone().unwrap_or(base.first),
        multiplier: args.multiplier.clone().unwrap_or(base.multiplier),
        max_retries: args.max_retries.clone().unwrap_or(base.max_retries),
        jitter: args.jitter.clone().unwrap_or(base.jitter),
        cap: args.cap.clone().unwrap_or(base.cap),
    };
    let policy = RetryPolicy::parse(&input).map_err(|errors| {
        anyhow::anyhow!(
            "invalid retry policy:\n{}",
            errors
                .iter()
                .map(|e| format!("  --{}: {e}", e.field().replace('_', "-")))
                .collect::<Vec<_>>()
                .join("\n")
        )
    })?;
    let tolerance_ms = args
        .tolerance
        .as_deref()
        .map(duration::parse_ms)
        .transpose()
        .map_err(|e| anyhow::anyhow!("--tolerance {e}"))?;
    let mut preview = build(
        &policy,
        &WarningContext {
            cron_period_ms: None,
            tolerance_ms,
        },
    );
    let replay = episodes.map(|episodes| replay(&policy, &episodes));
    preview.replay = replay.as_ref().map(ReplayJson::from);

    if args.json {
        println!("{}", serde_json::to_string_pretty(&preview)?);
        return Ok(());
    }
    let jittered = policy.jitter().as_str() != "none";
    println!(
        "{:>5}  {:>14}  {:>16}{}",
        "retry",
        "wait",
        "starts after",
        if jittered { "  jitter range" } else { "" }
    );
    for (i, (delay, cumulative)) in preview
        .delays_s
        .iter()
        .zip(&preview.cumulative_s)
        .enumerate()
    {
        let range = if jittered {
            let [lo, hi] = preview.ranges_s[i];
            format!("  {} – {}", human_ms(lo * 1e3), human_ms(hi * 1e3))
        } else {
            String::new()
        };
        println!(
            "{:>5}  {:>14}  {:>16}{range}",
            i + 1,
            human_ms(delay * 1e3),
            human_ms(cumulative * 1e3)
        );
    }
    println!(
        "total wait: {} ({} s)",
        human_ms(preview.total_s * 1e3),
        preview.total_s
    );
    for warning in &preview.warnings {
        println!("warning: {}", warning.message);
    }
    if let Some(replay) = &replay {
        print_replay(replay);
    }
    Ok(())
}

fn print_replay(replay: &Replay) {
    println!();
    println!(
        "against the job's history: {} failure episodes, {} never recovered",
        replay.episodes, replay.censored
    );
    if !replay.is_enough() {
        println!(
            "too few episodes to go by (fewer than {MIN_EPISODES}): the figures below are \
             anecdotes, not evidence"
        );
    }
    for (n, share) in (1u8..).zip(&replay.recovered_by_retry) {
        let idle = if replay.idle_retries.contains(&n) {
            "  (adds under 1 %)"
        } else {
            ""
        };
        println!(
            "  by retry {n:>2}: {:>5.1} % recovered{idle}",
            share * 100.0
        );
    }
    println!(
        "recovered: {:.1} %; expected wait {}",
        replay.recovered * 100.0,
        human_ms(replay.expected_wait_ms)
    );
}
