use std::net::SocketAddr;
use std::sync::Arc;

use app::domain::account::{NewPassword, Role, Username};
use sea_orm::{ConnectionTrait, DatabaseConnection};
use server::config::Config;
use server::traffic::Recorder;

pub const ADMIN_PASSWORD: &str = "admin-test-password";
pub const VIEWER_PASSWORD: &str = "viewer-test-password";

/// The application under test, serving on 127.0.0.1 at a random port.
pub struct TestApp {
    pub addr: SocketAddr,
    pub db: DatabaseConnection,
    pub database_url: String,
    /// The server's traffic buffer.
    pub recorder: Arc<Recorder>,
    /// Keeps the SQLite file (and the empty site root) alive for the test's duration.
    _dir: tempfile::TempDir,
}

/// Runs an async test body once on SQLite and once on PostgreSQL (when configured).
#[macro_export]
macro_rules! on_both_backends {
    ($name:ident) => {
        mod $name {
            #[tokio::test(flavor = "multi_thread")]
            async fn sqlite() {
                super::$name($crate::helpers::TestApp::sqlite().await).await;
            }

            #[tokio::test(flavor = "multi_thread")]
            async fn postgres() {
                match $crate::helpers::TestApp::postgres(stringify!($name)).await {
                    Some(app) => super::$name(app).await,
                    None => eprintln!("BULWARK_TEST_POSTGRES_URL not set: skipped"),
                }
            }
        }
    };
}

impl TestApp {
    pub async fn sqlite() -> TestApp {
        let dir = tempfile::tempdir().expect("tempdir");
        let url = format!(
            "sqlite://{}?mode=rwc",
            dir.path().join("bulwark.db").display()
        );
        TestApp::start(url, dir).await
    }

    /// A fresh database named after the test, dropped and re-created on every run.
    pub async fn postgres(test: &str) -> Option<TestApp> {
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
        Some(TestApp::start(format!("{prefix}/{name}"), dir).await)
    }

    async fn start(database_url: String, dir: tempfile::TempDir) -> TestApp {
        let config = Config {
            database_url: database_url.clone(),
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            site_root: dir.path().join("site"),
            ..Config::default()
        };
        let db = server::db::connect(&config.database_url)
            .await
            .expect("connect");
        server::db::migrate(&db).await.expect("migrate");
        for (name, role, password) in [
            ("admin", Role::Admin, ADMIN_PASSWORD),
            ("viewer", Role::Viewer, VIEWER_PASSWORD),
        ] {
            app::services::users::create(
                &db,
                &Username::parse(name).unwrap(),
                role,
                &NewPassword::parse(password).unwrap(),
            )
            .await
            .expect("create test user");
        }

        let listener = tokio::net::TcpListener::bind(config.addr)
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("local addr");
        let state = server::web::state(&config, db.clone());
        let recorder = Arc::new(Recorder::new(config.traffic_settings()));
        let router = server::web::router(
            state,
            server::web::Traffic {
                recorder: recorder.clone(),
                capture_pages: true,
            },
        );
        tokio::spawn(server::web::serve(listener, router, std::future::pending()));
        TestApp {
            addr,
            db,
            database_url,
            recorder,
            _dir: dir,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    /// A client that keeps cookies, like a browser, but does not follow redirects.
    pub fn client(&self) -> reqwest::Client {
        reqwest::Client::builder()
            .cookie_store(true)
            .redirect(reqwest::redirect::Policy::none())
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
