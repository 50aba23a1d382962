//! Maintenance: pausing every job, a tag or one job holds its ticks and its retries but not
//! runs started by hand; resuming plans the ticks missed by each job's misfire policy.

use std::time::Duration;

use app::domain::job::{JobSpec, Kind, Misfire, Overlap};
use app::domain::run::{RunStatus, Trigger};
use app::entities::{job, job_run};
use app::services::maintenance::{self, NewWindow};
use app::services::{jobs, runs};
use chrono::{DateTime, TimeZone, Utc};
use sea_orm::{ActiveModelTrait, ColumnTrait, EntityTrait, QueryFilter, Set};
use server::engine::{Engine, claim, trigger};

use crate::engine::{base, engine_config};
use crate::helpers::{TestApp, disable_system_jobs};
use crate::on_both_backends;

const MISFIRE_AFTER: Duration = Duration::from_secs(5);

fn at(h: u32, m: u32, s: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 2, h, m, s).unwrap()
}

/// A built-in job every minute, defined at `defined`, whose ticks queue behind each other.
async fn every_minute(
    app: &TestApp,
    name: &str,
    misfire: Misfire,
    tags: &str,
    defined: DateTime<Utc>,
) -> job::Model {
    let mut input = base(name);
    input.cron = "0 * * * * *".into();
    input.kind = Kind::Builtin.as_str().into();
    input.misfire = misfire.as_str().into();
    // Runs are never executed here: a tick must not be skipped for overlapping the last one.
    input.overlap = Overlap::Queue.as_str().into();
    input.tags = tags.into();
    let spec = JobSpec::parse(&input).unwrap();
    jobs::create(&app.db, &spec, defined).await.unwrap()
}

async fn runs_of(app: &TestApp, job_id: i64, status: RunStatus) -> Vec<job_run::Model> {
    job_run::Entity::find()
        .filter(job_run::Column::JobId.eq(job_id))
        .filter(job_run::Column::Status.eq(status))
        .all(&app.db)
        .await
        .unwrap()
}

fn window(reason: &str, starts: DateTime<Utc>, ends: Option<DateTime<Utc>>) -> NewWindow {
    NewWindow {
        starts_at: starts,
        ends_at: ends,
        reason: reason.into(),
        tag: None,
    }
}

async fn pause_all_holds_ticks_and_resume_follows_the_misfire_policy(app: TestApp) {
    disable_system_jobs(&app.db).await;
    let defined = at(12, 0, 30);
    let once = every_minute(&app, "once", Misfire::RunOnce, "", defined).await;
    let skipper = every_minute(&app, "skipper", Misfire::Skip, "", defined).await;

    // Paused at 12:00:40 until someone resumes: five ticks (12:01 … 12:05) come and go.
    maintenance::schedule(
        &app.db,
        window("database upgrade", at(12, 0, 40), None),
        &app::services::audit::Actor::named("alice"),
        at(12, 0, 40),
    )
    .await
    .unwrap();
    let refused = maintenance::schedule(
        &app.db,
        window("again", at(12, 1, 0), None),
        &app::services::audit::Actor::named("bob"),
        at(12, 1, 0),
    )
    .await;
    assert!(
        refused
            .as_ref()
            .is_err_and(|e| e.to_string().contains("already paused")),
        "a second pause is refused and names the first: {refused:?}"
    );
    for minute in 1..=5 {
        let pass = trigger::enqueue_due_ticks(&app.db, at(12, minute, 30), MISFIRE_AFTER)
            .await
            .unwrap();
        assert_eq!(pass.inserted, 0, "no cron run is recorded while paused");
        assert_eq!(
            pass.next_tick, None,
            "the trigger waits for a resume, not a tick"
        );
    }
    let status = maintenance::status(&app.db, at(12, 5, 30)).await.unwrap();
    let summary = status.summary(app::i18n::Locale::english()).unwrap();
    assert!(
        summary.contains("alice") && summary.contains("database upgrade"),
        "{summary}"
    );

    let ended = maintenance::resume(
        &app.db,
        &app::services::audit::Actor::named("bob"),
        at(12, 5, 30),
    )
    .await
    .unwrap();
    assert_eq!(ended.len(), 1);
    trigger::enqueue_due_ticks(&app.db, at(12, 5, 30), MISFIRE_AFTER)
        .await
        .unwrap();
    // run_once: the newest missed tick runs, the others are recorded as skipped.
    let pending = runs_of(&app, once.id, RunStatus::Pending).await;
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].scheduled_for, at(12, 5, 0));
    assert_eq!(runs_of(&app, once.id, RunStatus::Skipped).await.len(), 4);
    // skip: every missed tick is recorded as skipped, none runs.
    assert!(
        runs_of(&app, skipper.id, RunStatus::Pending)
            .await
            .is_empty()
    );
    assert_eq!(runs_of(&app, skipper.id, RunStatus::Skipped).await.len(), 5);
    assert!(
        maintenance::status(&app.db, at(12, 5, 30))
            .await
            .unwrap()
            .summary(app::i18n::Locale::english())
            .is_none()
    );
}
on_both_backends!(pause_all_holds_ticks_and_resume_follows_the_misfire_policy);

