//! Job definitions: list, read, save, enable/disable, delete.

use leptos::prelude::*;

use super::codec::Json;

use super::AppError;
use crate::domain::job::JobInput;
use crate::views::jobs::{JobDetail, JobRow, JobZone};

#[cfg(feature = "ssr")]
impl From<crate::services::jobs::JobError> for AppError {
    fn from(e: crate::services::jobs::JobError) -> Self {
        use crate::services::jobs::JobError;
        match e {
            JobError::Invalid(errors) => AppError::fields(&errors),
            JobError::NotFound(id) => AppError::NotFound(crate::t!("noun-job", id = id)),
            JobError::Revision(crate::services::revisions::RevisionError::NotFound {
                job,
                revision,
            }) => AppError::NotFound(crate::t!("noun-revision", job = job, revision = revision)),
            other => AppError::internal(&other),
        }
    }
}

#[server(endpoint = "jobs/list", output = Json)]
pub async fn list_jobs() -> Result<Vec<JobRow>, AppError> {
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            Ok(crate::services::jobs::list(&state.db, crate::clock::now()).await?)
        }
        .await,
    )
}

#[server(endpoint = "jobs/get", output = Json)]
pub async fn get_job(id: i64) -> Result<JobDetail, AppError> {
    use crate::services::jobs;
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            let row = jobs::get(&state.db, id).await.map_err(AppError::from)?;
            crate::services::held::detail(&row, crate::i18n::current()).map_err(AppError::from)
        }
        .await,
    )
}

/// A time zone as the job editor's previews use it: a table of its offsets, so the browser
/// carries no tz database (`app/src/i18n/zone.rs`). An unknown name is a field error.
#[server(endpoint = "jobs/zone", output = Json)]
pub async fn get_job_zone(name: String) -> Result<JobZone, AppError> {
    super::respond(
        async {
            super::auth::require_user()?;
            let tz = crate::domain::cron::parse_timezone(&name)
                .map_err(|e| AppError::refused("timezone", &e.problem()))?;
            let table = crate::i18n::ZoneTable::cached(tz);
            Ok(JobZone {
                name: table.name().to_string(),
                spans: table.encode(),
            })
        }
        .await,
    )
}

/// Every IANA time zone name, for the editor's picker, one per line.
#[server(endpoint = "jobs/zones", output = Json)]
pub async fn zone_names() -> Result<String, AppError> {
    super::respond(
        async {
            super::auth::require_user()?;
            Ok(crate::domain::cron::timezone_names()
                .collect::<Vec<_>>()
                .join("\n"))
        }
        .await,
    )
}

/// Creates (`id` = None) or updates a job. Every invalid field comes back at once.
#[server(endpoint = "jobs/save", input = Json, output = Json)]
pub async fn save_job(id: Option<i64>, input: JobInput) -> Result<i64, AppError> {
    use crate::domain::job::JobSpec;
    use crate::services::jobs;
    super::respond(
        async {
            let admin = super::auth::require_admin("change jobs")?;
            let state = super::state()?;
            let mut input = input;
            if let Some(id) = id {
                let stored = jobs::get(&state.db, id).await.map_err(AppError::from)?;
                let stored = jobs::to_spec(&stored).map_err(AppError::from)?.to_input();
                input.restore_secrets(&stored);
            }
            let spec = JobSpec::parse(&input).map_err(|e| AppError::fields(&e))?;
            let who = super::actor(&admin);
            let now = crate::clock::now();
            let saved = jobs::save(&state.db, id, &spec, &who, &state.secret_key, now).await?;
            Ok(saved.id)
        }
        .await,
    )
}

#[server(endpoint = "jobs/enable", output = Json)]
pub async fn set_job_enabled(id: i64, enabled: bool) -> Result<(), AppError> {
    super::respond(
        async {
            let admin = super::auth::require_admin("enable or disable jobs")?;
            let state = super::state()?;
            let who = super::actor(&admin);
            let now = crate::clock::now();
            crate::services::jobs::set_enabled(&state.db, id, enabled, &who, now).await?;
            Ok(())
        }
        .await,
    )
}

