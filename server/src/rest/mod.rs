//! The REST API under `/api/v1`, for the systems around Bulwark: pipelines, scripts, other
//! services. JSON in and out; errors as `application/problem+json` ([`problem`]); lists as
//! `{"items": [...], "next": cursor}`; callers are API tokens or a signed-in session
//! ([`caller`]), viewers read and admins change. Handlers are thin: they call the same
//! services as the pages.
//!
//! The OpenAPI 3.1 document is generated from the handlers' `#[utoipa::path]` and the wire
//! types, and served at `/api/v1/openapi.json`; `docs/reference/api.md` has examples.

mod calendars;
pub mod caller;
mod failed;
pub mod hooks;
mod jobs;
mod maintenance;
pub mod ping;
pub mod problem;
mod revisions;
mod run_logs;
mod runs;
mod sites;
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
        (name = "maintenance", description = "Pausing every job, or a tag's, now or ahead"),
        (name = "calendars", description = "Work calendars: workdays, holidays and make-up days"),
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
        .routes(routes!(maintenance::pause_job))
        .routes(routes!(maintenance::resume_job))
        .routes(routes!(maintenance::status))
        .routes(routes!(maintenance::pause))
        .routes(routes!(maintenance::resume))
        .routes(routes!(jobs::apply))
        .routes(routes!(revisions::list))
        .routes(routes!(revisions::diff))
        .routes(routes!(revisions::restore))
        .routes(routes!(runs::trigger))
        .routes(routes!(hooks::create, hooks::change, hooks::remove))
        .routes(routes!(ping::url))
        .routes(routes!(calendars::list))
        .routes(routes!(calendars::put, calendars::remove))
        .routes(routes!(calendars::start, calendars::of_job))
        .routes(routes!(calendars::pause))
        .routes(routes!(calendars::resume))
        .routes(routes!(calendars::cancel))
        .routes(routes!(runs::list))
        .routes(routes!(runs::get))
        .routes(routes!(run_logs::log))
        .routes(routes!(run_logs::search))
        .routes(routes!(runs::cancel))
        .routes(routes!(failed::list))
        .routes(routes!(failed::retrigger))
        .routes(routes!(failed::retrigger_many))
        .routes(routes!(failed::resolve_run))
        .routes(routes!(failed::discard_run))
        .routes(routes!(system::traffic))
        .routes(routes!(sites::report, sites::set_report, sites::report_off))
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
    axum::Router::new()
        .nest(PREFIX, api)
        .route("/hooks/{id}", axum::routing::post(hooks::trigger))
        .merge(ping::routes())
}

/// The document as served, for tests and `docs/`.
pub fn openapi() -> utoipa::openapi::OpenApi {
    api().1
}

/// The operations as the console's API page lists them, read from the document.
pub fn reference() -> Vec<app::views::api_docs::ApiOperation> {
    use app::views::api_docs::{ApiOperation, ApiParam};
    let doc = serde_json::to_value(openapi()).unwrap_or_default();
    let text = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_string();
    // A schema reference `#/components/schemas/JobInput` is named by its last part.
    let schema_name = |v: &serde_json::Value| -> Option<String> {
        let content = v.get("content")?.as_object()?;
        let (kind, media) = content.iter().next()?;
        let schema = media.get("schema")?;
        Some(
            schema
                .get("$ref")
                .and_then(|r| r.as_str())
                .and_then(|r| r.rsplit('/').next())
                .map(str::to_string)
                .unwrap_or_else(|| kind.clone()),
        )
    };
    let mut operations = Vec::new();
    if let Some(paths) = doc.get("paths").and_then(|p| p.as_object()) {
        for (path, item) in paths {
            let Some(item) = item.as_object() else {
                continue;
            };
            for (method, op) in item {
                let params = op
                    .get("parameters")
                    .and_then(|p| p.as_array())
                    .map(|list| {
                        list.iter()
                            .map(|p| ApiParam {
                                name: text(&p["name"]),
                                location: text(&p["in"]),
                                required: p["required"].as_bool().unwrap_or(false),
                                description: text(&p["description"]),
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                let responses = op
                    .get("responses")
                    .and_then(|r| r.as_object())
                    .map(|r| {
                        r.iter()
                            .map(|(status, answer)| {
                                let body = schema_name(answer).unwrap_or_default();
                                let description = text(&answer["description"]);
                                (
                                    status.clone(),
                                    [description, body].join(" ").trim().to_string(),
                                )
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                operations.push(ApiOperation {
                    tag: op["tags"][0].as_str().unwrap_or("api").to_string(),
                    method: method.to_uppercase(),
                    path: path.clone(),
                    summary: text(&op["summary"]),
                    params,
                    body: op.get("requestBody").and_then(schema_name),
                    responses,
                });
            }
        }
    }
    operations.sort_by(|a, b| (&a.tag, &a.path, &a.method).cmp(&(&b.tag, &b.path, &b.method)));
    operations
}
