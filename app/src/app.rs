//! The document shell and the route table.

use leptos::prelude::*;
use leptos_meta::{MetaTags, Title, provide_meta_context};
use leptos_router::{
    Lazy, SsrMode,
    components::{ParentRoute, Route, Router, Routes},
    path,
};

use crate::components::layout::Layout;
use crate::pages::{self, routes};

/// The Content-Security-Policy of every page: scripts only from this origin or inline with
/// this response's nonce (Leptos puts it on its hydration scripts), WebAssembly allowed to
/// compile, nothing loaded from elsewhere, never framed. Styles may be inline: some bars and the
/// chart's height are `style` attributes, and a mail preview carries its own; a style cannot
/// run code.
#[cfg(feature = "ssr")]
fn content_security_policy(nonce: &str) -> String {
    format!(
        "default-src 'self'; script-src 'self' 'nonce-{nonce}' 'wasm-unsafe-eval'; \
         style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; \
         object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    )
}

/// The HTML document the server renders around the app.
pub fn shell(options: LeptosOptions) -> impl IntoView {
    let nonce = leptos::nonce::use_nonce();
    #[cfg(feature = "ssr")]
    if let (Some(nonce), Some(response)) = (
        nonce.as_ref(),
        use_context::<leptos_axum::ResponseOptions>(),
    ) && let Ok(value) =
        http::HeaderValue::from_str(&content_security_policy(&nonce.to_string()))
    {
        response.insert_header(http::header::CONTENT_SECURITY_POLICY, value);
    }
    #[cfg(feature = "ssr")]
    let assets = use_context::<crate::state::AppState>()
        .map(|state| state.assets)
        .unwrap_or_default();
    // Leptos's response writer turns the page groups this render used into preload links for
    // their chunks (`leptos_integration_utils`), from this manifest: the group's files below the
    // hydration root, and the split loader's name.
    #[cfg(feature = "ssr")]
    if !assets.page_chunks().is_empty() {
        provide_context(leptos::WasmSplitManifest(ArcStoredValue::new((
            format!("{}/pkg", assets.hydration_root()),
            assets.page_chunks().clone(),
            "__wasm_split.js".to_string(),
        ))));
    }
    #[cfg(feature = "ssr")]
    let (icon, css, echarts, root) = (
        assets.url("favicon.svg"),
        assets.url("pkg/bulwark.css"),
        assets.url("vendor/echarts.min.js"),
        assets.hydration_root(),
    );
    #[cfg(feature = "ssr")]
    let charts =
        use_context::<http::request::Parts>().is_some_and(|parts| draws_charts(parts.uri.path()));
    #[cfg(not(feature = "ssr"))]
    let charts = false;
    let lang = crate::i18n::request_locale().tag();
    let zone = crate::i18n::zone();
    let (zone, zone_spans) = (zone.name().to_string(), zone.encode());
    // The shell is rendered on the server only; the browser hydrates `App` inside it.
    #[cfg(not(feature = "ssr"))]
    let (icon, css, echarts, root) = (String::new(), String::new(), String::new(), String::new());
    let echarts_script = charts.then(|| echarts.clone());
    view! {
        <!DOCTYPE html>
        <html lang=lang data-zone=zone data-zone-spans=zone_spans data-echarts=echarts>
            <head>
                <meta charset="utf-8" />
                <meta name="viewport" content="width=device-width, initial-scale=1" />
                <link rel="icon" href=icon type="image/svg+xml" />
                // `id="leptos"` is what `cargo leptos watch` swaps when the CSS changes.
                <link rel="stylesheet" id="leptos" href=css />
                // A classic script: the chart component calls the global `echarts`. Async, so
                // it downloads beside the wasm but hydration never waits for it (a deferred
                // script would run first, and the page would stay inert until its 153 KB had
                // arrived); a chart waits for it instead (`app/src/components/chart.rs`). Our
                // own build of the chart types we draw (frontend/echarts.mjs), and only in
                // pages that draw one; the chart component loads it for the others.
                {echarts_script
                    .map(|src| view! { <script id="echarts-script" src=src async nonce=nonce></script> })}
                <AutoReload options=options.clone() />
                <HydrationScripts options root />
                <MetaTags />
            </head>
            <body>
                <App />
            </body>
        </html>
    }
}

/// The pages that draw a chart as soon as they are shown, so their HTML loads ECharts beside
/// the wasm instead of after hydration: the Overview, the traffic dashboards (a shared one too) and the job
/// editor. Only a matter of speed: any other page that shows a chart loads it then.
#[cfg(any(feature = "ssr", test))]
fn draws_charts(path: &str) -> bool {
    let path = path.trim_end_matches('/');
    match path {
        "" | "/traffic" => true,
        _ if path.starts_with("/share/") => true,
        _ => path
            .strip_prefix("/jobs/")
            .is_some_and(|job| !job.is_empty() && !job.contains('/')),
    }
}

#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    provide_context(crate::i18n::request_locale());
    provide_context(crate::i18n::request_zone());
    // Effects run only in the browser, after hydration: the browser tests wait for this mark
    // before they interact, so they exercise the hydrated app and not the bare HTML.
    Effect::new(|_| {
        if let Some(root) = document().document_element() {
            let _ = root.set_attribute("data-hydrated", "true");
        }
    });

    view! {
        <Title formatter=|page: String| {
            if page.is_empty() { "Bulwark".to_string() } else { format!("{page} · Bulwark") }
        } />
        <Router>
            <Routes fallback=pages::not_found::NotFound>
                <Route path=path!("/login") view={Lazy::<routes::LoginRoute>::new()} />
                // Rendered whole before it is sent, so a link that is gone answers 404.
                <Route path=path!("/share/:token") view={Lazy::<routes::ShareRoute>::new()} ssr=SsrMode::Async />
                <ParentRoute path=path!("") view=Layout>
                    <Route path=path!("") view={Lazy::<routes::HomeRoute>::new()} />
                    <Route path=path!("jobs") view={Lazy::<routes::JobsRoute>::new()} />
                    <Route path=path!("jobs/new") view={Lazy::<routes::JobEditRoute>::new()} />
                    <Route path=path!("jobs/:id") view={Lazy::<routes::JobEditRoute>::new()} />
                    <Route path=path!("runs") view={Lazy::<routes::RunsRoute>::new()} />
                    <Route path=path!("runs/:id") view={Lazy::<routes::RunDetailRoute>::new()} />
                    <Route path=path!("failed") view={Lazy::<routes::FailedRoute>::new()} />
                    <Route path=path!("traffic") view={Lazy::<routes::TrafficRoute>::new()} />
                    <Route path=path!("traffic/hits") view={Lazy::<routes::TrafficHitsRoute>::new()} />
                    <Route path=path!("traffic/sites") view={Lazy::<routes::TrafficSitesRoute>::new()} />
                    <Route path=path!("notifications") view={Lazy::<routes::NotificationsRoute>::new()} />
                    <Route path=path!("settings") view={Lazy::<routes::SettingsRoute>::new()} />
                    <Route path=path!("maintenance") view={Lazy::<routes::MaintenanceRoute>::new()} />
                    <Route path=path!("account") view={Lazy::<routes::AccountRoute>::new()} />
                    <Route path=path!("audit") view={Lazy::<routes::AuditRoute>::new()} />
                    <Route path=path!("api-docs") view={Lazy::<routes::ApiDocsRoute>::new()} />
                </ParentRoute>
            </Routes>
        </Router>
    }
}

#[cfg(test)]
mod tests {
    use super::draws_charts;

    #[test]
    fn only_the_pages_that_draw_charts_carry_echarts() {
        for path in [
            "/",
            "/traffic",
            "/traffic/",
            "/jobs/new",
            "/jobs/42",
            "/share/abc",
        ] {
            assert!(draws_charts(path), "{path}");
        }
        for path in [
            "/jobs",
            "/jobs/",
            "/runs",
            "/runs/3",
            "/failed",
            "/traffic/hits",
            "/login",
        ] {
            assert!(!draws_charts(path), "{path}");
        }
    }
}
