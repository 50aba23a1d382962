use leptos::prelude::*;
use leptos_meta::Title;

use crate::t;

#[component]
pub fn NotFound() -> impl IntoView {
    #[cfg(feature = "ssr")]
    if let Some(response) = use_context::<leptos_axum::ResponseOptions>() {
        response.set_status(http::StatusCode::NOT_FOUND);
    }
    view! {
        <Title text=t!("not-found-title") />
        <main class="login">
            <h1>{t!("not-found-title")}</h1>
            <p>{t!("not-found-text")} " " <a href="/">{t!("not-found-back")}</a></p>
        </main>
    }
}
