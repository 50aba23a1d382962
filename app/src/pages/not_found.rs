use leptos::prelude::*;
use leptos_meta::Title;

#[component]
pub fn NotFound() -> impl IntoView {
    #[cfg(feature = "ssr")]
    if let Some(response) = use_context::<leptos_axum::ResponseOptions>() {
        response.set_status(http::StatusCode::NOT_FOUND);
    }
    view! {
        <Title text="Not found" />
        <main class="login">
            <h1>"Not found"</h1>
            <p>"There is no page at this address. " <a href="/">"Back to the overview"</a></p>
        </main>
    }
}
