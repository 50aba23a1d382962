//! Counting a site Bulwark does not serve: the site embeds `collect.js`, which reports each
//! page view to `POST /api/collect`, and each `bulwark.event(name, props)` to
//! `POST /api/collect/event` (a site's backend may post there too); pages without JavaScript
//! can use the 1×1 image `GET /api/collect.gif?p=/path&r=referrer&l=lang` instead.
//!
//! Both answer at once and change nothing but counts, so they accept cross-site requests (the
//! origin check lets `/api/collect` through) and need no session.
//!
//! The site is the host of the page's address when the report carries a whole URL, else of
//! the request's `Origin`, else of its `Referer`; a page address and an `Origin` that name two
//! hosts are refused. Once any site is registered, only registered hosts (and the console's
//! own) are counted: the others get 403.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Deserialize;

use super::hit::Event;
use super::rules::Exclusion;
use super::{Collected, Recorder};
use app::domain::{goals, sites};

/// The largest report accepted; the script sends a few hundred bytes.
const MAX_BODY: usize = 8 * 1024;

/// A transparent 1×1 GIF.
const PIXEL: &[u8] = &[
    0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 0x01, 0x00, 0x01, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00,
    0xff, 0xff, 0xff, 0x21, 0xf9, 0x04, 0x01, 0x00, 0x00, 0x00, 0x00, 0x2c, 0x00, 0x00, 0x00, 0x00,
    0x01, 0x00, 0x01, 0x00, 0x00, 0x02, 0x02, 0x44, 0x01, 0x00, 0x3b,
];

pub fn routes<S: Clone + Send + Sync + 'static>(recorder: Arc<Recorder>) -> Router<S> {
    Router::new()
        .route(
            "/api/collect",
            axum::routing::post(collect).options(preflight),
        )
        .route(
            "/api/collect/event",
            axum::routing::post(event).options(preflight),
        )
        .route("/api/collect.gif", get(pixel))
        .with_state(recorder)
}

/// What the script sends. `url` (or `path`) is the page; the rest is optional.
#[derive(Debug, Deserialize)]
pub struct Report {
    #[serde(alias = "path")]
    pub url: String,
    #[serde(default, alias = "referer")]
    pub referrer: Option<String>,
    #[serde(default)]
    pub lang: Option<String>,
}

/// What `bulwark.event(name, props)` sends: the event's name, the page it was sent from and
/// its properties (an object of strings, numbers and booleans).
#[derive(Debug, Deserialize)]
pub struct EventReport {
    pub name: String,
    #[serde(alias = "path")]
    pub url: String,
    #[serde(default)]
    pub props: Option<serde_json::Value>,
    #[serde(default)]
    pub lang: Option<String>,
}

async fn collect(State(recorder): State<Arc<Recorder>>, request: Request) -> Response {
    let peer = peer(&request);
    let (parts, body) = request.into_parts();
    let report: Report = match parse(body).await {
        Ok(report) => report,
        Err(refused) => return refused,
    };
    let referrer = report.referrer.as_deref().filter(|r| !r.is_empty());
    let report = Collected {
        page: &report.url,
        site: None,
        referer: referrer,
        language: report.lang.as_deref(),
        event: None,
    };
    record(&recorder, report, &parts.headers, peer)
}

/// `POST /api/collect/event`: an event, counted apart from page views; a bad name or
/// properties are refused with 400 and count nothing.
async fn event(State(recorder): State<Arc<Recorder>>, request: Request) -> Response {
    let peer = peer(&request);
    let (parts, body) = request.into_parts();
    let report: EventReport = match parse(body).await {
        Ok(report) => report,
        Err(refused) => return refused,
    };
    let name = match goals::event_name(&report.name) {
        Ok(name) => name,
        Err(problem) => return reply(StatusCode::BAD_REQUEST, problem.to_string()),
    };
    let props = match goals::event_props(report.props.as_ref()) {
        Ok(props) => props,
        Err(refused) => return reply(StatusCode::BAD_REQUEST, refused.problem().to_string()),
    };
    let report = Collected {
        page: &report.url,
        site: None,
        referer: None,
        language: report.lang.as_deref(),
        event: Some(Event::new(name, &props)),
    };
    record(&recorder, report, &parts.headers, peer)
}