async fn a_window_pauses_only_between_its_start_and_end_and_only_its_tag(app: TestApp) {
    disable_system_jobs(&app.db).await;
    let defined = at(12, 0, 30);
    let billing = every_minute(
        &app,
        "billing-export",
        Misfire::Skip,
        "billing, nightly",
        defined,
    )
    .await;
    let other = every_minute(&app, "reports", Misfire::Skip, "ops", defined).await;
    let mut tagged = window("billing migration", at(12, 1, 30), Some(at(12, 3, 30)));
    tagged.tag = Some("Billing".into());
    let scheduled = maintenance::schedule(
        &app.db,
        tagged,
        &app::services::audit::Actor::named("alice"),
        defined,
    )
    .await
    .unwrap();
    assert_eq!(
        scheduled.tag.as_deref(),
        Some("billing"),
        "tags are folded to lower case"
    );
    assert_eq!(
        maintenance::status(&app.db, defined)
            .await
            .unwrap()
            .ahead
            .len(),
        1
    );

    for minute in 1..=4 {
        trigger::enqueue_due_ticks(&app.db, at(12, minute, 0), MISFIRE_AFTER)
            .await
            .unwrap();
    }
    // 12:01 before the window and 12:04 after it run for billing; 12:02 and 12:03 waited and,
    // when the window ended at 12:03:30, were missed (misfire = skip).
    let ticks = |runs: Vec<job_run::Model>| {
        let mut t: Vec<DateTime<Utc>> = runs.into_iter().map(|r| r.scheduled_for).collect();
        t.sort();
        t
    };
    assert_eq!(
        ticks(runs_of(&app, billing.id, RunStatus::Pending).await),
        [at(12, 1, 0), at(12, 4, 0)]
    );
    assert_eq!(
        ticks(runs_of(&app, billing.id, RunStatus::Skipped).await),
        [at(12, 2, 0), at(12, 3, 0)]
    );
    assert_eq!(
        runs_of(&app, other.id, RunStatus::Pending).await.len(),
        4,
        "a job without the tag runs on"
    );
}
on_both_backends!(a_window_pauses_only_between_its_start_and_end_and_only_its_tag);

async fn a_paused_job_keeps_its_ticks_for_the_misfire_policy(app: TestApp) {
    disable_system_jobs(&app.db).await;
    let defined = at(12, 0, 30);
    let paused = every_minute(&app, "paused", Misfire::RunOnce, "", defined).await;
    let running = every_minute(&app, "running", Misfire::RunOnce, "", defined).await;
    maintenance::set_job_paused(
        &app.db,
        paused.id,
        true,
        &crate::helpers::TESTER,
        at(12, 0, 40),
    )
    .await
    .unwrap();
    trigger::enqueue_due_ticks(&app.db, at(12, 3, 30), MISFIRE_AFTER)
        .await
        .unwrap();
    assert!(
        runs_of(&app, paused.id, RunStatus::Pending)
            .await
            .is_empty()
    );
    assert_eq!(
        maintenance::status(&app.db, at(12, 3, 30))
            .await
            .unwrap()
            .paused_jobs,
        ["paused"]
    );
    assert_eq!(runs_of(&app, running.id, RunStatus::Pending).await.len(), 1);
    maintenance::set_job_paused(
        &app.db,
        paused.id,
        false,
        &crate::helpers::TESTER,
        at(12, 3, 30),
    )
    .await
    .unwrap();
    trigger::enqueue_due_ticks(&app.db, at(12, 3, 30), MISFIRE_AFTER)
        .await
        .unwrap();
    let pending = runs_of(&app, paused.id, RunStatus::Pending).await;
    assert_eq!(
        pending.len(),
        1,
        "the newest tick missed while paused runs once"
    );
    assert_eq!(pending[0].scheduled_for, at(12, 3, 0));
    assert_eq!(runs_of(&app, paused.id, RunStatus::Skipped).await.len(), 2);

    // A disabled job is different: re-enabled, it counts from then and skips nothing.
    let skipped_before = runs_of(&app, running.id, RunStatus::Skipped).await.len();
    jobs::set_enabled(
        &app.db,
        running.id,
        false,
        &crate::helpers::TESTER,
        at(12, 3, 40),
    )
    .await
    .unwrap();
    jobs::set_enabled(
        &app.db,
        running.id,
        true,
        &crate::helpers::TESTER,
        at(12, 6, 30),
    )
    .await
    .unwrap();
    trigger::enqueue_due_ticks(&app.db, at(12, 6, 40), MISFIRE_AFTER)
        .await
        .unwrap();
    assert_eq!(
        runs_of(&app, running.id, RunStatus::Skipped).await.len(),
        skipped_before
    );
    assert!(
        runs_of(&app, running.id, RunStatus::Pending)
            .await
            .iter()
            .all(|r| r.scheduled_for < at(12, 4, 0)),
        "no tick of the disabled time is recorded"
    );
}
on_both_backends!(a_paused_job_keeps_its_ticks_for_the_misfire_policy);

