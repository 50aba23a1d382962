//! CLI commands that are more than a call or two; each file is one command group.

pub mod assets;
pub mod backfill;
pub mod backup;
pub mod calendars;
pub mod channels;
pub mod digest;
pub mod jobs;
pub mod maintenance;
pub mod policy;
pub mod revisions;
pub mod run_logs;
pub mod runs;
pub mod secrets;
pub mod sites;
pub mod tokens;
pub mod traffic;
pub mod users;
pub mod watch;

/// The job called `name`, or an error saying there is none.
pub(crate) async fn job_named(
    db: &sea_orm::DatabaseConnection,
    name: &str,
) -> anyhow::Result<app::entities::job::Model> {
    use anyhow::Context;
    use app::entities::job;
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
    job::Entity::find()
        .filter(job::Column::Name.eq(name))
        .one(db)
        .await
        .context("could not look the job up")?
        .ok_or_else(|| anyhow::anyhow!("there is no job named '{name}' (see `bulwark jobs list`)"))
}

/// The secret key for a command that seals values (a job's revisions): the server's, checked
/// against what the database holds, so a command run with another key file (another directory,
/// a missing setting) refuses instead of sealing what the server could not open.
pub(crate) async fn sealing_key(
    config: &crate::config::Config,
    db: &sea_orm::DatabaseConnection,
) -> anyhow::Result<app::services::secrets::SecretKey> {
    use app::services::secrets::SecretError;
    let key = config.secret_key()?;
    match app::services::sealed::check_key(db, &key).await {
        Ok(()) => Ok(key),
        Err(e @ SecretError::WrongKey(_)) => Err(anyhow::Error::new(e).context(format!(
            "secret_key_file {} is not the key this database's values are sealed with: give the command the server's key file (BULWARK_SECRET_KEY_FILE)",
            config.secret_key_file.display()
        ))),
        // Not the key's fault: say what failed (a database of another version, unreachable).
        Err(e) => Err(anyhow::Error::new(e)
            .context("could not check the secret key against the values the database holds")),
    }
}

/// The command line as the services that record who changed what see it.
pub(crate) fn cli() -> app::services::audit::Actor<'static> {
    app::services::audit::Actor::named("cli")
}

/// Writes an audit entry for a change made from the command line (actor `cli`, no address).
pub(crate) async fn audited(
    db: &sea_orm::DatabaseConnection,
    action: &str,
    subject: &str,
) -> anyhow::Result<()> {
    audited_with(db, action, subject, serde_json::json!({})).await
}

/// [`audited`] with what the change was.
pub(crate) async fn audited_with(
    db: &sea_orm::DatabaseConnection,
    action: &str,
    subject: &str,
    detail: serde_json::Value,
) -> anyhow::Result<()> {
    use anyhow::Context;
    let cli = cli();
    app::services::audit::record(db, &cli, action, subject, detail, crate::clock::now())
        .await
        .context("the change was made but could not be written to the audit log")?;
    Ok(())
}
