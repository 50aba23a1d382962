//! Malformed arguments to a server function are the caller's mistake: 400, not 500.
//!
//! Leptos decodes a server function's arguments before the function runs, and answers a
//! decoding failure as a server error (500, body `{"ServerFn":{"Deserialization":…}}`). That
//! sends monitoring after a bug that is not there and tells a client nothing it can act on.
//! This layer turns exactly those answers into 400 with the same body, which names the field.

use axum::body::Body;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::Response;

/// The variants of Leptos's `ServerFnErrorErr` that mean "the request was malformed".
const CALLER_ERRORS: &[&str] = &[
    r#"{"ServerFn":{"Deserialization""#,
    r#"{"ServerFn":{"Args""#,
    r#"{"ServerFn":{"MissingArg""#,
];

/// Error bodies are a line of JSON; anything longer is not one of these.
const MAX_ERROR_BODY: usize = 64 * 1024;

pub async fn layer(request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    if response.status() != StatusCode::INTERNAL_SERVER_ERROR
        || !response.headers().contains_key("serverfnerror")
    {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_ERROR_BODY).await else {
        // Unreadable or too long: not an argument error; say so rather than lose it.
        return Response::from_parts(parts, Body::from("internal error"));
    };
    if CALLER_ERRORS
        .iter()
        .any(|prefix| bytes.starts_with(prefix.as_bytes()))
    {
        parts.status = StatusCode::BAD_REQUEST;
    }
    Response::from_parts(parts, Body::from(bytes))
}
