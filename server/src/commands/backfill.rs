//! `bulwark backfill JOB --from DATE --to DATE [--per-minute N] [--parallel K] [--rerun]
//! [--dry-run] [--json]`: a job's past ticks over a range of business dates, run again
//! (`app/src/services/backfills.rs`). A running `serve` starts the runs.

use anyhow::Context;
use app::domain::backfill::{Pace, line};
use app::domain::job::JobSpec;
use app::services::backfills::{self, BackfillServiceError, Planned, Request, TickAction};
use chrono::NaiveDate;
use sea_orm::DatabaseConnection;

/// What the command line asked for.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// The job.
    pub job: String,
    /// The first business date, in the job's zone (YYYY-MM-DD).
    #[arg(long)]
    pub from: NaiveDate,
    /// The last business date, inclusive; not after today.
    #[arg(long)]
    pub to: NaiveDate,
    /// Runs started per minute, at most.
    #[arg(long)]
    pub per_minute: Option<u32>,
    /// Runs of the backfill started at once, at most (default 1: one after another). A job's
    /// runs still execute one at a time (its lane): above 1 only keeps the next ones queued.
    #[arg(long, default_value_t = 1)]
    pub parallel: u32,
    /// Give a new run to ticks whose latest run ended dead.
    #[arg(long)]
    pub rerun: bool,
    /// Print the ticks, one a line (when it runs, RFC 3339 in the job's zone, then its
    /// business date), and create nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print what was planned or made as JSON.
    #[arg(long)]
    pub json: bool,
}

pub async fn run(db: &DatabaseConnection, args: &Args) -> anyhow::Result<()> {
    let job = super::job_named(db, &args.job).await?;
    let request = Request {
        from: args.from,
        to: args.to,
        pace: Pace {
            parallel: args.parallel,
            per_minute: args.per_minute,
        },
        rerun: args.rerun,
    };
    let now = crate::clock::now();
    let refused = |e: BackfillServiceError| match e {
        BackfillServiceError::Refused(e) => {
            anyhow::anyhow!("{}", app::i18n::current().say(&e.problem()))
        }
        other => anyhow::Error::new(other).context("could not backfill"),
    };
    if args.dry_run {
        let (spec, planned) = backfills::plan(db, &job, &request, now)
            .await
            .map_err(refused)?;
        return print(&spec, None, &planned, args.json);
    }
    let (made, planned) = backfills::start(db, &job, &request, &super::cli(), now)
        .await
        .map_err(refused)?;
    let spec = app::services::jobs::to_spec(&job).context("could not read the job")?;
    print(
        &spec,
        made.as_ref().map(|b| (b.id, b.total)),
        &planned,
        args.json,
    )
}

fn print(
    spec: &JobSpec,
    made: Option<(i64, i32)>,
    planned: &[Planned],
    json: bool,
) -> anyhow::Result<()> {
    if json {
        let view = backfills::plan_view(spec, made.map(|(id, _)| id), planned);
        let out = serde_json::json!({
            "backfill": view.backfill,
            "runs": made.map_or(0, |(_, total)| total),
            "ticks": view.ticks,
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    for p in planned {
        let note = match p.action {
            TickAction::New => String::new(),
            TickAction::Rerun(id) => format!(" rerun of #{id}"),
            TickAction::Has(id) => format!(" has run #{id}"),
        };
        println!("{}{note}", line(spec, &p.due));
    }
    match made {
        Some((id, total)) => eprintln!(
            "backfill #{id}: {total} runs; a running `bulwark serve` starts them (bulwark runs list --job {})",
            spec.name
        ),
        None if planned.is_empty() => eprintln!("no tick of the job falls in the range"),
        None => eprintln!("nothing to backfill: every tick in the range has its run"),
    }
    Ok(())
}
