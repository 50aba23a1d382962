//! Runs whose node stopped: found by their expired lease, their open attempt recorded as
//! interrupted, and the run retried by its policy like any transient failure.

use app::domain::run::{AttemptReport, ErrorClass, Outcome, RunStatus, decide};
use app::entities::{job, job_attempt, job_run};
use app::services::jobs::to_spec;
use chrono::{DateTime, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, DatabaseConnection, DbErr, EntityTrait, QueryFilter,
    QuerySelect, Set, TransactionTrait,
};

use super::attempt::settle;

/// Interrupts every run whose lease expired before `now`; returns how many.
pub async fn recover_expired(db: &DatabaseConnection, now: DateTime<Utc>) -> Result<usize, DbErr> {
    let expired = job_run::Entity::find()
        .filter(job_run::Column::Status.eq(RunStatus::Running))
        .filter(job_run::Column::LeaseExpiresAt.lt(now))
        .limit(200)
        .find_also_related(job::Entity)
        .all(db)
        .await?;
    let mut recovered = 0;
    for (run, job) in expired {
        let Some(job) = job else { continue };
        let owner = run.lease_owner.clone().unwrap_or_default();
        let reason = format!(
            "interrupted: node {owner} stopped renewing its lease (it died or was cut off)"
        );
        if interrupt(db, &run, &job, &reason, now).await? {
            tracing::warn!(job = %job.name, run = run.id, node = %owner, "recovered an interrupted run");
            recovered += 1;
        }
    }
    Ok(recovered)
}

/// At shutdown: interrupts this node's runs that did not finish within the grace period, so
/// the next process (or another node) retries them without waiting for the lease to expire.
pub async fn hand_back(
    db: &DatabaseConnection,
    node: &str,
    now: DateTime<Utc>,
) -> Result<usize, DbErr> {
    let mine = job_run::Entity::find()
        .filter(job_run::Column::Status.eq(RunStatus::Running))
        .filter(job_run::Column::LeaseOwner.eq(node))
        .find_also_related(job::Entity)
        .all(db)
        .await?;
    let mut handed = 0;
    for (run, job) in mine {
        let Some(job) = job else { continue };
        let reason = format!("interrupted: node {node} shut down before the attempt finished");
        if interrupt(db, &run, &job, &reason, now).await? {
            handed += 1;
        }
    }
    Ok(handed)
}

/// Records the run's open attempt as interrupted and moves the run on, fenced on its lease.
async fn interrupt(
    db: &DatabaseConnection,
    run: &job_run::Model,
    job: &job::Model,
    reason: &str,
    now: DateTime<Utc>,
) -> Result<bool, DbErr> {
    let txn = db.begin().await?;
    let open = job_attempt::Entity::find()
        .filter(job_attempt::Column::RunId.eq(run.id))
        .filter(job_attempt::Column::Number.eq(run.attempts))
        .one(&txn)
        .await?;
    match open {
        Some(attempt) if attempt.outcome.is_none() => {
            job_attempt::Entity::update_many()
                .col_expr(job_attempt::Column::FinishedAt, Expr::value(now))
                .col_expr(
                    job_attempt::Column::DurationMs,
                    Expr::value((now - attempt.started_at).num_milliseconds().max(0)),
                )
                .col_expr(
                    job_attempt::Column::Outcome,
                    Expr::value(Outcome::Interrupted),
                )
                .col_expr(
                    job_attempt::Column::ErrorClass,
                    Expr::value(ErrorClass::Interrupted),
                )
                .col_expr(job_attempt::Column::Message, Expr::value(reason))
                .filter(job_attempt::Column::Id.eq(attempt.id))
                .filter(job_attempt::Column::Outcome.is_null())
                .exec(&txn)
                .await?;
        }
        Some(_) => {}
        // The node died between claiming and writing the attempt row: the attempt still
        // happened as far as the run's counter is concerned, so it gets its row.
        None => {
            job_attempt::ActiveModel {
                run_id: Set(run.id),
                number: Set(run.attempts),
                started_at: Set(run.updated_at),
                finished_at: Set(Some(now)),
                duration_ms: Set(Some((now - run.updated_at).num_milliseconds().max(0))),
                timeout_ms: Set(0),
                outcome: Set(Some(Outcome::Interrupted)),
                error_class: Set(Some(ErrorClass::Interrupted)),
                message: Set(Some(reason.to_string())),
                node: Set(run.lease_owner.clone().unwrap_or_default()),
                slow: Set(false),
                ..Default::default()
            }
            .insert(&txn)
            .await?;
        }
    }
    let report = AttemptReport::failed(ErrorClass::Interrupted);
    let spec = to_spec(job)
        .ok()
        .map(|spec| super::attempt::with_overrides(spec, run));
    let next = match &spec {
        Some(spec) => decide(
            &spec.retry,
            run.attempts.max(0) as u32,
            &report,
            run.previous_delay_ms.map(|d| d.max(0) as u64),
            fastrand::f64(),
        ),
        None => app::domain::run::Next::Exhausted,
    };
    let settled = settle(
        &txn,
        run,
        job,
        spec.as_ref().map(|s| &s.on_exhausted),
        next,
        &report,
        Some(reason),
        now,
    )
    .await?;
    if settled {
        txn.commit().await?;
    } else {
        txn.rollback().await?;
    }
    Ok(settled)
}
