//! `/share/{token}` and its server functions (`/api/share/…`) are public — the link's token is
//! the credential — so each client source (an IPv4 address or an IPv6 /64,
//! `app::domain::client_addr::limit_source`) may ask for them [`PER_MINUTE`] times a minute,
//! and try a link's password [`UNLOCKS_PER_MINUTE`] times; and no answer is to be indexed.

use std::num::NonZeroU32;
use std::sync::Arc;

use app::state::AppState;
use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use governor::DefaultKeyedRateLimiter;

/// Shared pages and their figures per source per minute.
pub const PER_MINUTE: u32 = 60;
/// Password tries per source per minute.
pub const UNLOCKS_PER_MINUTE: u32 = 10;

fn limiter(per_minute: u32) -> DefaultKeyedRateLimiter<String> {
    governor::RateLimiter::keyed(governor::Quota::per_minute(
        NonZeroU32::new(per_minute).unwrap_or(NonZeroU32::MIN),
    ))
}

/// One server's counts (each router has its own, so tests in one process count apart).
pub struct Limits {
    views: DefaultKeyedRateLimiter<String>,
    unlocks: DefaultKeyedRateLimiter<String>,
}

impl Limits {
    pub fn new() -> Arc<Limits> {
        Arc::new(Limits {
            views: limiter(PER_MINUTE),
            unlocks: limiter(UNLOCKS_PER_MINUTE),
        })
    }
}

pub async fn layer(
    State((state, limits)): State<(AppState, Arc<Limits>)>,
    request: Request,
    next: Next,
) -> Response {
    let path = request.uri().path();
    if !(path.starts_with("/share/") || path.starts_with("/api/share/")) {
        return next.run(request).await;
    }
    let unlocking = path == "/api/share/unlock";
    let (parts, body) = request.into_parts();
    let source = app::api::auth::address_of(&parts, &state.auth.trusted_proxies)
        .map(|ip| app::domain::client_addr::limit_source(&ip))
        .unwrap_or_default();
    let limited = limits.views.check_key(&source).is_err()
        || (unlocking && limits.unlocks.check_key(&source).is_err());
    let mut response = if limited {
        (
            StatusCode::TOO_MANY_REQUESTS,
            [(header::RETRY_AFTER, "60")],
            "too many requests for shared pages from this address: try again in a minute",
        )
            .into_response()
    } else {
        next.run(Request::from_parts(parts, body)).await
    };
    response.headers_mut().insert(
        HeaderName::from_static("x-robots-tag"),
        HeaderValue::from_static("noindex, nofollow"),
    );
    response
}
