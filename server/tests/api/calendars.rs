//! Work calendars, business dates and backfill on a clock the test controls: the issue's
//! calendar (off 2026-09-25 and 10-01…07, make-up 09-20 and 10-10) and a job at 09:00 on
//! weekdays in Asia/Shanghai. A backfill's dry run lists exactly the workdays; the backfill
//! runs them one at a time, each printing its own date, and again makes none; a misfired
//! workday tick runs with its own date; off days' ticks are skipped with the day's name, or
//! moved to the next workday standing for their own dates; a calendar a job follows cannot be
//! removed or changed under it.

use app::domain::backfill::{self, Pace};
use app::domain::calendar::{CalendarInput, DateInput, OnOffDay};
use app::domain::job::{JobInput, JobSpec, Kind};
use app::domain::run::{RunStatus, Trigger};
use app::entities::{job, job_attempt, job_run};
use app::services::backfills::{self, Request, TickAction};
use app::services::calendars::{self, CalendarServiceError};
use chrono::{DateTime, NaiveDate, TimeZone, Utc};
use chrono_tz::Asia::Shanghai;
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder};

use crate::helpers::{TESTER, TestApp};
use crate::on_both_backends;

fn date(s: &str) -> NaiveDate {
    NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
}

/// A moment in Shanghai.
fn at(local: &str) -> DateTime<Utc> {
    let naive = chrono::NaiveDateTime::parse_from_str(local, "%Y-%m-%d %H:%M:%S").unwrap();
    Shanghai
        .from_local_datetime(&naive)
        .unwrap()
        .with_timezone(&Utc)
}

fn golden_week() -> CalendarInput {
    let off = [
        "2026-09-25",
        "2026-10-01",
        "2026-10-02",
        "2026-10-03",
        "2026-10-04",
    ]
    .into_iter()
    .chain(["2026-10-05", "2026-10-06", "2026-10-07"])
    .map(|d| DateInput::Named {
        date: d.into(),
        name: if d == "2026-09-25" {
            "中秋节"
        } else {
            "国庆节"
        }
        .into(),
    })
    .collect();
    CalendarInput {
        name: "cn-workdays".into(),
        base: app::domain::calendar::BaseInput::Text("mon-fri".into()),
        off,
        on: vec![
            DateInput::Date("2026-09-20".into()),
            DateInput::Date("2026-10-10".into()),
        ],
    }
}

fn workday_job(name: &str) -> JobInput {
    JobInput {
        name: name.into(),
        kind: Kind::Command.as_str().into(),
        command_program: "sh".into(),
        command_args: "-c\necho $BULWARK_BUSINESS_DATE $BULWARK_SCHEDULED_AT".into(),
        cron: "0 0 9 * * MON-FRI".into(),
        timezone: "Asia/Shanghai".into(),
        calendar: "cn-workdays".into(),
        overlap: "skip".into(),
        misfire: "run_once".into(),
        ..JobInput::default()
    }
}

async fn define_at(db: &DatabaseConnection, input: JobInput, now: DateTime<Utc>) -> job::Model {
    let spec = JobSpec::parse(&input).unwrap_or_else(|e| panic!("{e:?}"));
    app::services::jobs::create(db, &spec, now).await.unwrap()
}

async fn with_calendar(app: &TestApp) {
    calendars::save(&app.db, &golden_week(), &TESTER, Utc::now())
        .await
        .unwrap();
}

const WORKDAYS: [&str; 13] = [
    "2026-09-18",
    "2026-09-20",
    "2026-09-21",
    "2026-09-22",
    "2026-09-23",
    "2026-09-24",
    "2026-09-28",
    "2026-09-29",
    "2026-09-30",
    "2026-10-08",
    "2026-10-09",
    "2026-10-10",
    "2026-10-12",
];

fn range() -> Request {
    Request {
        from: date("2026-09-18"),
        to: date("2026-10-12"),
        pace: Pace {
            parallel: 1,
            per_minute: None,
        },
        rerun: false,
    }
}

