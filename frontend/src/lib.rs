//! The browser entry point. The server renders every page; this makes it interactive.

#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    // Asynchronous hydration: each page's code is a wasm chunk fetched before its HTML is
    // hydrated (app/src/pages/routes.rs).
    leptos::mount::hydrate_lazy(app::App);
}
