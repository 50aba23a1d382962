//! Jobs Bulwark runs for itself — the traffic flush and cleanup, the digest, the trend watch —
//! created on a server's first start from `system_jobs.toml`, ordinary jobs afterwards
//! (retries, the failed queue, a schedule an administrator may change).

use anyhow::Context;
use app::entities::job;
use app::services::jobs::{self, JobError};
use chrono_tz::Tz;
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter};

use crate::jobs_file::parse_file;

/// The system jobs' definitions.
pub const SYSTEM_JOBS: &str = include_str!("system_jobs.toml");

/// The system jobs, their schedules in `zone` (Bulwark's configured `timezone`).
pub fn specs(zone: Tz) -> anyhow::Result<Vec<app::domain::job::JobSpec>> {
    let mut specs = parse_file(SYSTEM_JOBS)
        .map_err(|p| anyhow::anyhow!("the bundled system jobs are invalid: {}", p.join("; ")))?;
    for spec in &mut specs {
        spec.timezone = zone;
    }
    Ok(specs)
}

/// Creates the system jobs that do not exist yet; existing ones are left as the administrator
/// set them. Returns the names created. Two nodes starting together may both try: the unique
/// name lets one win and the other sees it exists.
pub async fn ensure(db: &DatabaseConnection, zone: Tz) -> anyhow::Result<Vec<String>> {
    let mut created = Vec::new();
    for spec in specs(zone)? {
        let exists = job::Entity::find()
            .filter(job::Column::Name.eq(&spec.name))
            .one(db)
            .await
            .context("could not read jobs")?
            .is_some();
        if exists {
            continue;
        }
        match jobs::create(db, &spec, crate::clock::now()).await {
            Ok(_) => created.push(spec.name),
            Err(JobError::Invalid(_)) if job_exists(db, &spec.name).await => {}
            Err(e) => {
                return Err(anyhow::Error::new(e)
                    .context(format!("could not create the system job '{}'", spec.name)));
            }
        }
    }
    Ok(created)
}

async fn job_exists(db: &DatabaseConnection, name: &str) -> bool {
    matches!(
        job::Entity::find()
            .filter(job::Column::Name.eq(name))
            .one(db)
            .await,
        Ok(Some(_))
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_system_jobs_are_valid_in_any_zone() {
        let specs = super::specs(chrono_tz::Asia::Shanghai).unwrap();
        assert_eq!(specs.len(), 7);
        assert!(
            specs
                .iter()
                .all(|s| s.timezone == chrono_tz::Asia::Shanghai)
        );
    }
}
