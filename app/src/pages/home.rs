//! The Overview: is everything all right? Tiles (each a link to the list behind it), what
//! needs attention, slow attempts, the next ticks, the last failures and runs per hour, from
//! one server call polled every few seconds.

use charming::{
    Chart,
    component::{Axis, Grid, Legend},
    element::{AxisType, Tooltip, Trigger},
    series::{Bar, Line},
};
use chrono::{DateTime, Utc};
use leptos::prelude::*;
use leptos_meta::Title;

use crate::api::failed::RetriggerRun;
use crate::api::overview::get_overview;
use crate::components::chart::EChart;
use crate::components::layout::use_is_admin;
use crate::domain::duration::human_ms;
use crate::pages::runs::{status_pill, use_ticker, when};
use crate::views::overview::{Overview, Tiles};
use crate::views::runs::HourBucket;

/// Stacked bars per hour (succeeded, failed, still in progress) and the share of the ended
/// runs that failed, on a second axis: the rate the trend alerts watch.
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
    let failure_rate: Vec<Option<f64>> = buckets.iter().map(failure_rate).collect();
    Chart::new()
        .tooltip(Tooltip::new().trigger(Trigger::Axis))
        .legend(Legend::new().bottom(0))
        .grid(Grid::new().left(40).right(48).top(16).bottom(48))
        .x_axis(Axis::new().type_(AxisType::Category).data(hours))
        .y_axis(Axis::new().type_(AxisType::Value).min_interval(1))
        .y_axis(
            Axis::new()
                .type_(AxisType::Value)
                .name("failed %")
                .min(0)
                .max(100),
        )
        .series(series("Succeeded", "#2f9e44", |b| b.succeeded))
        .series(series("Failed", "#e03131", |b| b.failed))
        .series(series("In progress / other", "#868e96", |b| b.other))
        .series(
            Line::new()
                .name("Failure rate %")
                .y_axis_index(1)
                .item_style(charming::element::ItemStyle::new().color("#862e9c"))
                .data(
                    failure_rate
                        .into_iter()
                        .map(|r| {
                            r.map_or(charming::datatype::DataPointItem::from("-"), |r| {
                                charming::datatype::DataPointItem::from((r * 1000.0).round() / 10.0)
                            })
                        })
                        .collect::<Vec<_>>(),
                ),
        )
}

/// The share of an hour's ended runs that failed; `None` when none ended.
fn failure_rate(b: &HourBucket) -> Option<f64> {
    let ended = b.succeeded + b.failed;
    (ended > 0).then(|| f64::from(b.failed) / f64::from(ended))
}

/// One tile: what it counts, the figure, a line of context, and the list behind it.
#[derive(Debug, Clone, PartialEq)]
pub struct TileView {
    pub key: &'static str,
    pub label: &'static str,
    pub value: String,
    pub detail: String,
    pub href: String,
    /// Something is wrong: the tile is drawn in the alarm colour.
    pub alarm: bool,
}

/// `+3 vs the 24 h before` and the like; empty when both are zero.
fn versus(now: u64, before: u64, period: &str) -> String {
    match (now, before) {
        (0, 0) => String::new(),
        (n, b) if n == b => format!("same as {period}"),
        (n, b) if n > b => format!("+{} vs {period}", n - b),
        (n, b) => format!("−{} vs {period}", b - n),
    }
}

fn percent(rate: f64) -> String {
    let pct = rate * 100.0;
    if !(0.05..=99.95).contains(&pct) {
        format!("{pct:.0} %")
    } else {
        format!("{pct:.1} %")
    }
}

