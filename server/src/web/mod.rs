//! The axum application: Leptos pages and server functions behind the session layer and the
//! cross-site request check, plus health endpoints, the built site's static files, the traffic
//! collect endpoint, and (when capture is on) the traffic layer around all of it.

mod arguments;
pub mod assets;
mod export;
mod headers;
mod health;
pub mod metrics;
mod origin;
mod session;
mod share;

pub use share::PER_MINUTE as SHARE_PER_MINUTE;

use std::net::SocketAddr;
use std::sync::Arc;

use app::state::{AppState, AuthSettings};
use app::{App, shell};
use axum::Router;
use axum::middleware;
use axum::routing::get;
use leptos::prelude::LeptosOptions;
use leptos_axum::{AxumRouteListing, LeptosRoutes, generate_route_list};
use sea_orm::DatabaseConnection;

use crate::config::Config;
use crate::traffic::Recorder;
use crate::traffic::layer::TrafficLayer;

/// The traffic pipeline as the web app sees it.
#[derive(Clone)]
pub struct Traffic {
    pub recorder: Arc<Recorder>,
    /// Count page views of this server's own routes (the collect endpoint works regardless).
    pub capture_pages: bool,
}

/// The options Leptos needs, built from our config rather than from Cargo.toml so the binary
/// runs from any directory. Leptos reads no files through them: the site is ours to serve
/// ([`assets`]).
pub fn leptos_options(config: &Config) -> LeptosOptions {
    LeptosOptions::builder()
        .output_name("bulwark")
        .site_pkg_dir("pkg")
        .site_addr(config.addr)
        .build()
}

pub fn state(
    config: &Config,
    db: DatabaseConnection,
    secret_key: app::services::secrets::SecretKey,
    site: &assets::Site,
) -> AppState {
    AppState {
        assets: site.urls(),
        api_docs: std::sync::Arc::new(crate::rest::reference()),
        channels: Some(std::sync::Arc::new(crate::channels::deliver::Tester {
            db: db.clone(),
            key: secret_key.clone(),
            config: config.clone(),
        })),
        secret_key,
        ping_body_max: config.ping_body_max_kb as usize * 1024,
        leptos_options: leptos_options(config),
        auth: AuthSettings {
            session_ttl: chrono::Duration::hours(i64::from(config.session_hours)),
            session_idle: chrono::Duration::hours(i64::from(config.session_idle_hours)),
            secure_cookies: config.secure_cookies,
            trusted_proxies: config.trusted_proxies(),
            password_login: config.password_login,
            providers: config.provider_infos(),
            header: config.header_auth(),
            require_totp_for_admins: config.require_totp_for_admins,
        },
        timezone: config.zone(),
        default_locale: config.locale(),
        public_url: config.public_url(),
        live: None,
        mailer: match config.mail_settings() {
            Ok(settings) => Some(std::sync::Arc::new(crate::mail::sender::Sender {
                db: db.clone(),
                settings,
                name: format!("web-{}", std::process::id()),
            })),
            Err(e) => {
                tracing::error!(error = %e, "mail settings unusable: the Notifications page cannot send");
                None
            }
        },
        db,
    }
}

/// The application's pages, walked once per process.
///
/// Walking the route tree renders the app with resource loading switched off, and the switch
/// is one flag for the whole process: a page another router in this process is rendering at
/// that moment waits forever on a resource that started then. Tests build a router per test
/// in one process, so they walked the tree while their neighbours' pages were loading (a page
/// body stalled, the database idle, about one full run in three); walking it once, before the
/// first router exists, leaves no page to catch.
pub fn route_list() -> Vec<AxumRouteListing> {
    static ROUTES: std::sync::OnceLock<Vec<AxumRouteListing>> = std::sync::OnceLock::new();
    ROUTES.get_or_init(|| generate_route_list(App)).clone()
}

