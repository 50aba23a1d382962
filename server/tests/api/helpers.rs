//! The test harness: the application as `bulwark serve` builds it ([`server::startup`]), on a
//! random port, over a fresh SQLite file or PostgreSQL database; and the few things many tests
//! need (a job, a run row, waiting for a run to reach a status).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use app::domain::account::{NewPassword, Role, Username};
use app::domain::job::{JobInput, JobSpec, Kind};
use app::domain::run::{RunStatus, Trigger};
use app::entities::{job, job_run};
use chrono::{DateTime, Utc};
use sea_orm::{ActiveModelTrait, ConnectionTrait, DatabaseConnection, EntityTrait, Set};
use server::config::Config;
use server::shutdown;
use server::startup::Application;
use server::traffic::Recorder;

pub const ADMIN_PASSWORD: &str = "admin-test-password";
pub const VIEWER_PASSWORD: &str = "viewer-test-password";
/// Who the tests' direct service calls are recorded as in the audit log.
pub const TESTER: app::services::audit::Actor<'static> = app::services::audit::Actor {
    id: None,
    name: "test",
    ip: None,
};

/// The application under test, serving on 127.0.0.1 at a random port.
pub struct TestApp {
    pub addr: SocketAddr,
    pub db: DatabaseConnection,
    pub database_url: String,
    /// The server's traffic buffer.
    pub recorder: Arc<Recorder>,
    /// The server's engine health (when the test turned its engine on).
    pub engine_health: Arc<server::engine::supervise::EngineHealth>,
    /// The key the server seals secrets with, for engines a test starts itself.
    pub secret_key: app::services::secrets::SecretKey,
    /// Stops the application (also when the test drops it).
    stop: shutdown::Trigger,
    serving: Option<tokio::task::JoinHandle<()>>,
    /// Keeps the SQLite file, the site root and the mail directory alive for the test.
    _dir: tempfile::TempDir,
}

/// Runs an async test body once on SQLite and once on PostgreSQL (when configured), with the
/// default test configuration or the one a [`Configure`] function makes.
#[macro_export]
macro_rules! on_both_backends {
    ($name:ident) => {
        $crate::on_both_backends!($name, |_, _| {});
    };
    ($name:ident, $configure:expr) => {
        mod $name {
            #[tokio::test(flavor = "multi_thread")]
            async fn sqlite() {
                super::$name($crate::helpers::TestApp::sqlite_with($configure).await).await;
            }

            #[tokio::test(flavor = "multi_thread")]
            async fn postgres() {
                match $crate::helpers::TestApp::postgres_with(stringify!($name), $configure).await {
                    Some(app) => super::$name(app).await,
                    None => eprintln!("BULWARK_TEST_POSTGRES_URL not set: skipped"),
                }
            }
        }
    };
}

/// What a test changes of the configuration `serve` would use. By default the engine and the
/// mail sender are off, so a test drives runs and mail itself and sees exactly what it did;
/// [`TestApp::sqlite_with`] turns them on to test the application whole.
pub type Configure = fn(&mut Config, &mut Workers);

/// Which background workers the test application runs besides the web server and the node's
/// heartbeat.
#[derive(Debug, Clone, Copy, Default)]
pub struct Workers {
    pub engine: bool,
    pub mail_sender: bool,
}

impl TestApp {
    pub async fn sqlite_with(configure: Configure) -> TestApp {
        let dir = tempfile::tempdir().expect("tempdir");
        let url = format!(
            "sqlite://{}?mode=rwc",
            dir.path().join("bulwark.db").display()
        );
        TestApp::start(url, dir, configure).await
    }

    /// The file the server's secret key is in, for `bulwark` commands run against it.
    pub fn secret_key_file(&self) -> std::path::PathBuf {
        self._dir.path().join("secret.key")
    }

    /// Stores the vault secret `name` with `value`, sealed with the server's key.
    pub async fn set_secret(&self, name: &str, value: &str) {
        app::services::secrets::set(
            &self.db,
            &self.secret_key,
            &app::domain::secrets::SecretName::parse(name).expect("a valid secret name"),
            value,
            &TESTER,
            Utc::now(),
        )
        .await
        .expect("the secret is stored");
    }

    /// A fresh database named after the test, dropped and re-created on every run.
    pub async fn postgres(test: &str) -> Option<TestApp> {
        TestApp::postgres_with(test, |_, _| {}).await
    }