/// Enables, disables, pauses, resumes, tags or untags the selected jobs at once; returns how
/// many changed.
#[server(endpoint = "jobs/bulk", input = Json, output = Json)]
pub async fn bulk_jobs(
    ids: Vec<i64>,
    action: crate::views::jobs::BulkAction,
    tag: Option<String>,
) -> Result<usize, AppError> {
    super::respond(
        async {
            let admin = super::auth::require_admin("change jobs")?;
            let state = super::state()?;
            if ids.is_empty() {
                return Err(AppError::invalid("ids", crate::t!("error-select-job")));
            }
            let who = super::actor(&admin);
            let now = crate::clock::now();
            let changed =
                crate::services::jobs::bulk(&state.db, &ids, action, tag.as_deref(), &who, now)
                    .await?;
            Ok(changed.len())
        }
        .await,
    )
}

#[server(endpoint = "jobs/delete", output = Json)]
pub async fn delete_job(id: i64) -> Result<(), AppError> {
    super::respond(
        async {
            let admin = super::auth::require_admin("delete jobs")?;
            let state = super::state()?;
            let who = super::actor(&admin);
            crate::services::jobs::delete(&state.db, id, &who, crate::clock::now()).await?;
            Ok(())
        }
        .await,
    )
}

/// The timeout the next attempt of a job would get, and where it comes from.
#[server(endpoint = "jobs/timeout", output = Json)]
pub async fn effective_timeout(
    id: i64,
) -> Result<crate::domain::timeout::EffectiveTimeout, AppError> {
    use crate::services::{jobs, runs};
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            let spec = jobs::to_spec(&jobs::get(&state.db, id).await.map_err(AppError::from)?)
                .map_err(AppError::from)?;
            let history =
                runs::recent_success_ms(&state.db, id, spec.timeout.window.max(20)).await?;
            Ok(crate::domain::timeout::effective(&spec.timeout, &history))
        }
        .await,
    )
}

/// The job's failure episodes with their revisions (`services::evidence`): the editor replays
/// policies against them in the browser as the sliders move.
#[server(endpoint = "jobs/episodes", output = Json)]
pub async fn job_episodes(id: i64) -> Result<crate::domain::recovery::JobEpisodes, AppError> {
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            // A job that does not exist is a 404, not an empty history.
            let job = crate::services::jobs::get(&state.db, id)
                .await
                .map_err(AppError::from)?;
            Ok(crate::services::evidence::of_job(&state.db, &job).await?)
        }
        .await,
    )
}

/// The live nodes that may run a job of `kind` asking for `run_on` (the editor shows them as
/// the field is typed; a field that does not parse matches no node, and its error shows on
/// save).
#[server(endpoint = "jobs/placement", output = Json)]
pub async fn job_placement(
    run_on: String,
    kind: String,
) -> Result<crate::views::jobs::Placement, AppError> {
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            let places = crate::services::placement::live(&state.db, crate::clock::now()).await?;
            let kind = crate::domain::job::Kind::parse(kind.trim())
                .unwrap_or(crate::domain::job::Kind::Http);
            let matching = match crate::domain::labels::Labels::parse(&run_on) {
                Ok(run_on) => crate::services::placement::matching(&places, &run_on, kind)
                    .into_iter()
                    .map(str::to_string)
                    .collect(),
                Err(_) => Vec::new(),
            };
            Ok(crate::views::jobs::Placement {
                live: places.len(),
                matching,
            })
        }
        .await,
    )
}

/// The job's recent attempts' durations, with its learned band (the duration chart).
#[server(endpoint = "jobs/durations", output = Json)]
pub async fn job_durations(id: i64) -> Result<crate::views::jobs::Durations, AppError> {
    super::respond(
        async {
            super::auth::require_user()?;
            let state = super::state()?;
            let row = crate::services::jobs::get(&state.db, id)
                .await
                .map_err(AppError::from)?;
            Ok(crate::services::runs::durations(&state.db, &row).await?)
        }
        .await,
    )
}

/// The job's trigger URL, for admins only (its id is a credential).
#[server(endpoint = "jobs/hook", output = Json)]
pub async fn job_hook(id: i64) -> Result<Option<crate::views::jobs::Hook>, AppError> {
    super::respond(
        async {
            super::auth::require_admin("see trigger URLs")?;
            let state = super::state()?;
            let row = crate::services::jobs::get(&state.db, id)
                .await
                .map_err(AppError::from)?;
            Ok(crate::services::hooks::of(&row))
        }
        .await,
    )
}

