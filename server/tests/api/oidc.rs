//! Company sign-in against a real OpenID provider: the npm `oidc-provider` package (the
//! certified Node implementation) started once for the whole test process
//! (`end2end/oidc/provider.mjs`), and for the ID-token checks a stand-in provider in this file
//! that signs tokens wrong on purpose.

use std::io::BufRead;
use std::sync::OnceLock;

use app::entities::{audit_log, session, user};
use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter};
use serde_json::Value;

use crate::helpers::{ADMIN_PASSWORD, TestApp, Workers};
use crate::on_both_backends;
use server::config::Config;

pub const PASSWORD: &str = "provider-password";

/// The provider's issuer URL, starting it on first use. It stops when this process ends (its
/// standard input closes).
pub fn provider() -> &'static str {
    static ISSUER: OnceLock<(String, std::process::Child)> = OnceLock::new();
    &ISSUER
        .get_or_init(|| {
            let script =
                std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../end2end/oidc/provider.mjs");
            let mut child = std::process::Command::new("node")
                .arg(script)
                .env("OIDC_EXIT_WITH_STDIN", "1")
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .expect("start the OpenID provider (node end2end/oidc/provider.mjs; `make tools-test` installs it)");
            let stdout = child.stdout.take().expect("its stdout");
            let mut lines = std::io::BufReader::new(stdout).lines();
            let issuer = lines
                .by_ref()
                .map_while(Result::ok)
                .find_map(|line| line.strip_prefix("listening ").map(str::to_string))
                .expect("the provider says where it listens");
            // Read on for good: a provider that cannot write its warnings stops.
            std::thread::spawn(move || lines.for_each(drop));
            (issuer, child)
        })
        .0
}

/// One provider configured the way the docs show it, its secret in the vault.
fn company(config: &mut Config, _: &mut Workers) {
    config.oidc_issuer = Some(provider().to_string());
    config.oidc_client_id = Some("bulwark".into());
    config.oidc_client_secret = Some("${secret:OIDC_CLIENT_SECRET}".into());
    config.oidc_admin_groups = vec!["ops".into()];
    config.oidc_label = Some("Company".into());
}

fn company_only_groups(config: &mut Config, workers: &mut Workers) {
    company(config, workers);
    config.oidc_default_role = app::domain::sign_in::DefaultRole::None;
}

async fn with_secret(app: &TestApp) {
    app.set_secret("OIDC_CLIENT_SECRET", "bulwark-secret").await;
}

/// A person of their own at the provider for this test, in `groups`: tests run at once, and
/// each changes only its own people.
pub async fn person(prefix: &str, groups: &[&str]) -> String {
    let name = format!("{prefix}-{}", fastrand::u32(..));
    set_groups(&name, groups).await;
    name
}

async fn set_groups(name: &str, groups: &[&str]) {
    let res = reqwest::Client::new()
        .post(format!("{}/__test/groups?person={name}", provider()))
        .json(&groups)
        .send()
        .await
        .expect("the provider answers");
    assert_eq!(res.status(), 204);
}

/// What came back to the console from the provider.
struct Returned {
    callback: String,
    response: reqwest::Response,
}

fn resolve(base: &str, location: &str) -> String {
    url::Url::parse(base)
        .and_then(|b| b.join(location))
        .expect("a usable Location")
        .to_string()
}

/// Signs in as `name` through the provider's own pages, following every redirect until the
/// provider sends the browser back to the console's callback.
async fn through_provider(app: &TestApp, client: &reqwest::Client, name: &str) -> Returned {
    let mut url = app.url("/auth/oidc/oidc?next=/runs");
    let mut posted = false;
    for _ in 0..20 {
        let res = client.get(&url).send().await.expect("request");
        if url.starts_with(&app.url("/auth/oidc/oidc/callback")) {
            return Returned {
                callback: url,
                response: res,
            };
        }
        if res.status().is_redirection() {
            let location = res.headers()["location"].to_str().unwrap().to_string();
            url = resolve(&url, &location);
            continue;
        }
        assert_eq!(
            res.status(),
            200,
            "{url}: {}",
            res.text().await.unwrap_or_default()
        );
        assert!(!posted, "the provider asked twice: {url}");
        let res = client
            .post(&url)
            .form(&[("login", name), ("password", PASSWORD)])
            .send()
            .await
            .expect("the provider's form");
        assert!(
            res.status().is_redirection(),
            "{}",
            res.text().await.unwrap_or_default()
        );
        url = resolve(&url, res.headers()["location"].to_str().unwrap());
        posted = true;
    }
    panic!("no way back to the console from {url}");
}

