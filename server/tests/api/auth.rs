use app::entities::{audit_log, session, user};
use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter};
use serde_json::Value;

use crate::helpers::{ADMIN_PASSWORD, TestApp, VIEWER_PASSWORD};
use crate::on_both_backends;

async fn json(res: reqwest::Response) -> Value {
    let text = res.text().await.expect("body");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

async fn sign_in_sets_a_safe_cookie_and_identifies_the_user(app: TestApp) {
    let client = app.client();
    let res = app
        .call(
            &client,
            "login",
            &[
                ("username", "admin"),
                ("password", ADMIN_PASSWORD),
                ("next", "/runs"),
            ],
        )
        .await;
    assert_eq!(res.status(), 200);
    let cookie = res
        .headers()
        .get("set-cookie")
        .expect("a session cookie")
        .to_str()
        .unwrap()
        .to_string();
    assert!(cookie.starts_with("bulwark_session="), "{cookie}");
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax"),
        "{cookie}"
    );
    assert!(
        !cookie.contains("Secure"),
        "plain HTTP must not get a Secure cookie: {cookie}"
    );
    assert_eq!(res.headers().get("location").unwrap(), "/runs");

    let me = json(app.call(&client, "me", &[]).await).await;
    assert_eq!(me["username"], "admin");
    assert_eq!(me["role"], "admin");

    // The database holds the token's hash, never the token.
    let token = cookie
        .split(';')
        .next()
        .unwrap()
        .trim_start_matches("bulwark_session=");
    assert_eq!(
        session::Entity::find_by_id(token.to_string())
            .one(&app.db)
            .await
            .unwrap(),
        None
    );
    assert_eq!(session::Entity::find().count(&app.db).await.unwrap(), 1);
}
on_both_backends!(sign_in_sets_a_safe_cookie_and_identifies_the_user);

async fn behind_tls_the_cookie_is_secure(app: TestApp) {
    let res = app
        .client()
        .post(app.url("/api/login"))
        .header("x-forwarded-proto", "https")
        .form(&[("username", "admin"), ("password", ADMIN_PASSWORD)])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert!(
        res.headers()["strict-transport-security"]
            .to_str()
            .unwrap()
            .starts_with("max-age="),
        "HSTS over TLS"
    );
    let cookie = res.headers().get("set-cookie").unwrap().to_str().unwrap();
    assert!(cookie.contains("Secure"), "{cookie}");
    assert!(cookie.starts_with("__Host-bulwark_session="), "{cookie}");
    let token = cookie
        .split(';')
        .next()
        .unwrap()
        .trim_start_matches("__Host-bulwark_session=");
    // The prefixed cookie signs the browser in like the plain one.
    let me = app
        .client()
        .post(app.url("/api/me"))
        .header("cookie", format!("__Host-bulwark_session={token}"))
        .send()
        .await
        .unwrap();
    assert_eq!(me.status(), 200);
    // Plain HTTP gets no HSTS (a browser ignores it there, and it would pin a test host).
    let plain = app.client().get(app.url("/login")).send().await.unwrap();
    assert!(plain.headers().get("strict-transport-security").is_none());
}
on_both_backends!(behind_tls_the_cookie_is_secure);

async fn an_open_redirect_is_not_possible(app: TestApp) {
    let res = app
        .call(
            &app.client(),
            "login",
            &[
                ("username", "admin"),
                ("password", ADMIN_PASSWORD),
                ("next", "//evil.example/x"),
            ],
        )
        .await;
    assert_eq!(res.headers().get("location").unwrap(), "/");
}
on_both_backends!(an_open_redirect_is_not_possible);