async fn runs_of(db: &DatabaseConnection, job_id: i64) -> Vec<job_run::Model> {
    job_run::Entity::find()
        .filter(job_run::Column::JobId.eq(job_id))
        .order_by_asc(job_run::Column::Id)
        .all(db)
        .await
        .unwrap()
}

fn statuses_and_dates(runs: &[job_run::Model]) -> Vec<(RunStatus, Option<NaiveDate>)> {
    runs.iter().map(|r| (r.status, r.business_date)).collect()
}

/// The dry run lists the workdays, each line starting with its tick in the job's zone; the
/// backfill runs them one at a time, each printing its own date; asked again, it makes none.
async fn a_backfill_runs_each_workday_once_one_at_a_time(app: TestApp) {
    with_calendar(&app).await;
    let mut input = workday_job("daily-report");
    // Disabled: only the backfill's runs happen, whatever the wall clock says.
    input.enabled = false;
    let job = define_at(&app.db, input, at("2026-09-01 00:00:00")).await;
    let now = at("2026-11-01 12:00:00");

    let (spec, planned) = backfills::plan(&app.db, &job, &range(), now).await.unwrap();
    let lines: Vec<String> = planned
        .iter()
        .map(|p| backfill::line(&spec, &p.due))
        .collect();
    let expected: Vec<String> = WORKDAYS
        .iter()
        .map(|d| format!("{d}T09:00:00+08:00 {d}"))
        .collect();
    assert_eq!(lines, expected);
    assert!(
        runs_of(&app.db, job.id).await.is_empty(),
        "a dry run makes nothing"
    );

    let (made, _) = backfills::start(&app.db, &job, &range(), &TESTER, now)
        .await
        .unwrap();
    let made = made.expect("a backfill");
    assert_eq!(made.total, 13);
    let runs = runs_of(&app.db, job.id).await;
    assert!(
        runs.iter()
            .all(|r| r.trigger == Trigger::Backfill && r.status == RunStatus::Blocked)
    );

    let engine = crate::engine::start(&app.db, crate::engine::engine_config("node-a"));
    let ended = wait_for_all(&app.db, job.id, 13).await;
    engine.stop().await;
    assert_eq!(ended.len(), 13, "every backfill run ended");
    let mut previous_end: Option<DateTime<Utc>> = None;
    for (run, day) in ended.iter().zip(WORKDAYS) {
        assert_eq!(run.status, RunStatus::Succeeded, "run {}", run.id);
        assert_eq!(run.business_date, Some(date(day)));
        let attempt = job_attempt::Entity::find()
            .filter(job_attempt::Column::RunId.eq(run.id))
            .one(&app.db)
            .await
            .unwrap()
            .unwrap();
        let out = attempt.output_tail.unwrap_or_default();
        assert_eq!(out.trim(), format!("{day} {day}T09:00:00+08:00"));
        if let Some(end) = previous_end {
            assert!(attempt.started_at >= end, "runs overlapped: {day}");
        }
        previous_end = attempt.finished_at;
    }
    let (again, planned) = backfills::start(&app.db, &job, &range(), &TESTER, now)
        .await
        .unwrap();
    assert!(again.is_none(), "every tick has its run");
    assert!(
        planned
            .iter()
            .all(|p| matches!(p.action, TickAction::Has(_)))
    );
    assert_eq!(runs_of(&app.db, job.id).await.len(), 13);
}
on_both_backends!(a_backfill_runs_each_workday_once_one_at_a_time);

