//! Indexes for the engine's hot statements at any size of backlog (`docs/ARCHITECTURE.md` §3):
//!
//! - the claim takes runs due at a planned time (cron ticks, retries) before runs due as soon
//!   as possible (manual runs, a backlog's next run), each class from its own partial index
//!   of due runs, replacing the single one;
//! - a lane's next run (`MIN(id)` of a job's waiting runs) and whether a lane has a due head
//!   are one probe of a small partial index each, instead of a read of the job's backlog;
//! - the lease renewal names its runs by id, so the index by lease owner goes.
//!
//! On PostgreSQL also: every update of a run writes a new row version and an entry in every
//! index, and the old entries stay until a vacuum. Indexes led by `status` that held every
//! run — those of the failed queue and of finished runs — now hold only the runs they serve
//! (dead ones; finished ones), so a run passing through `pending` and `running` leaves
//! nothing in them, and no plan reads a trail of dead `running` entries. (SQLite updates in
//! place, and cannot use a partial index for a status given as a parameter: it keeps them
//! whole.)

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DatabaseBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        let mut statements = vec![
            "CREATE INDEX idx_job_runs_due_planned ON job_runs (due_at, id) \
             WHERE due_at IS NOT NULL AND (status = 'retry_wait' OR \"trigger\" = 'cron')",
            "CREATE INDEX idx_job_runs_due_asap ON job_runs (due_at, id) \
             WHERE due_at IS NOT NULL AND status <> 'retry_wait' AND \"trigger\" <> 'cron'",
            "CREATE INDEX idx_job_runs_lane_waiting ON job_runs (job_id, id) \
             WHERE status = 'pending' AND due_at IS NULL",
            "CREATE INDEX idx_job_runs_lane_head ON job_runs (job_id) WHERE due_at IS NOT NULL",
            "DROP INDEX idx_job_runs_due",
            "DROP INDEX idx_job_runs_lease_owner",
        ];
        if manager.get_database_backend() == DatabaseBackend::Postgres {
            statements.extend([
                "DROP INDEX idx_job_runs_queue_class",
                "DROP INDEX idx_job_runs_queue_job",
                "DROP INDEX idx_job_runs_status_finished",
                "CREATE INDEX idx_job_runs_queue_class ON job_runs \
                 (status, resolution, last_error_class) WHERE status = 'dead'",
                "CREATE INDEX idx_job_runs_queue_job ON job_runs (status, resolution, job_id) \
                 WHERE status = 'dead'",
                "CREATE INDEX idx_job_runs_status_finished ON job_runs (status, finished_at, id) \
                 WHERE finished_at IS NOT NULL",
            ]);
        }
        for sql in statements {
            db.execute_unprepared(sql).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        let mut statements = vec![
            "CREATE INDEX idx_job_runs_lease_owner ON job_runs (lease_owner) \
             WHERE lease_owner IS NOT NULL",
            "CREATE INDEX idx_job_runs_due ON job_runs (due_at, id) WHERE due_at IS NOT NULL",
            "DROP INDEX idx_job_runs_lane_head",
            "DROP INDEX idx_job_runs_lane_waiting",
            "DROP INDEX idx_job_runs_due_asap",
            "DROP INDEX idx_job_runs_due_planned",
        ];
        if manager.get_database_backend() == DatabaseBackend::Postgres {
            statements.extend([
                "DROP INDEX idx_job_runs_queue_class",
                "DROP INDEX idx_job_runs_queue_job",
                "DROP INDEX idx_job_runs_status_finished",
                "CREATE INDEX idx_job_runs_queue_class ON job_runs \
                 (status, resolution, last_error_class)",
                "CREATE INDEX idx_job_runs_queue_job ON job_runs (status, resolution, job_id)",
                "CREATE INDEX idx_job_runs_status_finished ON job_runs (status, finished_at, id)",
            ]);
        }
        for sql in statements {
            db.execute_unprepared(sql).await?;
        }
        Ok(())
    }
}