async fn anonymous_callers_are_refused_everywhere(app: TestApp) {
    let client = app.client();
    let new_user: &[(&str, &str)] = &[
        ("username", "x"),
        ("password", "xxxxxxxxxx"),
        ("role", "admin"),
    ];
    for (endpoint, form) in [
        ("me", &[][..]),
        ("users/list", &[][..]),
        ("users/create", new_user),
        (
            "users/manage",
            &[("username", "admin"), ("action", "viewer")][..],
        ),
        (
            "users/reset-password",
            &[("username", "admin"), ("password", "xxxxxxxxxx")][..],
        ),
        (
            "account/password",
            &[("current", "x"), ("password", "xxxxxxxxxx")][..],
        ),
        ("account/sessions", &[][..]),
        ("account/locale", &[("locale", "zh-CN")][..]),
        ("account/sessions/end", &[("all", "true")][..]),
        ("dashboard/runs-per-hour", &[][..]),
        ("dashboard/overview", &[][..]),
    ] {
        let res = app.call(&client, endpoint, form).await;
        assert_eq!(res.status(), 401, "{endpoint}");
        assert_eq!(
            json(res).await,
            Value::String("Unauthenticated".into()),
            "{endpoint}"
        );
    }
    for page in [
        "/",
        "/jobs",
        "/runs",
        "/failed",
        "/traffic",
        "/notifications",
        "/settings",
        "/account",
    ] {
        let res = client.get(app.url(page)).send().await.unwrap();
        assert_eq!(res.status(), 303, "{page}");
        let location = res.headers().get("location").unwrap().to_str().unwrap();
        assert!(
            location.starts_with("/login?next=%2F"),
            "{page} → {location}"
        );
    }
    let login = client.get(app.url("/login")).send().await.unwrap();
    assert_eq!(login.status(), 200);
    assert!(login.text().await.unwrap().contains("Sign in"));
}
on_both_backends!(anonymous_callers_are_refused_everywhere);

async fn bad_sign_ins_are_explained_and_leave_no_session(app: TestApp) {
    let client = app.client();
    type Form<'a> = &'a [(&'a str, &'a str)];
    let cases: &[(Form, &str, &str)] = &[
        (
            &[("username", ""), ("password", "x")],
            "username",
            "username is required",
        ),
        (
            &[("username", "admin"), ("password", "")],
            "password",
            "password is required",
        ),
        (
            &[("username", "admin"), ("password", "wrong-password")],
            "password",
            "unknown username or wrong password",
        ),
        (
            &[("username", "nobody"), ("password", "wrong-password")],
            "password",
            "unknown username or wrong password",
        ),
    ];
    for (form, field, message) in cases {
        let res = app.call(&client, "login", form).await;
        assert_eq!(res.status(), 422, "{form:?}");
        assert!(res.headers().get("set-cookie").is_none());
        let body = json(res).await;
        assert_eq!(body["Invalid"]["field"], *field);
        assert_eq!(body["Invalid"]["message"], *message);
    }
    assert_eq!(session::Entity::find().count(&app.db).await.unwrap(), 0);
    let failures = audit_log::Entity::find()
        .filter(audit_log::Column::Action.eq("login.failed"))
        .count(&app.db)
        .await
        .unwrap();
    assert_eq!(
        failures, 2,
        "the two real attempts are audited; empty forms are not attempts"
    );
}
on_both_backends!(bad_sign_ins_are_explained_and_leave_no_session);

async fn repeated_failures_lock_the_username(app: TestApp) {
    let client = app.client();
    for _ in 0..5 {
        let res = app
            .call(
                &client,
                "login",
                &[("username", "admin"), ("password", "guess-guess")],
            )
            .await;
        assert_eq!(res.status(), 422);
    }
    // Even the right password is refused while locked, and the message says for how long.
    let res = app
        .call(
            &client,
            "login",
            &[("username", "admin"), ("password", ADMIN_PASSWORD)],
        )
        .await;
    assert_eq!(res.status(), 429);
    let body = json(res).await;
    let message = body["TooManyAttempts"].as_str().unwrap();
    assert!(message.contains("try again in 15 minute"), "{message}");
    assert_eq!(session::Entity::find().count(&app.db).await.unwrap(), 0);

    // Other accounts are not locked by someone guessing at `admin`.
    app.signed_in("viewer", VIEWER_PASSWORD).await;
}
on_both_backends!(repeated_failures_lock_the_username);