async fn me(app: &TestApp, client: &reqwest::Client) -> Value {
    let res = app.call(client, "me", &[]).await;
    serde_json::from_str(&res.text().await.unwrap()).expect("JSON")
}

async fn sessions(app: &TestApp) -> u64 {
    session::Entity::find().count(&app.db).await.unwrap()
}

async fn audited(app: &TestApp, action: &str, subject: &str) -> Vec<Value> {
    audit_log::Entity::find()
        .filter(audit_log::Column::Action.eq(action))
        .filter(audit_log::Column::Subject.eq(subject))
        .all(&app.db)
        .await
        .unwrap()
        .into_iter()
        .map(|row| serde_json::from_str(&row.detail).unwrap())
        .collect()
}

async fn roles_follow_groups_at_every_sign_in(app: TestApp) {
    with_secret(&app).await;
    // The sign-in page offers the provider.
    let anyone = app.client();
    let options: Value = serde_json::from_str(
        &app.call(&anyone, "sign_in_options", &[])
            .await
            .text()
            .await
            .unwrap(),
    )
    .unwrap();
    assert_eq!(options["password"], true);
    assert_eq!(options["providers"][0]["name"], "oidc");
    assert_eq!(options["providers"][0]["label"], "Company");

    let alice = app.client();
    let back = through_provider(&app, &alice, "alice").await;
    assert_eq!(back.response.status(), 303);
    assert_eq!(back.response.headers()["location"], "/runs");
    let who = me(&app, &alice).await;
    assert_eq!(
        (who["username"].as_str(), who["role"].as_str()),
        (Some("alice"), Some("admin"))
    );
    let bob = app.client();
    through_provider(&app, &bob, "bob").await;
    assert_eq!(me(&app, &bob).await["role"], "viewer");

    // Made just in time, keyed by the provider's subject, shown as the provider's.
    let account = user::Entity::find()
        .filter(user::Column::Username.eq("alice"))
        .one(&app.db)
        .await
        .unwrap()
        .expect("alice's account");
    assert_eq!(account.sign_in, "oidc:oidc");
    let identity = app::entities::user_identity::Entity::find()
        .filter(app::entities::user_identity::Column::UserId.eq(account.id))
        .one(&app.db)
        .await
        .unwrap()
        .expect("her identity");
    assert_eq!(
        (identity.issuer.as_str(), identity.subject.as_str()),
        (provider(), "u-alice")
    );
    assert_eq!(audited(&app, "user.created", "alice").await.len(), 1);
    assert_eq!(
        audited(&app, "login.succeeded", "alice").await[0]["via"],
        "oidc:oidc"
    );

    // Her API tokens live at most oidc_token_max_days, whatever she asks for: a leaver's stop.
    let form = [
        ("name", "alices-ci"),
        ("scope", "read"),
        ("tags", ""),
        ("expires", "never"),
    ];
    let (status, created) = {
        let res = app.call(&alice, "tokens/create", &form).await;
        (
            res.status(),
            serde_json::from_str::<Value>(&res.text().await.unwrap()).unwrap(),
        )
    };
    assert_eq!(status, 200, "{created}");
    let expires: chrono::DateTime<chrono::Utc> =
        serde_json::from_value(created["info"]["expires_at"].clone()).expect("an expiry");
    let days = (expires - chrono::Utc::now()).num_hours() as f64 / 24.0;
    assert!((29.9..=30.0).contains(&days), "expires in {days} days");

    // The same callback again (same code, same state) is refused and starts no session.
    let before = sessions(&app).await;
    let replay = alice.get(&back.callback).send().await.unwrap();
    assert_eq!(replay.status(), 403);
    assert!(replay.text().await.unwrap().contains("bad_state"));
    assert_eq!(sessions(&app).await, before);
    assert_eq!(
        audited(&app, "login.refused", "oidc").await[0]["reason"],
        "bad_state"
    );

    // Signing out ends the session here, then at the provider (its end-session endpoint),
    // coming back to the sign-in page.
    let res = app.call(&bob, "logout", &[]).await;
    let end = url::Url::parse(res.headers()["location"].to_str().unwrap()).unwrap();
    assert_eq!(app.call(&bob, "me", &[]).await.status(), 401);
    assert_eq!(
        end.as_str().split('?').next(),
        Some(format!("{}/session/end", provider()).as_str())
    );
    let query: std::collections::HashMap<_, _> = end.query_pairs().into_owned().collect();
    assert_eq!(query["client_id"], "bulwark");
    assert_eq!(query["post_logout_redirect_uri"], app.url("/login"));
    assert!(!query["id_token_hint"].is_empty());
    let res = bob.get(end.as_str()).send().await.unwrap();
    assert_eq!(
        res.status(),
        200,
        "the provider asks to confirm the sign-out"
    );

    // Someone taken out of ops at the provider is a viewer at their next sign-in.
    let carol = person("carol", &["ops"]).await;
    through_provider(&app, &app.client(), &carol).await;
    set_groups(&carol, &[]).await;
    let again = app.client();
    through_provider(&app, &again, &carol).await;
    assert_eq!(me(&app, &again).await["role"], "viewer");
    assert_eq!(audited(&app, "user.viewer", &carol).await.len(), 1);
    // One account, however often they come.
    let accounts = user::Entity::find()
        .filter(user::Column::Username.eq(carol.as_str()))
        .count(&app.db)
        .await
        .unwrap();
    assert_eq!(accounts, 1);
}
on_both_backends!(roles_follow_groups_at_every_sign_in, super::company);

