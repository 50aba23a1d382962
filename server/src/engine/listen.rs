//! On PostgreSQL, `LISTEN` for the notifications `app::wake` sends, so a run made due on
//! another node (or by the web app of another instance) wakes this node's dispatcher at once,
//! and a schedule change wakes its trigger. Polling stays as the fallback: a listener that
//! drops reconnects, and nothing is lost meanwhile but latency.

use std::time::Duration;

use sea_orm::sqlx::postgres::PgListener;
use sea_orm::{DatabaseBackend, DatabaseConnection};
use tokio_util::sync::CancellationToken;

/// Listens until `stop` fires. PostgreSQL only (the engine starts it there alone): on SQLite
/// one process is the cluster, and this waits for `stop` without doing anything.
pub async fn run(db: DatabaseConnection, stop: CancellationToken) {
    if db.get_database_backend() != DatabaseBackend::Postgres {
        return stop.cancelled().await;
    }
    let mut backoff = Duration::from_millis(100);
    loop {
        let listener = async {
            let mut listener = PgListener::connect_with(db.get_postgres_connection_pool()).await?;
            listener
                .listen_all([app::wake::RUNS_CHANNEL, app::wake::JOBS_CHANNEL])
                .await?;
            Ok::<_, sea_orm::sqlx::Error>(listener)
        };
        let mut listener = tokio::select! {
            () = stop.cancelled() => return,
            listener = listener => match listener {
                Ok(listener) => listener,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot listen for other nodes' work; polling meanwhile");
                    tokio::select! {
                        () = stop.cancelled() => return,
                        () = tokio::time::sleep(backoff) => {}
                    }
                    backoff = (backoff * 2).min(Duration::from_secs(10));
                    continue;
                }
            },
        };
        backoff = Duration::from_millis(100);
        loop {
            let note = tokio::select! {
                () = stop.cancelled() => return,
                note = listener.recv() => note,
            };
            match note {
                Ok(note) if note.channel() == app::wake::JOBS_CHANNEL => app::wake::jobs_here(),
                Ok(_) => app::wake::runs_here(),
                Err(e) => {
                    tracing::warn!(error = %e, "lost the listening connection; reconnecting");
                    break;
                }
            }
        }
    }
}
