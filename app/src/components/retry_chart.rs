//! The retry curve as an ECharts chart: the wait before each retry (bars), the total wait so far
//! (line), the jitter range (shaded band), the cap (dashed line) and the retries a warning
//! concerns (shaded columns). Pure: the editor calls it on every change, the tests read its
//! JSON.

use charming::{
    Chart,
    component::{Axis, Grid, Legend},
    element::{
        AreaStyle, AxisType, ItemStyle, Label, LineStyle, LineStyleType, MarkArea, MarkAreaData,
        MarkLine, MarkLineData, MarkLineVariant, Symbol, Tooltip, Trigger,
    },
    series::{Bar, Line},
};

use crate::domain::retry::{RetryPolicy, Warning};

/// Above this ratio between the largest and smallest value the y axis turns logarithmic.
const LOG_SCALE_RATIO: f64 = 100.0;

fn seconds(ms: f64) -> f64 {
    (ms / 1_000.0 * 1_000.0).round() / 1_000.0
}

/// Whether the curve spans enough orders of magnitude to need a log scale.
pub fn needs_log_scale(policy: &RetryPolicy) -> bool {
    let delays = policy.delays_ms();
    let smallest = delays.iter().copied().fold(f64::INFINITY, f64::min);
    let largest = policy.total_ms();
    smallest > 0.0 && largest / smallest >= LOG_SCALE_RATIO
}

/// `recovery`, when the job has enough failure episodes, is the share of them recovered by
/// each retry (`crate::domain::recovery::replay`), drawn as a line on a second axis in percent.
pub fn retry_chart(policy: &RetryPolicy, warnings: &[Warning], recovery: Option<&[f64]>) -> Chart {
    let log = needs_log_scale(policy);
    let labels: Vec<String> = (1..=policy.max_retries()).map(|n| n.to_string()).collect();
    let mut chart = Chart::new()
        .tooltip(Tooltip::new().trigger(Trigger::Axis))
        .legend(Legend::new().bottom(0))
        .grid(Grid::new().left(56).right(24).top(24).bottom(56))
        .x_axis(
            Axis::new()
                .type_(AxisType::Category)
                .name(crate::t!("retry-chart-retry"))
                .data(labels),
        )
        .y_axis(
            Axis::new()
                .type_(if log { AxisType::Log } else { AxisType::Value })
                .name(if log {
                    crate::t!("retry-chart-seconds-log")
                } else {
                    crate::t!("retry-chart-seconds")
                }),
        )
        .series(delay_series(policy))
        .series(total_series(policy, warnings));
    if let Some(recovery) = recovery {
        chart = with_recovery(chart, recovery);
    }
    if policy.jitter() != crate::domain::retry::Jitter::None {
        chart = with_jitter_band(chart, policy, log);
    }
    chart
}

/// The wait before each retry, with the cap as a dashed line when there is one.
fn delay_series(policy: &RetryPolicy) -> Bar {
    let delays: Vec<f64> = policy.delays_ms().into_iter().map(seconds).collect();
    let series = Bar::new()
        .name(crate::t!("retry-chart-wait"))
        .item_style(ItemStyle::new().color("#1f5fbf"))
        .data(delays);
    let Some(cap) = policy.cap_ms() else {
        return series;
    };
    series.mark_line(
        MarkLine::new()
            .symbol(vec![Symbol::None, Symbol::None])
            .line_style(
                LineStyle::new()
                    .color("#b35c00")
                    .type_(LineStyleType::Dashed),
            )
            .data(vec![MarkLineVariant::Simple(
                MarkLineData::new()
                    .name(crate::t!("retry-chart-cap"))
                    .y_axis(seconds(cap as f64)),
            )]),
    )
}

/// The total wait so far, with the retries each warning concerns shaded.
fn total_series(policy: &RetryPolicy, warnings: &[Warning]) -> Line {
    let cumulative: Vec<f64> = policy.cumulative_ms().into_iter().map(seconds).collect();
    let series = Line::new()
        .name(crate::t!("retry-chart-total"))
        .item_style(ItemStyle::new().color("#16202e"))
        .data(cumulative);
    let areas: Vec<(MarkAreaData, MarkAreaData)> = warnings
        .iter()
        .filter_map(|w| {
            let first = w.retries.first()?;
            let last = w.retries.last()?;
            Some((
                MarkAreaData::new()
                    .name(format!("{:?}", w.kind))
                    .x_axis(first.to_string()),
                MarkAreaData::new().x_axis(last.to_string()),
            ))
        })
        .collect();
    if areas.is_empty() {
        return series;
    }
    series.mark_area(
        MarkArea::new()
            .silent(true)
            .label(Label::new().show(false))
            .item_style(ItemStyle::new().color("rgba(201, 42, 42, 0.08)"))
            .data(areas),
    )
}