/// The job's runs, oldest first, once `count` of them have ended (or after 60 s).
async fn wait_for_all(db: &DatabaseConnection, job_id: i64, count: usize) -> Vec<job_run::Model> {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let runs = runs_of(db, job_id).await;
        let ended: Vec<job_run::Model> = runs
            .into_iter()
            .filter(|r| !r.status.is_active() && r.status != RunStatus::Blocked)
            .collect();
        if ended.len() >= count || tokio::time::Instant::now() > deadline {
            let mut ended = ended;
            ended.sort_by_key(|r| r.business_date);
            return ended;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

async fn tick(db: &DatabaseConnection, now: DateTime<Utc>) {
    server::engine::trigger::enqueue_due_ticks(db, now, std::time::Duration::from_secs(30))
        .await
        .unwrap();
}

/// A node stopped across a workday's tick runs it once back (`misfire = run_once`), for
/// that day; an off day's tick is a skipped run naming the day, a weekend none at all.
async fn a_misfired_workday_runs_for_its_own_date_and_off_days_say_why(app: TestApp) {
    with_calendar(&app).await;
    let job = define_at(&app.db, workday_job("misfired"), at("2026-09-24 10:00:00")).await;
    tick(&app.db, at("2026-09-25 09:00:01")).await;
    // Stopped from Friday until Monday 10:00, past the 09:00 tick.
    tick(&app.db, at("2026-09-28 10:00:00")).await;
    let runs = runs_of(&app.db, job.id).await;
    assert_eq!(
        statuses_and_dates(&runs),
        [
            (RunStatus::Skipped, Some(date("2026-09-25"))),
            (RunStatus::Pending, Some(date("2026-09-28"))),
        ]
    );
    let note = runs[0].last_error.clone().unwrap_or_default();
    assert!(
        note.contains("中秋节") && note.contains("cn-workdays"),
        "{note}"
    );
    assert_eq!(runs[1].scheduled_for, at("2026-09-28 09:00:00"));
    let next = job::Entity::find_by_id(job.id)
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(next.next_fire_at, Some(at("2026-09-29 09:00:00")));
}
on_both_backends!(a_misfired_workday_runs_for_its_own_date_and_off_days_say_why);

/// With `on_off_day = "next_workday"`, the five off weekdays of the national holiday run on
/// 10-08 at 09:00 as five runs with their own dates, beside 10-08's own; nothing fires on the
/// holiday itself, and the make-up Saturday fires.
async fn off_day_ticks_move_to_the_next_workday_with_their_dates(app: TestApp) {
    with_calendar(&app).await;
    let mut input = workday_job("moved");
    input.on_off_day = OnOffDay::NextWorkday.as_str().into();
    let job = define_at(&app.db, input, at("2026-09-30 10:00:00")).await;
    let stored = job::Entity::find_by_id(job.id)
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.next_fire_at, Some(at("2026-10-08 09:00:00")));
    tick(&app.db, at("2026-10-01 09:00:01")).await;
    assert!(
        runs_of(&app.db, job.id).await.is_empty(),
        "nothing on the holiday"
    );
    tick(&app.db, at("2026-10-08 09:00:01")).await;
    let runs = runs_of(&app.db, job.id).await;
    let dates: Vec<String> = runs
        .iter()
        .map(|r| r.business_date.unwrap().format("%m-%d").to_string())
        .collect();
    assert_eq!(
        dates,
        ["10-01", "10-02", "10-05", "10-06", "10-07", "10-08"]
    );
    assert!(
        runs.iter()
            .all(|r| r.scheduled_for == at("2026-10-08 09:00:00"))
    );
    assert!(
        runs.iter().all(|r| r.status == RunStatus::Pending),
        "none skipped by overlap"
    );
    // Not ticked at 10-09 09:00: that tick is missed, the make-up Saturday's is on time.
    tick(&app.db, at("2026-10-10 09:00:01")).await;
    let later: Vec<Option<NaiveDate>> = runs_of(&app.db, job.id).await[6..]
        .iter()
        .map(|r| r.business_date)
        .collect();
    assert_eq!(later, [Some(date("2026-10-09")), Some(date("2026-10-10"))]);
}
on_both_backends!(off_day_ticks_move_to_the_next_workday_with_their_dates);

/// A job cannot follow a calendar its cron's day fields disagree with, nor one that does not
/// exist; a calendar a job follows cannot be removed, nor given a base the job's cron
/// contradicts; a backfill into the future or backwards is refused.
async fn refusals_name_what_is_wrong_and_change_nothing(app: TestApp) {
    with_calendar(&app).await;
    let now = at("2026-11-01 12:00:00");
    for (cron, calendar, field) in [
        ("0 0 9 1 * *", "cn-workdays", "cron"),
        ("0 0 9 * * MON-SAT", "cn-workdays", "cron"),
        ("0 0 9 * * *", "nowhere", "calendar"),
    ] {
        let mut input = workday_job("refused");
        input.cron = cron.into();
        input.calendar = calendar.into();
        let spec = JobSpec::parse(&input).unwrap();
        match app::services::jobs::create(&app.db, &spec, now).await {
            Err(app::services::jobs::JobError::Invalid(problems)) => {
                assert!(
                    problems.iter().any(|p| p.field == field),
                    "{cron}: {problems:?}"
                )
            }
            other => panic!("{cron} {calendar}: {other:?}"),
        }
    }
    let job = define_at(&app.db, workday_job("follower"), now).await;
    let removed = calendars::delete(&app.db, "cn-workdays", &TESTER, now).await;
    assert!(
        matches!(removed, Err(CalendarServiceError::Invalid(_))),
        "{removed:?}"
    );
    let mut weekend = golden_week();
    weekend.base = app::domain::calendar::BaseInput::Text("sat,sun".into());
    let changed = calendars::save(&app.db, &weekend, &TESTER, now).await;
    assert!(
        matches!(changed, Err(CalendarServiceError::Invalid(_))),
        "{changed:?}"
    );
    assert_eq!(
        calendars::get(&app.db, "cn-workdays")
            .await
            .unwrap()
            .base
            .text(),
        "mon-fri"
    );

    for (from, to) in [("2026-10-12", "2026-09-18"), ("2026-10-01", "2026-11-02")] {
        let request = Request {
            from: date(from),
            to: date(to),
            ..range()
        };
        let refused = backfills::start(&app.db, &job, &request, &TESTER, now).await;
        assert!(
            matches!(refused, Err(backfills::BackfillServiceError::Refused(_))),
            "{from}..{to}: {refused:?}"
        );
    }
    assert!(runs_of(&app.db, job.id).await.is_empty());
}
on_both_backends!(refusals_name_what_is_wrong_and_change_nothing);

/// The command line as an administrator uses it: the docs' example calendar imported (twice:
/// the second changes nothing) and listed; a jobs file naming it applied; the backfill's dry
/// run printing the thirteen ticks in the job's zone and making nothing; the export
/// read back by import unchanged.
#[tokio::test(flavor = "multi_thread")]
async fn the_command_line_imports_lists_exports_and_dry_runs() {
    use crate::process::{cli, text};
    let app = TestApp::sqlite_with(|_, _| {}).await;
    let example = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/examples/cn-workdays-2026.toml"
    );
    let imported = cli(&app, &["calendar", "import", example], "");
    assert!(imported.status.success(), "{}", text(&imported.stderr));
    assert_eq!(text(&imported.stdout), "cn-workdays: saved\n");
    let again = cli(&app, &["calendar", "import", example], "");
    assert_eq!(text(&again.stdout), "cn-workdays: unchanged\n");

    let jobs = "[[job]]\nname = \"daily-report\"\nkind = \"command\"\ncommand = [\"true\"]\n\
                cron = \"0 0 9 * * MON-FRI\"\ntimezone = \"Asia/Shanghai\"\n\
                calendar = \"cn-workdays\"\nenabled = false\n";
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("jobs.toml");
    std::fs::write(&file, jobs).unwrap();
    let applied = cli(&app, &["jobs", "apply", file.to_str().unwrap()], "");
    assert!(applied.status.success(), "{}", text(&applied.stderr));
    let listed = text(&cli(&app, &["calendar", "list"], "").stdout);
    assert!(
        listed.contains("cn-workdays") && listed.contains("daily-report"),
        "{listed}"
    );

    let args = [
        "backfill",
        "daily-report",
        "--from",
        "2026-09-18",
        "--to",
        "2026-10-12",
    ];
    let dry = cli(&app, &[&args[..], &["--dry-run"]].concat(), "");
    assert!(dry.status.success(), "{}", text(&dry.stderr));
    let lines: Vec<String> = WORKDAYS
        .iter()
        .map(|d| format!("{d}T09:00:00+08:00 {d}"))
        .collect();
    assert_eq!(text(&dry.stdout), format!("{}\n", lines.join("\n")));
    let json = cli(&app, &[&args[..], &["--dry-run", "--json"]].concat(), "");
    let json: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(json["ticks"].as_array().map(Vec::len), Some(13));
    assert_eq!(json["backfill"], serde_json::Value::Null);
    let job = job::Entity::find()
        .filter(job::Column::Name.eq("daily-report"))
        .one(&app.db)
        .await
        .unwrap()
        .expect("the applied job");
    assert!(
        runs_of(&app.db, job.id).await.is_empty(),
        "a dry run makes nothing"
    );
    let future = cli(
        &app,
        &[
            "backfill",
            "daily-report",
            "--from",
            "2026-10-01",
            "--to",
            "2999-01-01",
        ],
        "",
    );
    assert!(!future.status.success());
    assert!(
        text(&future.stderr).contains("in the future"),
        "{}",
        text(&future.stderr)
    );

    // A run started by hand stands for the day given, else for today.
    let given = cli(
        &app,
        &[
            "jobs",
            "run",
            "daily-report",
            "--business-date",
            "2026-10-01",
        ],
        "",
    );
    assert!(given.status.success(), "{}", text(&given.stderr));
    let run = runs_of(&app.db, job.id).await.pop().expect("the run");
    assert_eq!(run.business_date, Some(date("2026-10-01")));

    // Through the REST API too, and its run object says so.
    let token =
        crate::helpers::api_token(&app.db, "pipeline", app::domain::api_token::Scope::Admin).await;
    let client = reqwest::Client::new();
    let started: serde_json::Value = client
        .post(app.url("/api/v1/jobs/daily-report/runs"))
        .bearer_auth(&token)
        .json(&serde_json::json!({"business_date": "2026-09-30"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let read: serde_json::Value = client
        .get(app.url(&format!("/api/v1/runs/{}", started["id"])))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(read["business_date"], "2026-09-30", "{read}");

    let exported = cli(&app, &["calendar", "export", "cn-workdays"], "");
    let exported = text(&exported.stdout);
    assert!(
        exported.contains("{ date = \"2026-10-01\", name = \"国庆节\" }"),
        "{exported}"
    );
    let back = cli(&app, &["calendar", "import", "-"], &exported);
    assert_eq!(text(&back.stdout), "cn-workdays: unchanged\n");
}

/// A backfill goes at its pace and as a whole: `--parallel 2 --per-minute 3` starts two, then
/// no more than three in a minute; paused it starts none, resumed it goes on, cancelled its
/// waiting runs end cancelled and it is over. `--rerun` gives a dead tick a new run with its
/// key, and only that tick.
async fn a_backfill_keeps_its_pace_pauses_resumes_cancels_and_reruns(app: TestApp) {
    use app::domain::backfill::BackfillState;
    with_calendar(&app).await;
    let mut input = workday_job("paced");
    input.enabled = false;
    let job = define_at(&app.db, input, at("2026-09-01 00:00:00")).await;
    let now = at("2026-11-01 12:00:00");
    let request = Request {
        pace: Pace {
            parallel: 2,
            per_minute: Some(3),
        },
        ..range()
    };
    let (made, _) = backfills::start(&app.db, &job, &request, &TESTER, now)
        .await
        .unwrap();
    let id = made.unwrap().id;
    let going = |runs: &[job_run::Model]| {
        runs.iter()
            .filter(|r| r.status == RunStatus::Pending)
            .count()
    };
    backfills::advance(&app.db, now).await.unwrap();
    assert_eq!(going(&runs_of(&app.db, job.id).await), 2, "two at once");
    // The two end; the minute allows one more.
    end_pending(&app.db, job.id, RunStatus::Succeeded).await;
    backfills::advance(&app.db, now + chrono::Duration::seconds(10))
        .await
        .unwrap();
    assert_eq!(going(&runs_of(&app.db, job.id).await), 1, "three a minute");
    end_pending(&app.db, job.id, RunStatus::Dead).await;

    backfills::change(&app.db, id, BackfillState::Paused, &TESTER, now)
        .await
        .unwrap();
    backfills::advance(&app.db, now + chrono::Duration::minutes(2))
        .await
        .unwrap();
    assert_eq!(
        going(&runs_of(&app.db, job.id).await),
        0,
        "paused: none starts"
    );
    backfills::change(&app.db, id, BackfillState::Running, &TESTER, now)
        .await
        .unwrap();
    backfills::advance(&app.db, now + chrono::Duration::minutes(2))
        .await
        .unwrap();
    assert_eq!(going(&runs_of(&app.db, job.id).await), 2, "resumed");
    backfills::change(&app.db, id, BackfillState::Cancelled, &TESTER, now)
        .await
        .unwrap();
    let runs = runs_of(&app.db, job.id).await;
    let count = |status| runs.iter().filter(|r| r.status == status).count();
    assert_eq!(
        (count(RunStatus::Succeeded), count(RunStatus::Dead)),
        (2, 1)
    );
    assert_eq!(count(RunStatus::Cancelled), 10, "the ones not started");
    assert!(
        backfills::change(&app.db, id, BackfillState::Running, &TESTER, now)
            .await
            .is_err()
    );

    // Only the dead tick gets a new run, with its tick's key; asked again, none.
    let dead = runs
        .iter()
        .find(|r| r.status == RunStatus::Dead)
        .unwrap()
        .clone();
    let rerun = Request {
        rerun: true,
        ..range()
    };
    let (made, planned) = backfills::start(&app.db, &job, &rerun, &TESTER, now)
        .await
        .unwrap();
    assert_eq!(made.map(|b| b.total), Some(1));
    assert_eq!(
        planned
            .iter()
            .filter(|p| matches!(p.action, TickAction::Rerun(_)))
            .count(),
        1
    );
    let newest = runs_of(&app.db, job.id).await.pop().unwrap();
    assert_eq!(
        (
            newest.retrigger_of,
            newest.idempotency_key.clone(),
            newest.business_date
        ),
        (
            Some(dead.id),
            dead.idempotency_key.clone(),
            dead.business_date
        )
    );
    let (again, _) = backfills::start(&app.db, &job, &rerun, &TESTER, now)
        .await
        .unwrap();
    assert!(again.is_none(), "the rerun is the tick's latest run now");
}
on_both_backends!(a_backfill_keeps_its_pace_pauses_resumes_cancels_and_reruns);

/// Ends the job's pending runs as `status`, as an engine would have.
async fn end_pending(db: &DatabaseConnection, job_id: i64, status: RunStatus) {
    use sea_orm::sea_query::Expr;
    job_run::Entity::update_many()
        .col_expr(job_run::Column::Status, Expr::value(status))
        .col_expr(
            job_run::Column::DueAt,
            Expr::value(Option::<DateTime<Utc>>::None),
        )
        .col_expr(job_run::Column::FinishedAt, Expr::value(Utc::now()))
        .filter(job_run::Column::JobId.eq(job_id))
        .filter(job_run::Column::Status.eq(RunStatus::Pending))
        .exec(db)
        .await
        .unwrap();
}

/// A watched job following a calendar is expected only on workdays: an off day's tick is
/// skipped with the day's name, a workday's waits for its ping.
async fn a_watched_job_is_expected_only_on_workdays(app: TestApp) {
    with_calendar(&app).await;
    let input = JobInput {
        name: "external-report".into(),
        kind: Kind::Watch.as_str().into(),
        cron: "0 0 9 * * *".into(),
        timezone: "Asia/Shanghai".into(),
        calendar: "cn-workdays".into(),
        watch_grace: "5m".into(),
        ..JobInput::default()
    };
    let job = define_at(&app.db, input, at("2026-09-24 10:00:00")).await;
    tick(&app.db, at("2026-09-25 09:00:01")).await;
    tick(&app.db, at("2026-09-28 09:00:01")).await;
    assert_eq!(
        statuses_and_dates(&runs_of(&app.db, job.id).await),
        [
            (RunStatus::Skipped, Some(date("2026-09-25"))),
            (RunStatus::AwaitingPing, Some(date("2026-09-28"))),
        ]
    );
}
on_both_backends!(a_watched_job_is_expected_only_on_workdays);
