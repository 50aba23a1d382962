//! The book's examples, run as written: a reader who copies the REST API's examples gets
//! answers, not errors, and the jobs files of the parameters and watched-jobs chapters are ones
//! `jobs apply` accepts.

use app::domain::api_token::Scope;

use crate::helpers::TestApp;

/// The first `lang` code block after `after` in the book's chapter `path`.
fn block(path: &str, after: &str, lang: &str) -> String {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let chapter = std::fs::read_to_string(root.join(path)).unwrap();
    let section = chapter
        .split(after)
        .nth(1)
        .unwrap_or_else(|| panic!("{path} has {after:?}"));
    section
        .split(&format!("```{lang}\n"))
        .nth(1)
        .and_then(|b| b.split("\n```").next())
        .unwrap_or_else(|| panic!("{path} has a {lang} block after {after:?}"))
        .to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_api_examples_run() {
    let app = TestApp::sqlite_with(|_, _| {}).await;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let script = block("docs/reference/api.md", "\n## Examples\n", "sh");
    assert!(script.matches("curl ").count() >= 5, "{script}");
    // The job the examples start exists, as the jobs file in docs/examples defines it.
    let jobs = std::fs::read_to_string(root.join("docs/examples/jobs.toml")).unwrap();
    let specs = server::jobs_file::parse_file(&jobs).unwrap();
    server::jobs_file::apply_specs(&app.db, specs, &crate::helpers::TESTER, &app.secret_key)
        .await
        .unwrap();
    let token = crate::helpers::api_token(&app.db, "examples", Scope::Admin).await;
    let app_url = app.url("");
    let output = tokio::task::spawn_blocking(move || {
        std::process::Command::new("sh")
            .arg("-ec")
            .arg(&script)
            .current_dir(&root)
            .env("BULWARK", app_url)
            .env("TOKEN", token)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the examples failed: {}\n{stdout}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("\"status\":\"pending\""), "{stdout}");
    assert!(
        stdout.contains("\"unchanged\":[\"nightly-export\"]"),
        "{stdout}"
    );
    assert!(stdout.contains("bulwark_runs"), "{stdout}");
}

/// The jobs-file example under "## Parameters" is one `jobs apply` accepts, with its options.
#[test]
fn the_parameter_example_is_a_valid_jobs_file() {
    let block = block("docs/guide/triggers.md", "\n## Parameters\n", "toml");
    let specs = server::jobs_file::parse_file(&block).unwrap_or_else(|p| panic!("{p:#?}"));
    let declared = &specs[0].parameters;
    assert_eq!(declared[0].pattern.as_deref(), Some("^[a-z0-9-]{1,40}$"));
    assert_eq!(declared[1].choices, ["eu", "us"]);
    assert_eq!(
        (declared[2].min, declared[2].max),
        (Some(1.0), Some(1000.0))
    );
}

/// The watched job under "## Defining one" is one `jobs apply` accepts, as the guide says it.
#[test]
fn the_watched_job_example_is_a_valid_jobs_file() {
    let block = block("docs/guide/watch.md", "\n## Defining one\n", "toml");
    let specs = server::jobs_file::parse_file(&block).unwrap_or_else(|p| panic!("{p:#?}"));
    let watch = specs[0].kind.watch().copied().expect("a watched job");
    assert_eq!(watch.grace_ms, 10 * 60_000);
    assert_eq!(watch.min_duration_ms, Some(30_000));
    assert_eq!(watch.max_duration_ms, Some(2 * 3_600_000));
    assert_eq!(
        specs[0].cron.as_ref().map(|c| c.as_str()),
        Some("0 30 2 * * *")
    );
}
