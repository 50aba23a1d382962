//! The console's language: the sign-in page follows the browser, a person's own setting wins
//! over the browser, `default_locale` is the last word, and the server writes the choice into
//! `<html lang>` for the browser to hydrate with.

use crate::helpers::{ADMIN_PASSWORD, TestApp, VIEWER_PASSWORD};
use crate::on_both_backends;

async fn page(client: &reqwest::Client, app: &TestApp, path: &str, accept: Option<&str>) -> String {
    let mut request = client.get(app.url(path));
    if let Some(accept) = accept {
        request = request.header("accept-language", accept);
    }
    let res = request.send().await.expect("request");
    assert_eq!(res.status(), 200, "GET {path}");
    res.text().await.expect("body")
}

/// A server function called in the language `accept` asks for: its status and body.
async fn ask(
    client: &reqwest::Client,
    app: &TestApp,
    endpoint: &str,
    accept: &str,
    form: &[(&str, &str)],
) -> (u16, String) {
    let res = client
        .post(app.url(&format!("/api/{endpoint}")))
        .header("accept-language", accept)
        .form(form)
        .send()
        .await
        .expect("request");
    (res.status().as_u16(), res.text().await.expect("body"))
}

async fn the_sign_in_page_follows_the_browser(app: TestApp) {
    let client = app.client();
    let english = page(&client, &app, "/login", None).await;
    assert!(english.contains(r#"<html lang="en""#), "{english}");
    assert!(english.contains("Sign in"));

    let chinese = page(&client, &app, "/login", Some("zh-CN,zh;q=0.9,en;q=0.8")).await;
    assert!(chinese.contains(r#"<html lang="zh-CN""#), "{chinese}");
    assert!(chinese.contains("登录") && chinese.contains("用户名"));
    assert!(
        !chinese.contains(">Sign in<"),
        "English left on the Chinese page"
    );

    // A language Bulwark does not speak: the configured default.
    let french = page(&client, &app, "/login", Some("fr-FR")).await;
    assert!(french.contains(r#"<html lang="en""#));
}
on_both_backends!(the_sign_in_page_follows_the_browser);

async fn a_persons_choice_wins_over_the_browser(app: TestApp) {
    let viewer = app.signed_in("viewer", VIEWER_PASSWORD).await;
    let before = page(&viewer, &app, "/", Some("en-GB")).await;
    assert!(before.contains(r#"<html lang="en""#) && before.contains("Overview"));

    let res = app
        .call(&viewer, "account/locale", &[("locale", "zh-CN")])
        .await;
    assert_eq!(
        res.status(),
        200,
        "{}",
        res.text().await.unwrap_or_default()
    );
    let after = page(&viewer, &app, "/", Some("en-GB")).await;
    assert!(after.contains(r#"<html lang="zh-CN""#), "{after}");
    assert!(after.contains("概览") && after.contains("失败队列"));
    for english in [">Overview<", ">Jobs<", ">Failed queue<", ">Sign out<"] {
        assert!(
            !after.contains(english),
            "{english} left on the Chinese page"
        );
    }
    // Another person is not affected.
    let admin = app.signed_in("admin", ADMIN_PASSWORD).await;
    let theirs = page(&admin, &app, "/", Some("en-GB")).await;
    assert!(theirs.contains(r#"<html lang="en""#));

    // Back to following the browser.
    let res = app.call(&viewer, "account/locale", &[("locale", "")]).await;
    assert_eq!(res.status(), 200);
    let again = page(&viewer, &app, "/", Some("zh")).await;
    assert!(again.contains(r#"<html lang="zh-CN""#));
    let again = page(&viewer, &app, "/", Some("en")).await;
    assert!(again.contains(r#"<html lang="en""#));
}
on_both_backends!(a_persons_choice_wins_over_the_browser);

async fn an_unknown_language_is_refused_in_the_persons_language(app: TestApp) {
    let viewer = app.signed_in("viewer", VIEWER_PASSWORD).await;
    let (status, body) = ask(
        &viewer,
        &app,
        "account/locale",
        "zh-CN",
        &[("locale", "klingon")],
    )
    .await;
    assert_eq!(status, 422);
    assert!(
        body.contains("klingon") && body.contains("不支持"),
        "{body}"
    );
    // Nothing changed: still the browser's language.
    let home = page(&viewer, &app, "/", Some("en")).await;
    assert!(home.contains(r#"<html lang="en""#));
}
on_both_backends!(an_unknown_language_is_refused_in_the_persons_language);

async fn the_configured_default_applies_when_the_browser_names_none(app: TestApp) {
    let client = app.client();
    let page_without = page(&client, &app, "/login", None).await;
    assert!(
        page_without.contains(r#"<html lang="zh-CN""#),
        "{page_without}"
    );
    // The browser still wins over the default.
    let english = page(&client, &app, "/login", Some("en-US")).await;
    assert!(english.contains(r#"<html lang="en""#));
}
on_both_backends!(
    the_configured_default_applies_when_the_browser_names_none,
    |config, _| config.default_locale = "zh-CN".into()
);

/// Refusals are worded in the request's language, the error's shape unchanged: a wrong
/// password, a job definition with several bad fields, something that is not there.
async fn refusals_speak_the_requests_language(app: TestApp) {
    let client = app.client();
    let (status, body) = ask(
        &client,
        &app,
        "login",
        "zh-CN",
        &[("username", "admin"), ("password", "wrong-password")],
    )
    .await;
    assert_eq!(status, 422);
    assert!(
        body.contains("用户名不存在或密码错误") && body.contains("\"password\""),
        "{body}"
    );

    let admin = app.signed_in("admin", ADMIN_PASSWORD).await;
    let mut input = crate::helpers::noop_job("bad name!");
    input.timeout_window = "3".into();
    for (accept, expected) in [
        (
            "zh-CN",
            [
                "任务名称只能包含字母",
                "统计窗口必须是 5 到 1000 之间的整数",
            ],
        ),
        (
            "en",
            [
                "name may contain only letters",
                "window must be a whole number of runs between 5 and 1000",
            ],
        ),
    ] {
        let res = admin
            .post(app.url("/api/jobs/save"))
            .header("accept-language", accept)
            .json(&serde_json::json!({ "id": null, "input": input }))
            .send()
            .await
            .expect("request");
        assert_eq!(res.status(), 422);
        let body = res.text().await.expect("body");
        for text in expected {
            assert!(body.contains(text), "{accept}: {text} missing from {body}");
        }
    }

    let (status, body) = ask(&admin, &app, "runs/get", "zh-CN", &[("id", "999999")]).await;
    assert_eq!(status, 404);
    assert!(body.contains("运行 #999999"), "{body}");

    // A refusal still names its field when the words are not English.
    let (status, body) = ask(
        &admin,
        &app,
        "tokens/create",
        "zh-CN",
        &[
            ("name", "deploy"),
            ("scope", "read"),
            ("tags", ""),
            ("expires", "soon"),
        ],
    )
    .await;
    assert_eq!(status, 422);
    assert!(
        body.contains("不是有效期") && body.contains("\"expires\""),
        "{body}"
    );
}
on_both_backends!(refusals_speak_the_requests_language);

/// Times are written in the configured zone, and the page names it for the browser.
async fn times_are_shown_in_the_configured_zone(app: TestApp) {
    let viewer = app.signed_in("viewer", VIEWER_PASSWORD).await;
    let account = page(&viewer, &app, "/account", Some("zh-CN")).await;
    assert!(
        account.contains(r#"data-zone="Asia/Shanghai""#),
        "{account}"
    );
    // The session just opened, listed with when it started, in China Standard Time.
    assert!(account.contains(" CST<"), "{account}");
    assert!(!account.contains(" UTC<"), "{account}");
}
on_both_backends!(times_are_shown_in_the_configured_zone, |config, _| {
    config.timezone = "Asia/Shanghai".into()
});
