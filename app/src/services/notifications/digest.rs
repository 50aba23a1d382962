//! The daily health digest's figures, straight from `job_runs` and `job_attempts` over one
//! window (the 24 hours before the digest), with the window before it for trends. What each
//! figure means, and the mail, are [`crate::domain::digest`].

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use sea_orm::{ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder};

use crate::domain::digest::{Digest, Hour, JobDigest, QueuedRun};
use crate::domain::email::EmailAddress;
use crate::domain::run::{ErrorClass, Outcome, RunStatus};
use crate::domain::timeout::nearest_rank;
use crate::entities::{job, job_attempt, job_run};
use crate::i18n::digest::compose;

/// The digest of the 24 hours before `end`.
pub async fn gather(db: &impl ConnectionTrait, end: DateTime<Utc>) -> Result<Digest, DbErr> {
    let start = end - Duration::hours(24);
    let mut jobs: BTreeMap<i64, JobDigest> = job::Entity::find()
        .all(db)
        .await?
        .into_iter()
        .map(|j| {
            (
                j.id,
                JobDigest {
                    tags: crate::domain::job::tags::from_column(&j.tags),
                    job: j.name,
                    ..Default::default()
                },
            )
        })
        .collect();
    let hours = count_runs(db, start, end, &mut jobs).await?;
    count_attempts(db, start, end, &mut jobs).await?;
    let queue = failed_queue(db, &jobs).await?;
    let policies = policies_worth_a_look(db).await?;
    let worse_after_change = worse_after_change(db, start, end).await?;
    // Jobs that did something first, then by name.
    let mut jobs: Vec<JobDigest> = jobs.into_values().collect();
    jobs.sort_by(|a, b| b.runs.cmp(&a.runs).then_with(|| a.job.cmp(&b.job)));
    Ok(Digest {
        start,
        end,
        policies,
        worse_after_change,
        jobs,
        queue,
        hours,
    })
}

/// Counts the runs that ended in the window into each job, and returns them per hour.
async fn count_runs(
    db: &impl ConnectionTrait,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
    jobs: &mut BTreeMap<i64, JobDigest>,
) -> Result<Vec<Hour>, DbErr> {
    let mut hours: Vec<Hour> = (0..24)
        .map(|h| Hour {
            start: start + Duration::hours(h),
            succeeded: 0,
            failed: 0,
        })
        .collect();
    let ended = job_run::Entity::find()
        .filter(job_run::Column::FinishedAt.gte(start))
        .filter(job_run::Column::FinishedAt.lt(end))
        .filter(job_run::Column::Status.is_in([
            RunStatus::Succeeded,
            RunStatus::Dead,
            RunStatus::Skipped,
        ]))
        .all(db)
        .await?;
    for run in &ended {
        let ok = run.status == RunStatus::Succeeded;
        if let Some(job) = jobs.get_mut(&run.job_id) {
            job.runs += 1;
            job.succeeded += u64::from(ok);
        }
        if let Some(finished) = run.finished_at {
            let h = (finished - start).num_hours().clamp(0, 23) as usize;
            if ok {
                hours[h].succeeded += 1;
            } else {
                hours[h].failed += 1;
            }
        }
    }
    Ok(hours)
}

