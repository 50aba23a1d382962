use leptos::prelude::*;

use crate::i18n::current;
use crate::i18n::errors::Explain;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::api::AppError;
use crate::api::auth::{Login, sign_in_options};
use crate::t;
use crate::views::users::{ProviderInfo, SignInOptions};

#[component]
pub fn LoginPage() -> impl IntoView {
    let login = ServerAction::<Login>::new();
    let query = use_query_map();
    let next = move || query.read().get("next").unwrap_or_default();

    let error = move || login.value().get().and_then(Result::err);
    let field_error = move |field: &'static str| move || error().and_then(|e| e.for_field(field));
    let general_error = move || {
        error()
            .filter(|e| !matches!(e, AppError::Invalid { .. }))
            .map(|e| e.explain(current()))
    };

    let options = Resource::new(|| (), |_| sign_in_options());
    let form = move || {
        view! {
            <ActionForm action=login attr:class="card form" attr:novalidate=true>
                <input type="hidden" name="next" value=next />
                <label for="username">{t!("login-username")}</label>
                <input id="username" name="username" type="text" autocomplete="username" autofocus />
                <p class="field-error" data-testid="username-error">{field_error("username")}</p>
                <label for="password">{t!("login-password")}</label>
                <input id="password" name="password" type="password" autocomplete="current-password" />
                <p class="field-error" data-testid="password-error">{field_error("password")}</p>
                {move || field_error("code")().map(|message| view! {
                    <label for="code">{t!("login-code")}</label>
                    <input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" autofocus />
                    <p class="field-error" data-testid="code-error">{message}</p>
                })}
                <p class="error" role="alert" data-testid="login-error">{general_error}</p>
                <button type="submit" disabled=move || login.pending().get()>
                    {move || if login.pending().get() { t!("login-submitting") } else { t!("login-submit") }}
                </button>
            </ActionForm>
        }
    };
    let ways = move |options: SignInOptions| {
        let providers = (!options.providers.is_empty())
            .then(|| view! { <ProviderButtons providers=options.providers next=next() /> });
        view! {
            {providers}
            {options.password.then(form)}
        }
    };

    view! {
        <Title text=t!("login-title") />
        <main class="login">
            <h1>"Bulwark"</h1>
            <p class="lead">{t!("app-tagline")}</p>
            <Suspense>
                {move || Suspend::new(async move {
                    match options.await {
                        Ok(options) => ways(options).into_any(),
                        Err(e) => view! { <p class="error" role="alert">{e.explain(current())}</p> }.into_any(),
                    }
                })}
            </Suspense>
        </main>
    }
}

/// A button per OpenID provider: each starts a sign-in there, coming back to `next`.
#[component]
fn ProviderButtons(providers: Vec<ProviderInfo>, next: String) -> impl IntoView {
    let href = move |name: &str| {
        let mut url = url::Url::parse("http://console/auth/oidc").expect("a fixed URL parses");
        url.path_segments_mut()
            .expect("an http URL has segments")
            .push(name);
        if !next.is_empty() {
            url.query_pairs_mut().append_pair("next", &next);
        }
        match url.query() {
            Some(query) => format!("{}?{query}", url.path()),
            None => url.path().to_string(),
        }
    };
    view! {
        <nav class="card sign-in-providers" aria-label=t!("login-providers")>
            {providers
                .into_iter()
                .map(|p| {
                    view! {
                        <a class="button" rel="external" href=href(&p.name) data-testid=format!("sign-in-{}", p.name)>
                            {t!("login-with", provider = p.label)}
                        </a>
                    }
                })
                .collect_view()}
        </nav>
    }
}
