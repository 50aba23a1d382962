//! Refuses state-changing requests that a browser sent on behalf of another site.
//!
//! Browsers label every request with `Sec-Fetch-Site` and every non-GET request with `Origin`;
//! a cross-site form post or `fetch` carries a foreign value in one of them. Requests with
//! neither header come from non-browser clients (curl, the test suite), which cannot ride on a
//! victim's cookie, so they pass. This is the check Go's `http.CrossOriginProtection` makes; it
//! backs up the `SameSite=Lax` session cookie instead of adding tokens to every form.

use axum::extract::Request;
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// Receive reports (page views, events) from the other sites being counted; they change
/// nothing but counts.
const CROSS_SITE_ALLOWED: [&str; 2] = ["/api/collect", "/api/collect/event"];

pub async fn refuse_cross_site(request: Request, next: Next) -> Response {
    if is_safe_method(request.method())
        || CROSS_SITE_ALLOWED.contains(&request.uri().path())
        || same_origin(request.headers())
    {
        next.run(request).await
    } else {
        tracing::warn!(
            method = %request.method(),
            path = %request.uri().path(),
            origin = ?request.headers().get(header::ORIGIN),
            "refused a cross-site request"
        );
        (
            StatusCode::FORBIDDEN,
            "cross-site requests may not change anything here",
        )
            .into_response()
    }
}

fn is_safe_method(method: &Method) -> bool {
    matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

fn same_origin(headers: &HeaderMap) -> bool {
    match headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()) {
        Some("same-origin" | "none") => return true,
        Some(_) => return false,
        None => {}
    }
    let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) else {
        return true;
    };
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
    // Origin is scheme://host[:port]; compare its authority with the Host header.
    let authority = origin.split_once("://").map(|(_, rest)| rest);
    matches!((authority, host), (Some(a), Some(h)) if a.eq_ignore_ascii_case(h))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.insert(*k, v.parse().unwrap());
        }
        map
    }

    #[test]
    fn browser_labels_decide_first() {
        assert!(same_origin(&headers(&[("sec-fetch-site", "same-origin")])));
        assert!(!same_origin(&headers(&[("sec-fetch-site", "cross-site")])));
        assert!(!same_origin(&headers(&[("sec-fetch-site", "same-site")])));
    }

    #[test]
    fn origin_must_match_host() {
        assert!(same_origin(&headers(&[
            ("origin", "http://127.0.0.1:3000"),
            ("host", "127.0.0.1:3000")
        ])));
        assert!(!same_origin(&headers(&[
            ("origin", "https://evil.example"),
            ("host", "127.0.0.1:3000")
        ])));
        assert!(!same_origin(&headers(&[("origin", "null"), ("host", "a")])));
    }

    #[test]
    fn clients_without_browser_headers_pass() {
        assert!(same_origin(&HeaderMap::new()));
    }
}
