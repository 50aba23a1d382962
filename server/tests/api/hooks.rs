//! Trigger URLs against a caller that is not the one they were made for: a Standard Webhooks
//! signature is checked first and only inside its five minutes, a replay gets the run it
//! already made and not its values, junk has a bucket of its own so the signed caller still
//! gets through, a key reused with other values is refused, and a disabled or paused job starts
//! nothing.

use app::domain::api_token::Scope;
use base64::Engine;
use chrono::Utc;
use hmac::Mac;
use serde_json::{Value, json};

use crate::helpers::{TestApp, define};
use crate::on_both_backends;

const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/// `webhook-signature` for `body` sent as `id` at `timestamp`.
fn sign(id: &str, timestamp: i64, body: &str) -> String {
    let key = base64::engine::general_purpose::STANDARD
        .decode(SECRET.trim_start_matches("whsec_"))
        .unwrap();
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(&key).unwrap();
    mac.update(format!("{id}.{timestamp}.{body}").as_bytes());
    let signature = base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes());
    format!("v1,{signature}")
}

struct Hook<'a> {
    app: &'a TestApp,
    path: String,
    client: reqwest::Client,
}

impl Hook<'_> {
    async fn post(&self, id: &str, timestamp: i64, body: &str, signature: &str) -> (u16, Value) {
        let answer = self
            .client
            .post(self.app.url(&self.path))
            .header("content-type", "application/json")
            .header("webhook-id", id)
            .header("webhook-timestamp", timestamp.to_string())
            .header("webhook-signature", signature)
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        let status = answer.status().as_u16();
        (status, answer.json().await.unwrap_or(Value::Null))
    }

    async fn signed(&self, id: &str, body: &str) -> (u16, Value) {
        let now = Utc::now().timestamp();
        self.post(id, now, body, &sign(id, now, body)).await
    }
}

async fn hook_for<'a>(app: &'a TestApp, token: &str) -> Hook<'a> {
    make_hook(app, token, json!({ "secret": SECRET })).await.0
}

async fn a_signed_hook_holds_against_replays_junk_and_stopped_jobs(app: TestApp) {
    let token = crate::helpers::api_token(&app.db, "admin-api", Scope::Admin).await;
    let mut input = crate::helpers::noop_job("on-upload");
    input.parameters = "upload_id: string required".into();
    let job = define(&app.db, input).await;
    let hook = hook_for(&app, &token).await;
    let body = r#"{"params": {"upload_id": "u-1"}}"#;

    let (status, first) = hook.signed("msg_1", body).await;
    assert_eq!(status, 201, "{first}");
    assert_eq!(first["params"], json!({"upload_id": "u-1"}));
    // The same message again (a replay, or the sender's retry): the same run, no values.
    let (status, again) = hook.signed("msg_1", body).await;
    assert_eq!((status, &again["id"]), (200, &first["id"]));
    assert_eq!(again["params"], Value::Null);
    // The same id with other values is another request under a used key.
    let other = r#"{"params": {"upload_id": "u-2"}}"#;
    assert_eq!(hook.signed("msg_1", other).await.0, 422);

    // A signature older than five minutes, or made for another body, is refused.
    let stale = Utc::now().timestamp() - 301;
    let (status, _) = hook
        .post("msg_2", stale, body, &sign("msg_2", stale, body))
        .await;
    assert_eq!(status, 401);
    let now = Utc::now().timestamp();
    assert_eq!(
        hook.post("msg_2", now, other, &sign("msg_2", now, body))
            .await
            .0,
        401
    );

    // Junk fills its own bucket; the signed caller still gets through.
    let mut junk = Vec::new();
    for i in 0..40 {
        junk.push(
            hook.post(&format!("junk-{i}"), now, body, "v1,AAAA")
                .await
                .0,
        );
    }
    assert_eq!(junk.last(), Some(&429), "{junk:?}");
    assert!(junk.iter().take(25).all(|s| *s == 401), "{junk:?}");
    assert_eq!(hook.signed("msg_3", body).await.0, 201);

    // A paused job and a disabled one start nothing.
    app::services::maintenance::set_job_paused(
        &app.db,
        job.id,
        true,
        &crate::helpers::TESTER,
        Utc::now(),
    )
    .await
    .unwrap();
    assert_eq!(hook.signed("msg_4", body).await.0, 409);
    app::services::maintenance::set_job_paused(
        &app.db,
        job.id,
        false,
        &crate::helpers::TESTER,
        Utc::now(),
    )
    .await
    .unwrap();
    app::services::jobs::set_enabled(&app.db, job.id, false, &crate::helpers::TESTER, Utc::now())
        .await
        .unwrap();
    assert_eq!(hook.signed("msg_5", body).await.0, 409);
}
on_both_backends!(a_signed_hook_holds_against_replays_junk_and_stopped_jobs);

