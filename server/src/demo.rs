//! The demo `make run` seeds into an empty database: three jobs that succeed, fail now and
//! then, and fail for good (`server/demo/jobs.toml`).

use anyhow::Context;
use app::entities::job;
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter};

use crate::jobs_file::{apply_specs, parse_file};

/// The bundled demo jobs (`server/demo/jobs.toml`).
pub const DEMO_JOBS: &str = include_str!("../demo/jobs.toml");

/// Seeds the demo jobs into a database that has no job yet; leaves any other database alone.
pub async fn seed(
    db: &DatabaseConnection,
    key: &app::services::secrets::SecretKey,
) -> anyhow::Result<()> {
    use sea_orm::PaginatorTrait;
    let system: Vec<String> = crate::system_jobs::specs(chrono_tz::Tz::UTC)?
        .into_iter()
        .map(|s| s.name)
        .collect();
    if job::Entity::find()
        .filter(job::Column::Name.is_not_in(system))
        .count(db)
        .await
        .context("could not count jobs")?
        > 0
    {
        println!("demo: jobs already exist; nothing seeded");
        return Ok(());
    }
    let specs = parse_file(DEMO_JOBS)
        .map_err(|p| anyhow::anyhow!("the bundled demo file is invalid: {}", p.join("; ")))?;
    let demo = app::services::audit::Actor::named("demo");
    let applied = apply_specs(db, specs, &demo, key)
        .await
        .map_err(|p| anyhow::anyhow!("could not seed the demo: {}", p.join("; ")))?;
    println!(
        "demo: seeded {} demo jobs (demo-flaky, demo-steady, demo-broken); delete them on the Jobs page",
        applied.created.len()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_bundled_demo_is_valid() {
        assert_eq!(
            crate::jobs_file::parse_file(super::DEMO_JOBS)
                .unwrap()
                .len(),
            3
        );
    }
}
