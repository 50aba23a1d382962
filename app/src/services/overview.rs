//! The Overview's figures: a dozen small grouped queries, whatever the number of jobs or runs
//! (the page polls this every few seconds).

use std::collections::HashMap;

use chrono::{DateTime, Duration, Utc};
use sea_orm::{
    ColumnTrait, DatabaseConnection, DbErr, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder,
    QuerySelect,
};

use crate::domain::cron::CronExpr;
use crate::domain::node::NodeState;
use crate::domain::run::{RunStatus, Trigger};
use crate::domain::watch::{HISTORY, Limits, Pace};
use crate::entities::{job, job_alert, job_attempt, job_run};
use crate::services::traffic::TrafficError;
use crate::views::overview::{
    Attention, Change, Failure, NextFire, NodeWait, Overview, SlowAttempt, Tiles,
};

/// How many rows each list of the page holds.
pub const LIST: usize = 10;

#[derive(Debug, thiserror::Error)]
pub enum OverviewError {
    #[error(transparent)]
    Db(#[from] DbErr),
    #[error("reading today's traffic: {0}")]
    Traffic(#[from] TrafficError),
}

/// Everything the Overview shows at `now`; "today" for traffic is in `zone`.
pub async fn read(
    db: &DatabaseConnection,
    now: DateTime<Utc>,
    zone: chrono_tz::Tz,
) -> Result<Overview, OverviewError> {
    let day_ago = now - Duration::hours(24);
    let mut tiles = Tiles::default();
    run_tiles(db, now, &mut tiles).await?;
    backlog_tiles(db, now, &mut tiles).await?;
    health_tiles(db, now, &mut tiles).await?;
    traffic_tiles(db, now, zone, &mut tiles).await?;
    let jobs = super::jobs::list_models(db).await?;
    Ok(Overview {
        now,
        tiles,
        attention: attention(db, &jobs).await?,
        slow: slow(db, &jobs, now, day_ago).await?,
        waiting: waiting(db, &jobs).await?,
        pools: super::pools::usage(db, now).await?,
        next_fires: next_fires(&jobs, now),
        failures: failures(db, &jobs).await?,
        per_hour: super::runs::per_hour(db, now, 24).await?,
    })
}

/// Runs, successes and dead runs of the last 24 hours against the 24 before.
async fn run_tiles(
    db: &DatabaseConnection,
    now: DateTime<Utc>,
    tiles: &mut Tiles,
) -> Result<(), OverviewError> {
    let day_ago = now - Duration::hours(24);
    let (now_counts, before_counts) = (
        runs_by_status(db, day_ago, now).await?,
        runs_by_status(db, now - Duration::hours(48), day_ago).await?,
    );
    let count =
        |counts: &HashMap<RunStatus, u64>, status| counts.get(&status).copied().unwrap_or(0);
    tiles.runs = Change {
        now: now_counts.values().sum(),
        before: before_counts.values().sum(),
    };
    tiles.succeeded = Change {
        now: count(&now_counts, RunStatus::Succeeded),
        before: count(&before_counts, RunStatus::Succeeded),
    };
    tiles.dead = Change {
        now: count(&now_counts, RunStatus::Dead),
        before: count(&before_counts, RunStatus::Dead),
    };
    Ok(())
}

/// What waits: running and retrying runs, the failed queue (its oldest, what joined today),
/// mails and chat messages not delivered.
async fn backlog_tiles(
    db: &DatabaseConnection,
    now: DateTime<Utc>,
    tiles: &mut Tiles,
) -> Result<(), OverviewError> {
    let gauges = super::gauges::read(db, now).await?;
    let active = |status| {
        gauges
            .runs
            .iter()
            .find(|(s, _)| *s == status)
            .map_or(0, |(_, n)| (*n).max(0) as u64)
    };
    tiles.running = active(RunStatus::Running);
    tiles.retry_wait = active(RunStatus::RetryWait);
    tiles.failed_queue = gauges
        .failed_queue
        .iter()
        .map(|(_, n)| (*n).max(0) as u64)
        .sum();
    // `gauges::read` names the mail outbox `mail` and each chat channel by its name.
    for (outbox, status, n) in &gauges.outbox {
        let n = (*n).max(0) as u64;
        match (outbox.as_str(), status.as_str()) {
            ("mail", "failed") => tiles.mail_failed += n,
            (_, "failed") => tiles.chat_failed += n,
            (_, "pending") => tiles.deliveries_waiting += n,
            _ => {}
        }
    }
    let in_queue = || {
        job_run::Entity::find()
            .filter(job_run::Column::Status.eq(RunStatus::Dead))
            .filter(job_run::Column::Resolution.is_null())
    };
    tiles.failed_oldest = in_queue()
        .select_only()
        .column_as(job_run::Column::FinishedAt.min(), "oldest")
        .into_tuple::<Option<DateTime<Utc>>>()
        .one(db)
        .await?
        .flatten();
    tiles.failed_joined = in_queue()
        .filter(job_run::Column::FinishedAt.gte(now - Duration::hours(24)))
        .count(db)
        .await?;
    Ok(())
}

/// Failing and escalated jobs, how late ticks start (P95, today against yesterday), nodes.
async fn health_tiles(
    db: &DatabaseConnection,
    now: DateTime<Utc>,
    tiles: &mut Tiles,
) -> Result<(), OverviewError> {
    let open = || job_alert::Entity::find().filter(job_alert::Column::Open.eq(true));
    tiles.failing_jobs = open().count(db).await?;
    tiles.escalated_jobs = open()
        .filter(job_alert::Column::Escalated.eq(true))
        .count(db)
        .await?;
    let (day_ago, two_days_ago) = (now - Duration::hours(24), now - Duration::hours(48));
    let lateness = lateness_ms(db, two_days_ago).await?;
    let p95 = |from: DateTime<Utc>, to: DateTime<Utc>| {
        let window: Vec<u64> = lateness
            .iter()
            .filter(|(tick, _)| *tick >= from && *tick < to)
            .map(|(_, ms)| *ms)
            .collect();
        (!window.is_empty()).then(|| crate::domain::timeout::nearest_rank(&window, 0.95))
    };
    tiles.late_p95_ms = p95(day_ago, now);
    tiles.late_p95_before_ms = p95(two_days_ago, day_ago);
    for node in super::nodes::list(db, now).await? {
        match node.state {
            NodeState::Live => tiles.nodes_live += 1,
            NodeState::Lost => tiles.nodes_lost += 1,
            NodeState::Stopped => {}
        }
    }
    Ok(())
}

/// People and bots today against yesterday, in the configured zone.
async fn traffic_tiles(
    db: &DatabaseConnection,
    now: DateTime<Utc>,
    zone: chrono_tz::Tz,
    tiles: &mut Tiles,
) -> Result<(), OverviewError> {
    let today = crate::domain::traffic_range::today(now, zone);
    let yesterday = today.pred_opt().unwrap_or(today);
    let (people, bots) = super::traffic::stats::people_and_bots(db, today, today, zone).await?;
    let (people_before, bots_before) =
        super::traffic::stats::people_and_bots(db, yesterday, yesterday, zone).await?;
    tiles.people = Change {
        now: people,
        before: people_before,
    };
    tiles.bots = Change {
        now: bots,
        before: bots_before,
    };
    Ok(())
}

/// Runs created in `[from, to)`, by status.
async fn runs_by_status(
    db: &DatabaseConnection,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Result<HashMap<RunStatus, u64>, DbErr> {
    let rows: Vec<(RunStatus, i64)> = job_run::Entity::find()
        .select_only()
        .column(job_run::Column::Status)
        .column_as(job_run::Column::Id.count(), "n")
        .filter(job_run::Column::CreatedAt.gte(from))
        .filter(job_run::Column::CreatedAt.lt(to))
        .group_by(job_run::Column::Status)
        .into_tuple()
        .all(db)
        .await?;
    Ok(rows
        .into_iter()
        .map(|(status, n)| (status, n.max(0) as u64))
        .collect())
}

/// For each cron run ticked since `since` that has started: its tick and how late its first
/// attempt started after it.
async fn lateness_ms(
    db: &DatabaseConnection,
    since: DateTime<Utc>,
) -> Result<Vec<(DateTime<Utc>, u64)>, DbErr> {
    let rows: Vec<(DateTime<Utc>, DateTime<Utc>)> = job_attempt::Entity::find()
        .select_only()
        .column(job_run::Column::ScheduledFor)
        .column(job_attempt::Column::StartedAt)
        .inner_join(job_run::Entity)
        .filter(job_attempt::Column::Number.eq(1))
        .filter(job_run::Column::Trigger.eq(Trigger::Cron))
        .filter(job_run::Column::ScheduledFor.gte(since))
        .into_tuple()
        .all(db)
        .await?;
    Ok(rows
        .into_iter()
        .map(|(tick, started)| (tick, (started - tick).num_milliseconds().max(0) as u64))
        .collect())
}

/// Jobs whose latest run is dead (and not yet dealt with) or waiting to retry, longest failing
/// first.
async fn attention(db: &DatabaseConnection, jobs: &[job::Model]) -> Result<Vec<Attention>, DbErr> {
    let latest: Vec<Option<i64>> = job_run::Entity::find()
        .select_only()
        .column_as(job_run::Column::Id.max(), "latest")
        .group_by(job_run::Column::JobId)
        .into_tuple()
        .all(db)
        .await?;
    let latest: Vec<i64> = latest.into_iter().flatten().collect();
    let mut runs = Vec::new();
    for chunk in latest.chunks(500) {
        runs.extend(
            job_run::Entity::find()
                .filter(job_run::Column::Id.is_in(chunk.to_vec()))
                .filter(job_run::Column::Status.is_in([RunStatus::Dead, RunStatus::RetryWait]))
                .filter(job_run::Column::Resolution.is_null())
                .all(db)
                .await?,
        );
    }
    let opened: HashMap<i64, DateTime<Utc>> = job_alert::Entity::find()
        .filter(job_alert::Column::Open.eq(true))
        .all(db)
        .await?
        .into_iter()
        .filter_map(|a| a.opened_at.map(|at| (a.job_id, at)))
        .collect();
    let names: HashMap<i64, &str> = jobs.iter().map(|j| (j.id, j.name.as_str())).collect();
    let watched: std::collections::HashSet<i64> = jobs
        .iter()
        .filter(|j| j.kind == crate::domain::job::Kind::Watch)
        .map(|j| j.id)
        .collect();
    let mut rows: Vec<Attention> = runs
        .into_iter()
        .map(|run| Attention {
            job_id: run.job_id,
            job: names.get(&run.job_id).copied().unwrap_or("?").to_string(),
            run_id: run.id,
            status: run.status,
            since: opened
                .get(&run.job_id)
                .copied()
                .unwrap_or(run.created_at)
                .min(run.created_at),
            error_class: run.last_error_class,
            error: run.last_error,
            in_failed_queue: run.status == RunStatus::Dead,
            watched: watched.contains(&run.job_id),
        })
        .collect();
    rows.sort_by(|a, b| a.since.cmp(&b.since).then(a.job.cmp(&b.job)));
    Ok(rows)
}

/// Attempts flagged too slow in the last 24 hours, and running attempts already past their
/// job's too-slow limit (`crate::domain::watch::Limits`), newest first.
/// Runs no live node may take, oldest first (the placement sweep marks them).
async fn waiting(db: &DatabaseConnection, jobs: &[job::Model]) -> Result<Vec<NodeWait>, DbErr> {
    let by_id: HashMap<i64, &job::Model> = jobs.iter().map(|j| (j.id, j)).collect();
    let runs = job_run::Entity::find()
        .filter(job_run::Column::Status.eq(RunStatus::WaitingForNode))
        .order_by_asc(job_run::Column::DueAt)
        .limit(LIST as u64)
        .all(db)
        .await?;
    Ok(runs
        .into_iter()
        .filter_map(|run| {
            let job = by_id.get(&run.job_id)?;
            Some(NodeWait {
                job_id: job.id,
                job: job.name.clone(),
                run_id: run.id,
                since: run.due_at.unwrap_or(run.scheduled_for),
                run_on: job.run_on.clone(),
            })
        })
        .collect())
}

async fn slow(
    db: &DatabaseConnection,
    jobs: &[job::Model],
    now: DateTime<Utc>,
    since: DateTime<Utc>,
) -> Result<Vec<SlowAttempt>, DbErr> {
    let names: HashMap<i64, &job::Model> = jobs.iter().map(|j| (j.id, j)).collect();
    let mut out = Vec::new();
    let running: Vec<(job_attempt::Model, Option<job_run::Model>)> = job_attempt::Entity::find()
        .filter(job_attempt::Column::Outcome.is_null())
        .find_also_related(job_run::Entity)
        .all(db)
        .await?;
    for (attempt, run) in running {
        let Some(run) = run else { continue };
        let Some(job) = names.get(&run.job_id) else {
            continue;
        };
        let max_duration = super::jobs::to_spec(job)
            .ok()
            .and_then(|spec| spec.kind.watch().and_then(|w| w.max_duration_ms));
        let history = super::runs::recent_success_ms(db, job.id, HISTORY).await?;
        let so_far = (now - attempt.started_at).num_milliseconds().max(0) as u64;
        let limits = Limits::learn(None, max_duration, &history);
        if matches!(limits.judge(so_far), Pace::TooSlow { .. }) {
            out.push(SlowAttempt {
                job: job.name.clone(),
                run_id: run.id,
                attempt: attempt.number,
                started_at: attempt.started_at,
                duration_ms: so_far,
                running: true,
            });
        }
    }
    let flagged: Vec<(job_attempt::Model, Option<job_run::Model>)> = job_attempt::Entity::find()
        .filter(job_attempt::Column::Slow.eq(true))
        .filter(job_attempt::Column::StartedAt.gte(since))
        .order_by_desc(job_attempt::Column::StartedAt)
        .limit(LIST as u64)
        .find_also_related(job_run::Entity)
        .all(db)
        .await?;
    for (attempt, run) in flagged {
        let Some(run) = run else { continue };
        out.push(SlowAttempt {
            job: names
                .get(&run.job_id)
                .map_or_else(|| "?".to_string(), |j| j.name.clone()),
            run_id: run.id,
            attempt: attempt.number,
            started_at: attempt.started_at,
            duration_ms: attempt.duration_ms.unwrap_or(0).max(0) as u64,
            running: false,
        });
    }
    out.sort_by_key(|s| std::cmp::Reverse(s.started_at));
    out.truncate(LIST);
    Ok(out)
}

/// The next [`LIST`] ticks across enabled jobs.
fn next_fires(jobs: &[job::Model], now: DateTime<Utc>) -> Vec<NextFire> {
    let mut fires: Vec<NextFire> = jobs
        .iter()
        .filter(|j| j.enabled)
        .filter_map(|j| {
            if j.cron.is_empty() {
                // Watched `every` so long: the trigger keeps its next tick.
                return Some(NextFire {
                    job_id: j.id,
                    job: j.name.clone(),
                    at: j.next_fire_at?,
                });
            }
            let cron = CronExpr::parse(&j.cron).ok()?;
            let zone = crate::domain::cron::parse_timezone(&j.timezone).ok()?;
            Some(NextFire {
                job_id: j.id,
                job: j.name.clone(),
                at: cron.next_after(&zone, now).ok()?.with_timezone(&Utc),
            })
        })
        .collect();
    fires.sort_by(|a, b| a.at.cmp(&b.at).then(a.job.cmp(&b.job)));
    fires.truncate(LIST);
    fires
}

/// The last [`LIST`] runs that ended dead.
async fn failures(db: &DatabaseConnection, jobs: &[job::Model]) -> Result<Vec<Failure>, DbErr> {
    let names: HashMap<i64, &str> = jobs.iter().map(|j| (j.id, j.name.as_str())).collect();
    Ok(job_run::Entity::find()
        .filter(job_run::Column::Status.eq(RunStatus::Dead))
        .filter(job_run::Column::FinishedAt.is_not_null())
        .order_by_desc(job_run::Column::FinishedAt)
        .order_by_desc(job_run::Column::Id)
        .limit(LIST as u64)
        .all(db)
        .await?
        .into_iter()
        .map(|run| Failure {
            run_id: run.id,
            job: names.get(&run.job_id).copied().unwrap_or("?").to_string(),
            finished_at: run.finished_at.unwrap_or(run.updated_at),
            error_class: run.last_error_class,
            error: run.last_error,
        })
        .collect())
}