async fn viewers_read_and_admins_change(app: TestApp) {
    let viewer = app.signed_in("viewer", VIEWER_PASSWORD).await;
    let listed = json(app.call(&viewer, "users/list", &[]).await).await;
    assert_eq!(listed.as_array().unwrap().len(), 2);
    let res = app
        .call(
            &viewer,
            "users/create",
            &[
                ("username", "eve"),
                ("password", "eve-password"),
                ("role", "admin"),
            ],
        )
        .await;
    assert_eq!(res.status(), 403);
    assert_eq!(
        json(res).await,
        serde_json::json!({"Forbidden": "add users"})
    );
    for (endpoint, form) in [
        (
            "users/manage",
            &[("username", "admin"), ("action", "viewer")][..],
        ),
        (
            "users/reset-password",
            &[("username", "admin"), ("password", "xxxxxxxxxx")][..],
        ),
    ] {
        let res = app.call(&viewer, endpoint, form).await;
        assert_eq!(res.status(), 403, "{endpoint}");
    }

    let admin = app.signed_in("admin", ADMIN_PASSWORD).await;
    let res = app
        .call(
            &admin,
            "users/create",
            &[
                ("username", "oncall"),
                ("password", "oncall-password"),
                ("role", "viewer"),
            ],
        )
        .await;
    assert_eq!(res.status(), 200);
    assert_eq!(json(res).await["role"], "viewer");

    // Bad input changes nothing and names the field.
    for (form, field) in [
        (
            [
                ("username", "oncall"),
                ("password", "another-password"),
                ("role", "viewer"),
            ],
            "username",
        ),
        (
            [
                ("username", "Bad Name"),
                ("password", "another-password"),
                ("role", "viewer"),
            ],
            "username",
        ),
        (
            [
                ("username", "newbie"),
                ("password", "short"),
                ("role", "viewer"),
            ],
            "password",
        ),
        (
            [
                ("username", "newbie"),
                ("password", "long-enough"),
                ("role", "root"),
            ],
            "role",
        ),
    ] {
        let res = app.call(&admin, "users/create", &form).await;
        assert_eq!(res.status(), 422, "{form:?}");
        assert_eq!(json(res).await["Invalid"]["field"], field, "{form:?}");
    }
    assert_eq!(user::Entity::find().count(&app.db).await.unwrap(), 3);
    let audited = audit_log::Entity::find()
        .filter(audit_log::Column::Action.eq("user.created"))
        .all(&app.db)
        .await
        .unwrap();
    assert_eq!(audited.len(), 1);
    assert_eq!(
        (audited[0].actor.as_str(), audited[0].subject.as_str()),
        ("admin", "oncall")
    );
}
on_both_backends!(viewers_read_and_admins_change);

async fn cross_site_posts_are_refused(app: TestApp) {
    let client = app.client();
    for (header, value) in [
        ("origin", "https://evil.example"),
        ("sec-fetch-site", "cross-site"),
    ] {
        let res = client
            .post(app.url("/api/login"))
            .header(header, value)
            .form(&[("username", "admin"), ("password", ADMIN_PASSWORD)])
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 403, "{header}: {value}");
        assert!(res.headers().get("set-cookie").is_none());
    }
    let same_origin = client
        .post(app.url("/api/login"))
        .header("origin", format!("http://{}", app.addr))
        .form(&[("username", "admin"), ("password", ADMIN_PASSWORD)])
        .send()
        .await
        .unwrap();
    assert_eq!(same_origin.status(), 200);
}
on_both_backends!(cross_site_posts_are_refused);

async fn sign_out_ends_the_session_for_good(app: TestApp) {
    let client = app.client();
    let res = app
        .call(
            &client,
            "login",
            &[("username", "admin"), ("password", ADMIN_PASSWORD)],
        )
        .await;
    let cookie = res.headers().get("set-cookie").unwrap().to_str().unwrap();
    let pair = cookie.split(';').next().unwrap().to_string();

    let res = app.call(&client, "logout", &[]).await;
    assert_eq!(res.status(), 200);
    assert!(
        res.headers()
            .get("set-cookie")
            .unwrap()
            .to_str()
            .unwrap()
            .contains("Max-Age=0")
    );

    // Replaying the old cookie does not work: the session row is gone.
    let replay = app
        .client()
        .post(app.url("/api/me"))
        .header("cookie", pair)
        .send()
        .await
        .unwrap();
    assert_eq!(replay.status(), 401);
    assert_eq!(session::Entity::find().count(&app.db).await.unwrap(), 0);
}
on_both_backends!(sign_out_ends_the_session_for_good);

