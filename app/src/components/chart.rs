//! An ECharts chart in the browser: charming builds the option, ECharts draws it.
//!
//! The server renders an empty, sized `<div>`; after hydration an effect draws the chart into
//! it and keeps the ECharts instance, so later changes call `setOption` on the same instance
//! instead of creating a new one. A chart rendered in the browser (a page reached by
//! navigation) can have its effect run before the `<div>` is in the document, where ECharts
//! would measure it as zero wide, so the first draw waits for the next frame until it is.
//!
//! ECharts itself (`vendor/echarts.min.js`, 155 KB Brotli) is a script of its own that most
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
        let handle = StoredValue::new_local(None::<echarts::Instance>);
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
            // Borrowed, not cloned: cloning charming's `Chart` compiles in a clone of every
            // kind of series and component it has, about 15 KB Brotli on each chart page.
            let drew = chart.with(|chart| {
                let Some(chart) = chart else { return false };
                let Some(div) = container.get() else {
                    return false;
                };
                if handle.with_value(Option::is_none) && !div.is_connected() {
                    request_animation_frame(move || frame.update(|n| *n += 1));
                    return false;
                }
                handle.update_value(|slot| {
                    let drawn = match slot {
                        Some(instance) => echarts::set_option(instance, chart),
                        None => echarts::init(&div, height).and_then(|instance| {
                            echarts::set_option(&instance, chart)?;
                            *slot = Some(instance);
                            Ok(())
                        }),
                    };
                    if let Err(e) = drawn {
                        leptos::logging::error!("chart {id} could not be drawn: {e}");
                    }
                });
                true
            });
            if !drew {
                return;
            }
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
    use wasm_bindgen::prelude::*;

    #[wasm_bindgen]
    extern "C" {
        /// An ECharts instance, drawing into one element.
        pub type Instance;

        #[wasm_bindgen(js_namespace = echarts, js_name = init, catch)]
        fn init_js(
            element: &web_sys::Element,
            theme: &JsValue,
            opts: &JsValue,
        ) -> Result<Instance, JsValue>;

        #[wasm_bindgen(method, js_name = setOption, catch)]
        fn set_option_js(this: &Instance, option: &JsValue) -> Result<(), JsValue>;
    }

    /// A new instance in `element`, `height` pixels high and as wide as the element.
    pub fn init(element: &web_sys::Element, height: u32) -> Result<Instance, String> {
        let opts = js_sys::Object::new();
        js_sys::Reflect::set(&opts, &"height".into(), &height.into()).map_err(describe)?;
        init_js(element, &JsValue::UNDEFINED, &opts).map_err(describe)
    }

    /// Draws `chart`: charming's option as JSON, parsed by the browser. charming's own
    /// renderer converts it with serde-wasm-bindgen instead, whose serializer, compiled for
    /// every type of charming's option model, cost each chart page about 10 KB Brotli more
    /// than this; serde_json's is in the main module already.
    pub fn set_option(instance: &Instance, chart: &charming::Chart) -> Result<(), String> {
        let json = serde_json::to_string(chart).map_err(|e| e.to_string())?;
        let option = js_sys::JSON::parse(&json).map_err(describe)?;
        instance.set_option_js(&option).map_err(describe)
    }

    fn describe(e: JsValue) -> String {
        e.as_string().unwrap_or_else(|| format!("{e:?}"))
    }

    const SCRIPT_ID: &str = "echarts-script";

    /// The global `echarts`, which the bindings above call, is defined.
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