/// The tiles, in reading order.
pub fn tiles(t: &Tiles, now: DateTime<Utc>) -> Vec<TileView> {
    let day = "the 24 h before";
    let (rate, rate_before) = t.success_rate();
    let failed_detail = match t.failed_oldest {
        Some(oldest) => format!(
            "oldest waiting {}; {} joined in 24 h",
            ago(oldest, now),
            t.failed_joined
        ),
        None => "empty".to_string(),
    };
    vec![
        TileView {
            key: "runs",
            label: "Runs, last 24 h",
            value: t.runs.now.to_string(),
            detail: versus(t.runs.now, t.runs.before, day),
            href: "/runs?since=24".into(),
            alarm: false,
        },
        TileView {
            key: "success",
            label: "Succeeded, last 24 h",
            value: rate.map_or("—".into(), percent),
            detail: match (rate, rate_before) {
                (Some(_), Some(before)) => {
                    format!("{} dead; {} the 24 h before", t.dead.now, percent(before))
                }
                (Some(_), None) => format!("{} dead", t.dead.now),
                (None, _) => "no run ended".into(),
            },
            href: "/runs?since=24&status=dead".into(),
            alarm: t.dead.now > 0,
        },
        TileView {
            key: "running",
            label: "Running now",
            value: t.running.to_string(),
            detail: String::new(),
            href: "/runs?status=running".into(),
            alarm: false,
        },
        TileView {
            key: "retrying",
            label: "Waiting to retry",
            value: t.retry_wait.to_string(),
            detail: String::new(),
            href: "/runs?status=retry_wait".into(),
            alarm: false,
        },
        TileView {
            key: "failed",
            label: "In the failed queue",
            value: t.failed_queue.to_string(),
            detail: failed_detail,
            href: "/failed".into(),
            alarm: t.failed_queue > 0,
        },
        TileView {
            key: "failing",
            label: "Jobs failing now",
            value: t.failing_jobs.to_string(),
            detail: if t.escalated_jobs > 0 {
                format!("{} escalated", t.escalated_jobs)
            } else {
                String::new()
            },
            href: "/jobs?state=failing".into(),
            alarm: t.failing_jobs > 0,
        },
        TileView {
            key: "late",
            label: "Tick lateness, p95",
            value: t.late_p95_ms.map_or("—".into(), |ms| human_ms(ms as f64)),
            detail: t
                .late_p95_before_ms
                .map(|ms| format!("{} the 24 h before", human_ms(ms as f64)))
                .unwrap_or_default(),
            href: "/runs?since=24".into(),
            alarm: t.late_p95_ms.is_some_and(|ms| ms > 60_000),
        },
        TileView {
            key: "deliveries",
            label: "Deliveries failed",
            value: (t.mail_failed + t.chat_failed).to_string(),
            detail: format!(
                "mail {}, chat {}; {} waiting",
                t.mail_failed, t.chat_failed, t.deliveries_waiting
            ),
            href: if t.chat_failed > 0 && t.mail_failed == 0 {
                "/channels".into()
            } else {
                "/notifications?status=failed".into()
            },
            alarm: t.mail_failed + t.chat_failed > 0,
        },
        TileView {
            key: "nodes",
            label: "Nodes",
            value: format!("{} live", t.nodes_live),
            detail: if t.nodes_lost > 0 {
                format!("{} lost", t.nodes_lost)
            } else {
                "none lost".into()
            },
            href: "/settings#nodes".into(),
            alarm: t.nodes_lost > 0 || t.nodes_live == 0,
        },
        TileView {
            key: "traffic",
            label: "Page views today",
            value: format!("{} people", t.people.now),
            detail: format!(
                "{} bots; yesterday {} people, {} bots",
                t.bots.now, t.people.before, t.bots.before
            ),
            href: "/traffic?range=today".into(),
            alarm: false,
        },
    ]
}

/// `5 min ago`, from the server's clock.
fn ago(t: DateTime<Utc>, now: DateTime<Utc>) -> String {
    let ms = (now - t).num_milliseconds().max(0);
    format!("{} ago", human_ms(ms as f64))
}

#[component]
pub fn HomePage() -> impl IntoView {
    let admin = use_is_admin();
    let tick = use_ticker(5_000);
    let retrigger = ServerAction::<RetriggerRun>::new();
    let overview = Resource::new(
        move || (tick.get(), retrigger.version().get()),
        |_| get_overview(),
    );
    let chart = Signal::derive(move || {
        overview
            .get()
            .and_then(Result::ok)
            .map(|o| runs_chart(&o.per_hour))
    });
    let action_error = move || {
        retrigger
            .value()
            .get()
            .and_then(Result::err)
            .map(|e| e.to_string())
    };

    view! {
        <Title text="Overview" />
        <h1>"Overview"</h1>
        <p class="error" role="alert">{action_error}</p>
        <Transition fallback=|| view! { <p class="muted">"Loading…"</p> }>
            {move || Suspend::new(async move {
                let admin = admin.await;
                match overview.await {
                    Err(e) => view! { <p class="error">{e.to_string()}</p> }.into_any(),
                    Ok(o) => view! { <OverviewBody o admin retrigger /> }.into_any(),
                }
            })}
        </Transition>
        <section class="card">
            <h2>"Runs per hour, last 24 hours"</h2>
            <p class="muted small">
                "Bars: runs created each hour, by how they ended so far. Line: the share of the ended runs that failed."
            </p>
            <EChart id="runs-chart" chart=chart />
            <Transition fallback=|| ()>
                {move || {
                    overview
                        .get()
                        .and_then(Result::ok)
                        .map(|o| view! { <RunsText buckets=o.per_hour /> })
                }}
            </Transition>
        </section>
    }
}