async fn no_group_and_no_default_means_no_account(app: TestApp) {
    with_secret(&app).await;
    let client = app.client();
    let back = through_provider(&app, &client, "bob").await;
    assert_eq!(back.response.status(), 403);
    assert!(
        back.response
            .text()
            .await
            .unwrap()
            .contains("no_matching_group")
    );
    assert!(
        users_named(&app, "bob").await.is_none(),
        "no account for bob"
    );
    assert_eq!(app.call(&client, "me", &[]).await.status(), 401);
    assert_eq!(
        audited(&app, "login.refused", "bob").await[0]["reason"],
        "no_matching_group"
    );
    // alice, in ops, still comes in (in a browser of her own: the provider remembers bob).
    let alice = app.client();
    through_provider(&app, &alice, "alice").await;
    assert_eq!(me(&app, &alice).await["role"], "admin");
}
on_both_backends!(
    no_group_and_no_default_means_no_account,
    super::company_only_groups
);

async fn users_named(app: &TestApp, name: &str) -> Option<user::Model> {
    user::Entity::find()
        .filter(user::Column::Username.eq(name))
        .one(&app.db)
        .await
        .unwrap()
}

async fn a_local_name_is_refused_until_an_admin_links_it(app: TestApp) {
    with_secret(&app).await;
    let name = person("dana", &["ops"]).await;
    let admin = app.signed_in("admin", ADMIN_PASSWORD).await;
    let res = app
        .call(
            &admin,
            "users/create",
            &[
                ("username", &name),
                ("password", "a-local-password"),
                ("role", "viewer"),
            ],
        )
        .await;
    assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());

    let stranger = app.client();
    let back = through_provider(&app, &stranger, &name).await;
    assert_eq!(back.response.status(), 403);
    assert!(back.response.text().await.unwrap().contains("name_taken"));
    assert_eq!(users_named(&app, &name).await.unwrap().sign_in, "password");

    // Linked on Settings → Users: the same person now signs in as the local account.
    let subject = format!("u-{name}");
    let form = [
        ("username", name.as_str()),
        ("provider", "oidc"),
        ("subject", subject.as_str()),
    ];
    let res = app.call(&admin, "users/link", &form).await;
    assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
    let res = app.call(&admin, "users/link", &form).await;
    assert_eq!(res.status(), 409, "an identity links one account");
    let res = app
        .call(
            &admin,
            "users/link",
            &[("username", &name), ("provider", "nope"), ("subject", "x")],
        )
        .await;
    assert_eq!(res.status(), 422);

    let person_client = app.client();
    let back = through_provider(&app, &person_client, &name).await;
    assert_eq!(back.response.status(), 303);
    let who = me(&app, &person_client).await;
    assert_eq!(who["username"], name.as_str());
    assert_eq!(
        who["role"], "admin",
        "the role follows the groups from now on"
    );
    assert_eq!(users_named(&app, &name).await.unwrap().sign_in, "oidc:oidc");
}
on_both_backends!(
    a_local_name_is_refused_until_an_admin_links_it,
    super::company
);

