//! On PostgreSQL with autovacuum turned off, the node vacuums and analyses Bulwark's tables
//! itself (`app::services::upkeep` says why and by which thresholds). With autovacuum on, a
//! round reads one setting and does nothing.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use app::services::upkeep;
use sea_orm::{DatabaseBackend, DatabaseConnection, DbErr};

use crate::duties::Duties;

/// How often the tables' counters are looked at: autovacuum's own default naptime.
const ROUND: Duration = Duration::from_secs(60);

/// Starts the duty on PostgreSQL; SQLite needs none (it has no dead rows to reclaim between
/// reads, and its planner does not depend on gathered statistics to use an index).
pub async fn start(duties: &Duties, db: DatabaseConnection) -> Option<uuid::Uuid> {
    if db.get_database_backend() != DatabaseBackend::Postgres {
        return None;
    }
    let warned = Arc::new(AtomicBool::new(false));
    let started = duties
        .every("table upkeep", ROUND, move || {
            let (db, warned) = (db.clone(), warned.clone());
            Box::pin(async move {
                if let Err(e) = round(&db, &warned).await {
                    tracing::warn!(error = %e, "table upkeep failed; the next round tries again");
                }
            })
        })
        .await;
    match started {
        Ok(id) => Some(id),
        Err(e) => {
            tracing::error!(error = %e, duty = "table upkeep", "could not start a duty");
            None
        }
    }
}

/// One round: nothing while autovacuum runs; otherwise every table past its threshold.
pub async fn round(db: &DatabaseConnection, warned: &AtomicBool) -> Result<usize, DbErr> {
    if upkeep::autovacuum_on(db).await? {
        return Ok(0);
    }
    if !warned.swap(true, Ordering::Relaxed) {
        tracing::warn!(
            "PostgreSQL's autovacuum is off: this node vacuums and analyses Bulwark's tables itself"
        );
    }
    let due = upkeep::due(db).await?;
    for table in &due {
        upkeep::tend(db, table).await?;
        tracing::debug!(table = %table.table, vacuum = table.vacuum, "table tended");
    }
    Ok(due.len())
}
