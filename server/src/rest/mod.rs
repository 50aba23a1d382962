//! The REST API under `/api/v1`, for the systems around Bulwark: pipelines, scripts, other
//! services. JSON in and out; errors as `application/problem+json` ([`problem`]); lists as
//! `{"items": [...], "next": cursor}`; callers are API tokens or a signed-in session
//! ([`caller`]), viewers read and admins change. Handlers are thin: they call the same
//! services as the pages.
//!
//! The OpenAPI 3.1 document is generated from the handlers' `#[utoipa::path]` and the wire
//! types, and served at `/api/v1/openapi.json`; `docs/API.md` has examples.

pub mod caller;
mod failed;
mod jobs;
pub mod problem;
mod runs;
mod system;
pub mod wire;

use std::sync::Arc;

use app::state::AppState;
use axum::extract::{FromRequest, Request};
use axum::routing::get;
use utoipa::OpenApi;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use problem::Problem;

/// Where the API lives.
pub const PREFIX: &str = "/api/v1";

/// A JSON answer.
pub use axum::Json;

/// A JSON body whose faults are told as a problem (422 naming what is wrong), not as plain
/// text.
pub struct ApiJson<T>(pub T);

impl<T, S> FromRequest<S> for ApiJson<T>
where
    T: serde::de::DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = Problem;

    async fn from_request(request: Request, state: &S) -> Result<Self, Problem> {
        match axum::Json::<T>::from_request(request, state).await {
            Ok(axum::Json(value)) => Ok(ApiJson(value)),
            Err(rejection) => Err(Problem::invalid("body", rejection.body_text())),
        }
    }
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Bulwark",
        description = "Scheduled jobs that must not silently fail. Send `Authorization: Bearer <token>` (Settings → API tokens, or `bulwark token create`).",
        license(name = "MIT OR Apache-2.0")
    ),
    servers((url = "/api/v1")),
    modifiers(&BearerAuth),
    security(("bearer" = [])),
    tags(
        (name = "jobs", description = "Job definitions"),
        (name = "runs", description = "Runs, triggers and cancels"),
        (name = "failed", description = "The failed queue"),
        (name = "traffic", description = "Front-end traffic"),
        (name = "channels", description = "Notification channels"),
        (name = "nodes", description = "The instances"),
    )
)]
struct ApiDoc;

struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// The API's routes, and its OpenAPI document (paths relative to [`PREFIX`]).
pub fn api() -> (axum::Router<AppState>, utoipa::openapi::OpenApi) {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(jobs::list, jobs::create))
        .routes(routes!(jobs::get, jobs::update, jobs::delete))
        .routes(routes!(jobs::enable))
        .routes(routes!(jobs::disable))
        .routes(routes!(jobs::apply))
        .routes(routes!(runs::trigger))
        .routes(routes!(runs::list))
        .routes(routes!(runs::get))
        .routes(routes!(runs::cancel))
        .routes(routes!(failed::list))
        .routes(routes!(failed::retrigger))
        .routes(routes!(failed::retrigger_many))
        .routes(routes!(failed::resolve_run))
        .routes(routes!(failed::discard_run))
        .routes(routes!(system::traffic))
        .routes(routes!(system::test_channel))
        .routes(routes!(system::nodes))
        .split_for_parts()
}

/// The API mounted at [`PREFIX`], with its document at `/api/v1/openapi.json` (readable by
/// anyone: it holds no data). Unknown API paths answer a problem, not a page.
pub fn router() -> axum::Router<AppState> {
    let (routes, doc) = api();
    let doc = Arc::new(doc);
    let api = routes
        .route(
            "/openapi.json",
            get(move || {
                let doc = doc.clone();
                async move { axum::Json((*doc).clone()) }
            }),
        )
        .fallback(|| async {
            Problem::new(
                axum::http::StatusCode::NOT_FOUND,
                "no such API route; the routes are listed in /api/v1/openapi.json",
            )
        });
    axum::Router::new().nest(PREFIX, api)
}

/// The document as served, for tests and `docs/`.
pub fn openapi() -> utoipa::openapi::OpenApi {
    api().1
}
