//! Sign-in by a trusted proxy's header (`auth_header`): believed from the addresses in
//! `auth_header_proxies` only — the test's own 127.0.0.1 — and ignored from 127.0.0.2, another
//! loopback address standing for any other client, even though `trusted_proxies` lists it.

use app::entities::user;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use serde_json::Value;

use crate::helpers::{TestApp, Workers};
use crate::on_both_backends;
use server::config::Config;

fn behind_a_proxy(config: &mut Config, _: &mut Workers) {
    config.auth_header = Some("X-Remote-User".into());
    config.auth_groups_header = Some("X-Remote-Groups".into());
    config.auth_header_proxies = vec!["127.0.0.1/32".into()];
    config.auth_header_admin_groups = vec!["ops".into()];
    config.trusted_proxies = vec!["127.0.0.0/8".into()];
}

/// A client whose requests leave from `ip`.
fn from(ip: [u8; 4]) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(std::net::IpAddr::from(ip))
        .redirect(reqwest::redirect::Policy::none())
        .timeout(std::time::Duration::from_secs(60))
        .build()
        .expect("client")
}

async fn me(app: &TestApp, client: &reqwest::Client, headers: &[(&str, &str)]) -> (u16, Value) {
    let mut request = client.post(app.url("/api/me"));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let res = request.send().await.expect("request");
    let status = res.status().as_u16();
    let body = res.text().await.unwrap();
    (status, serde_json::from_str(&body).unwrap_or(Value::Null))
}

async fn account(app: &TestApp, name: &str) -> Option<user::Model> {
    user::Entity::find()
        .filter(user::Column::Username.eq(name))
        .one(&app.db)
        .await
        .unwrap()
}

async fn the_header_is_believed_from_listed_proxies_only(app: TestApp) {
    let proxy = from([127, 0, 0, 1]);
    let stranger = from([127, 0, 0, 2]);

    // Anyone else's header means nothing, and makes nobody.
    let (status, _) = me(&app, &stranger, &[("X-Remote-User", "mallory")]).await;
    assert_eq!(status, 401);
    let (status, _) = me(&app, &stranger, &[("X-Remote-User", "admin")]).await;
    assert_eq!(status, 401, "not even an existing name");
    assert!(account(&app, "mallory").await.is_none());

    // From the proxy: an unknown person gets the default role, and an account.
    let (status, who) = me(&app, &proxy, &[("X-Remote-User", "quinn")]).await;
    assert_eq!(status, 200);
    assert_eq!(
        (who["username"].as_str(), who["role"].as_str()),
        (Some("quinn"), Some("viewer"))
    );
    assert_eq!(account(&app, "quinn").await.unwrap().sign_in, "header");
    // Groups map like a provider's.
    let (_, who) = me(
        &app,
        &proxy,
        &[("X-Remote-User", "rita"), ("X-Remote-Groups", "dev, ops")],
    )
    .await;
    assert_eq!(who["role"], "admin");
    let (_, who) = me(
        &app,
        &proxy,
        &[("X-Remote-User", "rita"), ("X-Remote-Groups", "dev")],
    )
    .await;
    assert_eq!(who["role"], "viewer", "re-evaluated on every request");
    // An existing account is the one named; without a groups header its role stands.
    let (_, who) = me(&app, &proxy, &[("X-Remote-User", "viewer")]).await;
    assert_eq!(
        (who["username"].as_str(), who["role"].as_str()),
        (Some("viewer"), Some("viewer"))
    );
    // A disabled person stays out whatever the proxy says.
    let admin = app.signed_in("admin", crate::helpers::ADMIN_PASSWORD).await;
    let res = app
        .call(
            &admin,
            "users/manage",
            &[("username", "quinn"), ("action", "disable")],
        )
        .await;
    assert_eq!(res.status(), 200);
    let (status, _) = me(&app, &proxy, &[("X-Remote-User", "quinn")]).await;
    assert_eq!(status, 401);
    // The proxy's header gets the console's pages too, with no cookie.
    let page = proxy
        .get(app.url("/jobs"))
        .header("X-Remote-User", "rita")
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
}
on_both_backends!(
    the_header_is_believed_from_listed_proxies_only,
    super::behind_a_proxy
);

fn behind_a_proxy_for_groups_only(config: &mut Config, workers: &mut Workers) {
    behind_a_proxy(config, workers);
    config.auth_header_default_role = app::domain::sign_in::DefaultRole::None;
}

async fn no_default_role_refuses_unknown_people(app: TestApp) {
    let proxy = from([127, 0, 0, 1]);
    let (status, _) = me(&app, &proxy, &[("X-Remote-User", "sam")]).await;
    assert_eq!(status, 401);
    assert!(account(&app, "sam").await.is_none());
    let (status, who) = me(
        &app,
        &proxy,
        &[("X-Remote-User", "sam"), ("X-Remote-Groups", "ops")],
    )
    .await;
    assert_eq!((status, who["role"].as_str()), (200, Some("admin")));
}
on_both_backends!(
    no_default_role_refuses_unknown_people,
    super::behind_a_proxy_for_groups_only
);