async fn expired_sessions_are_refused(app: TestApp) {
    let admin = user::Entity::find()
        .filter(user::Column::Username.eq("admin"))
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    let token = app::services::sessions::create(
        &app.db,
        admin.id,
        chrono::Duration::hours(1),
        &Default::default(),
        chrono::Utc::now() - chrono::Duration::hours(2),
    )
    .await
    .unwrap();
    let res = app
        .client()
        .post(app.url("/api/me"))
        .header("cookie", format!("bulwark_session={token}"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
}
on_both_backends!(expired_sessions_are_refused);

/// The tests below speak for several clients through one socket, as a proxy on 127.0.0.1
/// would.
fn behind_a_local_proxy(config: &mut server::config::Config, _: &mut crate::helpers::Workers) {
    config.trusted_proxies = vec!["127.0.0.1".into()];
}

async fn sign_in_from(app: &TestApp, address: &str, password: &str) -> reqwest::Response {
    app.client()
        .post(app.url("/api/login"))
        .header("x-forwarded-for", address)
        .form(&[("username", "admin"), ("password", password)])
        .send()
        .await
        .expect("request")
}

async fn a_burst_of_guesses_reaches_the_hash_only_as_often_as_the_limit(app: TestApp) {
    use app::services::{login, passwords};

    let guesses = (0..50).map(|i| {
        let app = &app;
        async move {
            sign_in_from(app, "203.0.113.9", &format!("guess-{i}"))
                .await
                .status()
        }
    });
    let statuses = futures_util::future::join_all(guesses).await;
    let wrong = statuses.iter().filter(|s| s.as_u16() == 422).count();
    let refused = statuses.iter().filter(|s| s.as_u16() == 429).count();
    assert_eq!(wrong + refused, 50, "{statuses:?}");
    // Every attempt is written before it is checked, so the parallel ones see each other.
    let verified = audit_log::Entity::find()
        .filter(audit_log::Column::Action.eq(login::ACTION_FAILED))
        .count(&app.db)
        .await
        .unwrap();
    assert_eq!(verified as usize, wrong);
    assert!(
        wrong as u64 <= login::MAX_FAILURES_PER_NAME_AND_IP,
        "{wrong} guesses were checked"
    );
    // Memory: never more hashes at once than cores (19 MiB each).
    assert!(passwords::peak_parallel() <= passwords::max_parallel());

    // Racing attempts may each see more of the others than came before them, so fewer than
    // the limit can have been checked; one at a time the rest of the limit is used up ...
    let mut checked = verified;
    while checked < login::MAX_FAILURES_PER_NAME_AND_IP {
        let res = sign_in_from(&app, "203.0.113.9", "one-more-guess").await;
        assert_eq!(res.status(), 422, "after {checked} checked guesses");
        checked += 1;
    }
    // ... and then the guesser is locked out, even with the right password ...
    assert_eq!(
        sign_in_from(&app, "203.0.113.9", ADMIN_PASSWORD)
            .await
            .status(),
        429
    );
    // ... and a client cannot escape by writing its own X-Forwarded-For: the proxy's entry,
    // the right-most, is the one believed.
    assert_eq!(
        sign_in_from(&app, "198.51.100.1, 203.0.113.9", ADMIN_PASSWORD)
            .await
            .status(),
        429
    );
    // The owner, elsewhere, signs in.
    assert_eq!(
        sign_in_from(&app, "198.51.100.20", ADMIN_PASSWORD)
            .await
            .status(),
        200
    );
}
on_both_backends!(
    a_burst_of_guesses_reaches_the_hash_only_as_often_as_the_limit,
    super::behind_a_local_proxy
);

/// Rows of sign-in attempts on `admin` whose password was checked and failed.
async fn checked_failures(app: &TestApp) -> u64 {
    audit_log::Entity::find()
        .filter(audit_log::Column::Action.eq(app::services::login::ACTION_FAILED))
        .filter(audit_log::Column::Subject.eq("admin"))
        .count(&app.db)
        .await
        .unwrap()
}

async fn a_crowd_spends_the_names_budget_and_the_owner_still_signs_in(app: TestApp) {
    use app::services::{login, passwords};
    // Where the owner usually signs in from.
    let usual = "192.0.2.50";
    assert_eq!(
        sign_in_from(&app, usual, ADMIN_PASSWORD).await.status(),
        200
    );

    // 300 guessers at once: half on their own IPv4 address, half rotating within one /64.
    let crowd = (0..300).map(|i| {
        let app = &app;
        async move {
            let address = if i % 2 == 0 {
                format!("198.18.{}.{}", i / 200, i % 200 + 1)
            } else {
                format!("2001:db8:1:2::{:x}", i + 1)
            };
            sign_in_from(app, &address, &format!("guess-{i}"))
                .await
                .status()
                .as_u16()
        }
    });
    let owner = async {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        sign_in_from(&app, usual, ADMIN_PASSWORD)
            .await
            .status()
            .as_u16()
    };
    let (statuses, owner) = tokio::join!(futures_util::future::join_all(crowd), owner);
    assert_eq!(
        owner, 200,
        "the owner signs in from the usual address during the flood"
    );

    let checked = checked_failures(&app).await;
    assert!(
        checked <= login::NAME_BUDGET_PER_MINUTE,
        "{checked} guesses reached the hash"
    );
    let wrong = statuses.iter().filter(|s| **s == 422).count() as u64;
    let refused = statuses.iter().filter(|s| **s == 429).count();
    assert_eq!(
        (wrong, refused as u64 + wrong),
        (checked, 300),
        "{statuses:?}"
    );
    assert!(passwords::peak_parallel() <= passwords::max_parallel());
    // Racing attempts may each count more of the others than came before them, so fewer than
    // the budget may have been checked; one at a time, strangers spend the rest of it ...
    for i in checked..login::NAME_BUDGET_PER_MINUTE {
        let status = sign_in_from(&app, &format!("198.19.0.{}", i + 1), "late-guess").await;
        assert_eq!(status.status(), 422, "after {i} checked guesses");
    }
    // ... and then even a stranger's right password waits: it is not known from there.
    assert_eq!(
        sign_in_from(&app, "198.51.100.7", ADMIN_PASSWORD)
            .await
            .status(),
        429
    );
    // The /64 is one source: its rotations add up to one address's failures.
    let sources: std::collections::BTreeSet<Option<String>> = audit_log::Entity::find()
        .filter(audit_log::Column::Ip.like("2001:db8:1:2:%"))
        .all(&app.db)
        .await
        .unwrap()
        .into_iter()
        .map(|row| row.source)
        .collect();
    assert_eq!(sources, [Some("2001:db8:1:2::/64".to_string())].into());
}
on_both_backends!(
    a_crowd_spends_the_names_budget_and_the_owner_still_signs_in,
    super::behind_a_local_proxy
);

async fn the_current_password_is_guessed_no_faster_than_a_sign_in(app: TestApp) {
    let client = app.signed_in("viewer", VIEWER_PASSWORD).await;
    let change = |current: String| {
        let client = &client;
        let app = &app;
        async move {
            app.call(
                client,
                "account/password",
                &[("current", &current), ("password", "a-brand-new-password")],
            )
            .await
            .status()
            .as_u16()
        }
    };
    for i in 0..5 {
        assert_eq!(change(format!("guess-{i}")).await, 422);
    }
    assert_eq!(
        change(VIEWER_PASSWORD.to_string()).await,
        429,
        "locked like a sign-in, even with the right password"
    );
    // Nothing changed: the old password still signs in elsewhere.
    let viewer = user::Entity::find()
        .filter(user::Column::Username.eq("viewer"))
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    assert!(
        app::services::passwords::verify(viewer.password_hash, VIEWER_PASSWORD.into())
            .await
            .unwrap()
    );
}
on_both_backends!(the_current_password_is_guessed_no_faster_than_a_sign_in);

async fn forwarded_for_is_ignored_without_trusted_proxies(app: TestApp) {
    // Without `trusted_proxies`, a client that invents a new address per guess is still the
    // socket's peer, and is locked after the limit.
    for i in 0..5 {
        let res = sign_in_from(&app, &format!("192.0.2.{i}"), "guess").await;
        assert_eq!(res.status(), 422);
    }
    let res = sign_in_from(&app, "192.0.2.99", ADMIN_PASSWORD).await;
    assert_eq!(res.status(), 429);
    let ips: Vec<Option<String>> = audit_log::Entity::find()
        .all(&app.db)
        .await
        .unwrap()
        .into_iter()
        .map(|row| row.ip)
        .collect();
    assert!(
        ips.iter().all(|ip| ip.as_deref() == Some("127.0.0.1")),
        "{ips:?}"
    );
}
on_both_backends!(forwarded_for_is_ignored_without_trusted_proxies);

async fn a_megabyte_of_username_is_refused_cleanly(app: TestApp) {
    let name = "a".repeat(1 << 20);
    let res = app
        .call(
            &app.client(),
            "login",
            &[("username", name.as_str()), ("password", "guess")],
        )
        .await;
    assert_eq!(res.status(), 422);
    let row = audit_log::Entity::find()
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    assert!(row.subject.chars().count() <= 64, "{}", row.subject.len());
}
on_both_backends!(a_megabyte_of_username_is_refused_cleanly);
