//! `POST /hooks/<id>`: a job's trigger URL, for systems that cannot hold an API token. The id is
//! the credential; a job may also ask for a signature, checked before anything else the request
//! costs: Standard Webhooks style (`webhook-id`, `webhook-timestamp` within five minutes of
//! now, `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`; the `webhook-id`
//! doubles as the request's idempotency key, so a replay inside the window answers with the
//! same run), or, for one more release, GitHub style (`X-Bulwark-Signature: sha256=<hex>` over
//! the body alone, which a replay can repeat). Failed signatures count in a bucket of their own,
//! so junk cannot use up the signed caller's 60 triggers a minute. A disabled job refuses
//! (409); a paused one refuses too, or, when its hook says `when_paused = queue`, makes the run,
//! which waits for the pause to end. Parameters come from the JSON body (`{"params": {…}}`) and an
//! `Idempotency-Key` works as on the API.
//!
//! Admins give a job its URL (or a new one, or none) through the API and the job's page:
//! `POST`/`DELETE /api/v1/jobs/{name}/hook`.

use std::num::NonZeroU32;
use std::sync::LazyLock;

use app::domain::job::WhenPaused;
use app::services::hooks::{self, Hook};
use app::services::maintenance;
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

/// Requests with a wrong or missing signature per trigger URL per minute, counted apart from
/// the triggers: after these the URL answers 429 to unsigned junk only.
const BAD_SIGNATURES_PER_MINUTE: u32 = 30;

/// How far a `webhook-timestamp` may be from now.
const SIGNATURE_WINDOW_SECONDS: i64 = 5 * 60;

type Limiter = governor::DefaultKeyedRateLimiter<String>;

fn limiter(per_minute: u32) -> Limiter {
    governor::RateLimiter::keyed(governor::Quota::per_minute(
        NonZeroU32::new(per_minute).unwrap_or(NonZeroU32::MIN),
    ))
}

static LIMITER: LazyLock<Limiter> = LazyLock::new(|| limiter(PER_MINUTE));
static BAD_SIGNATURES: LazyLock<Limiter> = LazyLock::new(|| limiter(BAD_SIGNATURES_PER_MINUTE));

/// Whether `header` is `sha256=<hex>` of the HMAC-SHA256 of `body` keyed by `secret`, compared
/// in constant time (the older, GitHub-style form).
pub fn signature_holds(secret: &str, body: &[u8], header: Option<&str>) -> bool {
    let Some(hex_sig) = header.and_then(|h| h.trim().strip_prefix("sha256=")) else {
        return false;
    };
    let Ok(expected) = hex::decode(hex_sig) else {
        return false;
    };
    mac(secret.as_bytes(), &[body]).is_some_and(|mac| mac.verify_slice(&expected).is_ok())
}

fn mac(key: &[u8], parts: &[&[u8]]) -> Option<Hmac<Sha256>> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).ok()?;
    for part in parts {
        mac.update(part);
    }
    Some(mac)
}

/// The Standard Webhooks key of a secret: the bytes after `whsec_`, base64-decoded, or the
/// secret's own bytes when it is not in that form.
fn standard_key(secret: &str) -> Vec<u8> {
    use base64::Engine;
    secret
        .strip_prefix("whsec_")
        .and_then(|b64| base64::engine::general_purpose::STANDARD.decode(b64).ok())
        .unwrap_or_else(|| secret.as_bytes().to_vec())
}

