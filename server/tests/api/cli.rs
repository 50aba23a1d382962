//! The `bulwark` binary as an administrator runs it: real process, real SQLite file.

use std::io::Write;
use std::process::{Command, Output, Stdio};

struct Cli {
    dir: tempfile::TempDir,
}

impl Cli {
    fn new() -> Cli {
        Cli {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    fn database_url(&self) -> String {
        format!(
            "sqlite://{}?mode=rwc",
            self.dir.path().join("cli.db").display()
        )
    }

    /// The binary in this directory on this database, nothing else in its environment, every
    /// stream piped.
    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_bulwark"));
        command
            .args(args)
            .current_dir(self.dir.path())
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("DATABASE_URL", self.database_url())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    fn run(&self, args: &[&str], stdin: &str, env: &[(&str, &str)]) -> Output {
        let mut child = self
            .command(args)
            .envs(env.iter().copied())
            .spawn()
            .expect("spawn bulwark");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(stdin.as_bytes())
            .expect("write stdin");
        child.wait_with_output().expect("wait")
    }
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn user_add_then_a_duplicate_is_refused_without_changes() {
    let cli = Cli::new();
    assert!(cli.run(&["migrate"], "", &[]).status.success());

    let added = cli.run(
        &["user", "add", "--username", "alice", "--role", "admin"],
        "alice-password\n",
        &[],
    );
    assert!(added.status.success(), "{}", stderr(&added));
    assert_eq!(stdout(&added).trim(), "added alice (admin)");

    let again = cli.run(
        &["user", "add", "--username", "alice", "--role", "viewer"],
        "other-password\n",
        &[],
    );
    assert_eq!(again.status.code(), Some(1));
    assert!(
        stderr(&again).contains("a user named 'alice' already exists"),
        "{}",
        stderr(&again)
    );

    let list = cli.run(&["user", "list"], "", &[]);
    let listed = stdout(&list);
    let lines: Vec<&str> = listed.lines().collect();
    assert_eq!(
        lines,
        [
            "username\trole\tstate\tlast_sign_in\tsign_in",
            "alice\tadmin\tactive\t-\tpassword"
        ]
    );
}

#[test]
fn user_add_refuses_bad_input_and_writes_nothing() {
    let cli = Cli::new();
    assert!(cli.run(&["migrate"], "", &[]).status.success());
    for (args, password, expected) in [
        (
            ["user", "add", "--username", "bob", "--role", "viewer"],
            "\n",
            "password is required",
        ),
        (
            ["user", "add", "--username", "bob", "--role", "viewer"],
            "short\n",
            "at least 8 characters",
        ),
        (
            ["user", "add", "--username", "Bob Smith", "--role", "viewer"],
            "long-enough\n",
            "username may contain only",
        ),
    ] {
        let out = cli.run(&args, password, &[]);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(
            stderr(&out).contains(expected),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    let bad_role = cli.run(
        &["user", "add", "--username", "bob", "--role", "root"],
        "long-enough\n",
        &[],
    );
    assert_eq!(bad_role.status.code(), Some(2), "a usage error");
    assert!(stderr(&bad_role).contains("admin"), "{}", stderr(&bad_role));

    assert_eq!(
        stdout(&cli.run(&["user", "list"], "", &[])).trim(),
        "username\trole\tstate\tlast_sign_in\tsign_in"
    );
}

#[test]
fn an_unreachable_database_is_a_clear_message() {
    let cli = Cli::new();
    let out = cli.run(
        &["migrate"],
        "",
        &[(
            "DATABASE_URL",
            "postgres://bulwark:secret@127.0.0.1:9/nowhere",
        )],
    );
    assert_eq!(out.status.code(), Some(1));
    let message = stderr(&out);
    assert!(
        message.contains(
            "cannot connect to the database at postgres://bulwark:***@127.0.0.1:9/nowhere"
        ),
        "{message}"
    );
    assert!(
        !message.contains("secret"),
        "the password must not be printed: {message}"
    );
}

#[test]
fn bad_configuration_names_the_key() {
    let cli = Cli::new();
    let out = cli.run(&["migrate"], "", &[("BULWARK_ADDR", "not-an-address")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("addr"), "{}", stderr(&out));

    std::fs::write(
        cli.dir.path().join("bulwark.toml"),
        "session_hours = \"many\"\n",
    )
    .unwrap();
    let out = cli.run(&["migrate"], "", &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("session_hours"), "{}", stderr(&out));
}

#[test]
fn serve_creates_the_first_admin_once_and_prints_the_password() {
    let cli = Cli::new();
    assert!(cli.run(&["migrate"], "", &[]).status.success());
    // Bind to a port that is already taken so `serve` stops right after its start-up work.
    let blocker = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = blocker.local_addr().unwrap().to_string();

    let first = cli.run(&["serve"], "", &[("BULWARK_ADDR", &addr)]);
    let printed = stdout(&first);
    let password = printed
        .lines()
        .find_map(|l| l.trim().strip_prefix("Password (shown only this once): "))
        .unwrap_or_else(|| panic!("no password printed: {printed}"))
        .to_string();
    assert_eq!(password.len(), 20);
    assert!(
        stderr(&first).contains(&format!("cannot listen on {addr}")),
        "{}",
        stderr(&first)
    );

    let second = cli.run(&["serve"], "", &[("BULWARK_ADDR", &addr)]);
    assert!(!stdout(&second).contains("Password"), "printed only once");
    let listed = stdout(&cli.run(&["user", "list"], "", &[]));
    assert!(
        listed
            .lines()
            .nth(1)
            .is_some_and(|l| l.starts_with("admin\tadmin\tactive\t")),
        "{listed}"
    );
}

fn preview_json(cli: &Cli, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["policy", "preview", "--json"];
    all.extend_from_slice(args);
    let out = cli.run(&all, "", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).expect("JSON")
}

#[test]
fn policy_preview_reproduces_the_reference_numbers() {
    let cli = Cli::new();
    let p = preview_json(
        &cli,
        &["--first", "10s", "--multiplier", "2", "--max-retries", "10"],
    );
    assert_eq!(
        p["delays_s"],
        serde_json::json!([
            10.0, 20.0, 40.0, 80.0, 160.0, 320.0, 640.0, 1280.0, 2560.0, 5120.0
        ])
    );
    for (c, total) in [
        ("3", 7.0),
        ("5", 31.0),
        ("10", 1023.0),
        ("13", 8191.0),
        ("15", 32767.0),
    ] {
        let p = preview_json(
            &cli,
            &["--first", "1s", "--multiplier", "2", "--max-retries", c],
        );
        assert_eq!(p["total_s"], total, "T({c})");
    }
    let p = preview_json(
        &cli,
        &["--first", "2s", "--multiplier", "2", "--max-retries", "5"],
    );
    assert_eq!(
        p["delays_s"],
        serde_json::json!([2.0, 4.0, 8.0, 16.0, 32.0])
    );
    assert_eq!(
        p["cumulative_s"],
        serde_json::json!([2.0, 6.0, 14.0, 30.0, 62.0])
    );
    assert_eq!(p["total_s"], 62.0);
    assert_eq!(p["warnings"], serde_json::json!([]));

    let p = preview_json(
        &cli,
        &["--first", "1s", "--multiplier", "8", "--max-retries", "16"],
    );
    let kinds: Vec<&str> = p["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["explosive", "untunable", "steep_total"]);
}

#[test]
fn policy_preview_prints_a_table_and_refuses_bad_input() {
    let cli = Cli::new();
    let out = cli.run(
        &[
            "policy",
            "preview",
            "--first",
            "2s",
            "--multiplier",
            "2",
            "--max-retries",
            "5",
        ],
        "",
        &[],
    );
    let table = stdout(&out);
    assert!(table.contains("total wait: 1 min 2 s (62 s)"), "{table}");
    assert_eq!(
        table
            .lines()
            .filter(|l| l.trim_start().starts_with(char::is_numeric))
            .count(),
        5
    );

    let out = cli.run(
        &[
            "policy",
            "preview",
            "--first",
            "0s",
            "--multiplier",
            "1.25",
            "--max-retries",
            "0",
        ],
        "",
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    let message = stderr(&out);
    assert!(
        message.contains("--first: first interval must be greater than 0"),
        "{message}"
    );
    assert!(
        message.contains("--multiplier: multiplier '1.25' has more than one decimal"),
        "{message}"
    );
    assert!(
        message
            .contains("--max-retries: max retries must be a whole number between 1 and 16, not 0"),
        "{message}"
    );
}

#[test]
fn traffic_classify_reads_lines_and_prints_verdicts() {
    let cli = Cli::new();
    let input = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)\n\
                 Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1\n\
                 Mozilla/5.0 (compatible; PetalBot;+https://webmaster.petalsearch.com/site/petalbot)\n\
                 Mozilla/5.0 (compatible; Baiduspider/2.0; +http://www.baidu.com/search/spider.html)\n\
                 Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)\n\
                 Mozilla/5.0 (compatible; SomeNewCrawler/0.1; +https://example.net/crawler)\n";
    let out = cli.run(&["traffic", "classify", "--json"], input, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let lines: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        lines,
        [
            serde_json::json!({"is_bot": true, "source": "google", "category": "search"}),
            serde_json::json!({"is_bot": false, "source": null, "category": null}),
            serde_json::json!({"is_bot": true, "source": "huawei", "category": "search"}),
            serde_json::json!({"is_bot": true, "source": "baidu", "category": "search"}),
            serde_json::json!({"is_bot": true, "source": "openai", "category": "ai"}),
            serde_json::json!({"is_bot": true, "source": "other", "category": "other"}),
        ]
    );
    let plain = cli.run(
        &["traffic", "classify"],
        "Twitterbot/1.0\nMozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0\n",
        &[],
    );
    assert_eq!(stdout(&plain), "bot\ttwitter\nhuman\n");
}

#[test]
fn a_reader_that_goes_away_ends_the_command_as_unix_tools_do() {
    use std::os::unix::process::ExitStatusExt;
    let cli = Cli::new();
    let mut child = cli
        .command(&["traffic", "classify"])
        .spawn()
        .expect("spawn bulwark");
    // `| head -0`: the reader is gone before the first verdict is written.
    drop(child.stdout.take());
    let mut stdin = child.stdin.take().expect("stdin");
    // The command may die before it has read everything; the writer then sees EPIPE itself.
    let _ = stdin.write_all("Twitterbot/1.0\n".repeat(10_000).as_bytes());
    drop(stdin);
    let out = child.wait_with_output().expect("wait");
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    assert_eq!(
        out.status.signal(),
        Some(nix::sys::signal::Signal::SIGPIPE as i32),
        "{:?}",
        out.status
    );
}

#[test]
fn the_locked_out_operator_manages_accounts_and_the_last_admin_stays() {
    let cli = Cli::new();
    assert!(cli.run(&["migrate"], "", &[]).status.success());
    for (name, role) in [("root", "admin"), ("ops", "viewer")] {
        let out = cli.run(
            &["user", "add", "--username", name, "--role", role],
            "first-password\n",
            &[],
        );
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let ok = |args: &[&str], stdin: &str| {
        let out = cli.run(args, stdin, &[]);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        stdout(&out)
    };
    let refused = |args: &[&str]| {
        let out = cli.run(args, "", &[]);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stdout(&out));
        stderr(&out)
    };

    // The last enabled admin can be neither demoted, disabled nor deleted.
    for args in [
        &["user", "role", "root", "viewer"][..],
        &["user", "disable", "root"],
        &["user", "delete", "root"],
    ] {
        assert!(
            refused(args).contains("last enabled administrator"),
            "{args:?}"
        );
    }
    assert!(refused(&["user", "disable", "nobody"]).contains("no user named 'nobody'"));
    assert!(refused(&["user", "passwd", "root"]).contains("password is required"));

    ok(&["user", "passwd", "root"], "a-new-password\n");
    ok(&["user", "role", "ops", "admin"], "");
    ok(&["user", "disable", "root"], "");
    let listed: serde_json::Value =
        serde_json::from_str(&ok(&["user", "list", "--json"], "")).expect("JSON");
    let state = |name: &str| {
        listed
            .as_array()
            .unwrap()
            .iter()
            .find(|u| u["username"] == name)
            .map(|u| (u["role"].clone(), u["state"].clone()))
            .unwrap()
    };
    assert_eq!(state("root"), ("admin".into(), "disabled".into()));
    assert_eq!(state("ops"), ("admin".into(), "active".into()));
    ok(&["user", "enable", "root"], "");
    ok(&["user", "delete", "ops"], "");
    assert!(ok(&["user", "sessions", "root", "--end"], "").contains("0 session(s)"));
    assert!(
        ok(&["user", "sessions", "root"], "")
            .starts_with("created\tlast_seen\taddress\tuser_agent")
    );
}

#[test]
fn secrets_are_set_from_stdin_listed_by_name_rekeyed_and_a_wrong_key_refuses_to_start() {
    let cli = Cli::new();
    assert!(cli.run(&["migrate"], "", &[]).status.success());
    let set = cli.run(&["secret", "set", "SLACK_TOKEN"], "xoxb-canary-1234\n", &[]);
    assert!(set.status.success(), "{}", stderr(&set));
    assert!(stdout(&set).contains("${secret:SLACK_TOKEN}"));
    let key_file = cli.dir.path().join("data/secret.key");
    assert!(key_file.exists(), "created on first use");

    let listed = stdout(&cli.run(&["secret", "list"], "", &[]));
    assert!(
        listed.contains("SLACK_TOKEN") && !listed.contains("canary"),
        "{listed}"
    );
    let bad = cli.run(&["secret", "set", "bad name"], "v\n", &[]);
    assert_eq!(bad.status.code(), Some(1));

    // Rekeyed: the old key no longer opens anything, the new one does.
    let rekeyed = cli.run(&["secret", "rekey", "--new-key-file", "new.key"], "", &[]);
    assert!(rekeyed.status.success(), "{}", stderr(&rekeyed));
    let new_key = cli.dir.path().join("new.key");
    let new_key = new_key.to_str().unwrap();
    let listed = cli.run(
        &["secret", "set", "OTHER"],
        "value-2\n",
        &[("BULWARK_SECRET_KEY_FILE", new_key)],
    );
    assert!(listed.status.success(), "{}", stderr(&listed));

    // A node given another key refuses to start, and says why.
    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .to_string();
    let serve = cli.run(&["serve"], "", &[("BULWARK_ADDR", &addr)]);
    assert!(!serve.status.success());
    assert!(
        stderr(&serve).contains("cannot decrypt the stored secrets"),
        "{}",
        stderr(&serve)
    );

    let removed = cli.run(&["secret", "remove", "OTHER"], "", &[]);
    assert!(removed.status.success(), "{}", stderr(&removed));
    let again = cli.run(&["secret", "remove", "OTHER"], "", &[]);
    assert!(stderr(&again).contains("no secret named 'OTHER'"));
}

/// A chat platform standing in: answers every POST with `answer` and keeps what it was sent
/// (query, headers, body).
async fn platform(
    answer: &'static str,
) -> (
    String,
    std::sync::Arc<std::sync::Mutex<Vec<(String, axum::http::HeaderMap, String)>>>,
) {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let app = {
        let seen = seen.clone();
        axum::Router::new().fallback(
            move |uri: axum::http::Uri, headers: axum::http::HeaderMap, body: String| {
                let seen = seen.clone();
                async move {
                    seen.lock().unwrap().push((
                        uri.query().unwrap_or("").to_string(),
                        headers,
                        body,
                    ));
                    answer
                }
            },
        )
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}"), seen)
}

#[tokio::test(flavor = "multi_thread")]
async fn channels_are_added_with_their_token_from_stdin_and_tested_against_the_platform() {
    let cli = Cli::new();
    assert!(cli.run(&["migrate"], "", &[]).status.success());
    let (ding, ding_seen) = platform(r#"{"errcode":0,"errmsg":"ok"}"#).await;
    let (wecom, _) = platform(r#"{"errcode":93000,"errmsg":"invalid webhook url"}"#).await;
    let (hook, hook_seen) = platform("thanks").await;

    // The robot's URL (with its token) and the signing secret come from stdin.
    let ding_url = format!("{ding}/robot/send?access_token=tok-canary-77");
    let added = cli.run(
        &[
            "channel",
            "add",
            "ops-ding",
            "--kind",
            "dingtalk",
            "--url",
            "-",
            "--secret-stdin",
        ],
        &format!("{ding_url}\nSECdingsecret\n"),
        &[],
    );
    assert!(added.status.success(), "{}", stderr(&added));
    let wecom_url = format!("{wecom}/cgi-bin/webhook/send?key=k");
    assert!(
        cli.run(
            &[
                "channel",
                "add",
                "ops-wecom",
                "--kind",
                "wecom",
                "--url",
                &wecom_url
            ],
            "",
            &[]
        )
        .status
        .success()
    );
    let hook_url = format!("{hook}/in");
    assert!(
        cli.run(
            &[
                "channel",
                "add",
                "receiver",
                "--kind",
                "webhook",
                "--url",
                &hook_url,
                "--secret-stdin"
            ],
            "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n",
            &[]
        )
        .status
        .success()
    );
    let duplicate = cli.run(
        &[
            "channel", "add", "receiver", "--kind", "slack", "--url", &hook_url,
        ],
        "",
        &[],
    );
    assert_eq!(duplicate.status.code(), Some(1));
    assert!(stderr(&duplicate).contains("already exists"));
    let no_url = cli.run(&["channel", "add", "x", "--kind", "slack"], "", &[]);
    assert!(
        stderr(&no_url).contains("needs its URL"),
        "{}",
        stderr(&no_url)
    );

    let listed = stdout(&cli.run(&["channel", "list", "--json"], "", &[]));
    assert!(
        !listed.contains("tok-canary-77") && !listed.contains("SECdingsecret"),
        "{listed}"
    );
    assert!(listed.contains("127.0.0.1"), "the host shows: {listed}");

    // DingTalk accepts, signed with timestamp and sign in the URL.
    let test = cli.run(&["channel", "test", "ops-ding"], "", &[]);
    assert!(test.status.success(), "{}", stderr(&test));
    assert!(
        stdout(&test).starts_with("accepted: HTTP 200"),
        "{}",
        stdout(&test)
    );
    let (query, _, body) = ding_seen.lock().unwrap()[0].clone();
    assert!(
        query.starts_with("access_token=tok-canary-77&timestamp="),
        "{query}"
    );
    let pairs: std::collections::HashMap<String, String> = form_urlencoded::parse(query.as_bytes())
        .into_owned()
        .collect();
    let timestamp: i64 = pairs["timestamp"].parse().unwrap();
    let expected: String = server::channels::platform::dingtalk_sign("SECdingsecret", timestamp);
    let decoded: String = form_urlencoded::parse(format!("s={expected}").as_bytes())
        .next()
        .unwrap()
        .1
        .into_owned();
    assert_eq!(pairs["sign"], decoded);
    let body: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["msgtype"], "markdown");

    // WeCom answers 200 with an error code: a failure, its message shown, exit 1.
    let test = cli.run(&["channel", "test", "ops-wecom"], "", &[]);
    assert_eq!(test.status.code(), Some(1));
    assert!(
        stderr(&test).contains("errcode 93000: invalid webhook url"),
        "{}",
        stderr(&test)
    );

    // The webhook is signed the Standard Webhooks way.
    let test = cli.run(&["channel", "test", "receiver"], "", &[]);
    assert!(test.status.success(), "{}", stderr(&test));
    let (_, headers, body) = hook_seen.lock().unwrap()[0].clone();
    let header = |name: &str| headers[name].to_str().unwrap().to_string();
    assert_eq!(
        header("webhook-signature"),
        server::channels::platform::webhook_signature(
            "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
            &header("webhook-id"),
            header("webhook-timestamp").parse().unwrap(),
            body.as_bytes()
        )
    );
    assert!(body.contains(r#""type":"channel.test""#), "{body}");

    let listed = stdout(&cli.run(&["channel", "list"], "", &[]));
    assert!(listed.contains("ops-wecom\twecom\t127.0.0.1"), "{listed}");
    assert!(
        listed.contains("errcode 93000"),
        "the last answer shows: {listed}"
    );
    assert!(
        cli.run(&["channel", "remove", "ops-wecom"], "", &[])
            .status
            .success()
    );
    assert!(
        stderr(&cli.run(&["channel", "remove", "ops-wecom"], "", &[])).contains("no channel named")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn tokens_are_created_once_on_stdout_listed_and_revoked() {
    let cli = Cli::new();
    assert!(cli.run(&["migrate"], "", &[]).status.success());
    for (name, role) in [("ops", "admin"), ("reader", "viewer")] {
        let added = cli.run(
            &["user", "add", "--username", name, "--role", role],
            "a-long-enough-password\n",
            &[],
        );
        assert!(added.status.success(), "{}", stderr(&added));
    }
    let create = |args: &[&str]| cli.run(&[&["token", "create"], args].concat(), "", &[]);

    let created = create(&[
        "deploy",
        "--owner",
        "ops",
        "--role",
        "admin",
        "--expires",
        "30d",
    ]);
    assert!(created.status.success(), "{}", stderr(&created));
    let token = stdout(&created);
    let token = token.trim_end_matches('\n');
    assert!(
        app::domain::api_token::well_formed(token),
        "stdout holds the token alone: {token:?}"
    );
    assert!(stderr(&created).contains("shown this once"));
    let again = create(&["deploy", "--owner", "ops", "--scope", "read"]);
    assert!(!again.status.success());
    assert!(
        stderr(&again).contains("exists already"),
        "{}",
        stderr(&again)
    );
    for (args, says) in [
        (
            &[
                "x",
                "--owner",
                "ops",
                "--scope",
                "admin",
                "--expires",
                "soon",
            ][..],
            "not an expiry",
        ),
        (&["x", "--scope", "read"][..], "--owner"),
        (
            &["x", "--owner", "nobody", "--scope", "read"][..],
            "no account named 'nobody'",
        ),
        (
            &["x", "--owner", "reader", "--scope", "trigger"][..],
            "needs an administrator",
        ),
        (
            &["x", "--owner", "ops", "--scope", "read", "--tags", "a"][..],
            "only a trigger token",
        ),
        (
            &["x", "--owner", "ops", "--scope", "root"][..],
            "not a scope",
        ),
    ] {
        let refused = create(args);
        assert!(!refused.status.success(), "{args:?}");
        assert!(
            stderr(&refused).contains(says),
            "{args:?}: {}",
            stderr(&refused)
        );
    }
    let ci = create(&[
        "ci",
        "--owner",
        "ops",
        "--scope",
        "trigger",
        "--tags",
        "deploy,nightly",
    ]);
    assert!(ci.status.success(), "{}", stderr(&ci));
    let grafana = create(&["grafana", "--owner", "reader", "--role", "viewer"]);
    assert!(grafana.status.success(), "{}", stderr(&grafana));

    let list = || -> serde_json::Value {
        serde_json::from_str(&stdout(&cli.run(&["token", "list", "--json"], "", &[]))).unwrap()
    };
    let listed = list();
    let row = |name: &str| {
        listed
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(row("deploy")["scope"], "admin");
    assert_eq!(row("deploy")["created_by"], "cli");
    assert_eq!(row("deploy")["owner"], "ops");
    assert_eq!(row("ci")["scope"], "trigger");
    assert_eq!(row("ci")["tags"], serde_json::json!(["deploy", "nightly"]));
    assert_eq!(row("grafana")["scope"], "read");
    // Without --expires a token ends after 90 days.
    let ends: chrono::DateTime<chrono::Utc> = row("grafana")["expires_at"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let days = (ends - chrono::Utc::now()).num_hours() as f64 / 24.0;
    assert!((89.9..=90.1).contains(&days), "{days} days");
    for field in ["last_used_at", "last_used_from", "expires_at"] {
        assert!(row("deploy").get(field).is_some(), "{field} is listed");
    }
    assert!(
        !listed.to_string().contains(token),
        "never the token itself"
    );

    let db = server::db::connect(&cli.database_url()).await.unwrap();
    let now = chrono::Utc::now();
    let caller = app::services::tokens::verify(&db, token, "192.0.2.7", now)
        .await
        .unwrap();
    assert_eq!(caller.map(|c| c.actor()).as_deref(), Some("token:deploy"));
    let used = list();
    let deploy = used
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "deploy")
        .unwrap();
    assert_eq!(deploy["last_used_from"], "192.0.2.7");

    assert!(
        cli.run(&["token", "revoke", "deploy"], "", &[])
            .status
            .success()
    );
    assert!(
        app::services::tokens::verify(&db, token, "192.0.2.7", now)
            .await
            .unwrap()
            .is_none(),
        "revoked tokens stop working"
    );
    let plain = stdout(&cli.run(&["token", "list"], "", &[]));
    assert!(plain.contains("deploy\tadmin\t-\tops\trevoked"), "{plain}");
    let twice = cli.run(&["token", "revoke", "deploy"], "", &[]);
    assert_eq!(twice.status.code(), Some(1));
}
