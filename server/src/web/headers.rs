//! Security headers on every response.
//!
//! Pages get their Content-Security-Policy, with the response's script nonce, from the shell
//! that renders them (`app::app::shell`); everything else (server functions, files, errors)
//! gets one that allows nothing, since none of it is meant to run as a document.

use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;

/// HSTS for a year, once the console is reached over TLS.
const HSTS: &str = "max-age=31536000; includeSubDomains";
const NOTHING: &str = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'";

/// Whether requests arrive over TLS: `secure_cookies` set, or a proxy says so per request.
#[derive(Clone, Copy)]
pub struct Tls {
    pub always: bool,
}

pub async fn layer(State(tls): State<Tls>, request: Request, next: Next) -> Response {
    let over_tls = tls.always
        || request
            .headers()
            .get("x-forwarded-proto")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.eq_ignore_ascii_case("https"));
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    let mut set = |name: HeaderName, value: &'static str| {
        headers
            .entry(name)
            .or_insert(HeaderValue::from_static(value));
    };
    set(header::CONTENT_SECURITY_POLICY, NOTHING);
    set(header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    set(header::X_FRAME_OPTIONS, "DENY");
    set(header::REFERRER_POLICY, "same-origin");
    // Pages and answers show one person's view of live data: never kept, not even by the
    // browser's history. Static files set their own (`web::assets`).
    set(header::CACHE_CONTROL, "no-store");
    if over_tls {
        set(header::STRICT_TRANSPORT_SECURITY, HSTS);
    }
    response
}
