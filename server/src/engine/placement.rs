//! The placement sweep (`app::services::placement`): every few seconds a node marks the due
//! runs no live node may take `waiting_for_node` (and back to `pending` once one may), and
//! alerts on each that has waited longer than `waiting_for_node_alert_seconds`. Every node
//! sweeps; the statuses it writes are the same whoever writes them, and each alert's dedupe
//! key makes it one per run across nodes.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use app::entities::job;
use app::services::placement::{self, Place, Waiting};
use chrono::{DateTime, Utc};
use sea_orm::{ColumnTrait, DbErr, EntityTrait, QueryFilter};

use super::Shared;

/// The runs this node has alerted on, so a long wait is not sent to the outbox every sweep
/// (the dedupe key would drop the repeats, at a query each).
#[derive(Default)]
pub struct Alerted(Mutex<HashSet<i64>>);

impl Alerted {
    /// Keeps only `waiting` (a run that stopped waiting is forgotten) and returns those not
    /// alerted on yet.
    fn fresh(&self, waiting: &[&Waiting]) -> Vec<i64> {
        let mut seen = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let now_waiting: HashSet<i64> = waiting.iter().map(|w| w.run_id).collect();
        seen.retain(|id| now_waiting.contains(id));
        waiting
            .iter()
            .map(|w| w.run_id)
            .filter(|id| !seen.contains(id))
            .collect()
    }

    /// Records that `run_id`'s alert is in the outbox.
    fn mark(&self, run_id: i64) {
        let mut seen = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        seen.insert(run_id);
    }
}

/// This node as placement sees it: live, since it is sweeping.
fn me(shared: &Shared) -> Place {
    Place {
        node_id: shared.config.node_id.clone(),
        labels: shared.config.labels.clone(),
        commands: shared.config.allow_commands,
    }
}

/// One sweep at `now`; returns how many runs wait for a node.
pub async fn sweep(
    shared: &Arc<Shared>,
    alerted: &Alerted,
    now: DateTime<Utc>,
) -> Result<usize, DbErr> {
    let mut places = placement::live(&shared.db, now).await?;
    let me = me(shared);
    if !places.iter().any(|p| p.node_id == me.node_id) {
        places.push(me);
    }
    let swept = placement::sweep(&shared.db, &places, now).await?;
    if swept.released > 0 {
        tracing::info!(
            runs = swept.released,
            "runs that waited for a node may run again"
        );
    }
    let after = chrono::Duration::from_std(shared.config.node_wait_alert).unwrap_or_default();
    let overdue: Vec<&Waiting> = swept
        .waiting
        .iter()
        .filter(|w| now - w.due_at >= after)
        .collect();
    for run_id in alerted.fresh(&overdue) {
        let Some(wait) = overdue.iter().find(|w| w.run_id == run_id) else {
            continue;
        };
        let Some(row) = job::Entity::find()
            .filter(job::Column::Id.eq(wait.job_id))
            .one(&shared.db)
            .await?
        else {
            continue;
        };
        tracing::warn!(job = %row.name, run = run_id, run_on = %row.run_on, "a run is waiting for a node allowed to run it");
        app::services::alerts::waiting_for_node(
            &shared.db,
            &row,
            wait,
            now,
            shared.config.default_locale,
        )
        .await?;
        alerted.mark(run_id);
    }
    Ok(swept.waiting.len())
}
