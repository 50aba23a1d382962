use leptos::prelude::*;

use crate::i18n::current;
use crate::i18n::errors::Explain;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::api::AppError;
use crate::api::auth::Login;
use crate::t;

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

    view! {
        <Title text=t!("login-title") />
        <main class="login">
            <h1>"Bulwark"</h1>
            <p class="lead">{t!("app-tagline")}</p>
            <ActionForm action=login attr:class="card form" attr:novalidate=true>
                <input type="hidden" name="next" value=next />
                <label for="username">{t!("login-username")}</label>
                <input id="username" name="username" type="text" autocomplete="username" autofocus />
                <p class="field-error" data-testid="username-error">{field_error("username")}</p>
                <label for="password">{t!("login-password")}</label>
                <input id="password" name="password" type="password" autocomplete="current-password" />
                <p class="field-error" data-testid="password-error">{field_error("password")}</p>
                <p class="error" role="alert" data-testid="login-error">{general_error}</p>
                <button type="submit" disabled=move || login.pending().get()>
                    {move || if login.pending().get() { t!("login-submitting") } else { t!("login-submit") }}
                </button>
            </ActionForm>
        </main>
    }
}