fn company_without_passwords(config: &mut Config, workers: &mut Workers) {
    company(config, workers);
    config.password_login = false;
}

/// `password_login = false`: no form, the endpoint answers 403, and `bulwark user passwd`
/// still sets passwords (the break-glass path).
async fn password_sign_in_can_be_turned_off(app: TestApp) {
    let client = app.client();
    let options: Value = serde_json::from_str(
        &app.call(&client, "sign_in_options", &[])
            .await
            .text()
            .await
            .unwrap(),
    )
    .unwrap();
    assert_eq!(options["password"], false);
    let page = client
        .get(app.url("/login"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(!page.contains("type=\"password\""), "no password field");
    assert!(
        page.contains("/auth/oidc/oidc"),
        "the provider's button: {page}"
    );
    let res = app
        .call(
            &client,
            "login",
            &[("username", "admin"), ("password", ADMIN_PASSWORD)],
        )
        .await;
    assert_eq!(res.status(), 403);
    assert_eq!(sessions(&app).await, 0);

    let out = crate::process::cli(&app, &["user", "passwd", "viewer"], "a-new-password-1\n");
    assert!(
        out.status.success(),
        "{}",
        crate::process::text(&out.stderr)
    );
}
on_both_backends!(
    password_sign_in_can_be_turned_off,
    super::company_without_passwords
);

/// `bulwark user link` and `user list`'s `sign_in` column, with the provider configured by
/// environment as an operator would.
#[tokio::test(flavor = "multi_thread")]
async fn the_command_line_links_and_lists_how_people_sign_in() {
    let app = TestApp::sqlite_with(company).await;
    let env = [
        ("BULWARK_OIDC_ISSUER", provider()),
        ("BULWARK_OIDC_CLIENT_ID", "bulwark"),
    ];
    let run = |args: &[&str]| crate::process::cli_with_env(&app, args, "", &env);
    let out = run(&["user", "link", "viewer", "--oidc", "oidc:u-someone"]);
    assert!(
        out.status.success(),
        "{}",
        crate::process::text(&out.stderr)
    );
    let out = run(&["user", "link", "admin", "--oidc", "oidc:u-someone"]);
    assert!(!out.status.success());
    assert!(crate::process::text(&out.stderr).contains("already belongs to viewer"));
    let out = run(&["user", "link", "admin", "--oidc", "elsewhere:u-1"]);
    assert!(crate::process::text(&out.stderr).contains("no OpenID provider is named 'elsewhere'"));

    let out = run(&["user", "list"]);
    let listing = crate::process::text(&out.stdout);
    let header = listing.lines().next().unwrap();
    assert_eq!(header, "username\trole\tstate\tlast_sign_in\tsign_in");
    let row = |name: &str| {
        listing
            .lines()
            .find(|l| l.starts_with(&format!("{name}\t")))
            .unwrap_or_else(|| panic!("{name} in {listing}"))
            .rsplit('\t')
            .next()
            .unwrap()
            .to_string()
    };
    assert_eq!(row("viewer"), "oidc:oidc");
    assert_eq!(row("admin"), "password");
}