async fn while_paused_retries_wait_and_runs_started_by_hand_run(app: TestApp) {
    disable_system_jobs(&app.db).await;
    let job = crate::helpers::define(&app.db, crate::helpers::noop_job("noop")).await;
    // Another job, so the manual run heads its own lane rather than queueing behind the retry.
    let other = crate::helpers::define(&app.db, crate::helpers::noop_job("other")).await;
    let now = Utc::now();
    // A retry due now: planned work.
    let mut retry = crate::helpers::run_row(job.id, RunStatus::RetryWait, now);
    retry.due_at = Set(Some(now - chrono::Duration::seconds(1)));
    retry.next_attempt_at = Set(Some(now - chrono::Duration::seconds(1)));
    let retry = retry.insert(&app.db).await.unwrap();
    maintenance::schedule(
        &app.db,
        window("deploy", now, None),
        &app::services::audit::Actor::named("alice"),
        now,
    )
    .await
    .unwrap();
    let node = Engine::new(app.db.clone(), engine_config("node-a")).shared();
    assert!(
        claim::claim_due(&node, Utc::now(), 10)
            .await
            .unwrap()
            .is_empty(),
        "no retry starts while paused"
    );
    assert_eq!(
        claim::next_due_in(&node, Utc::now()).await.unwrap(),
        None,
        "the dispatcher does not spin on a retry it may not start"
    );
    // Run now still works (the console asks for a confirmation first).
    let manual = runs::create_manual(&app.db, other.id, Utc::now())
        .await
        .unwrap();
    assert_eq!(manual.trigger, Trigger::Manual);
    let claimed = claim::claim_due(&node, Utc::now(), 10).await.unwrap();
    assert_eq!(
        claimed.iter().map(|c| c.run.id).collect::<Vec<_>>(),
        [manual.id]
    );
    maintenance::resume(
        &app.db,
        &app::services::audit::Actor::named("alice"),
        Utc::now(),
    )
    .await
    .unwrap();
    let claimed = claim::claim_due(&node, Utc::now(), 10).await.unwrap();
    assert_eq!(
        claimed.iter().map(|c| c.run.id).collect::<Vec<_>>(),
        [retry.id],
        "the retry starts once resumed"
    );
}
on_both_backends!(while_paused_retries_wait_and_runs_started_by_hand_run);

async fn bad_windows_are_refused_and_change_nothing(app: TestApp) {
    let now = at(12, 0, 0);
    for (bad, says) in [
        (window("  ", now, None), "say why"),
        (
            window("x", at(12, 30, 0), Some(at(12, 10, 0))),
            "after the start",
        ),
        (
            window("x", at(11, 0, 0), Some(at(11, 30, 0))),
            "already passed",
        ),
        (
            NewWindow {
                tag: Some("no/slash".into()),
                ..window("x", now, None)
            },
            "no/slash",
        ),
    ] {
        let e = maintenance::schedule(
            &app.db,
            bad,
            &app::services::audit::Actor::named("alice"),
            now,
        )
        .await
        .unwrap_err();
        assert!(e.to_string().contains(says), "{e}");
    }
    let status = maintenance::status(&app.db, now).await.unwrap();
    assert!(status.active.is_empty() && status.ahead.is_empty());
    assert!(
        maintenance::cancel(
            &app.db,
            999,
            &app::services::audit::Actor::named("alice"),
            now
        )
        .await
        .is_err()
    );
}
on_both_backends!(bad_windows_are_refused_and_change_nothing);