/// Everything above the chart.
#[component]
fn OverviewBody(o: Overview, admin: bool, retrigger: ServerAction<RetriggerRun>) -> impl IntoView {
    let now = o.now;
    view! {
        <section class="tiles" aria-label="Status at a glance">
            {tiles(&o.tiles, now)
                .into_iter()
                .map(|t| {
                    let class = if t.alarm { "card tile alarm" } else { "card tile" };
                    view! {
                        <a class=class href=t.href data-testid=format!("tile-{}", t.key)>
                            <span class="muted">{t.label}</span>
                            <strong class="value">{t.value}</strong>
                            <span class="muted small">{t.detail}</span>
                        </a>
                    }
                })
                .collect_view()}
        </section>
        <section class="card" data-testid="attention">
            <h2>"Needs attention"</h2>
            {if o.attention.is_empty() {
                view! { <p class="muted">"Nothing: every job's latest run succeeded or is still going."</p> }.into_any()
            } else {
                view! {
                    <div class="table-scroll">
                        <table tabindex="0" class="table">
                            <thead><tr><th>"Job"</th><th>"Latest run"</th><th>"Failing since"</th><th>"Error"</th>{admin.then(|| view! { <th><span class="visually-hidden">"Actions"</span></th> })}</tr></thead>
                            <tbody>
                                {o.attention.into_iter().map(|a| {
                                    let id = a.run_id;
                                    view! {
                                        <tr data-job=a.job.clone()>
                                            <td><a href=format!("/jobs/{}", a.job_id)>{a.job.clone()}</a></td>
                                            <td><a href=format!("/runs/{id}")>{format!("#{id} ")}</a>{status_pill(a.status)}</td>
                                            <td title=when(a.since)>{ago(a.since, now)}</td>
                                            <td class="small">{a.error_class.map(|c| format!("{c}: "))}{a.error.clone().unwrap_or_default()}</td>
                                            {admin.then(|| view! {
                                                <td class="actions">
                                                    {a.in_failed_queue.then(|| view! {
                                                        <button type="button" class="secondary" on:click=move |_| {
                                                            if !crate::components::layout::confirm_while_paused() { return; }
                                                            retrigger.dispatch(RetriggerRun { id, timeout: None, retry: None });
                                                        }>"Re-trigger"</button>
                                                    })}
                                                </td>
                                            })}
                                        </tr>
                                    }
                                }).collect_view()}
                            </tbody>
                        </table>
                    </div>
                }.into_any()
            }}
            {(!o.slow.is_empty()).then(|| view! {
                <h3>"Slow attempts"</h3>
                <p class="muted small">"Slower than the mean plus three standard deviations of the job's recent successes."</p>
                <ul class="plain" data-testid="slow">
                    {o.slow.into_iter().map(|s| view! {
                        <li>
                            <a href=format!("/runs/{}", s.run_id)>{format!("{} #{} attempt {}", s.job, s.run_id, s.attempt)}</a>
                            {format!(
                                " — {} {}",
                                human_ms(s.duration_ms as f64),
                                if s.running { "so far, still running" } else { "" }
                            )}
                        </li>
                    }).collect_view()}
                </ul>
            })}
        </section>
        <div class="two-up">
            <section class="card" data-testid="next-fires">
                <h2>"Next ticks"</h2>
                {if o.next_fires.is_empty() {
                    view! { <p class="muted">"No enabled job has a tick ahead."</p> }.into_any()
                } else {
                    view! {
                        <ol class="plain">
                            {o.next_fires.into_iter().map(|f| view! {
                                <li><a href=format!("/jobs/{}", f.job_id)>{f.job}</a>" "<span class="muted" title=when(f.at)>{in_time(f.at, now)}</span></li>
                            }).collect_view()}
                        </ol>
                    }.into_any()
                }}
            </section>
            <section class="card" data-testid="last-failures">
                <h2>"Last failures"</h2>
                {if o.failures.is_empty() {
                    view! { <p class="muted">"No run has ended dead."</p> }.into_any()
                } else {
                    view! {
                        <ol class="plain">
                            {o.failures.into_iter().map(|f| view! {
                                <li>
                                    <a href=format!("/runs/{}", f.run_id)>{format!("{} #{}", f.job, f.run_id)}</a>
                                    " "<span class="muted" title=when(f.finished_at)>{ago(f.finished_at, now)}</span>
                                    <div class="small">{f.error_class.map(|c| format!("{c}: "))}{f.error.unwrap_or_default()}</div>
                                </li>
                            }).collect_view()}
                        </ol>
                    }.into_any()
                }}
            </section>
        </div>
    }
}

