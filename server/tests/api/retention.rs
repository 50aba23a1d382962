//! What the daily `cleanup` job forgets, and what it keeps: the failed queue stays until
//! someone handles it, whatever its age.

use std::time::Duration;

use app::domain::mail::MailStatus;
use app::domain::run::{Outcome, Resolution, RunStatus};
use app::entities::{audit_log, job, job_attempt, job_run, mail_outbox};
use app::services::retention::{self, Retention};
use chrono::Utc;
use sea_orm::{ActiveModelTrait, ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter, Set};

use crate::helpers::{TestApp, define, insert_run, noop_job, run_row};
use crate::on_both_backends;

async fn cleanup_keeps_the_failed_queue_and_forgets_the_rest(app: TestApp) {
    let now = Utc::now();
    let days = chrono::Duration::days;
    let job = define(&app.db, noop_job("old-and-new")).await;
    let with_attempt = |status: RunStatus, age: chrono::Duration, resolution| {
        let db = app.db.clone();
        let mut row = run_row(job.id, status, now - age);
        row.resolution = Set(resolution);
        async move {
            let run = insert_run(&db, row).await;
            job_attempt::ActiveModel {
                run_id: Set(run.id),
                number: Set(1),
                started_at: Set(run.created_at),
                finished_at: Set(run.finished_at),
                outcome: Set(Some(Outcome::Succeeded)),
                timeout_ms: Set(1000),
                node: Set("node-a".into()),
                slow: Set(false),
                spent_retry: Set(true),
                ..Default::default()
            }
            .insert(&db)
            .await
            .unwrap();
            run.id
        }
    };
    let old_success = with_attempt(RunStatus::Succeeded, days(100), None).await;
    let old_skipped = with_attempt(RunStatus::Skipped, days(91), None).await;
    let old_handled = with_attempt(RunStatus::Dead, days(200), Some(Resolution::Resolved)).await;
    let old_unhandled = with_attempt(RunStatus::Dead, days(400), None).await;
    let recent = with_attempt(RunStatus::Succeeded, days(89), None).await;
    // Still waiting to retry, long ago (its node died): not the cleanup's business.
    let stuck = with_attempt(RunStatus::RetryWait, days(120), None).await;

    for (age, action) in [(days(366), "old"), (days(10), "new")] {
        audit_log::ActiveModel {
            at: Set(now - age),
            actor: Set("admin".into()),
            action: Set(action.into()),
            subject: Set("job".into()),
            detail: Set("{}".into()),
            ..Default::default()
        }
        .insert(&app.db)
        .await
        .unwrap();
    }
    for (age, status, key) in [
        (days(31), MailStatus::Sent, "old-sent"),
        (days(40), MailStatus::Written, "old-written"),
        (days(31), MailStatus::Failed, "old-failed"),
        (days(5), MailStatus::Failed, "new-failed"),
        (days(2), MailStatus::Sent, "new-sent"),
    ] {
        let at = now - age;
        mail_outbox::ActiveModel {
            dedupe_key: Set(key.into()),
            kind: Set("test".into()),
            recipients: Set("[\"a@example.com\"]".into()),
            subject: Set(key.into()),
            body_text: Set(key.into()),
            status: Set(status),
            attempts: Set(1),
            next_attempt_at: Set(at),
            created_at: Set(at),
            sent_at: Set(status.is_delivered().then_some(at)),
            ..Default::default()
        }
        .insert(&app.db)
        .await
        .unwrap();
    }
    let admin = app::entities::user::Entity::find()
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    app::services::sessions::create(
        &app.db,
        admin.id,
        days(1),
        &Default::default(),
        now - days(2),
    )
    .await
    .unwrap();
    let live =
        app::services::sessions::create(&app.db, admin.id, days(1), &Default::default(), now)
            .await
            .unwrap();

    let cleaned = retention::clean(&app.db, now, Retention::default())
        .await
        .unwrap();
    assert_eq!(cleaned.runs, 3, "{cleaned}");
    assert_eq!(cleaned.attempts, 3, "{cleaned}");
    assert_eq!(cleaned.audit, 1, "{cleaned}");
    assert_eq!(cleaned.mails, 3, "{cleaned}");
    assert_eq!(cleaned.sessions, 1, "{cleaned}");

    for (id, kept) in [
        (old_success, false),
        (old_skipped, false),
        (old_handled, false),
        (old_unhandled, true),
        (recent, true),
        (stuck, true),
    ] {
        let run = job_run::Entity::find_by_id(id).one(&app.db).await.unwrap();
        assert_eq!(run.is_some(), kept, "run {id}");
        let attempts = job_attempt::Entity::find()
            .filter(job_attempt::Column::RunId.eq(id))
            .count(&app.db)
            .await
            .unwrap();
        assert_eq!(attempts, u64::from(kept), "attempts of run {id}");
    }
    let mails: Vec<String> = mail_outbox::Entity::find()
        .all(&app.db)
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.dedupe_key)
        .collect();
    // A mail that failed for good stays a month for someone to resend it, then goes too.
    assert_eq!(mails, ["new-failed", "new-sent"], "{mails:?}");
    assert!(
        app::services::sessions::user_for_token(
            &app.db,
            &live,
            app::services::sessions::Lifetimes {
                absolute: days(1),
                idle: days(1),
            },
            now
        )
        .await
        .unwrap()
        .is_some(),
        "a live session survives"
    );

    // Nothing more to do on a second pass.
    let again = retention::clean(&app.db, now, Retention::default())
        .await
        .unwrap();
    assert_eq!(again, retention::Cleaned::default());

    // The system job runs the same cleanup (here with nothing left to delete).
    let cleanup = job::Entity::find()
        .filter(job::Column::Name.eq("cleanup"))
        .one(&app.db)
        .await
        .unwrap()
        .expect("the cleanup system job exists");
    let (_, finished) =
        crate::engine::run_to_end(&app.db, cleanup.id, Duration::from_secs(20)).await;
    assert_eq!(finished.status, RunStatus::Succeeded);
    let attempt = job_attempt::Entity::find()
        .filter(job_attempt::Column::RunId.eq(finished.id))
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    assert!(
        attempt
            .output_tail
            .as_deref()
            .unwrap_or_default()
            .contains("deleted 0 runs"),
        "{:?}",
        attempt.output_tail
    );
}
on_both_backends!(cleanup_keeps_the_failed_queue_and_forgets_the_rest);
