//! `bulwark policy preview`: the schedule a retry policy produces, as a table or JSON.

use app::domain::duration::{self, human_ms};
use app::domain::retry::{RetryInput, RetryPolicy, Warning, WarningContext};
use serde::Serialize;

#[derive(Debug, clap::Args)]
pub struct PreviewArgs {
    /// First interval F, e.g. 500ms, 10s, 5m.
    #[arg(long)]
    first: String,
    /// Multiplier M, 1.0–8.0 in steps of 0.1.
    #[arg(long)]
    multiplier: String,
    /// Max retries C, 1–16.
    #[arg(long)]
    max_retries: String,
    /// none, full, equal or decorrelated.
    #[arg(long, default_value = "none")]
    jitter: String,
    /// Cap on one interval, e.g. 1h.
    #[arg(long)]
    cap: Option<String>,
    /// Warn when the total wait exceeds this (e.g. the job's cron period).
    #[arg(long)]
    tolerance: Option<String>,
    /// Print JSON: delays_s, cumulative_s, total_s, warnings.
    #[arg(long)]
    json: bool,
}

/// The JSON shape other tools read (`docs/ARCHITECTURE.md` §8).
#[derive(Debug, Serialize)]
pub struct Preview {
    pub delays_s: Vec<f64>,
    pub cumulative_s: Vec<f64>,
    pub total_s: f64,
    /// [low, high] of each retry's wait under the jitter mode.
    pub ranges_s: Vec<[f64; 2]>,
    pub warnings: Vec<Warning>,
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
        warnings: policy.warnings(context),
    }
}

pub fn preview(args: &PreviewArgs) -> anyhow::Result<()> {
    let input = RetryInput {
        first: args.first.clone(),
        multiplier: args.multiplier.clone(),
        max_retries: args.max_retries.clone(),
        jitter: args.jitter.clone(),
        cap: args.cap.clone().unwrap_or_default(),
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
    let preview = build(
        &policy,
        &WarningContext {
            cron_period_ms: None,
            tolerance_ms,
        },
    );

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
    Ok(())
}