/// A Standard Webhooks signature: whether one of the space-separated `v1,<base64>` entries of
/// `webhook-signature` is the HMAC-SHA256 of `id.timestamp.body`, and the timestamp within
/// [`SIGNATURE_WINDOW_SECONDS`] of `now`.
pub fn standard_signature_holds(
    secret: &str,
    body: &[u8],
    id: &str,
    timestamp: &str,
    signatures: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> bool {
    use base64::Engine;
    let Ok(sent_at) = timestamp.trim().parse::<i64>() else {
        return false;
    };
    if (now.timestamp() - sent_at).abs() > SIGNATURE_WINDOW_SECONDS {
        return false;
    }
    let key = standard_key(secret);
    signatures.split_whitespace().any(|entry| {
        let Some(encoded) = entry.strip_prefix("v1,") else {
            return false;
        };
        let Ok(expected) = base64::engine::general_purpose::STANDARD.decode(encoded) else {
            return false;
        };
        let signed = [id.as_bytes(), b".", timestamp.trim().as_bytes(), b".", body];
        mac(&key, &signed).is_some_and(|mac| mac.verify_slice(&expected).is_ok())
    })
}

/// How a request proved it knows the hook's secret.
enum Signed {
    /// Standard Webhooks: its `webhook-id`, the request's idempotency key.
    Standard(String),
    Legacy,
}

/// Checks the request's signature against the hook's `secret`.
fn check_signature(secret: &str, headers: &HeaderMap, body: &[u8]) -> Result<Signed, Problem> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let (Some(id), Some(timestamp), Some(signatures)) = (
        header("webhook-id"),
        header("webhook-timestamp"),
        header("webhook-signature"),
    ) {
        let now = crate::clock::now();
        if standard_signature_holds(secret, body, id, timestamp, signatures, now) {
            return Ok(Signed::Standard(id.to_string()));
        }
    } else if signature_holds(secret, body, header("x-bulwark-signature")) {
        return Ok(Signed::Legacy);
    }
    Err(Problem::unauthorized(
        "sign the request: webhook-id, webhook-timestamp (within 5 minutes) and webhook-signature v1,<base64 HMAC-SHA256 of id.timestamp.body>, keyed by the hook's secret",
    ))
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
    // The signature first: only a request that proves the secret spends the URL's triggers.
    let signed = match secret {
        Ok(None) => None,
        Ok(Some(secret)) => match check_signature(&secret, &headers, &body) {
            Ok(signed) => Some(signed),
            Err(refused) => {
                if BAD_SIGNATURES.check_key(&id).is_err() {
                    return Err(Problem::new(
                        StatusCode::TOO_MANY_REQUESTS,
                        format!(
                            "more than {BAD_SIGNATURES_PER_MINUTE} unsigned requests a minute to this trigger URL"
                        ),
                    ));
                }
                return Err(refused);
            }
        },
        Err(()) => {
            tracing::error!(job = %job.name, "the trigger URL's secret does not open with this node's key");
            return Err(Problem::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "this node cannot check the signature; every node needs the same secret_key_file",
            ));
        }
    };
    if LIMITER.check_key(&id).is_err() {
        return Err(Problem::new(
            StatusCode::TOO_MANY_REQUESTS,
            format!("this trigger URL takes at most {PER_MINUTE} requests a minute"),
        ));
    }
    if matches!(signed, Some(Signed::Legacy)) {
        tracing::warn!(job = %job.name, "a trigger URL was signed the old way (X-Bulwark-Signature): its callers should move to webhook-signature, which a replay cannot reuse");
    }
    refuse_when_stopped(&state, &job).await?;
    let key = match (idempotency_key(&headers)?, signed) {
        (Some(key), _) => Some(key),
        (None, Some(Signed::Standard(webhook_id))) => Some(webhook_id),
        (None, _) => None,
    };
    let body = trigger_body(&body)?;
    let actor = format!("hook:{}", job.name);
    start(
        &state,
        &job,
        &body,
        key.as_deref(),
        job.hook_when_paused == WhenPaused::Queue,
        &app::services::audit::Actor::named(&actor),
    )
    .await
}

/// A disabled job takes no run from its hook. A paused one — on its own, by a window on one
/// of its tags, or with everything — takes one only when its hook says `queue`, and the run
/// waits for the pause to end (claims leave paused jobs' runs alone); otherwise the caller is
/// told to come back.
async fn refuse_when_stopped(
    state: &AppState,
    job: &app::entities::job::Model,
) -> Result<(), Problem> {
    let conflict = |why: &str| Err(Problem::new(StatusCode::CONFLICT, why));
    if !job.enabled {
        return conflict("the job is disabled: its trigger URL starts nothing until it is enabled");
    }
    if job.hook_when_paused == WhenPaused::Queue {
        return Ok(());
    }
    let paused = job.paused || {
        let windows = maintenance::paused(&state.db, crate::clock::now()).await?;
        windows.all || windows.tagged.contains(&job.id)
    };
    if paused {
        return conflict(
            "the job is paused: try again after it is resumed (or set its trigger URL to queue runs while paused)",
        );
    }
    Ok(())
}

