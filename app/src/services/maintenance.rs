//! Maintenance windows and paused jobs in the database (the rules are in
//! [`crate::domain::maintenance`]).
//!
//! The engine asks [`paused`] before each trigger pass and, for claims, once per poll or when
//! a pause changes (`server/src/engine/cache.rs`), on every node, so a
//! pause holds across instances and restarts: it is rows, not memory. Whoever changes a pause
//! wakes the engines ([`crate::wake`]), so a resume is acted on at once.

use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, IntoActiveModel,
    QueryFilter, QueryOrder, QuerySelect, Set,
};

use crate::domain::job::tags;
use crate::domain::maintenance::{Pauses, Span};
use crate::entities::{job, maintenance_window};
use crate::services::audit::{self, Actor};
use crate::services::sql::{Binder, begin_write};
use crate::views::maintenance::{MaintenanceStatus, WindowView};
use crate::wake::Wake;

#[derive(Debug, thiserror::Error)]
pub enum MaintenanceError {
    #[error("{0}")]
    Invalid(crate::domain::Problem),
    /// Everything is paused already: what pauses it.
    #[error(
        "Bulwark is already paused: {}; resume first to change the reason or the end",
        .0.summary(crate::i18n::Locale::english()).unwrap_or_default()
    )]
    AlreadyPaused(Box<crate::views::maintenance::MaintenanceStatus>),
    #[error("there is no maintenance window {0} still open or to come")]
    NotFound(i64),
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// What the engine must leave alone now.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Paused {
    /// Every job is paused.
    pub all: bool,
    /// Jobs paused by a window on one of their tags (jobs paused on their own are not listed:
    /// the SQL reads their flag, [`Paused::exclude`]).
    pub tagged: Vec<i64>,
    /// When a window opens or closes next: what is paused holds until then at most (a cache of
    /// it must be read again by that moment).
    pub until: Option<DateTime<Utc>>,
}

impl Paused {
    /// A condition excluding paused jobs, for a statement over `jobs` (`column` = `id`) or
    /// over `job_runs` (`column` = `job_id`); `None` when every job is paused.
    pub fn exclude(&self, b: &mut Binder, column: &str) -> Option<String> {
        if self.all {
            return None;
        }
        let mut sql = format!(
            "{column} NOT IN (SELECT id FROM jobs WHERE paused = {})",
            b.bind(true)
        );
        if !self.tagged.is_empty() {
            sql.push_str(&format!(" AND NOT ({})", b.in_ids(column, &self.tagged)));
        }
        Some(sql)
    }
}

fn span(row: &maintenance_window::Model) -> Span {
    Span {
        starts: row.starts_at,
        ends: row.ends_at,
        tag: row.tag.clone(),
    }
}

fn view(row: maintenance_window::Model) -> WindowView {
    WindowView {
        id: row.id,
        starts_at: row.starts_at,
        ends_at: row.ends_at,
        reason: row.reason,
        tag: row.tag,
        created_by: row.created_by,
    }
}

/// Windows not yet over (open now or to come), by start.
async fn current(
    db: &impl ConnectionTrait,
    now: DateTime<Utc>,
) -> Result<Vec<maintenance_window::Model>, DbErr> {
    maintenance_window::Entity::find()
        .filter(
            sea_orm::Condition::any()
                .add(maintenance_window::Column::EndsAt.is_null())
                .add(maintenance_window::Column::EndsAt.gt(now)),
        )
        .order_by_asc(maintenance_window::Column::StartsAt)
        .order_by_asc(maintenance_window::Column::Id)
        .all(db)
        .await
}

