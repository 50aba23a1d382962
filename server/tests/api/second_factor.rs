//! A second factor for local accounts: enrolment, sign-in with a code (each taken once), a
//! wrong code counted by the sign-in limits, recovery codes used once, the seed sealed and
//! covered by a rekey, and `require_totp_for_admins`.

use app::entities::{audit_log, user};
use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter};
use serde_json::Value;

use crate::helpers::{ADMIN_PASSWORD, TESTER, TestApp, Workers};
use crate::on_both_backends;
use server::config::Config;

async fn json(res: reqwest::Response) -> (u16, Value) {
    let status = res.status().as_u16();
    let text = res.text().await.expect("body");
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// The code an authenticator app holding `secret` shows `ahead` seconds from now.
fn code(secret: &str, ahead: i64) -> String {
    let totp = totp_rs::Builder::new()
        .with_secret(totp_rs::Secret::try_from_base32(secret).expect("base32"))
        .build()
        .expect("a TOTP");
    let at = (chrono::Utc::now().timestamp() + ahead) as u64;
    totp.generate(at).to_string()
}

/// Enrols the signed-in `client`: the seed, the code that turned it on, the recovery codes.
async fn enrol(app: &TestApp, client: &reqwest::Client) -> (String, String, Vec<String>) {
    let (status, enrolling) =
        json(app.call(client, "account/second-factor/begin", &[]).await).await;
    assert_eq!(status, 200, "{enrolling}");
    assert!(enrolling["qr_svg"].as_str().unwrap().contains("<svg"));
    let link = enrolling["link"].as_str().unwrap();
    assert!(link.starts_with("otpauth://totp/Bulwark:"), "{link}");
    let secret = enrolling["secret"].as_str().unwrap().to_string();
    let right = code(&secret, 0);
    let wrong = if right == "000000" {
        "111111"
    } else {
        "000000"
    };
    let (status, _) = json(
        app.call(client, "account/second-factor/confirm", &[("code", wrong)])
            .await,
    )
    .await;
    assert_eq!(status, 422, "a wrong first code turns nothing on");
    let (status, codes) = json(
        app.call(client, "account/second-factor/confirm", &[("code", &right)])
            .await,
    )
    .await;
    assert_eq!(status, 200, "{codes}");
    let codes: Vec<String> = serde_json::from_value(codes).unwrap();
    assert_eq!(codes.len(), 10);
    (secret, right, codes)
}

async fn login(app: &TestApp, code: Option<&str>) -> (u16, Value) {
    let mut form = vec![("username", "admin"), ("password", ADMIN_PASSWORD)];
    if let Some(code) = code {
        form.push(("code", code));
    }
    json(app.call(&app.client(), "login", &form).await).await
}

async fn a_code_signs_in_once_and_wrong_ones_are_counted(app: TestApp) {
    let admin = app.signed_in("admin", ADMIN_PASSWORD).await;
    let (_, state) = json(app.call(&admin, "account/second-factor", &[]).await).await;
    assert_eq!(
        (state["on"].as_bool(), state["local"].as_bool()),
        (Some(false), Some(true))
    );
    let (secret, first, recovery) = enrol(&app, &admin).await;
    let (_, state) = json(app.call(&admin, "account/second-factor", &[]).await).await;
    assert_eq!(state["on"], true);

    // Sealed: the database never holds the seed as it is.
    let account = user::Entity::find()
        .filter(user::Column::Username.eq("admin"))
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    let sealed = account.totp_seed.clone().expect("a seed");
    assert!(!sealed.contains(&secret));

    // The password alone is not enough, and says what is missing.
    let (status, error) = login(&app, None).await;
    assert_eq!(status, 422, "{error}");
    assert!(error.to_string().contains("code"), "{error}");
    // The code enrolment just took is spent; the next one signs in, once.
    let (status, _) = login(&app, Some(&first)).await;
    assert_eq!(status, 422, "a code is taken once");
    let next = code(&secret, 30);
    assert_eq!(login(&app, Some(&next)).await.0, 200);
    assert_eq!(login(&app, Some(&next)).await.0, 422);

    // A recovery code signs in once, however it is typed.
    let typed = recovery[0].to_uppercase().replace('-', " ");
    assert_eq!(login(&app, Some(&typed)).await.0, 200);
    assert_eq!(login(&app, Some(&recovery[0])).await.0, 422);
    assert_eq!(login(&app, Some(&recovery[1])).await.0, 200);

    // Wrong codes count like wrong passwords: the pair's limit locks it.
    let mut statuses = Vec::new();
    for _ in 0..8 {
        statuses.push(login(&app, Some("not-a-code")).await.0);
    }
    assert!(statuses.starts_with(&[422, 422, 422]), "{statuses:?}");
    assert_eq!(statuses.last(), Some(&429), "{statuses:?}");
    let needs_code = audit_log::Entity::find()
        .filter(audit_log::Column::Action.eq("login.needs_code"))
        .count(&app.db)
        .await
        .unwrap();
    assert_eq!(needs_code, 1);

    // A rekey seals the seed again: the new key opens it, the old one no longer does.
    let new_key = app::services::secrets::SecretKey::generate();
    app::services::sealed::rekey(
        &app.db,
        &app.secret_key,
        &new_key,
        &TESTER,
        chrono::Utc::now(),
    )
    .await
    .expect("rekey");
    let account = user::Entity::find_by_id(account.id)
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    let resealed = account.totp_seed.expect("still a seed");
    let context = app::services::second_factor::context(account.id);
    assert_eq!(new_key.open_value(&context, &resealed), Some(secret));
    assert_eq!(app.secret_key.open_value(&context, &resealed), None);
}
on_both_backends!(a_code_signs_in_once_and_wrong_ones_are_counted);

fn admins_need_one(config: &mut Config, _: &mut Workers) {
    config.require_totp_for_admins = true;
}

async fn admins_without_a_second_factor_may_only_add_one(app: TestApp) {
    let admin = app.signed_in("admin", ADMIN_PASSWORD).await;
    assert_eq!(app.call(&admin, "jobs/list", &[]).await.status(), 403);
    let page = admin.get(app.url("/jobs")).send().await.unwrap();
    assert_eq!(page.status(), 303);
    assert_eq!(page.headers()["location"], "/account");
    let (_, state) = json(app.call(&admin, "account/second-factor", &[]).await).await;
    assert_eq!(state["required"], true);
    // Viewers are not asked.
    let viewer = app
        .signed_in("viewer", crate::helpers::VIEWER_PASSWORD)
        .await;
    assert_eq!(app.call(&viewer, "jobs/list", &[]).await.status(), 200);

    enrol(&app, &admin).await;
    assert_eq!(app.call(&admin, "jobs/list", &[]).await.status(), 200);
    let (status, _) = json(
        app.call(
            &admin,
            "account/second-factor/off",
            &[("password", ADMIN_PASSWORD)],
        )
        .await,
    )
    .await;
    assert_eq!(
        status, 409,
        "an administrator keeps it where it is required"
    );
}
on_both_backends!(
    admins_without_a_second_factor_may_only_add_one,
    super::admins_need_one
);