/// A trigger URL being made.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"secret": "a-long-random-string-the-caller-also-holds"}))]
pub struct NewHook {
    /// Callers must sign their requests with it (optional).
    #[serde(default)]
    pub secret: Option<String>,
    /// While the job is paused: `refuse` (409, the default) or `queue` (the run waits for the
    /// pause to end).
    #[serde(default)]
    pub when_paused: Option<String>,
}

/// What changes of a trigger URL that stays.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"when_paused": "queue"}))]
pub struct HookChange {
    /// While the job is paused: `refuse` (409) or `queue` (the run waits for the pause to end).
    pub when_paused: String,
}

/// The job's trigger URL as its admins see it.
#[derive(Debug, serde::Serialize, ToSchema)]
pub struct HookView {
    /// POST here (relative to the console's address).
    pub path: String,
    pub signed: bool,
    /// `refuse` or `queue`: what it does while the job is paused.
    pub when_paused: String,
}

impl From<Hook> for HookView {
    fn from(h: Hook) -> Self {
        HookView {
            path: h.path.unwrap_or_default(),
            signed: h.signed,
            when_paused: h.when_paused.as_str().to_string(),
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
    let when_paused = app::domain::job::WhenPaused::from_field(new.when_paused.as_deref())
        .map_err(app::api::AppError::from)?;
    let new = hooks::NewHook {
        secret: new.secret.as_deref(),
        when_paused,
    };
    let now = crate::clock::now();
    let hook = hooks::create(
        &state.db,
        &state.secret_key,
        &job,
        new,
        &caller.as_actor(),
        now,
    )
    .await?;
    Ok(Json(hook.into()))
}

/// Changes what the job's trigger URL does while the job is paused; the URL stays.
#[utoipa::path(patch, path = "/jobs/{name}/hook", tag = "jobs", params(("name" = String, Path)),
    request_body = HookChange,
    responses((status = 200, body = HookView), (status = 404, body = Problem),
        (status = 422, body = Problem)))]
pub async fn change(
    Admin(caller): Admin,
    State(state): State<AppState>,
    Path(name): Path<String>,
    super::ApiJson(change): super::ApiJson<HookChange>,
) -> Result<Json<HookView>, Problem> {
    let job = by_name(&state, &name).await?;
    let when_paused = app::domain::job::WhenPaused::from_field(Some(&change.when_paused))
        .map_err(app::api::AppError::from)?;
    let (who, now) = (caller.as_actor(), crate::clock::now());
    let Some(hook) = hooks::set_when_paused(&state.db, &job, when_paused, &who, now).await? else {
        return Err(Problem::not_found(app::t!("noun-trigger-url")));
    };
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
    hooks::remove(&state.db, &job, &caller.as_actor(), crate::clock::now()).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_webhooks_signatures_hold_inside_their_window() {
        // A whsec_ key and the signature of "id.timestamp.body" under it, as Python's hmac
        // module computes it.
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let id = "msg_p5jXN8AQM9LWM0D4loKWxJek";
        let timestamp = "1614265330";
        let body = br#"{"test": 2432232314}"#;
        let signature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";
        let at = |seconds: i64| chrono::DateTime::from_timestamp(seconds, 0).unwrap();
        let holds =
            |sig: &str, now| standard_signature_holds(secret, body, id, timestamp, sig, now);
        assert!(holds(signature, at(1_614_265_330)));
        assert!(holds(
            &format!("v1,AAAA {signature}"),
            at(1_614_265_330 + 299)
        ));
        assert!(
            !holds(signature, at(1_614_265_330 + 301)),
            "outside the window"
        );
        assert!(!holds(
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OF=",
            at(1_614_265_330)
        ));
        assert!(!standard_signature_holds(
            secret,
            b"{}",
            id,
            timestamp,
            signature,
            at(1_614_265_330)
        ));
    }

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