/// A watched job's ping URL, for admins only (its token is a credential): made when it has
/// none, made again (the old one stops working) with `rotate`.
#[server(endpoint = "jobs/ping-url", output = Json)]
pub async fn job_ping_url(id: i64, rotate: Option<String>) -> Result<String, AppError> {
    use crate::services::watch::{self, WatchError};
    super::respond(
        async {
            let admin = super::auth::require_admin("see ping URLs")?;
            let state = super::state()?;
            let row = crate::services::jobs::get(&state.db, id)
                .await
                .map_err(AppError::from)?;
            let rotate = rotate.is_some_and(|r| !r.is_empty());
            let who = super::actor(&admin);
            let token = match watch::token(
                &state.db,
                &state.secret_key,
                &row,
                rotate,
                &who,
                crate::clock::now(),
            )
            .await
            {
                Ok(token) => token,
                Err(WatchError::Db(e)) => return Err(AppError::from(e)),
                Err(e) => return Err(AppError::invalid("kind", e.to_string())),
            };
            Ok(format!(
                "{}/ping/{token}",
                state.public_url.trim_end_matches('/')
            ))
        }
        .await,
    )
}

/// Lets a held job run with its parameters as written until its next edit
/// (`crate::services::held::confirm`).
#[server(endpoint = "jobs/params/confirm", output = Json)]
pub async fn confirm_job_params(id: i64) -> Result<(), AppError> {
    super::respond(
        async {
            let admin = super::auth::require_admin("confirm jobs")?;
            let state = super::state()?;
            let row = crate::services::jobs::get(&state.db, id)
                .await
                .map_err(AppError::from)?;
            let who = super::actor(&admin);
            crate::services::held::confirm(&state.db, &row.name, &who, crate::clock::now())
                .await
                .map_err(AppError::from)?;
            Ok(())
        }
        .await,
    )
}

/// Changes what the job's trigger URL does while the job is paused; the URL stays.
#[server(endpoint = "jobs/hook/change", output = Json)]
pub async fn change_job_hook(
    id: i64,
    when_paused: String,
) -> Result<Option<crate::views::jobs::Hook>, AppError> {
    super::respond(
        async {
            let admin = super::auth::require_admin("change trigger URLs")?;
            let state = super::state()?;
            let row = crate::services::jobs::get(&state.db, id)
                .await
                .map_err(AppError::from)?;
            let when_paused = crate::domain::job::WhenPaused::from_field(Some(&when_paused))?;
            let who = super::actor(&admin);
            let now = crate::clock::now();
            Ok(
                crate::services::hooks::set_when_paused(&state.db, &row, when_paused, &who, now)
                    .await?,
            )
        }
        .await,
    )
}

/// Gives the job a new trigger URL (an earlier one stops working), signed with `secret` when
/// one is typed; `remove` takes it away instead.
#[server(endpoint = "jobs/hook/set", output = Json)]
pub async fn set_job_hook(
    id: i64,
    secret: Option<String>,
    when_paused: Option<String>,
    remove: Option<String>,
) -> Result<Option<crate::views::jobs::Hook>, AppError> {
    use crate::services::hooks;
    super::respond(
        async {
            let admin = super::auth::require_admin("change trigger URLs")?;
            let state = super::state()?;
            let row = crate::services::jobs::get(&state.db, id)
                .await
                .map_err(AppError::from)?;
            let (who, now) = (super::actor(&admin), crate::clock::now());
            if remove.is_some_and(|r| !r.is_empty()) {
                hooks::remove(&state.db, &row, &who, now).await?;
                return Ok(None);
            }
            let new = hooks::NewHook {
                secret: secret.as_deref(),
                when_paused: crate::domain::job::WhenPaused::from_field(when_paused.as_deref())?,
            };
            let hook = hooks::create(&state.db, &state.secret_key, &row, new, &who, now).await?;
            Ok(Some(hook))
        }
        .await,
    )
}