/// `in 4 min`.
fn in_time(t: DateTime<Utc>, now: DateTime<Utc>) -> String {
    let ms = (t - now).num_milliseconds().max(0);
    format!("in {}", human_ms(ms as f64))
}

/// The chart's text equivalent: totals, and the worst hour.
#[component]
fn RunsText(buckets: Vec<HourBucket>) -> impl IntoView {
    let (ok, failed, other) = buckets.iter().fold((0, 0, 0), |(a, b, c), h| {
        (a + h.succeeded, b + h.failed, c + h.other)
    });
    let worst = buckets
        .iter()
        .filter(|b| b.failed > 0)
        .max_by_key(|b| b.failed)
        .map(|b| {
            format!(
                " Most failures in one hour: {} at {}.",
                b.failed,
                b.hour.format("%H:00 UTC")
            )
        });
    let total = ok + failed + other;
    view! {
        <p class="muted" data-testid="runs-total">
            {if total == 0 {
                "No runs yet: once jobs run, each hour shows how they ended.".to_string()
            } else {
                format!("{total} runs in the last 24 hours: {ok} succeeded, {failed} dead, {other} in progress or otherwise ended.{}", worst.unwrap_or_default())
            }}
        </p>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{TimeZone, Utc};

    #[test]
    fn chart_has_one_column_per_hour_three_bars_and_the_failure_rate() {
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
        assert_eq!(json["series"].as_array().unwrap().len(), 4);
        assert_eq!(json["series"][0]["data"], serde_json::json!([0, 1, 2]));
        // One failure each hour: 1 of 1, 1 of 2, 1 of 3 ended runs failed.
        assert_eq!(
            json["series"][3]["data"],
            serde_json::json!([{"value": 100.0}, {"value": 50.0}, {"value": 33.3}])
        );
        assert_eq!(json["series"][3]["yAxisIndex"], 1.0);
    }

    #[test]
    fn tiles_say_what_is_wrong_and_link_to_the_list_behind_them() {
        use crate::views::overview::Change;
        let now = Utc.with_ymd_and_hms(2026, 12, 2, 12, 0, 0).unwrap();
        let quiet = tiles(&Tiles::default(), now);
        assert!(
            quiet.iter().all(|t| !t.alarm || t.key == "nodes"),
            "{quiet:?}"
        );
        let t = Tiles {
            runs: Change { now: 10, before: 7 },
            succeeded: Change { now: 9, before: 7 },
            dead: Change { now: 1, before: 0 },
            failed_queue: 2,
            failed_oldest: Some(now - chrono::Duration::minutes(90)),
            failed_joined: 1,
            failing_jobs: 1,
            escalated_jobs: 1,
            nodes_live: 2,
            ..Tiles::default()
        };
        let shown = tiles(&t, now);
        let tile = |key: &str| shown.iter().find(|t| t.key == key).unwrap();
        assert_eq!(tile("runs").detail, "+3 vs the 24 h before");
        assert_eq!(tile("success").value, "90.0 %");
        assert_eq!(tile("success").detail, "1 dead; 100 % the 24 h before");
        assert_eq!(
            tile("failed").detail,
            "oldest waiting 1 h 30 min ago; 1 joined in 24 h"
        );
        assert_eq!(tile("failed").href, "/failed");
        assert_eq!(tile("failing").href, "/jobs?state=failing");
        assert_eq!(tile("failing").detail, "1 escalated");
        assert!(tile("failed").alarm && tile("failing").alarm && !tile("nodes").alarm);
    }
}