/// What is paused now: one indexed read of the windows, and a read of the jobs' tags only
/// while a window on a tag is open.
pub async fn paused(db: &impl ConnectionTrait, now: DateTime<Utc>) -> Result<Paused, DbErr> {
    let windows = current(db, now).await?;
    let spans: Vec<Span> = windows.iter().map(span).collect();
    let until = spans.iter().filter_map(|s| s.next_change(now)).min();
    let pauses = Pauses::at(spans.iter(), now);
    if pauses.all || pauses.tags.is_empty() {
        return Ok(Paused {
            all: pauses.all,
            tagged: Vec::new(),
            until,
        });
    }
    let rows: Vec<(i64, String)> = job::Entity::find()
        .select_only()
        .column(job::Column::Id)
        .column(job::Column::Tags)
        .filter(job::Column::Tags.ne("[]"))
        .into_tuple()
        .all(db)
        .await?;
    Ok(Paused {
        all: false,
        until,
        tagged: rows
            .into_iter()
            .filter(|(_, text)| pauses.covers(false, &tags::from_column(text)))
            .map(|(id, _)| id)
            .collect(),
    })
}

/// Windows open now and to come, and the jobs paused on their own.
pub async fn status(
    db: &impl ConnectionTrait,
    now: DateTime<Utc>,
) -> Result<MaintenanceStatus, DbErr> {
    let (active, ahead): (Vec<_>, Vec<_>) = current(db, now)
        .await?
        .into_iter()
        .partition(|w| span(w).is_active(now));
    let paused_jobs: Vec<String> = job::Entity::find()
        .select_only()
        .column(job::Column::Name)
        .filter(job::Column::Paused.eq(true))
        .order_by_asc(job::Column::Name)
        .into_tuple()
        .all(db)
        .await?;
    Ok(MaintenanceStatus {
        active: active.into_iter().map(view).collect(),
        ahead: ahead.into_iter().map(view).collect(),
        paused_jobs,
    })
}

/// A window as an administrator asks for it; checked by [`schedule`].
#[derive(Debug, Clone)]
pub struct NewWindow {
    pub starts_at: DateTime<Utc>,
    pub ends_at: Option<DateTime<Utc>>,
    pub reason: String,
    pub tag: Option<String>,
}

/// Records a window after checking it (reason, times, tag), with its audit row. A window for
/// every job that starts now is "pause all", refused while one is already open.
pub async fn schedule(
    db: &sea_orm::DatabaseConnection,
    window: NewWindow,
    who: &Actor<'_>,
    now: DateTime<Utc>,
) -> Result<WindowView, MaintenanceError> {
    let txn = begin_write(db).await?;
    let window = insert(&txn, window, who.name, now).await?;
    let detail = serde_json::json!({
        "id": window.id,
        "reason": window.reason,
        "starts_at": window.starts_at,
        "ends_at": window.ends_at,
        "tag": window.tag,
    });
    audit::record(
        &txn,
        who,
        "maintenance.paused",
        &subject(&window),
        detail,
        now,
    )
    .await?;
    let wake = if window.starts_at <= now {
        wake_in(&txn).await
    } else {
        Wake::default()
    };
    txn.commit().await?;
    wake.after_commit();
    Ok(window)
}

/// What a window's audit rows are about: its tag, or every job.
fn subject(window: &WindowView) -> String {
    window.tag.clone().unwrap_or_else(|| "all jobs".into())
}

/// A window's audit row when it ends or is dropped.
async fn record_end(
    txn: &impl ConnectionTrait,
    window: &WindowView,
    action: &str,
    who: &Actor<'_>,
    now: DateTime<Utc>,
) -> Result<i64, DbErr> {
    let detail = serde_json::json!({ "id": window.id, "reason": window.reason });
    audit::record(txn, who, action, &subject(window), detail, now).await
}

async fn insert(
    db: &impl ConnectionTrait,
    window: NewWindow,
    by: &str,
    now: DateTime<Utc>,
) -> Result<WindowView, MaintenanceError> {
    use crate::domain::maintenance::{check_span, parse_reason};
    let reason = parse_reason(&window.reason).map_err(MaintenanceError::Invalid)?;
    let tag = window
        .tag
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(tags::parse_tag)
        .transpose()
        .map_err(MaintenanceError::Invalid)?;
    // A start in the past (a form left open) means now.
    let starts_at = window.starts_at.max(now);
    check_span(starts_at, window.ends_at, now).map_err(MaintenanceError::Invalid)?;
    if tag.is_none() && starts_at <= now {
        let status = status(db, now).await?;
        if status.pausing_all().is_some() {
            return Err(MaintenanceError::AlreadyPaused(Box::new(status)));
        }
    }
    let row = maintenance_window::ActiveModel {
        starts_at: Set(starts_at),
        ends_at: Set(window.ends_at),
        reason: Set(reason),
        tag: Set(tag),
        created_by: Set(by.chars().take(64).collect()),
        created_at: Set(now),
        ended_by: Set(None),
        ..Default::default()
    }
    .insert(db)
    .await?;
    Ok(view(row))
}