/// A report's JSON body, at most [`MAX_BODY`] bytes; the refusal to send otherwise.
async fn parse<T: serde::de::DeserializeOwned>(body: axum::body::Body) -> Result<T, Response> {
    let bytes: Bytes = axum::body::to_bytes(body, MAX_BODY).await.map_err(|_| {
        reply(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("a report is at most {MAX_BODY} bytes"),
        )
    })?;
    // sendBeacon posts text/plain to avoid a CORS preflight, so the type is not checked.
    serde_json::from_slice(&bytes).map_err(|e| {
        reply(
            StatusCode::BAD_REQUEST,
            format!("expected JSON like {{\"url\": \"/page\"}}: {e}"),
        )
    })
}

/// Counts a parsed report for the site its page (or the request's origin) names.
fn record(
    recorder: &Recorder,
    report: Collected<'_>,
    headers: &HeaderMap,
    peer: Option<std::net::IpAddr>,
) -> Response {
    let site = match site_of(Some(report.page), headers) {
        Ok(site) => site,
        Err(message) => return reply(StatusCode::FORBIDDEN, message),
    };
    let report = Collected {
        site: site.as_deref(),
        ..report
    };
    match recorder.observe_collected(report, headers, peer) {
        Ok(super::buffer::Recorded::Limited) => reply(
            StatusCode::TOO_MANY_REQUESTS,
            "too many reports from this address; they are not counted".into(),
        ),
        Err(Exclusion::UnknownSite) => reply(StatusCode::FORBIDDEN, unknown_site(site.as_deref())),
        _ => with_cors(StatusCode::NO_CONTENT.into_response()),
    }
}

fn unknown_site(site: Option<&str>) -> String {
    match site {
        Some(site) => format!(
            "{site} is not a registered site of this Bulwark; an administrator registers it under Traffic → Sites"
        ),
        None => "a report must come from a page of a registered site (no page address, Origin or Referer named one)".into(),
    }
}

/// The host a report is for: the page's address, else `Origin`, else `Referer`. A page
/// address naming another host than the `Origin` the browser set is refused.
fn site_of(page: Option<&str>, headers: &HeaderMap) -> Result<Option<String>, String> {
    let page = page.and_then(sites::host_of);
    let origin = header_text(headers, header::ORIGIN).and_then(|o| sites::host_of(&o));
    if let (Some(page), Some(origin)) = (&page, &origin)
        && page != origin
    {
        return Err(format!(
            "the page's address names {page} but the request comes from {origin}"
        ));
    }
    Ok(page
        .or(origin)
        .or_else(|| header_text(headers, header::REFERER).and_then(|r| sites::host_of(&r))))
}

async fn pixel(State(recorder): State<Arc<Recorder>>, request: Request) -> Response {
    let peer = peer(&request);
    // Parsed leniently: a malformed query still gets its image, and counts what it can.
    let mut page = None;
    let mut referrer = None;
    let mut lang = None;
    for (key, value) in form_urlencoded::parse(request.uri().query().unwrap_or("").as_bytes()) {
        match key.as_ref() {
            "p" => page = Some(value.into_owned()),
            "r" => referrer = Some(value.into_owned()),
            "l" => lang = Some(value.into_owned()),
            _ => {}
        }
    }
    // Without `p` the page is the one that embeds the image: its Referer.
    let headers = request.headers();
    let site = match site_of(page.as_deref(), headers) {
        Ok(site) => site,
        Err(message) => return reply(StatusCode::FORBIDDEN, message),
    };
    if let Some(page) = page.or_else(|| header_text(headers, header::REFERER)) {
        let report = Collected {
            page: &page,
            site: site.as_deref(),
            referer: referrer.as_deref(),
            language: lang.as_deref(),
            event: None,
        };
        let recorded = recorder.observe_collected(report, headers, peer);
        if recorded == Err(Exclusion::UnknownSite) {
            return reply(StatusCode::FORBIDDEN, unknown_site(site.as_deref()));
        }
    }
    let mut response = (
        [
            (header::CONTENT_TYPE, "image/gif"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        PIXEL,
    )
        .into_response();
    response.headers_mut().insert(
        "cross-origin-resource-policy",
        HeaderValue::from_static("cross-origin"),
    );
    response
}

async fn preflight() -> Response {
    let mut response = with_cors(StatusCode::NO_CONTENT.into_response());
    let headers = response.headers_mut();
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("POST"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static("content-type"),
    );
    headers.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static("86400"),
    );
    response
}

fn reply(status: StatusCode, message: String) -> Response {
    with_cors((status, message).into_response())
}

fn with_cors(mut response: Response) -> Response {
    response.headers_mut().insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    response
}

fn peer(request: &Request) -> Option<std::net::IpAddr> {
    request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(addr)| addr.ip())
}

fn header_text(headers: &HeaderMap, name: header::HeaderName) -> Option<String> {
    headers
        .get(name)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
}