/// `engine`: the engine's health, for `/readyz` (`None` where this process runs no engine).
pub fn router(
    mut state: AppState,
    traffic: Traffic,
    site: assets::Site,
    engine: Option<std::sync::Arc<crate::engine::supervise::EngineHealth>>,
    oidc: Option<Arc<crate::auth::oidc::Oidc>>,
) -> Router {
    state.live = Some(traffic.recorder.clone());
    let routes = route_list();
    let sign_in = oidc.map(crate::auth::oidc::routes).unwrap_or_default();
    let router = Router::new()
        .merge(sign_in)
        .route(
            "/assets/{hash}/{*path}",
            get(assets::versioned).with_state(site.clone()),
        )
        .merge(crate::traffic::collect::routes(traffic.recorder.clone()))
        .route("/healthz", get(health::healthz))
        .route(
            "/readyz",
            get(health::readyz).layer(axum::Extension(health::Engine(engine))),
        )
        .route("/traffic/hits.csv", get(export::hits_csv))
        .route(
            "/metrics",
            get(metrics::handler).with_state(metrics::Scrape {
                app: state.clone(),
                recorder: traffic.recorder.clone(),
                open: false,
            }),
        )
        .merge(crate::rest::router())
        .leptos_routes_with_context(
            &state,
            routes,
            {
                // Pages write times in the configured zone (`app/src/i18n/mod.rs`).
                let zone = app::domain::zone::ZoneTable::cached(state.timezone);
                move || leptos::prelude::provide_context(zone.clone())
            },
            {
                let options = state.leptos_options.clone();
                move || shell(options.clone())
            },
        )
        .fallback(
            move |state: axum::extract::State<AppState>, request: axum::extract::Request| {
                files_or_not_found(state, site.clone(), request)
            },
        )
        // Pages, server functions and the API, compressed as they go out; static files come
        // compressed already and the layer leaves an encoded response alone.
        .layer(
            tower_http::compression::CompressionLayer::new()
                .br(true)
                .gzip(true)
                .quality(tower_http::CompressionLevel::Fastest),
        )
        .layer(middleware::from_fn_with_state(
            state.clone(),
            session::layer,
        ))
        .layer(middleware::from_fn_with_state(
            (state.clone(), share::Limits::new()),
            share::layer,
        ))
        .layer(middleware::from_fn(origin::refuse_cross_site))
        .layer(middleware::from_fn(arguments::layer))
        .layer(middleware::from_fn_with_state(
            headers::Tls {
                always: state.auth.secure_cookies,
            },
            headers::layer,
        ))
        .with_state(state);
    if traffic.capture_pages {
        router.layer(TrafficLayer::new(traffic.recorder))
    } else {
        router
    }
}

/// What an instance that only runs jobs (`web = false`, `bulwark serve --no-web`) answers:
/// its health and its metrics (with a read token, as on a full instance); nothing else, so no
/// console, API or traffic collection is reachable through it.
pub fn jobs_only_router(
    state: AppState,
    recorder: Arc<crate::traffic::Recorder>,
    engine: Option<std::sync::Arc<crate::engine::supervise::EngineHealth>>,
) -> Router {
    Router::new()
        .route("/healthz", get(health::healthz))
        .route(
            "/readyz",
            get(health::readyz).layer(axum::Extension(health::Engine(engine))),
        )
        .route(
            "/metrics",
            get(metrics::handler).with_state(metrics::Scrape {
                app: state.clone(),
                recorder,
                open: false,
            }),
        )
        .fallback(|| async {
            (
                http::StatusCode::NOT_FOUND,
                "this instance runs jobs only (web = false): the console is served by the others\n",
            )
        })
        .with_state(state)
}

/// A file of the site at its plain path, else the app's own 404 page.
async fn files_or_not_found(
    axum::extract::State(state): axum::extract::State<AppState>,
    site: assets::Site,
    request: axum::extract::Request,
) -> axum::response::Response {
    let path = request.uri().path().trim_start_matches('/').to_string();
    if matches!(*request.method(), http::Method::GET | http::Method::HEAD) && !path.is_empty() {
        // The same request without its body (a GET has none to keep).
        let mut probe = axum::extract::Request::new(axum::body::Body::empty());
        *probe.method_mut() = request.method().clone();
        *probe.uri_mut() = request.uri().clone();
        *probe.headers_mut() = request.headers().clone();
        if let Some(response) = site.serve(&path, probe).await {
            return response;
        }
    }
    let options = state.leptos_options.clone();
    let render = leptos_axum::render_app_async_with_context(
        {
            let state = state.clone();
            move || {
                leptos::prelude::provide_context(app::domain::zone::ZoneTable::cached(
                    state.timezone,
                ));
                leptos::prelude::provide_context(state.clone())
            }
        },
        move || shell(options.clone()),
    );
    render(request).await
}

/// Serves until `shutdown` resolves, then lets in-flight requests finish.
pub async fn serve(
    listener: tokio::net::TcpListener,
    router: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(
        listener,
        router.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(shutdown)
    .await
}
