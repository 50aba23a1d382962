//! An ECharts chart drawn in the browser by charming.
//!
//! The server renders an empty, sized `<div>`; after hydration an effect draws the chart into
//! it and keeps the ECharts handle, so later changes call `setOption` on the same instance
//! instead of creating a new one. A chart rendered in the browser (a page reached by
//! navigation) can have its effect run before the `<div>` is in the document; ECharts finds
//! its container by id, so the first draw waits for the next frame until it is.

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
        Effect::new(move |_| {
            frame.track();
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