async fn runs_and_the_failed_queue_filter_by_tag(app: TestApp) {
    use app::domain::filters::QueueQuery;
    use app::services::failed;
    let now = Utc::now();
    let mut ids = Vec::new();
    // `team_a` and `team-a` differ only where LIKE's `_` wildcard would match anything.
    for (name, tags) in [("a", "team_a"), ("b", "team-a, ops"), ("c", "")] {
        let mut input = crate::helpers::noop_job(name);
        input.tags = tags.into();
        let job = crate::helpers::define(&app.db, input).await;
        crate::helpers::insert_run(
            &app.db,
            crate::helpers::run_row(job.id, RunStatus::Dead, now),
        )
        .await;
        ids.push(job.id);
    }
    let listed = |tag: Option<&str>| {
        let db = app.db.clone();
        let tag = tag.map(str::to_string);
        async move {
            let filter = runs::RunFilter {
                job: None,
                status: None,
                tag,
                since: None,
                limit: 100,
                before: None,
            };
            let mut jobs: Vec<String> = runs::list(&db, &filter)
                .await
                .unwrap()
                .into_iter()
                .map(|r| r.job)
                .collect();
            jobs.sort();
            jobs
        }
    };
    assert_eq!(listed(Some("team_a")).await, ["a"]);
    assert_eq!(listed(Some("team-a")).await, ["b"]);
    assert_eq!(listed(Some("ops")).await, ["b"]);
    assert!(
        listed(Some("team")).await.is_empty(),
        "a whole tag, not a prefix"
    );
    assert_eq!(listed(None).await.len(), 3);

    let queue = |tag: &str| {
        QueueQuery::parse(None, None, None, None, None)
            .unwrap()
            .with_tag(Some(tag))
    };
    let page = failed::page(&app.db, &queue("Team-A").unwrap(), None, 50)
        .await
        .unwrap();
    assert_eq!(
        page.rows.iter().map(|r| r.job.as_str()).collect::<Vec<_>>(),
        ["b"],
        "tags are folded to lower case"
    );
    assert_eq!(
        failed::count(&app.db, &queue("ops").unwrap())
            .await
            .unwrap(),
        1
    );
    let refused = queue("a/b").unwrap_err();
    assert_eq!(refused.field, "tag");
}
on_both_backends!(runs_and_the_failed_queue_filter_by_tag);

/// Makes every insert into the audit log fail, as a full disk or a broken constraint would.
async fn refuse_audit_rows(db: &sea_orm::DatabaseConnection) {
    use sea_orm::ConnectionTrait;
    let sql = match db.get_database_backend() {
        sea_orm::DatabaseBackend::Postgres => {
            "CREATE FUNCTION refuse_audit() RETURNS trigger AS $$ \
             BEGIN RAISE EXCEPTION 'audit refused'; END $$ LANGUAGE plpgsql; \
             CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_log \
             FOR EACH ROW EXECUTE FUNCTION refuse_audit();"
        }
        _ => {
            "CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_log \
             BEGIN SELECT RAISE(ABORT, 'audit refused'); END;"
        }
    };
    db.execute_unprepared(sql).await.unwrap();
}

/// A change and its audit row are stored together or not at all: with the audit log refusing
/// rows, saving, enabling, pausing, tagging and deleting a job, pausing everything and
/// disabling an account all fail and change nothing.
async fn a_change_is_not_stored_without_its_audit_row(app: TestApp) {
    use app::services::audit::Actor;
    use app::views::jobs::BulkAction;
    use sea_orm::PaginatorTrait;
    disable_system_jobs(&app.db).await;
    let now = Utc::now();
    let who = Actor::named("alice");
    let job = every_minute(&app, "audited", Misfire::Skip, "", now).await;
    refuse_audit_rows(&app.db).await;

    let mut input = base("unaudited");
    input.kind = Kind::Builtin.as_str().into();
    let spec = JobSpec::parse(&input).unwrap();
    assert!(
        jobs::save(&app.db, None, &spec, &who, &app.secret_key, now)
            .await
            .is_err()
    );
    assert!(
        jobs::set_enabled(&app.db, job.id, false, &who, now)
            .await
            .is_err()
    );
    assert!(
        maintenance::set_job_paused(&app.db, job.id, true, &who, now)
            .await
            .is_err()
    );
    let tag = jobs::bulk(&app.db, &[job.id], BulkAction::Tag, Some("x"), &who, now).await;
    assert!(tag.is_err());
    assert!(jobs::delete(&app.db, job.id, &who, now).await.is_err());
    let pause = maintenance::schedule(&app.db, window("deploy", now, None), &who, now).await;
    assert!(pause.is_err(), "{pause:?}");
    use app::services::users::{self, Change};
    let disable = users::change(&app.db, "viewer", Change::Disabled(true), &who, now).await;
    assert!(disable.is_err(), "{disable:?}");

    let stored = jobs::get(&app.db, job.id).await.unwrap();
    assert!(stored.enabled && !stored.paused, "{stored:?}");
    assert_eq!(stored.tags, job.tags);
    let unaudited = job::Entity::find()
        .filter(job::Column::Name.eq("unaudited"))
        .count(&app.db)
        .await
        .unwrap();
    assert_eq!(unaudited, 0);
    let status = maintenance::status(&app.db, now).await.unwrap();
    assert!(status.active.is_empty(), "{status:?}");
    let viewer = users::find_by_username(&app.db, "viewer").await.unwrap();
    assert!(viewer.is_some_and(|v| v.disabled_at.is_none()));
}
on_both_backends!(a_change_is_not_stored_without_its_audit_row);
