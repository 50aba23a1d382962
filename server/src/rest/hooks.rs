//! `POST /hooks/<id>`: a job's trigger URL, for systems that cannot hold an API token. The id is
//! the credential; a job may also ask for a signature (`X-Bulwark-Signature: sha256=<hex>`, the
//! HMAC-SHA256 of the raw body keyed by the hook's secret, as GitHub signs its webhooks).
//! Parameters come from the JSON body (`{"params": {…}}`), an `Idempotency-Key` works as on the
//! API, and each URL is held to 60 triggers a minute.
//!
//! Admins give a job its URL (or a new one, or none) through the API and the job's page:
//! `POST`/`DELETE /api/v1/jobs/{name}/hook`.

use std::num::NonZeroU32;
use std::sync::LazyLock;

use app::services::hooks::{self, Hook};
use app::state::AppState;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use hmac::{Hmac, Mac};
use serde::Deserialize;
use sha2::Sha256;
use utoipa::ToSchema;

use super::Json;
use super::caller::Admin;
use super::jobs::by_name;
use super::problem::Problem;
use super::runs::{idempotency_key, start, trigger_body};
use super::wire::TriggeredRun;

/// Triggers per trigger URL per minute.
const PER_MINUTE: u32 = 60;

static LIMITER: LazyLock<governor::DefaultKeyedRateLimiter<String>> = LazyLock::new(|| {
    governor::RateLimiter::keyed(governor::Quota::per_minute(
        NonZeroU32::new(PER_MINUTE).unwrap_or(NonZeroU32::MIN),
    ))
});

/// Whether `header` is `sha256=<hex>` of the HMAC-SHA256 of `body` keyed by `secret`, compared
/// in constant time.
pub fn signature_holds(secret: &str, body: &[u8], header: Option<&str>) -> bool {
    let Some(hex_sig) = header.and_then(|h| h.trim().strip_prefix("sha256=")) else {
        return false;
    };
    let Ok(expected) = hex::decode(hex_sig) else {
        return false;
    };
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret.as_bytes()) else {
        return false;
    };
    mac.update(body);
    mac.verify_slice(&expected).is_ok()
}

/// `POST /hooks/{id}`.
pub async fn trigger(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Result<(StatusCode, Json<TriggeredRun>), Problem> {
    let not_found = || Problem::not_found(app::t!("noun-trigger-url"));
    let Some((job, secret)) = hooks::find(&state.db, &state.secret_key, &id).await? else {
        return Err(not_found());
    };
    if LIMITER.check_key(&id).is_err() {
        return Err(Problem::new(
            StatusCode::TOO_MANY_REQUESTS,
            format!("this trigger URL takes at most {PER_MINUTE} requests a minute"),
        ));
    }
    match secret {
        Ok(None) => {}
        Ok(Some(secret)) => {
            let header = headers
                .get("x-bulwark-signature")
                .and_then(|v| v.to_str().ok());
            if !signature_holds(&secret, &body, header) {
                return Err(Problem::unauthorized(
                    "X-Bulwark-Signature must be sha256=<hex HMAC-SHA256 of the body>, keyed by the hook's secret",
                ));
            }
        }
        Err(()) => {
            tracing::error!(job = %job.name, "the trigger URL's secret does not open with this node's key");
            return Err(Problem::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "this node cannot check the signature; every node needs the same secret_key_file",
            ));
        }
    }
    let key = idempotency_key(&headers)?;
    let body = trigger_body(&body)?;
    let actor = format!("hook:{}", job.name);
    start(
        &state,
        &job,
        &body,
        key.as_deref(),
        &app::services::audit::Actor {
            id: None,
            name: &actor,
            ip: None,
        },
    )
    .await
}

/// A trigger URL being made.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"secret": "a-long-random-string-the-caller-also-holds"}))]
pub struct NewHook {
    /// Callers must sign their requests with it (optional).
    #[serde(default)]
    pub secret: Option<String>,
}

/// The job's trigger URL as its admins see it.
#[derive(Debug, serde::Serialize, ToSchema)]
pub struct HookView {
    /// POST here (relative to the console's address).
    pub path: String,
    pub signed: bool,
}

impl From<Hook> for HookView {
    fn from(h: Hook) -> Self {
        HookView {
            path: h.path,
            signed: h.signed,
        }
    }
}

/// Gives the job a new trigger URL; any earlier one stops working.
#[utoipa::path(post, path = "/jobs/{name}/hook", tag = "jobs", params(("name" = String, Path)),
    request_body = NewHook,
    responses((status = 200, body = HookView), (status = 404, body = Problem)))]
pub async fn create(
    Admin(caller): Admin,
    State(state): State<AppState>,
    Path(name): Path<String>,
    body: axum::body::Bytes,
) -> Result<Json<HookView>, Problem> {
    let job = by_name(&state, &name).await?;
    let new: NewHook = if body.iter().all(u8::is_ascii_whitespace) {
        NewHook::default()
    } else {
        serde_json::from_slice(&body)
            .map_err(|e| Problem::invalid("body", format!("not a hook: {e}")))?
    };
    let hook = hooks::create(&state.db, &state.secret_key, job.id, new.secret.as_deref()).await?;
    caller
        .audit(
            &state,
            "job.hook_created",
            &job.name,
            serde_json::json!({ "signed": hook.signed }),
        )
        .await?;
    Ok(Json(hook.into()))
}

/// Takes the job's trigger URL away.
#[utoipa::path(delete, path = "/jobs/{name}/hook", tag = "jobs", params(("name" = String, Path)),
    responses((status = 204), (status = 404, body = Problem)))]
pub async fn remove(
    Admin(caller): Admin,
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<StatusCode, Problem> {
    let job = by_name(&state, &name).await?;
    hooks::remove(&state.db, job.id).await?;
    caller
        .audit(&state, "job.hook_removed", &job.name, serde_json::json!({}))
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_are_checked_like_githubs() {
        // HMAC-SHA256("It's a Secret to Everybody", "Hello, World!") from GitHub's webhook
        // documentation.
        let body = b"Hello, World!";
        let good = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";
        assert!(signature_holds(
            "It's a Secret to Everybody",
            body,
            Some(good)
        ));
        assert!(!signature_holds("another secret", body, Some(good)));
        assert!(!signature_holds(
            "It's a Secret to Everybody",
            b"Hello",
            Some(good)
        ));
        assert!(!signature_holds("It's a Secret to Everybody", body, None));
        assert!(!signature_holds(
            "It's a Secret to Everybody",
            body,
            Some("sha256=zz")
        ));
    }
}
