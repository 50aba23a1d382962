//! An ECharts chart drawn in the browser by charming.
//!
//! The server renders an empty, sized `<div>`; after hydration an effect draws the chart into
//! it and keeps the ECharts handle, so later changes call `setOption` on the same instance
//! instead of creating a new one. A chart rendered in the browser (a page reached by
//! navigation) can have its effect run before the `<div>` is in the document; ECharts finds
//! its container by id, so the first draw waits for the next frame until it is.
//!
//! ECharts itself (`vendor/echarts.min.js`, 153 KB Brotli) is a script of its own that most
//! pages never need. The shell includes it only in pages that draw a chart (`app/src/app.rs`,
//! `draws_charts`), loading asynchronously, so a chart there may hydrate before it has run; a
//! chart shown after navigating from another page adds the script once, from the URL the shell
//! left in `<html data-echarts>`. Either way the chart draws when the script has run.

use charming::Chart;
use leptos::prelude::*;

#[component]
pub fn EChart(
    /// DOM id of the container; unique on the page.
    id: &'static str,
    /// The chart to draw; `None` leaves the container empty.
    #[prop(into)]
    chart: Signal<Option<Chart>>,
    #[prop(default = 280)] height: u32,
    /// Called after each draw (in the browser only), e.g. to measure redraw latency.
    #[prop(optional)]
    on_drawn: Option<Callback<()>>,
) -> impl IntoView {
    let drawn = RwSignal::new(false);
    let container = NodeRef::<leptos::html::Div>::new();

    #[cfg(feature = "hydrate")]
    {
        use charming::{Echarts, WasmRenderer};
        let handle = StoredValue::new_local(None::<Echarts>);
        let frame = RwSignal::new(0u32);
        let loaded = RwSignal::new(echarts::loaded());
        Effect::new(move |_| {
            if !loaded.get() {
                echarts::load(move || loaded.set(true));
            }
        });
        Effect::new(move |_| {
            frame.track();
            if !loaded.get() {
                return;
            }
            let Some(chart) = chart.get() else { return };
            let Some(div) = container.get() else { return };
            if handle.with_value(Option::is_none) && !div.is_connected() {
                request_animation_frame(move || frame.update(|n| *n += 1));
                return;
            }
            handle.update_value(|slot| match slot {
                Some(echarts) => WasmRenderer::update(echarts, &chart),
                None => match WasmRenderer::new_opt(None, Some(height)).render(id, &chart) {
                    Ok(echarts) => *slot = Some(echarts),
                    Err(e) => leptos::logging::error!("chart {id} could not be drawn: {e:?}"),
                },
            });
            let ok = handle.with_value(Option::is_some);
            drawn.set(ok);
            if let (true, Some(callback)) = (ok, on_drawn) {
                callback.run(());
            }
        });
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = (chart, on_drawn);

    view! {
        <div
            node_ref=container
            id=id
            class="chart"
            style=format!("height:{height}px")
            data-drawn=move || drawn.get().to_string()
        ></div>
    }
}

/// The ECharts script, added to the page the first time a chart needs it.
#[cfg(feature = "hydrate")]
mod echarts {
    use wasm_bindgen::JsCast;
    use wasm_bindgen::closure::Closure;

    const SCRIPT_ID: &str = "echarts-script";

    /// The global `echarts`, which charming's renderer calls, is defined.
    pub fn loaded() -> bool {
        web_sys::window()
            .and_then(|window| window.get("echarts"))
            .is_some()
    }

    /// Adds the script unless a chart already has, and calls `done` once it has run.
    pub fn load(done: impl FnOnce() + 'static) {
        let document = leptos::prelude::document();
        let script = match document.get_element_by_id(SCRIPT_ID) {
            Some(script) => script,
            None => {
                let Some(src) = document
                    .document_element()
                    .and_then(|html| html.get_attribute("data-echarts"))
                    .filter(|src| !src.is_empty())
                else {
                    leptos::logging::error!(
                        "no ECharts URL in <html data-echarts>: charts stay empty"
                    );
                    return;
                };
                let Ok(script) = document.create_element("script") else {
                    return;
                };
                let _ = script.set_attribute("id", SCRIPT_ID);
                let _ = script.set_attribute("src", &src);
                let Some(head) = document.head() else { return };
                if head.append_child(&script).is_err() {
                    return;
                }
                let failed = Closure::once_into_js(move || {
                    leptos::logging::error!(
                        "ECharts could not be loaded from {src}: charts stay empty"
                    );
                });
                let _ = script.add_event_listener_with_callback("error", failed.unchecked_ref());
                script
            }
        };
        let done = Closure::once_into_js(done);
        let _ = script.add_event_listener_with_callback("load", done.unchecked_ref());
    }
}