/// Counts each job's timeouts, retries and slow attempts in the window, and its P95 of
/// successful attempts there and in the window before.
async fn count_attempts(
    db: &impl ConnectionTrait,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
    jobs: &mut BTreeMap<i64, JobDigest>,
) -> Result<(), DbErr> {
    let before = start - Duration::hours(24);
    // Attempts of both windows, with their run's job.
    let attempts = job_attempt::Entity::find()
        .find_also_related(job_run::Entity)
        .filter(job_attempt::Column::FinishedAt.gte(before))
        .filter(job_attempt::Column::FinishedAt.lt(end))
        .all(db)
        .await?;
    let mut durations: BTreeMap<(i64, bool), Vec<u64>> = BTreeMap::new();
    for (attempt, run) in attempts {
        let Some(run) = run else { continue };
        let current = attempt.finished_at.is_some_and(|f| f >= start);
        if attempt.outcome == Some(Outcome::Succeeded)
            && let Some(ms) = attempt.duration_ms
        {
            durations
                .entry((run.job_id, current))
                .or_default()
                .push(ms.max(0) as u64);
        }
        if !current {
            continue;
        }
        if let Some(job) = jobs.get_mut(&run.job_id) {
            job.timeouts += u64::from(attempt.error_class == Some(ErrorClass::Timeout));
            job.retries += u64::from(attempt.number > 1);
            job.slow += u64::from(attempt.slow);
        }
    }
    for ((job_id, current), mut samples) in durations {
        samples.sort_unstable();
        if let Some(job) = jobs.get_mut(&job_id) {
            let p95 = Some(nearest_rank(&samples, 0.95));
            if current {
                job.p95_ms = p95;
            } else {
                job.p95_before_ms = p95;
            }
        }
    }
    Ok(())
}

/// Every dead run not yet handled, longest waiting first.
async fn failed_queue(
    db: &impl ConnectionTrait,
    jobs: &BTreeMap<i64, JobDigest>,
) -> Result<Vec<QueuedRun>, DbErr> {
    Ok(job_run::Entity::find()
        .filter(job_run::Column::Status.eq(RunStatus::Dead))
        .filter(job_run::Column::Resolution.is_null())
        .order_by_asc(job_run::Column::FinishedAt)
        .all(db)
        .await?
        .into_iter()
        .map(|run| QueuedRun {
            job: jobs
                .get(&run.job_id)
                .map(|j| j.job.clone())
                .unwrap_or_default(),
            run_id: run.id,
            dead_since: run.finished_at.unwrap_or(run.updated_at),
        })
        .collect())
}

/// Retry policies worth a look: each enabled job's policy replayed against its episodes.
/// Jobs with a revision made in the window whose runs since did worse than the revision
/// before's: the latest such revision of each job, compared by `outcomes::worse`.
async fn worse_after_change(
    db: &impl ConnectionTrait,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
) -> Result<Vec<crate::domain::digest::ChangeFinding>, DbErr> {
    use crate::entities::job_revision;
    let made = job_revision::Entity::find()
        .filter(job_revision::Column::At.gte(start))
        .filter(job_revision::Column::At.lt(end))
        .filter(job_revision::Column::Revision.gt(1))
        .order_by_desc(job_revision::Column::Revision)
        .all(db)
        .await?;
    let mut findings = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for revision in made {
        if !seen.insert(revision.job_id) {
            continue;
        }
        if let Some(finding) = change_finding(db, revision).await? {
            findings.push(finding);
        }
    }
    findings.sort_by(|a, b| a.job.cmp(&b.job));
    Ok(findings)
}

async fn change_finding(
    db: &impl ConnectionTrait,
    revision: crate::entities::job_revision::Model,
) -> Result<Option<crate::domain::digest::ChangeFinding>, DbErr> {
    use crate::domain::job::outcomes::worse;
    let outcomes = crate::services::revisions::outcomes(db, revision.job_id).await?;
    let of = |n: i32| outcomes.iter().find(|o| o.revision == n);
    let Some(worse) = of(revision.revision - 1)
        .zip(of(revision.revision))
        .and_then(|(before, after)| worse(before, after))
    else {
        return Ok(None);
    };
    let Some(job) = job::Entity::find_by_id(revision.job_id).one(db).await? else {
        return Ok(None);
    };
    let fields =
        crate::services::revisions::shown_changes(db, revision.job_id, revision.revision).await?;
    Ok(Some(crate::domain::digest::ChangeFinding {
        job: job.name,
        job_id: job.id,
        revision: revision.revision,
        actor: revision.actor,
        fields,
        worse,
    }))
}

