//! Accounts in the browser: changing one's own password, one's sessions, and what admins do on
//! Settings → Users — with the rule that an enabled administrator always remains.

use app::entities::{audit_log, session};
use chrono::Utc;
use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter, sea_query::Expr};
use serde_json::Value;

use crate::helpers::{ADMIN_PASSWORD, TestApp, VIEWER_PASSWORD};
use crate::on_both_backends;

async fn json(res: reqwest::Response) -> Value {
    let text = res.text().await.expect("body");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

async fn status(app: &TestApp, client: &reqwest::Client, endpoint: &str) -> u16 {
    app.call(client, endpoint, &[]).await.status().as_u16()
}

async fn audited(app: &TestApp, action: &str) -> u64 {
    audit_log::Entity::find()
        .filter(audit_log::Column::Action.eq(action))
        .count(&app.db)
        .await
        .unwrap()
}

async fn a_password_change_needs_the_current_one_and_ends_the_other_sessions(app: TestApp) {
    let laptop = app.signed_in("viewer", VIEWER_PASSWORD).await;
    let phone = app.signed_in("viewer", VIEWER_PASSWORD).await;

    let wrong = app
        .call(
            &laptop,
            "account/password",
            &[("current", "not-it-at-all"), ("password", "a-new-password")],
        )
        .await;
    assert_eq!(wrong.status(), 422);
    assert_eq!(json(wrong).await["Invalid"]["field"], "current");
    let short = app
        .call(
            &laptop,
            "account/password",
            &[("current", VIEWER_PASSWORD), ("password", "short")],
        )
        .await;
    assert_eq!(short.status(), 422);
    assert_eq!(json(short).await["Invalid"]["field"], "password");
    assert_eq!(status(&app, &phone, "me").await, 200, "nothing changed yet");

    let changed = app
        .call(
            &laptop,
            "account/password",
            &[("current", VIEWER_PASSWORD), ("password", "a-new-password")],
        )
        .await;
    assert_eq!(changed.status(), 200);
    assert_eq!(status(&app, &laptop, "me").await, 200, "this session stays");
    assert_eq!(status(&app, &phone, "me").await, 401, "the other one ended");
    let old = app
        .call(
            &app.client(),
            "login",
            &[("username", "viewer"), ("password", VIEWER_PASSWORD)],
        )
        .await;
    assert_eq!(old.status(), 422);
    app.signed_in("viewer", "a-new-password").await;
    assert_eq!(audited(&app, "user.password_changed").await, 1);
}
on_both_backends!(a_password_change_needs_the_current_one_and_ends_the_other_sessions);

async fn people_see_their_sessions_and_end_them(app: TestApp) {
    let laptop = app.signed_in("viewer", VIEWER_PASSWORD).await;
    let phone = app.signed_in("viewer", VIEWER_PASSWORD).await;
    let tablet = app.signed_in("viewer", VIEWER_PASSWORD).await;
    let admin = app.signed_in("admin", ADMIN_PASSWORD).await;

    let listed = json(app.call(&laptop, "account/sessions", &[]).await).await;
    let rows = listed.as_array().unwrap();
    assert_eq!(rows.len(), 3, "only the viewer's own: {listed}");
    assert_eq!(rows.iter().filter(|r| r["current"] == true).count(), 1);
    assert!(rows.iter().all(|r| r["ip"] == "127.0.0.1"));
    let other = rows.iter().find(|r| r["current"] == false).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();

    // Someone else's session cannot be ended by naming it.
    let admin_session = json(app.call(&admin, "account/sessions", &[]).await).await[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let res = app
        .call(&laptop, "account/sessions/end", &[("id", &admin_session)])
        .await;
    assert_eq!(json(res).await, 0);
    assert_eq!(status(&app, &admin, "me").await, 200);

    let res = app
        .call(&laptop, "account/sessions/end", &[("id", &other)])
        .await;
    assert_eq!(json(res).await, 1);
    let alive = [
        status(&app, &phone, "me").await,
        status(&app, &tablet, "me").await,
    ];
    assert!(alive.contains(&401) && alive.contains(&200), "{alive:?}");

    let res = app
        .call(&laptop, "account/sessions/end", &[("all", "true")])
        .await;
    assert_eq!(json(res).await, 1);
    assert_eq!(status(&app, &phone, "me").await, 401);
    assert_eq!(status(&app, &tablet, "me").await, 401);
    assert_eq!(status(&app, &laptop, "me").await, 200);
}
on_both_backends!(people_see_their_sessions_and_end_them);

async fn a_reset_password_must_be_changed_before_anything_else(app: TestApp) {
    let admin = app.signed_in("admin", ADMIN_PASSWORD).await;
    let viewer = app.signed_in("viewer", VIEWER_PASSWORD).await;
    let res = app
        .call(
            &admin,
            "users/reset-password",
            &[("username", "viewer"), ("password", "temporary-password")],
        )
        .await;
    assert_eq!(res.status(), 200);
    assert_eq!(
        status(&app, &viewer, "me").await,
        401,
        "their sessions ended"
    );
    let users = json(app.call(&admin, "users/list", &[]).await).await;
    let row = users
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["username"] == "viewer")
        .unwrap();
    assert_eq!(row["state"], "must_change_password");

    let viewer = app.signed_in("viewer", "temporary-password").await;
    assert_eq!(status(&app, &viewer, "me").await, 200);
    let res = app.call(&viewer, "users/list", &[]).await;
    assert_eq!(res.status(), 403);
    assert_eq!(
        json(res).await,
        Value::String("PasswordChangeRequired".into())
    );
    let page = viewer.get(app.url("/jobs")).send().await.unwrap();
    assert_eq!(page.status(), 303);
    assert_eq!(page.headers()["location"], "/account");
    let page = viewer.get(app.url("/account")).send().await.unwrap();
    assert_eq!(page.status(), 200);

    let res = app
        .call(
            &viewer,
            "account/password",
            &[
                ("current", "temporary-password"),
                ("password", "my-own-password"),
            ],
        )
        .await;
    assert_eq!(res.status(), 200);
    assert_eq!(status(&app, &viewer, "users/list").await, 200);
    assert_eq!(audited(&app, "user.password_reset").await, 1);
}
on_both_backends!(a_reset_password_must_be_changed_before_anything_else);

async fn admins_manage_accounts_and_one_enabled_admin_always_remains(app: TestApp) {
    let admin = app.signed_in("admin", ADMIN_PASSWORD).await;
    let manage = |username: &'static str, action: &'static str| {
        let app = &app;
        let admin = &admin;
        async move {
            app.call(
                admin,
                "users/manage",
                &[("username", username), ("action", action)],
            )
            .await
        }
    };
    for action in ["viewer", "disable", "delete"] {
        let res = manage("admin", action).await;
        assert_eq!(res.status(), 409, "{action}");
        let message = json(res).await["Conflict"].as_str().unwrap().to_string();
        assert!(message.contains("last enabled administrator"), "{message}");
    }
    let res = manage("admin", "promote").await;
    assert_eq!(res.status(), 422);
    assert_eq!(manage("nobody", "disable").await.status(), 404);

    // Disabling ends the viewer's sessions and stops their sign-in, with the same answer as
    // a wrong password.
    let viewer = app.signed_in("viewer", VIEWER_PASSWORD).await;
    assert_eq!(json(manage("viewer", "disable").await).await, true);
    assert_eq!(json(manage("viewer", "disable").await).await, false);
    assert_eq!(status(&app, &viewer, "me").await, 401);
    let res = app
        .call(
            &app.client(),
            "login",
            &[("username", "viewer"), ("password", VIEWER_PASSWORD)],
        )
        .await;
    assert_eq!(res.status(), 422);
    assert_eq!(json(manage("viewer", "enable").await).await, true);
    let viewer = app.signed_in("viewer", VIEWER_PASSWORD).await;

    // With a second admin, the first may step down; the second is then the last.
    assert_eq!(json(manage("viewer", "admin").await).await, true);
    let res = app
        .call(
            &viewer,
            "users/manage",
            &[("username", "admin"), ("action", "viewer")],
        )
        .await;
    assert_eq!(res.status(), 200);
    let res = app
        .call(
            &viewer,
            "users/manage",
            &[("username", "viewer"), ("action", "delete")],
        )
        .await;
    assert_eq!(res.status(), 409);
    assert_eq!(
        status(&app, &admin, "users/list").await,
        200,
        "a demoted admin still reads"
    );
    let res = app
        .call(
            &admin,
            "users/manage",
            &[("username", "viewer"), ("action", "end-sessions")],
        )
        .await;
    assert_eq!(res.status(), 403, "and no longer changes");
    let res = app
        .call(
            &viewer,
            "users/manage",
            &[("username", "admin"), ("action", "delete")],
        )
        .await;
    assert_eq!(res.status(), 200);
    assert_eq!(
        status(&app, &admin, "me").await,
        401,
        "a deleted user's sessions end"
    );
    for action in [
        "user.viewer",
        "user.disable",
        "user.enable",
        "user.admin",
        "user.delete",
    ] {
        assert!(audited(&app, action).await >= 1, "{action}");
    }
}
on_both_backends!(admins_manage_accounts_and_one_enabled_admin_always_remains);

async fn an_idle_session_expires(app: TestApp) {
    let viewer = app.signed_in("viewer", VIEWER_PASSWORD).await;
    assert_eq!(status(&app, &viewer, "me").await, 200);
    // Eight hours without a request (the default idle limit), well within the absolute one.
    session::Entity::update_many()
        .col_expr(
            session::Column::LastSeenAt,
            Expr::value(Utc::now() - chrono::Duration::hours(8) - chrono::Duration::minutes(1)),
        )
        .exec(&app.db)
        .await
        .unwrap();
    assert_eq!(status(&app, &viewer, "me").await, 401);
}
on_both_backends!(an_idle_session_expires);
