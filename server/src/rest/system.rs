//! `/api/v1/traffic`, `/api/v1/channels/{name}/test`, `/api/v1/nodes`: the dashboard's figures,
//! a channel's test message, the health of the nodes.

use app::domain::filters::TrafficFilter;
use app::state::AppState;
use app::views::channels::ChannelTest;
use app::views::nodes::NodeView;
use axum::extract::{Path, Query, State};
use serde::Deserialize;
use utoipa::IntoParams;

use super::Json;
use super::caller::{Admin, Caller};
use super::problem::Problem;

#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TrafficQuery {
    /// today, yesterday, 7d, 30d, 90d (or give from/to).
    pub range: Option<String>,
    /// First day, YYYY-MM-DD in the configured zone.
    pub from: Option<String>,
    /// Last day, inclusive.
    pub to: Option<String>,
    /// all, human or bot (default all).
    pub visitors: Option<String>,
    /// One bot category: search, ai, social, seo, archive, monitoring, tool, other.
    pub category: Option<String>,
    /// One named bot source.
    pub source: Option<String>,
    /// One site, by host (default: all sites).
    pub site: Option<String>,
    /// Visitors from one country: a two-letter code, or `unknown` (default: every country).
    pub country: Option<String>,
    /// Page views of URLs tagged with one `utm_campaign` (default: all).
    pub campaign: Option<String>,
    /// Hits answered with one HTTP status code, e.g. 404 (default: all).
    pub status: Option<String>,
}

/// The traffic figures for a range: what `bulwark traffic stats --json` prints.
#[utoipa::path(get, path = "/traffic", tag = "traffic", params(TrafficQuery),
    responses((status = 200, body = app::views::traffic::TrafficStats), (status = 422, body = Problem)))]
pub async fn traffic(
    _caller: Caller,
    State(state): State<AppState>,
    Query(q): Query<TrafficQuery>,
) -> Result<Json<app::views::traffic::TrafficStats>, Problem> {
    let filter = TrafficFilter::parse(
        q.range.as_deref(),
        q.from.as_deref(),
        q.to.as_deref(),
        q.visitors.as_deref(),
        q.category.as_deref(),
        q.source.as_deref(),
    )
    .and_then(|f| f.with_site(q.site.as_deref()))
    .and_then(|f| f.with_country(q.country.as_deref()))
    .map(|f| f.with_campaign(q.campaign.as_deref()))
    .and_then(|f| f.with_status(q.status.as_deref()))
    .map_err(app::api::AppError::from)?;
    let range = filter
        .resolve(crate::clock::now(), state.timezone)
        .map_err(app::api::AppError::from)?;
    let query = app::services::traffic::StatsQuery::new(&filter, &range, state.timezone);
    app::services::traffic::stats(&state.db, &query)
        .await
        .map(Json)
        .map_err(|e| app::api::AppError::internal(&e).into())
}

/// Sends a test message to a channel and answers with the platform's words.
#[utoipa::path(post, path = "/channels/{name}/test", tag = "channels", params(("name" = String, Path)),
    responses((status = 200, body = ChannelTest), (status = 422, body = Problem)))]
pub async fn test_channel(
    Admin(caller): Admin,
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Json<ChannelTest>, Problem> {
    let tester = state.channels.clone().ok_or_else(|| {
        Problem::from(app::api::AppError::Internal(
            "channel delivery is not set up".into(),
        ))
    })?;
    let (accepted, answer) = tester
        .test(&name)
        .await
        .map_err(|e| Problem::invalid("channel", e.to_string()))?;
    caller
        .audit(
            &state,
            "channel.tested",
            &name,
            serde_json::json!({ "accepted": accepted }),
        )
        .await?;
    Ok(Json(ChannelTest {
        name,
        accepted,
        answer,
    }))
}

/// Every node that has run: live, lost or stopped, with its heartbeat and clock offset.
#[utoipa::path(get, path = "/nodes", tag = "nodes",
    responses((status = 200, body = Vec<NodeView>)))]
pub async fn nodes(
    _caller: Caller,
    State(state): State<AppState>,
) -> Result<Json<Vec<NodeView>>, Problem> {
    let now = crate::clock::now();
    let nodes = app::services::nodes::list(&state.db, now).await?;
    Ok(Json(nodes.into_iter().map(|n| n.view(now)).collect()))
}
