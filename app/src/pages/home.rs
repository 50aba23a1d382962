//! The overview: how runs went over the last 24 hours.

use charming::{
    Chart,
    component::{Axis, Grid, Legend},
    element::{AxisType, Tooltip, Trigger},
    series::Bar,
};
use leptos::prelude::*;
use leptos_meta::Title;

use crate::api::runs::runs_per_hour;
use crate::components::chart::EChart;
use crate::views::runs::HourBucket;

/// Stacked bars per hour: succeeded, failed, still in progress.
pub fn runs_chart(buckets: &[HourBucket]) -> Chart {
    let hours: Vec<String> = buckets
        .iter()
        .map(|b| b.hour.format("%H:00").to_string())
        .collect();
    let series = |name: &str, color: &str, pick: fn(&HourBucket) -> u32| {
        Bar::new()
            .name(name)
            .stack("runs")
            .item_style(charming::element::ItemStyle::new().color(color))
            .data(
                buckets
                    .iter()
                    .map(|b| i64::from(pick(b)))
                    .collect::<Vec<_>>(),
            )
    };
    Chart::new()
        .tooltip(Tooltip::new().trigger(Trigger::Axis))
        .legend(Legend::new().bottom(0))
        .grid(Grid::new().left(40).right(16).top(16).bottom(48))
        .x_axis(Axis::new().type_(AxisType::Category).data(hours))
        .y_axis(Axis::new().type_(AxisType::Value).min_interval(1))
        .series(series("Succeeded", "#2f9e44", |b| b.succeeded))
        .series(series("Failed", "#e03131", |b| b.failed))
        .series(series("In progress / other", "#868e96", |b| b.other))
}

#[component]
pub fn HomePage() -> impl IntoView {
    let buckets = Resource::new(|| (), |_| runs_per_hour());
    let chart = Signal::derive(move || buckets.get().and_then(Result::ok).map(|b| runs_chart(&b)));
    let total = move || {
        buckets.get().and_then(Result::ok).map(|b| {
            b.iter()
                .map(|h| h.succeeded + h.failed + h.other)
                .sum::<u32>()
        })
    };

    view! {
        <Title text="Overview" />
        <h1>"Overview"</h1>
        <section class="card">
            <h2>"Runs per hour, last 24 hours"</h2>
            <Transition fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || match buckets.get() {
                    Some(Err(e)) => view! { <p class="error">{e.to_string()}</p> }.into_any(),
                    _ => {
                        view! {
                            <p class="muted" data-testid="runs-total">
                                {move || match total() {
                                    Some(0) => "No runs yet: once jobs run, each hour shows how they ended.".to_string(),
                                    Some(n) => format!("{n} runs in the last 24 hours."),
                                    None => String::new(),
                                }}
                            </p>
                        }
                            .into_any()
                    }
                }}
            </Transition>
            <EChart id="runs-chart" chart=chart />
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{TimeZone, Utc};

    #[test]
    fn chart_has_one_column_per_hour_and_three_series() {
        let buckets: Vec<HourBucket> = (0..3)
            .map(|h| HourBucket {
                hour: Utc.with_ymd_and_hms(2026, 11, 30, h, 0, 0).unwrap(),
                succeeded: h,
                failed: 1,
                other: 0,
            })
            .collect();
        let json = serde_json::to_value(runs_chart(&buckets)).unwrap();
        assert_eq!(
            json["xAxis"]["data"],
            serde_json::json!(["00:00", "01:00", "02:00"])
        );
        assert_eq!(json["series"].as_array().unwrap().len(), 3);
        assert_eq!(json["series"][0]["data"], serde_json::json!([0, 1, 2]));
    }
}