/// Ends every open window (the ones to come stay), with an audit row for each. Returns the
/// windows it ended.
pub async fn resume(
    db: &sea_orm::DatabaseConnection,
    who: &Actor<'_>,
    now: DateTime<Utc>,
) -> Result<Vec<WindowView>, DbErr> {
    let txn = begin_write(db).await?;
    let open: Vec<_> = current(&txn, now)
        .await?
        .into_iter()
        .filter(|w| span(w).is_active(now))
        .collect();
    let mut ended = Vec::with_capacity(open.len());
    for row in open {
        let window = end(&txn, row, who.name, now).await?;
        record_end(&txn, &window, "maintenance.resumed", who, now).await?;
        ended.push(window);
    }
    let wake = if ended.is_empty() {
        Wake::default()
    } else {
        wake_in(&txn).await
    };
    txn.commit().await?;
    wake.after_commit();
    Ok(ended)
}

/// Ends one window now if it is open, or drops it if it has not begun; with its audit row.
pub async fn cancel(
    db: &sea_orm::DatabaseConnection,
    id: i64,
    who: &Actor<'_>,
    now: DateTime<Utc>,
) -> Result<WindowView, MaintenanceError> {
    let txn = begin_write(db).await?;
    let row = maintenance_window::Entity::find_by_id(id)
        .one(&txn)
        .await?
        .filter(|w| w.ends_at.is_none_or(|end| end > now))
        .ok_or(MaintenanceError::NotFound(id))?;
    let (window, wake) = if span(&row).is_ahead(now) {
        maintenance_window::Entity::delete_by_id(id)
            .exec(&txn)
            .await?;
        (view(row), Wake::default())
    } else {
        (end(&txn, row, who.name, now).await?, wake_in(&txn).await)
    };
    record_end(&txn, &window, "maintenance.cancelled", who, now).await?;
    txn.commit().await?;
    wake.after_commit();
    Ok(window)
}

/// Ends an open window now, saying by whom.
async fn end(
    db: &impl ConnectionTrait,
    row: maintenance_window::Model,
    by: &str,
    now: DateTime<Utc>,
) -> Result<WindowView, DbErr> {
    let mut model = row.into_active_model();
    model.ends_at = Set(Some(now));
    model.ended_by = Set(Some(by.chars().take(64).collect()));
    Ok(view(model.update(db).await?))
}

/// Pauses or resumes one job, with its audit row. Its `next_fire_at` is left alone, so on
/// resume the trigger finds the ticks it missed and plans them by the job's misfire policy.
pub async fn set_job_paused(
    db: &sea_orm::DatabaseConnection,
    id: i64,
    paused: bool,
    who: &Actor<'_>,
    now: DateTime<Utc>,
) -> Result<job::Model, crate::services::jobs::JobError> {
    let txn = begin_write(db).await?;
    let row = crate::services::jobs::get(&txn, id).await?;
    if !paused && let Some(refused) = crate::services::held::resume_refused(&row) {
        return Err(refused);
    }
    let mut model = row.into_active_model();
    model.paused = Set(paused);
    model.updated_at = Set(now);
    let saved = model.update(&txn).await?;
    let action = if paused { "job.paused" } else { "job.resumed" };
    audit::record(&txn, who, action, &saved.name, serde_json::json!({}), now).await?;
    let wake = wake_in(&txn).await;
    txn.commit().await?;
    wake.after_commit();
    Ok(saved)
}

/// A pause changed: the triggers look at their jobs again and the dispatchers at their runs,
/// once the caller's transaction has committed.
async fn wake_in(txn: &impl ConnectionTrait) -> Wake {
    crate::wake::jobs_changed_in(txn)
        .await
        .and(crate::wake::runs_changed_in(txn).await)
}