async fn policies_worth_a_look(
    db: &impl ConnectionTrait,
) -> Result<Vec<crate::domain::digest::PolicyFinding>, DbErr> {
    let mut policies = Vec::new();
    for row in job::Entity::find()
        .filter(job::Column::Enabled.eq(true))
        .order_by_asc(job::Column::Name)
        .all(db)
        .await?
    {
        // A row the domain cannot read (an older format) has no policy to judge.
        let Ok(spec) = crate::services::jobs::to_spec(&row) else {
            continue;
        };
        let episodes = crate::services::evidence::episodes(db, row.id).await?;
        let replay = crate::domain::recovery::replay(&spec.retry, &episodes);
        if let Some(concern) = crate::domain::recovery::worth_a_look(&spec.retry, &replay) {
            policies.push(crate::domain::digest::PolicyFinding {
                job: row.name,
                job_id: row.id,
                concern,
                episodes: replay.episodes,
                recovered: replay.recovered,
                total_wait_ms: spec.retry.total_ms(),
                longest_recovery_ms: replay.longest_recovery_ms,
            });
        }
    }
    Ok(policies)
}

/// Queues the digest of the 24 hours before `now` to `to` and to `channels` (an e-mail
/// channel's addresses join the mail; a chat channel gets a short version linking to the
/// mail), under `dedupe_key`; returns whether it was queued (false: that digest exists
/// already).
pub async fn queue(
    db: &impl ConnectionTrait,
    now: DateTime<Utc>,
    zone: chrono_tz::Tz,
    mut to: Vec<EmailAddress>,
    channels: &[String],
    dedupe_key: String,
    default_locale: crate::i18n::Locale,
) -> Result<bool, DbErr> {
    let digest = gather(db, now).await?;
    let mail_locale = super::mail_locale(db, default_locale).await?;
    for address in super::channel_outbox::email_addresses(db, channels).await? {
        if !to.contains(&address) {
            to.push(address);
        }
    }
    let mut queued = false;
    let mut full = format!("{}/", crate::domain::mail::CONSOLE);
    if !to.is_empty() {
        queued = crate::services::outbox::enqueue(
            db,
            crate::services::outbox::NewMail {
                dedupe_key: dedupe_key.clone(),
                kind: "digest".into(),
                job_id: None,
                run_id: None,
                recipients: to,
                composed: compose(&digest, zone, mail_locale),
            },
            now,
        )
        .await?;
        if let Some(mail) =
            crate::entities::mail_outbox::Entity::find_by_dedupe_key(db, &dedupe_key).await?
        {
            full = format!(
                "{}/notifications?mail={}",
                crate::domain::mail::CONSOLE,
                mail.id
            );
        }
    }
    if !channels.is_empty() {
        let before = super::channel_outbox::queued(db, &dedupe_key).await?;
        super::channel_outbox::enqueue(
            db,
            channels,
            &super::channel_outbox::NewEvent::in_every_language(
                dedupe_key.clone(),
                |l| crate::i18n::digest::chat_event(&digest, zone, full.clone(), l),
                default_locale,
            ),
            now,
            default_locale,
        )
        .await?;
        queued |= super::channel_outbox::queued(db, &dedupe_key).await? > before;
    }
    Ok(queued)
}

/// The scheduled digest: once per local day, to [`recipients`]. Says what it did.
pub async fn queue_daily(
    db: &impl ConnectionTrait,
    now: DateTime<Utc>,
    zone: chrono_tz::Tz,
    default_locale: crate::i18n::Locale,
) -> Result<String, DbErr> {
    let to = super::recipients(db).await?;
    let channels = super::channels(db).await?;
    if to.is_empty() && channels.is_empty() {
        return Ok(
            "no digest recipients or channels (set them on the Notifications page): nothing queued"
                .into(),
        );
    }
    let day = now.with_timezone(&zone).date_naive();
    let queued = queue(
        db,
        now,
        zone,
        to.clone(),
        &channels,
        format!("digest:{day}"),
        default_locale,
    )
    .await?;
    let mut said: Vec<String> = to.iter().map(ToString::to_string).collect();
    said.extend(channels.iter().map(|c| format!("channel {c}")));
    Ok(if queued {
        format!("digest for {day} queued to {}", said.join(", "))
    } else {
        format!("the digest for {day} was already queued")
    })
}
