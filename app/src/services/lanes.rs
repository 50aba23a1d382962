//! A job's lane: its runs go one at a time, oldest first.
//!
//! The lane's *head* is the one run that is running or may run next; only the head carries a
//! `due_at`, so the engine's claim is a range scan of one partial index and a job's backlog
//! never stands in front of another job's next run. The other runs of the job wait with
//! `due_at` NULL until the head ends and [`promote`] makes the oldest of them the head.
//!
//! Every transaction that adds runs to a lane or ends one first [`lock`]s the jobs involved
//! (in id order), so a lane changes one transaction at a time: on PostgreSQL through the jobs'
//! row locks, on SQLite through the write lock that first statement takes (a SQLite
//! transaction that read before writing could not take it without failing).

use std::collections::HashSet;

use chrono::{DateTime, Utc};
use sea_orm::{ActiveValue, ConnectionTrait, DatabaseBackend, DbErr, EntityTrait};

use super::sql::{self, Binder};
use crate::domain::run::RunStatus;
use crate::entities::job_run;

/// Takes the jobs' row locks (in id order) for the rest of the transaction. Call it first.
///
/// PostgreSQL: `FOR NO KEY UPDATE`, which writes no row version (the lock would otherwise
/// leave a dead `jobs` row behind per transaction) and lets inserts of the jobs' runs check
/// their foreign key meanwhile. SQLite: a write, which takes the database's write lock.
pub async fn lock(db: &impl ConnectionTrait, job_ids: &[i64]) -> Result<(), DbErr> {
    let mut ids: Vec<i64> = job_ids.to_vec();
    ids.sort_unstable();
    ids.dedup();
    if ids.is_empty() {
        return Ok(());
    }
    let backend = db.get_database_backend();
    for chunk in ids.chunks(500) {
        let mut b = Binder::new(backend);
        let sql = match backend {
            DatabaseBackend::Postgres => format!(
                "SELECT id FROM jobs WHERE {} ORDER BY id FOR NO KEY UPDATE",
                b.in_ids("id", chunk)
            ),
            _ => format!(
                "UPDATE jobs SET lane_seq = lane_seq + 1 WHERE {}",
                b.in_ids("id", chunk)
            ),
        };
        db.execute_raw(b.statement(sql)).await?;
    }
    Ok(())
}

/// Whether job `j`'s lane has a head: a run due (it has a `due_at`) or running. Each half is
/// one probe of a small index, for any length of backlog.
///
/// Written as scalar subqueries rather than `EXISTS`: PostgreSQL may turn an `EXISTS` under `OR`
/// into one hashed scan of the whole index (every lane's head, and on a busy table every dead
/// entry since the last vacuum) where it believes that index small; a scalar subquery is
/// always a probe of the one job's entries. On SQLite the due half names its partial index:
/// left to itself SQLite walked every run the job ever had by `(job_id, id)`, reading each row
/// for its `due_at` — a 30-minute `bulwark bench soak` saw tick lateness p99 climb 93 → 225 ms
/// as the jobs' histories grew.
fn has_head(b: &mut Binder, job: &str) -> String {
    let head = sql::indexed_by(b.backend(), "idx_job_runs_lane_head");
    format!(
        "((SELECT 1 FROM job_runs h{head} WHERE h.job_id = {job} AND h.due_at IS NOT NULL LIMIT 1) IS NOT NULL \
          OR (SELECT 1 FROM job_runs r WHERE r.job_id = {job} AND r.status = {} LIMIT 1) IS NOT NULL)",
        b.bind(RunStatus::Running.as_str())
    )
}

/// The jobs among `job_ids` whose lane has a head (a run running or due to run): a new run of
/// such a job waits, and with `overlap = skip` a new tick is skipped.
pub async fn busy(db: &impl ConnectionTrait, job_ids: &[i64]) -> Result<HashSet<i64>, DbErr> {
    let mut busy = HashSet::new();
    for chunk in job_ids.chunks(500) {
        let mut b = Binder::new(db.get_database_backend());
        let sql = format!(
            "SELECT j.id FROM jobs j WHERE {} AND {}",
            b.in_ids("j.id", chunk),
            has_head(&mut b, "j.id")
        );
        for row in db.query_all_raw(b.statement(sql)).await? {
            busy.insert(row.try_get::<i64>("", "id")?);
        }
    }
    Ok(busy)
}

