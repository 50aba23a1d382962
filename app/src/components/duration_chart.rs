//! A job's attempts' durations over time: successes as dots, failures as red dots, the usual
//! band (P05–P95 of the latest successes) shaded, P99 and the limits past which a run is too
//! fast or too slow (`crate::domain::watch::Limits`) as lines. [`duration_chart`] is pure (the
//! tests read its JSON); [`DurationChart`] fetches and draws it on the job's page.

use charming::{
    Chart,
    component::{Axis, Grid, Legend},
    element::{
        AxisType, ItemStyle, Label, LineStyle, LineStyleType, MarkArea, MarkAreaData, MarkLine,
        MarkLineData, MarkLineVariant, Symbol, Tooltip, Trigger,
    },
    series::Scatter,
};
use leptos::prelude::*;

use super::chart::EChart;
use crate::i18n::current;
use crate::i18n::errors::Explain;
use crate::t;
use crate::views::jobs::Durations;

fn seconds(ms: u64) -> f64 {
    ms as f64 / 1000.0
}

/// The chart for `d`, times in the reader's zone.
pub fn duration_chart(d: &Durations) -> Chart {
    let labels: Vec<String> = d
        .points
        .iter()
        .map(|p| crate::i18n::zone().format(p.finished_at, "%m-%d %H:%M"))
        .collect();
    // A point per attempt on one axis; a series shows its own and leaves the others empty.
    let dots = |succeeded: bool| -> Vec<charming::datatype::DataPoint> {
        d.points
            .iter()
            .map(|p| {
                if p.succeeded == succeeded {
                    seconds(p.duration_ms).into()
                } else {
                    "-".into()
                }
            })
            .collect()
    };
    let succeeded = learned(
        d,
        Scatter::new()
            .name(t!("durations-succeeded"))
            .symbol_size(6)
            .item_style(ItemStyle::new().color("#1f5fbf"))
            .data(dots(true)),
    );
    Chart::new()
        .tooltip(Tooltip::new().trigger(Trigger::Axis))
        .legend(Legend::new().bottom(0))
        .grid(Grid::new().left(56).right(24).top(24).bottom(56))
        .x_axis(Axis::new().type_(AxisType::Category).data(labels))
        .y_axis(
            Axis::new()
                .type_(AxisType::Value)
                .name(t!("durations-seconds")),
        )
        .series(succeeded)
        .series(
            Scatter::new()
                .name(t!("durations-failed"))
                .symbol_size(6)
                .item_style(ItemStyle::new().color("#c92a2a"))
                .data(dots(false)),
        )
}

/// The successes' series with what they taught: the usual band, P99 and the pace limits.
fn learned(d: &Durations, mut succeeded: Scatter) -> Scatter {
    let lines: Vec<MarkLineVariant> = [
        (t!("durations-p99"), d.p99_ms),
        (t!("durations-too-slow"), d.slow_above_ms),
        (t!("durations-too-fast"), d.fast_below_ms),
    ]
    .into_iter()
    .filter_map(|(name, ms)| {
        ms.map(|ms| MarkLineVariant::Simple(MarkLineData::new().name(name).y_axis(seconds(ms))))
    })
    .collect();
    if let (Some(low), Some(high)) = (d.p05_ms, d.p95_ms) {
        succeeded = succeeded.mark_area(
            MarkArea::new()
                .silent(true)
                .label(Label::new().show(false))
                .item_style(ItemStyle::new().color("rgba(31, 95, 191, 0.10)"))
                .data(vec![(
                    MarkAreaData::new()
                        .name(t!("durations-usual"))
                        .y_axis(seconds(low).to_string()),
                    // charming takes a mark area's edge as text; ECharts reads it as a number.
                    MarkAreaData::new().y_axis(seconds(high).to_string()),
                )]),
        );
    }
    if !lines.is_empty() {
        succeeded = succeeded.mark_line(
            MarkLine::new()
                .symbol(vec![Symbol::None, Symbol::None])
                .line_style(
                    LineStyle::new()
                        .color("#b35c00")
                        .type_(LineStyleType::Dashed),
                )
                .data(lines),
        );
    }
    succeeded
}

/// The job's duration chart, or a line saying there is nothing to draw yet.
#[component]
pub fn DurationChart(id: i64) -> impl IntoView {
    let durations = Resource::new(|| (), move |_| crate::api::jobs::job_durations(id));
    let chart = Signal::derive(move || {
        durations
            .get()
            .and_then(Result::ok)
            .filter(|d| !d.points.is_empty())
            .map(|d| duration_chart(&d))
    });
    view! {
        <section class="card" data-testid="durations">
            <h2>{t!("durations-heading")}</h2>
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    match durations.await {
                        Ok(d) if d.points.is_empty() => {
                            view! { <p class="muted">{t!("durations-none")}</p> }.into_any()
                        }
                        Ok(d) => view! {
                            <p class="muted" data-testid="durations-band">{band(&d)}</p>
                        }.into_any(),
                        Err(e) => view! { <p class="error">{e.explain(current())}</p> }.into_any(),
                    }
                })}
            </Transition>
            <EChart id="duration-chart" chart />
        </section>
    }
}

/// The learned band in words, under the chart.
fn band(d: &Durations) -> String {
    let human = |ms: u64| crate::i18n::duration(ms as f64);
    match (d.p05_ms, d.p95_ms, d.p99_ms) {
        (Some(low), Some(high), Some(p99)) => t!(
            "durations-band",
            low = human(low),
            high = human(high),
            p99 = human(p99),
            count = d.points.len()
        ),
        _ => t!("durations-learning", count = d.points.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::views::jobs::DurationPoint;

    #[test]
    fn the_band_and_the_limits_are_drawn_where_learned() {
        let at = chrono::DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let d = Durations {
            points: vec![
                DurationPoint {
                    finished_at: at,
                    duration_ms: 2_000,
                    succeeded: true,
                    run_id: 1,
                },
                DurationPoint {
                    finished_at: at,
                    duration_ms: 100,
                    succeeded: false,
                    run_id: 2,
                },
            ],
            p05_ms: Some(1_800),
            p95_ms: Some(2_200),
            p99_ms: Some(2_400),
            fast_below_ms: Some(900),
            slow_above_ms: Some(3_600),
        };
        let json = serde_json::to_value(duration_chart(&d)).unwrap();
        let series = json["series"].as_array().unwrap();
        assert_eq!(series[0]["data"], serde_json::json!([2.0, "-"]));
        assert_eq!(series[1]["data"], serde_json::json!(["-", 0.1]));
        assert_eq!(series[0]["markArea"]["data"][0][1]["yAxis"], "2.2");
        let lines = series[0]["markLine"]["data"].as_array().unwrap();
        assert_eq!(lines.len(), 3);
        let without = Durations {
            p05_ms: None,
            p95_ms: None,
            p99_ms: None,
            fast_below_ms: None,
            slow_above_ms: None,
            ..d
        };
        let json = serde_json::to_value(duration_chart(&without)).unwrap();
        assert!(json["series"][0]["markArea"].is_null());
        assert!(json["series"][0]["markLine"].is_null());
    }
}