/// The share of past failures each retry recovered, on a second axis in percent.
fn with_recovery(chart: Chart, recovery: &[f64]) -> Chart {
    chart
        .y_axis(
            Axis::new()
                .type_(AxisType::Value)
                .name(crate::t!("retry-chart-recovered-axis"))
                .min(0)
                .max(100),
        )
        .series(
            Line::new()
                .name(crate::t!("retry-chart-recovered"))
                .y_axis_index(1)
                .item_style(ItemStyle::new().color("#2b8a3e"))
                .data(
                    recovery
                        .iter()
                        .map(|share| share * 100.0)
                        .collect::<Vec<f64>>(),
                ),
        )
}

/// The jitter range as a shaded band: an invisible floor with the band's height stacked on it.
fn with_jitter_band(chart: Chart, policy: &RetryPolicy, log: bool) -> Chart {
    // On a log axis a zero cannot be drawn: the band then starts at a tenth of the first delay.
    let floor = if log {
        seconds(policy.delay_ms(1)) / 10.0
    } else {
        0.0
    };
    let envelope = policy.jitter_envelope_ms();
    let band_low: Vec<f64> = envelope
        .iter()
        .map(|(lo, _)| seconds(*lo).max(floor))
        .collect();
    let band_size: Vec<f64> = envelope
        .iter()
        .zip(&band_low)
        .map(|((_, hi), lo)| (seconds(*hi) - lo).max(0.0))
        .collect();
    chart
        .series(
            Line::new()
                .name(crate::t!("retry-chart-jitter-floor"))
                .stack("jitter")
                .show_symbol(false)
                .silent(true)
                .line_style(LineStyle::new().opacity(0))
                .data(band_low),
        )
        .series(
            Line::new()
                .name(crate::t!("retry-chart-jitter-range"))
                .stack("jitter")
                .show_symbol(false)
                .silent(true)
                .item_style(ItemStyle::new().color("#74a9e8"))
                .line_style(LineStyle::new().opacity(0))
                .area_style(AreaStyle::new().opacity(0.35))
                .data(band_size),
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::retry::{Jitter, Multiplier, WarningContext};

    fn policy(first_ms: u64, m: i64, c: u8, jitter: Jitter, cap: Option<u64>) -> RetryPolicy {
        RetryPolicy::new(
            first_ms,
            Multiplier::from_tenths(m).unwrap(),
            c,
            jitter,
            cap,
        )
        .unwrap()
    }

    #[test]
    fn bars_and_totals_match_the_domain() {
        let p = policy(2_000, 20, 5, Jitter::None, None);
        let json = serde_json::to_value(retry_chart(&p, &[], None)).unwrap();
        assert_eq!(
            json["series"][0]["data"],
            serde_json::json!([2.0, 4.0, 8.0, 16.0, 32.0])
        );
        assert_eq!(
            json["series"][1]["data"],
            serde_json::json!([2.0, 6.0, 14.0, 30.0, 62.0])
        );
        assert_eq!(json["yAxis"]["type"], "value");
        assert_eq!(
            json["series"].as_array().unwrap().len(),
            2,
            "no band without jitter"
        );
    }

    #[test]
    fn wide_curves_go_log_and_show_the_cap_band_and_warnings() {
        let p = policy(1_000, 80, 16, Jitter::Full, Some(3_600_000));
        let warnings = p.warnings(&WarningContext::default());
        let json = serde_json::to_value(retry_chart(&p, &warnings, None)).unwrap();
        assert_eq!(json["yAxis"]["type"], "log");
        assert_eq!(json["series"][0]["markLine"]["data"][0]["yAxis"], 3600.0);
        assert_eq!(json["series"].as_array().unwrap().len(), 4);
        let areas = json["series"][1]["markArea"]["data"].as_array().unwrap();
        assert_eq!(areas.len(), warnings.len());
        assert_eq!(
            areas[1][0]["xAxis"], "9",
            "the untunable warning starts at retry 9"
        );
    }
}