/// Puts new runs into their jobs' lanes (the caller has [`lock`]ed the jobs): a pending run of
/// a job without a head becomes the head, due at its scheduled time (or `due_at` if the caller
/// set one); the rest wait. Returns how many became due.
pub async fn place(
    db: &impl ConnectionTrait,
    runs: &mut [job_run::ActiveModel],
) -> Result<usize, DbErr> {
    let job_ids: Vec<i64> = runs.iter().filter_map(|r| set(&r.job_id)).collect();
    let mut busy = busy(db, &job_ids).await?;
    let mut due = 0;
    for run in runs.iter_mut() {
        let (Some(job_id), Some(RunStatus::Pending)) = (set(&run.job_id), set(&run.status)) else {
            run.due_at = ActiveValue::Set(None);
            continue;
        };
        if busy.insert(job_id) {
            let at = set(&run.due_at)
                .flatten()
                .or_else(|| set(&run.scheduled_for));
            run.due_at = ActiveValue::Set(at);
            due += 1;
        } else {
            run.due_at = ActiveValue::Set(None);
        }
    }
    Ok(due)
}

/// Inserts runs into their lanes: [`lock`], [`place`], insert. Returns the inserted rows' ids
/// in order, and the wake-up to give after the commit when one became due. Use inside a
/// transaction.
pub async fn insert(
    db: &impl ConnectionTrait,
    mut runs: Vec<job_run::ActiveModel>,
) -> Result<(Vec<i64>, crate::wake::Wake), DbErr> {
    let job_ids: Vec<i64> = runs.iter().filter_map(|r| set(&r.job_id)).collect();
    lock(db, &job_ids).await?;
    let due = place(db, &mut runs).await?;
    let mut ids = Vec::with_capacity(runs.len());
    for run in runs {
        ids.push(job_run::Entity::insert(run).exec(db).await?.last_insert_id);
    }
    let mut wake = crate::wake::Wake::default();
    if due > 0 {
        wake = crate::wake::runs_changed_in(db).await;
    }
    Ok((ids, wake))
}

/// For each job among `job_ids` whose lane has no head, makes its oldest waiting run the head,
/// due at its scheduled time or `now`, whichever is later. The caller has [`lock`]ed the
/// jobs. Returns how many runs became due.
///
/// A head that was waiting becomes due *now*, not at its long-past scheduled time: claims go
/// oldest due first, so a job's backlog takes its turn with the other jobs instead of
/// standing in front of every run that became due since.
pub async fn promote(
    db: &impl ConnectionTrait,
    job_ids: &[i64],
    now: DateTime<Utc>,
) -> Result<u64, DbErr> {
    let mut ids: Vec<i64> = job_ids.to_vec();
    ids.sort_unstable();
    ids.dedup();
    let mut promoted = 0;
    for chunk in ids.chunks(500) {
        let mut b = Binder::new(db.get_database_backend());
        let now_a = b.bind(now);
        let now_b = b.bind(now);
        // A literal: the lane_waiting partial index is only chosen for its own predicate.
        let pending = sql::word(RunStatus::Pending.as_str());
        let jobs = b.in_ids("j.id", chunk);
        let head = has_head(&mut b, "j.id");
        let sql = format!(
            "UPDATE job_runs SET due_at = CASE WHEN scheduled_for > {now_a} THEN scheduled_for ELSE {now_b} END \
             WHERE id IN \
               (SELECT (SELECT MIN(w.id) FROM job_runs w \
                        WHERE w.job_id = j.id AND w.status = {pending} AND w.due_at IS NULL) \
                FROM jobs j WHERE {jobs} AND NOT {head})"
        );
        promoted += db.execute_raw(b.statement(sql)).await?.rows_affected();
    }
    Ok(promoted)
}

/// Jobs with runs waiting in a lane that has no head: what a lost race or an interrupted
/// write could leave behind. The recovery sweep promotes them.
pub async fn headless(db: &impl ConnectionTrait) -> Result<Vec<i64>, DbErr> {
    let mut b = Binder::new(db.get_database_backend());
    let pending = sql::word(RunStatus::Pending.as_str());
    let head = has_head(&mut b, "j.id");
    let sql = format!(
        "SELECT j.id FROM jobs j WHERE EXISTS (SELECT 1 FROM job_runs w \
           WHERE w.job_id = j.id AND w.status = {pending} AND w.due_at IS NULL) AND NOT {head}"
    );
    db.query_all_raw(b.statement(sql))
        .await?
        .iter()
        .map(|row| row.try_get::<i64>("", "id"))
        .collect()
}

fn set<T: Clone + Into<sea_orm::Value>>(value: &ActiveValue<T>) -> Option<T> {
    match value {
        ActiveValue::Set(v) | ActiveValue::Unchanged(v) => Some(v.clone()),
        ActiveValue::NotSet => None,
    }
}