    pub async fn postgres_with(test: &str, configure: Configure) -> Option<TestApp> {
        let base = std::env::var("BULWARK_TEST_POSTGRES_URL").ok()?;
        let name = format!("bulwark_t_{test}");
        let admin = server::db::connect(&base)
            .await
            .expect("connect to BULWARK_TEST_POSTGRES_URL");
        admin
            .execute_unprepared(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
            .await
            .expect("drop old test database");
        admin
            .execute_unprepared(&format!("CREATE DATABASE {name}"))
            .await
            .expect("create test database");
        admin.close().await.expect("close admin connection");
        let (prefix, _) = base
            .rsplit_once('/')
            .expect("BULWARK_TEST_POSTGRES_URL ends with a database name");
        let dir = tempfile::tempdir().expect("tempdir");
        Some(TestApp::start(format!("{prefix}/{name}"), dir, configure).await)
    }

    pub(crate) async fn start(
        database_url: String,
        dir: tempfile::TempDir,
        configure: Configure,
    ) -> TestApp {
        let mut config = Config {
            database_url: database_url.clone(),
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            site_root: Some(dir.path().join("site")),
            mail_outbox_dir: dir.path().join("outbox"),
            admin_password: Some(ADMIN_PASSWORD.into()),
            secret_key_file: dir.path().join("secret.key"),
            ..Config::default()
        };
        let mut workers = Workers::default();
        configure(&mut config, &mut workers);
        config.engine = workers.engine;
        let secret_key_file = config.secret_key_file.clone();
        let app = Application::build(config)
            .await
            .expect("the application builds")
            .with_mail_sender(workers.mail_sender);
        let db = app.db().clone();
        app::services::users::create(
            &db,
            &Username::parse("viewer").unwrap(),
            Role::Viewer,
            &NewPassword::parse(VIEWER_PASSWORD).unwrap(),
        )
        .await
        .expect("create the viewer");
        let (stop, stopped) = shutdown::manual();
        let addr = app.addr();
        let recorder = app.recorder();
        let engine_health = app.engine_health();
        let secret_key = app::services::secrets::SecretKey::read(&secret_key_file)
            .expect("the application created its secret key");
        let serving = tokio::spawn(async move {
            if let Err(e) = app.run_until_stopped(stopped).await {
                eprintln!("the test application stopped with an error: {e:#}");
            }
        });
        TestApp {
            addr,
            db,
            database_url,
            recorder,
            engine_health,
            secret_key,
            stop,
            serving: Some(serving),
            _dir: dir,
        }
    }

    /// Builds the application again on this database and key, without serving or an engine:
    /// what a restart (an upgrade) does before it listens.
    pub async fn build_again(&self) -> Application {
        Application::build(Config {
            database_url: self.database_url.clone(),
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            site_root: Some(self._dir.path().join("site")),
            mail_outbox_dir: self._dir.path().join("outbox"),
            secret_key_file: self._dir.path().join("secret.key"),
            engine: false,
            ..Config::default()
        })
        .await
        .expect("the application builds again")
    }

    /// Stops the application gracefully, as SIGTERM would (its node is then marked stopped),
    /// leaving the database to the test.
    pub async fn stop(&mut self) {
        self.stop.fire();
        if let Some(serving) = self.serving.take() {
            tokio::time::timeout(Duration::from_secs(30), serving)
                .await
                .expect("the application stops")
                .expect("the application task");
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    /// A client that keeps cookies, like a browser, but does not follow redirects. A request
    /// that gets no answer in a minute fails the test rather than hanging the suite.
    pub fn client(&self) -> reqwest::Client {
        reqwest::Client::builder()
            .cookie_store(true)
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(60))
            .build()
            .expect("client")
    }

    /// Calls a server function with form-encoded arguments.
    pub async fn call(
        &self,
        client: &reqwest::Client,
        endpoint: &str,
        form: &[(&str, &str)],
    ) -> reqwest::Response {
        client
            .post(self.url(&format!("/api/{endpoint}")))
            .form(form)
            .send()
            .await
            .expect("request")
    }

    pub async fn signed_in(&self, username: &str, password: &str) -> reqwest::Client {
        let client = self.client();
        let res = self
            .call(
                &client,
                "login",
                &[("username", username), ("password", password)],
            )
            .await;
        assert_eq!(
            res.status(),
            200,
            "sign-in as {username} failed: {}",
            res.text().await.unwrap_or_default()
        );
        client
    }
}

/// How many jobs exist besides the system jobs every server creates at its start.
pub async fn own_jobs(db: &DatabaseConnection) -> u64 {
    use sea_orm::{ColumnTrait, PaginatorTrait, QueryFilter};
    let system: Vec<String> = server::system_jobs::specs(chrono_tz::Tz::UTC)
        .expect("the system jobs parse")
        .into_iter()
        .map(|s| s.name)
        .collect();
    job::Entity::find()
        .filter(job::Column::Name.is_not_in(system))
        .count(db)
        .await
        .expect("count jobs")
}

/// Makes the leases of every running run lapse, as if their node had stopped renewing a while
/// ago: leases expire by the database's clock (`server/src/engine/lease.rs`), so a test ages
/// them rather than moving a clock.
pub async fn lapse_leases(db: &DatabaseConnection) {
    use sea_orm::sea_query::Expr;
    use sea_orm::{ColumnTrait, QueryFilter};
    app::entities::job_run::Entity::update_many()
        .col_expr(
            app::entities::job_run::Column::LeaseExpiresAt,
            Expr::value(Utc::now() - chrono::Duration::hours(1)),
        )
        .filter(app::entities::job_run::Column::Status.eq(RunStatus::Running))
        .exec(db)
        .await
        .expect("lapse the leases");
}

/// Disables the system jobs every server creates, for tests that count every run (an engine
/// started by the test would otherwise run the every-minute trend check among them).
pub async fn disable_system_jobs(db: &DatabaseConnection) {
    use sea_orm::{ColumnTrait, QueryFilter};
    let system: Vec<String> = server::system_jobs::specs(chrono_tz::Tz::UTC)
        .expect("the system jobs parse")
        .into_iter()
        .map(|s| s.name)
        .collect();
    for row in job::Entity::find()
        .filter(job::Column::Name.is_in(system))
        .all(db)
        .await
        .expect("read jobs")
    {
        app::services::jobs::set_enabled(db, row.id, false, &TESTER, server::clock::now())
            .await
            .expect("disable a system job");
    }
}

/// The entry of a `jobs/list` answer with this name.
pub fn listed<'a>(list: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    list.as_array()
        .and_then(|jobs| jobs.iter().find(|j| j["name"] == name))
        .unwrap_or_else(|| panic!("{name} is not listed: {list}"))
}

/// A built-in `noop` job that fires once a year, so only the runs a test makes happen.
/// A token named `name` of `scope`, owned by the first administrator (`admin`).
pub async fn api_token(
    db: &DatabaseConnection,
    name: &str,
    scope: app::domain::api_token::Scope,
) -> String {
    let new = app::services::tokens::NewToken {
        name,
        scope,
        tags: "",
        expires: "",
        owner: "admin",
        providers: &[],
    };
    app::services::tokens::create(db, &new, &TESTER, Utc::now())
        .await
        .expect("the token is created")
        .0
}

pub fn noop_job(name: &str) -> JobInput {
    JobInput {
        name: name.into(),
        kind: Kind::Builtin.as_str().into(),
        builtin_task: "noop".into(),
        cron: "0 0 0 1 1 *".into(),
        ..JobInput::default()
    }
}

/// Creates a job from a form-like input; defined an hour ago, so ticks since then are due.
pub async fn define(db: &DatabaseConnection, input: JobInput) -> job::Model {
    let spec = JobSpec::parse(&input).unwrap_or_else(|e| panic!("invalid test job: {e:?}"));
    app::services::jobs::create(db, &spec, Utc::now() - chrono::Duration::hours(1))
        .await
        .expect("create job")
}

/// A run row of `job_id` in `status`, created and scheduled at `at` (finished then too, when
/// the status is final); change any field before inserting it.
pub fn run_row(job_id: i64, status: RunStatus, at: DateTime<Utc>) -> job_run::ActiveModel {
    job_run::ActiveModel {
        job_id: Set(job_id),
        trigger: Set(Trigger::Manual),
        scheduled_for: Set(at),
        status: Set(status),
        attempts: Set(1),
        idempotency_key: Set(format!("test-{job_id}-{}", fastrand::u64(..))),
        created_at: Set(at),
        updated_at: Set(at),
        finished_at: Set((!status.is_active() && status != RunStatus::Blocked).then_some(at)),
        ..Default::default()
    }
}

/// Inserts `row` and returns it as stored.
pub async fn insert_run(db: &DatabaseConnection, row: job_run::ActiveModel) -> job_run::Model {
    row.insert(db).await.expect("insert run")
}

/// Waits until the run reaches one of `statuses`, polling; fails the test after `within`.
pub async fn wait_for_status(
    db: &DatabaseConnection,
    run_id: i64,
    statuses: &[RunStatus],
    within: Duration,
) -> job_run::Model {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let run = job_run::Entity::find_by_id(run_id)
            .one(db)
            .await
            .expect("read run")
            .expect("the run exists");
        if statuses.contains(&run.status) {
            return run;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "run {run_id} still {} after {within:?}",
            run.status
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}