async fn a_trigger_url_is_kept_only_as_its_hash(app: TestApp) {
    use sea_orm::{ActiveModelTrait, EntityTrait, Set};
    let token = crate::helpers::api_token(&app.db, "admin-api", Scope::Admin).await;
    let job = define(&app.db, crate::helpers::noop_job("on-upload")).await;
    let hook = hook_for(&app, &token).await;
    let id = hook.path.trim_start_matches("/hooks/").to_string();
    let stored = app::entities::job::Entity::find_by_id(job.id)
        .one(&app.db)
        .await
        .unwrap()
        .unwrap()
        .hook_id
        .unwrap();
    assert_eq!(stored.len(), 64);
    assert!(!stored.contains(&id));
    let detail = reqwest::Client::new()
        .get(app.url("/api/v1/jobs/on-upload"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(!detail.contains(&id), "the id is shown once, never again");

    // An id an earlier version stored in plain is hashed at start-up and keeps working.
    let plain = "0123456789abcdef0123456789abcdef";
    app::entities::job::ActiveModel {
        id: Set(job.id),
        hook_id: Set(Some(plain.into())),
        hook_secret: Set(None),
        ..Default::default()
    }
    .update(&app.db)
    .await
    .unwrap();
    assert_eq!(
        app::services::hooks::hash_stored_ids(&app.db)
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        app::services::hooks::hash_stored_ids(&app.db)
            .await
            .unwrap(),
        0
    );
    let answer = reqwest::Client::new()
        .post(app.url(&format!("/hooks/{plain}")))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 201);
}
on_both_backends!(a_trigger_url_is_kept_only_as_its_hash);

/// Made through the API with `body`; the answer too.
async fn make_hook<'a>(app: &'a TestApp, token: &str, body: Value) -> (Hook<'a>, Value) {
    let client = reqwest::Client::new();
    let made: Value = client
        .post(app.url("/api/v1/jobs/on-upload/hook"))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let path = made["path"].as_str().unwrap().to_string();
    (Hook { app, path, client }, made)
}

impl Hook<'_> {
    async fn unsigned(&self) -> (u16, Value) {
        let answer = self
            .client
            .post(self.app.url(&self.path))
            .send()
            .await
            .unwrap();
        let status = answer.status().as_u16();
        (status, answer.json().await.unwrap_or(Value::Null))
    }
}

async fn change(app: &TestApp, token: &str, when_paused: &str) -> (u16, Value) {
    let answer = reqwest::Client::new()
        .patch(app.url("/api/v1/jobs/on-upload/hook"))
        .bearer_auth(token)
        .json(&json!({ "when_paused": when_paused }))
        .send()
        .await
        .unwrap();
    let status = answer.status().as_u16();
    (status, answer.json().await.unwrap_or(Value::Null))
}

/// While its job is paused — by a window over everything, or on its own — a trigger URL
/// refuses (409) unless it is set to queue; then it makes the run, which is not claimed until
/// the pause ends, while a run started by hand still runs through the pause. Changing the
/// setting keeps the URL.
async fn a_paused_job_queues_or_refuses_as_its_hook_says(app: TestApp) {
    use app::services::maintenance::{NewWindow, resume, schedule};
    use server::engine::{Engine, claim};
    let token = crate::helpers::api_token(&app.db, "admin-api", Scope::Admin).await;
    let job = define(&app.db, crate::helpers::noop_job("on-upload")).await;
    let (hook, made) = make_hook(&app, &token, json!({})).await;
    assert_eq!(made["when_paused"], "refuse", "{made}");
    let window = NewWindow {
        starts_at: Utc::now(),
        ends_at: None,
        reason: "database upgrade".into(),
        tag: None,
    };
    schedule(
        &app.db,
        window,
        &app::services::audit::Actor::named("admin"),
        Utc::now(),
    )
    .await
    .unwrap();
    let (status, refused) = hook.unsigned().await;
    assert_eq!(status, 409, "{refused}");

    let (status, bad) = change(&app, &token, "maybe").await;
    assert_eq!(status, 422, "{bad}");
    assert!(bad.to_string().contains("when_paused"), "{bad}");
    let (status, changed) = change(&app, &token, "queue").await;
    assert_eq!((status, &changed["when_paused"]), (200, &json!("queue")));
    let (status, queued) = hook.unsigned().await;
    assert_eq!(status, 201, "the same URL, now queueing: {queued}");
    // Another job's: runs of one job go one at a time, so this one's would wait behind the
    // queued run.
    let other = define(&app.db, crate::helpers::noop_job("by-hand")).await;
    let by_hand = app::services::runs::create_manual(&app.db, other.id, Utc::now())
        .await
        .unwrap();

    let node = Engine::new(app.db.clone(), crate::engine::engine_config("node-a")).shared();
    let claimed = claim::claim_due(&node, Utc::now(), 10).await.unwrap();
    let ids: Vec<i64> = claimed.iter().map(|c| c.run.id).collect();
    assert_eq!(
        ids,
        [by_hand.id],
        "only the run started by hand runs while paused"
    );

    resume(
        &app.db,
        &app::services::audit::Actor::named("admin"),
        Utc::now(),
    )
    .await
    .unwrap();
    app::services::maintenance::set_job_paused(
        &app.db,
        job.id,
        true,
        &crate::helpers::TESTER,
        Utc::now(),
    )
    .await
    .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let claimed = claim::claim_due(&node, Utc::now(), 10).await.unwrap();
    assert!(
        claimed
            .iter()
            .all(|c| Some(c.run.id) != queued["id"].as_i64()),
        "still paused, on its own"
    );
    app::services::maintenance::set_job_paused(
        &app.db,
        job.id,
        false,
        &crate::helpers::TESTER,
        Utc::now(),
    )
    .await
    .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let claimed = claim::claim_due(&node, Utc::now(), 10).await.unwrap();
    let ids: Vec<i64> = claimed.iter().map(|c| c.run.id).collect();
    assert!(
        ids.contains(&queued["id"].as_i64().unwrap()),
        "claimed once resumed: {ids:?}"
    );
}
on_both_backends!(a_paused_job_queues_or_refuses_as_its_hook_says);
