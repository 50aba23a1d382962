//! An attempt's whole output (issue 46): kept as the job wrote it, read whole or by range by
//! `bulwark runs log` and the API, found by `runs search`, cut to its head and tail over
//! `run_log_max_mb`, free of secrets, and gone with its run.

use std::time::Duration;

use app::domain::job::Kind;
use app::domain::run::RunStatus;
use app::services::run_logs;
use app::views::run_logs::Anchor;
use sea_orm::{ConnectionTrait, DatabaseBackend};
use sha2::{Digest, Sha256};

use crate::engine::{base, engine_config, run_to_end_on};
use crate::helpers::{TestApp, api_token, define};
use crate::on_both_backends;

/// Two million numbered lines (about 15 MB) with `needle-42` on line 1,500,000.
const BIG: &str = "seq 1 2000000 | sed '1500000s/$/ needle-42/'";

fn sh(script: &str) -> Vec<u8> {
    let out = std::process::Command::new("sh")
        .args(["-c", script])
        .output()
        .expect("sh runs");
    assert!(out.status.success());
    out.stdout
}

fn sha(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// `bulwark runs …` on the test's database; its stdout, or the test fails with its stderr.
fn cli(app: &TestApp, args: &[&str]) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_bulwark"))
        .args(args)
        .current_dir(dir.path())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("DATABASE_URL", &app.database_url)
        .output()
        .expect("bulwark runs");
    assert!(
        out.status.success(),
        "bulwark {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

async fn command_job(app: &TestApp, name: &str, script: &str, max_mb: u64) -> i64 {
    let mut input = base(name);
    input.kind = Kind::Command.as_str().into();
    input.command_program = "sh".into();
    input.command_args = format!("-c\n{script}");
    input.timeout_static = "2m".into();
    let job = define(&app.db, input).await;
    let mut config = engine_config("node-a");
    config.secret_key = Some(app.secret_key.clone());
    config.run_log_max_bytes = max_mb << 20;
    let (run, finished) = run_to_end_on(&app.db, job.id, Duration::from_secs(120), config).await;
    assert_eq!(finished.status, RunStatus::Succeeded, "{finished:?}");
    run.id
}

async fn a_large_output_is_kept_whole_read_and_found(app: TestApp) {
    let expected = sh(BIG);
    let run = command_job(&app, "big-output", BIG, 50).await;

    let printed = cli(&app, &["runs", "log", &run.to_string()]);
    assert_eq!(printed.len(), expected.len());
    assert_eq!(
        sha(&printed),
        sha(&expected),
        "runs log prints the bytes as written"
    );

    let token = api_token(&app.db, "reader", app::domain::api_token::Scope::Read).await;
    let url = app.url(&format!("/api/v1/runs/{run}/log"));
    let whole = app
        .client()
        .get(&url)
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(whole.status(), 200);
    let disposition = whole.headers()["content-disposition"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(disposition.starts_with("attachment"), "{disposition}");
    assert_eq!(sha(&whole.bytes().await.unwrap()), sha(&expected));
    let part = app
        .client()
        .get(&url)
        .bearer_auth(&token)
        .header("Range", "bytes=8888000-8888099")
        .send()
        .await
        .unwrap();
    assert_eq!(part.status(), 206);
    assert_eq!(
        part.headers()["content-range"],
        format!("bytes 8888000-8888099/{}", expected.len()).as_str()
    );
    assert_eq!(
        &part.bytes().await.unwrap()[..],
        &expected[8_888_000..8_888_100]
    );
    let ranged = |range: &'static str| {
        app.client()
            .get(&url)
            .bearer_auth(&token)
            .header("Range", range)
            .send()
    };
    let last = ranged("bytes=-8").await.unwrap();
    assert_eq!(last.status(), 206);
    assert_eq!(&last.bytes().await.unwrap()[..], b"2000000\n");
    let beyond = ranged("bytes=99999999-").await.unwrap();
    assert_eq!(beyond.status(), 416);
    assert_eq!(
        beyond.headers()["content-range"],
        format!("bytes */{}", expected.len()).as_str()
    );

    let found = cli(&app, &["runs", "search", "needle-42", "--json"]);
    let found: Vec<serde_json::Value> = String::from_utf8(found)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["run"], run);
    assert_eq!(found[0]["attempt"], 1);
    assert_eq!(found[0]["line"], 1_500_000);
    assert_eq!(found[0]["text"], "1500000 needle-42");
    let api: serde_json::Value = app
        .client()
        .get(app.url("/api/v1/runs/search?q=NEEDLE-42"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(api["items"][0]["line"], 1_500_000, "{api}");

    let page = run_logs::page(&app.db, run, None, Anchor::From(1_500_000), 50, None)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(page.lines[0].number, 1_500_000);
    assert_eq!(page.lines[0].text, "1500000 needle-42");
    assert_eq!(page.summary.last_line, 2_000_000);
    let last = run_logs::page(&app.db, run, None, Anchor::End, 50, None)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(last.lines.last().unwrap().text, "2000000");
    assert_eq!(last.lines.len(), 50);

    forgotten_with_its_run(&app, run).await;
}
on_both_backends!(a_large_output_is_kept_whole_read_and_found);

/// After retention the log is gone, the index finds nothing, and on SQLite `VACUUM` gives
/// the space back.
async fn forgotten_with_its_run(app: &TestApp, run: i64) {
    let pages_before = sqlite_pages(app).await;
    let log_bytes = app
        .db
        .query_one_raw(sea_orm::Statement::from_string(
            app.db.get_database_backend(),
            "SELECT SUM(LENGTH(data) + LENGTH(lines)) AS n FROM run_log_chunks",
        ))
        .await
        .unwrap()
        .unwrap()
        .try_get::<i64>("", "n")
        .unwrap_or_default();
    app.db
        .execute_unprepared(&format!(
            "UPDATE job_runs SET finished_at = '2020-01-01 00:00:00' WHERE id = {run}"
        ))
        .await
        .unwrap();
    let cleaned = app::services::retention::clean(
        &app.db,
        chrono::Utc::now(),
        app::services::retention::Retention::default(),
    )
    .await
    .unwrap();
    assert_eq!(cleaned.runs, 1);
    // Only this run's: a system job firing at a minute's turn may have printed meanwhile.
    let left = app
        .db
        .query_one_raw(sea_orm::Statement::from_string(
            app.db.get_database_backend(),
            format!("SELECT COUNT(*) AS n FROM run_log_chunks WHERE run_id = {run}"),
        ))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(left.try_get::<i64>("", "n").unwrap(), 0);
    let filter = run_logs::SearchFilter {
        text: "needle-42".into(),
        limit: 10,
        ..Default::default()
    };
    assert!(run_logs::search(&app.db, &filter).await.unwrap().is_empty());
    if let Some(before) = pages_before {
        app.db.execute_unprepared("VACUUM").await.unwrap();
        let after = sqlite_pages(app).await.unwrap();
        let log_pages = log_bytes / 4096;
        assert!(
            before - after >= log_pages * 9 / 10,
            "VACUUM gives the log's {log_pages} pages back: {before} pages before, {after} after"
        );
    }
}

async fn sqlite_pages(app: &TestApp) -> Option<i64> {
    if app.db.get_database_backend() != DatabaseBackend::Sqlite {
        return None;
    }
    let row = app
        .db
        .query_one_raw(sea_orm::Statement::from_string(
            DatabaseBackend::Sqlite,
            "PRAGMA page_count",
        ))
        .await
        .unwrap()
        .unwrap();
    Some(row.try_get_by_index(0).unwrap())
}

/// Over `run_log_max_mb` the first and the last half megabyte are kept, whole lines, with the
/// marker between; line numbers stay the job's own.
async fn over_the_cap_the_head_and_tail_are_kept(app: TestApp) {
    let script = "seq 1 400000";
    let expected = sh(script);
    let run = command_job(&app, "chatty", script, 1).await;
    let printed = cli(&app, &["runs", "log", &run.to_string()]);
    let marker_at = printed
        .windows(10)
        .position(|w| w == b"[Bulwark: ")
        .expect("the marker is there");
    let marker_end = marker_at
        + printed[marker_at..]
            .iter()
            .position(|&b| b == b'\n')
            .unwrap()
        + 1;
    let (head, tail) = (&printed[..marker_at], &printed[marker_end..]);
    let half = 512 * 1024;
    assert!(
        head.len() <= half && head.len() > half - 8,
        "{}",
        head.len()
    );
    assert!(
        tail.len() <= half && tail.len() > half - 8,
        "{}",
        tail.len()
    );
    assert_eq!(head, &expected[..head.len()]);
    assert_eq!(tail, &expected[expected.len() - tail.len()..]);
    let marker = String::from_utf8_lossy(&printed[marker_at..marker_end]).into_owned();
    let left_out = expected.len() - head.len() - tail.len();
    assert!(marker.contains(&format!("{left_out} bytes")), "{marker}");

    let last = run_logs::page(&app.db, run, None, Anchor::End, 5, None)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(last.lines.last().unwrap().number, 400_000);
    assert_eq!(last.summary.omitted_bytes as usize, left_out);
}
on_both_backends!(over_the_cap_the_head_and_tail_are_kept);

/// A vault secret the job prints — as it is, base64-encoded and percent-encoded — is stored
/// as its reference, and searching for its value finds nothing.
async fn a_printed_secret_is_never_stored(app: TestApp) {
    app.set_secret("TOKEN", "tok/3nc0ded value").await;
    let script = "t='${secret:TOKEN}'; echo \"plain $t\" >&2; printf '%s\\n' \"$t\" | base64; \
                  printf '%s\\n' \"$t\" | sed 's|/|%2F|; s| |%20|'";
    let run = command_job(&app, "leaky", script, 10).await;
    let printed = String::from_utf8(cli(&app, &["runs", "log", &run.to_string()])).unwrap();
    for form in ["3nc0ded", "dG9rLzNuYzBkZWQgdmFsdWU", "tok%2F3nc0ded"] {
        assert!(!printed.contains(form), "{form} in {printed}");
    }
    assert!(printed.contains("plain ${secret:TOKEN}\n"), "{printed}");
    let stamped = String::from_utf8(cli(
        &app,
        &["runs", "log", &run.to_string(), "--timestamps"],
    ))
    .unwrap();
    assert!(
        stamped.contains(" stderr plain ${secret:TOKEN}\n"),
        "{stamped}"
    );
    for text in ["3nc0ded", "tok/3nc", "dG9rLzNuYzBk"] {
        let filter = run_logs::SearchFilter {
            text: text.into(),
            limit: 10,
            ..Default::default()
        };
        assert!(
            run_logs::search(&app.db, &filter).await.unwrap().is_empty(),
            "{text}"
        );
    }
}
on_both_backends!(a_printed_secret_is_never_stored);

/// `runs log --follow` started while the attempt runs prints what came and what comes, and
/// ends when the attempt does.
async fn follow_prints_until_the_attempt_ends(app: TestApp) {
    let mut input = base("slow-talker");
    input.kind = Kind::Command.as_str().into();
    input.command_program = "sh".into();
    input.command_args = "-c\necho first; sleep 3; echo second >&2; sleep 1; echo third".into();
    let job = define(&app.db, input).await;
    let run = app::services::runs::create_manual(&app.db, job.id, chrono::Utc::now())
        .await
        .unwrap();
    let engine = crate::engine::start(&app.db, engine_config("node-a"));
    crate::helpers::wait_for_status(
        &app.db,
        run.id,
        &[RunStatus::Running],
        Duration::from_secs(10),
    )
    .await;
    let url = app.database_url.clone();
    let id = run.id.to_string();
    let followed = tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_bulwark"))
            .args(["runs", "log", &id, "--follow"])
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("DATABASE_URL", url)
            .output()
            .expect("bulwark runs")
    });
    let out = tokio::time::timeout(Duration::from_secs(30), followed)
        .await
        .expect("--follow ends when the attempt ends")
        .unwrap();
    engine.stop().await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "first\nsecond\nthird\n"
    );
    let finished = crate::helpers::wait_for_status(
        &app.db,
        run.id,
        &[RunStatus::Succeeded],
        Duration::from_secs(1),
    )
    .await;
    assert!(finished.finished_at.is_some());
}
on_both_backends!(follow_prints_until_the_attempt_ends);
