//! `/api/v1/sites/{host}/report`: a site's scheduled traffic report, by the console's rules
//! (`app::services::traffic::reports`).

use app::api::AppError;
use app::domain::traffic_report::Every;
use app::services::traffic::reports::{self, NewReport};
use app::state::AppState;
use app::views::traffic::ReportInfo;
use axum::extract::{Path, State};
use serde::Deserialize;
use utoipa::ToSchema;

use super::caller::{Admin, Caller};
use super::problem::Problem;
use super::{ApiJson, Json};

/// A site's report as asked for.
#[derive(Debug, Deserialize, ToSchema)]
pub struct ReportBody {
    pub every: Every,
    /// Addresses the mail goes to, in the language of mails.
    #[serde(default)]
    pub to: Vec<String>,
    /// Channels it goes to, each in its own language.
    #[serde(default)]
    pub channels: Vec<String>,
}

/// The site's report (`null` when it has none).
#[utoipa::path(get, path = "/sites/{host}/report", tag = "traffic",
    params(("host" = String, Path)),
    responses((status = 200, body = Option<ReportInfo>), (status = 401, body = Problem)))]
pub async fn report(
    _caller: Caller,
    State(state): State<AppState>,
    Path(host): Path<String>,
) -> Result<Json<Option<ReportInfo>>, Problem> {
    Ok(Json(
        reports::get(&state.db, &host)
            .await
            .map_err(AppError::from)?,
    ))
}

/// Sets or replaces the site's report: how often, and to whom (at least one address or
/// channel).
#[utoipa::path(put, path = "/sites/{host}/report", tag = "traffic", request_body = ReportBody,
    params(("host" = String, Path)),
    responses((status = 200, body = ReportInfo), (status = 404, body = Problem), (status = 422, body = Problem), (status = 403, body = Problem)))]
pub async fn set_report(
    Admin(caller): Admin,
    State(state): State<AppState>,
    Path(host): Path<String>,
    ApiJson(body): ApiJson<ReportBody>,
) -> Result<Json<ReportInfo>, Problem> {
    let new = NewReport {
        site: &host,
        every: body.every,
        to: &body.to,
        channels: &body.channels,
    };
    let now = crate::clock::now();
    let saved = reports::set(
        &state.db,
        new,
        &state.console_host(),
        &caller.as_actor(),
        now,
    )
    .await
    .map_err(AppError::from)?;
    Ok(Json(saved))
}

/// Stops the site's report.
#[utoipa::path(delete, path = "/sites/{host}/report", tag = "traffic",
    params(("host" = String, Path)),
    responses((status = 200), (status = 404, body = Problem), (status = 403, body = Problem)))]
pub async fn report_off(
    Admin(caller): Admin,
    State(state): State<AppState>,
    Path(host): Path<String>,
) -> Result<Json<()>, Problem> {
    reports::off(&state.db, &host, &caller.as_actor(), crate::clock::now())
        .await
        .map_err(AppError::from)?;
    Ok(Json(()))
}
