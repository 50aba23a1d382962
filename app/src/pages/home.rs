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

use crate::i18n::current;
use crate::i18n::errors::Explain;
use leptos_meta::Title;

use crate::api::failed::RetriggerRun;
use crate::api::overview::get_overview;
use crate::components::chart::EChart;
use crate::components::layout::use_is_admin;
use crate::components::status::{status_pill, when};
use crate::components::ticker::use_ticker;
use crate::i18n::duration;
use crate::i18n::words::error_class;
use crate::t;
use crate::views::overview::{
    Attention, Failure, NextFire, NodeWait, Overview, PoolUsage, SlowAttempt, Tiles,
};
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
                .name(t!("overview-chart-axis-failed"))
                .min(0)
                .max(100),
        )
        .series(series(&t!("overview-chart-succeeded"), "#2f9e44", |b| {
            b.succeeded
        }))
        .series(series(&t!("overview-chart-failed"), "#e03131", |b| {
            b.failed
        }))
        .series(series(&t!("overview-chart-other"), "#868e96", |b| b.other))
        .series(
            Line::new()
                .name(t!("overview-chart-failure-rate"))
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
    pub label: String,
    pub value: String,
    pub detail: String,
    pub href: String,
    /// Something is wrong: the tile is drawn in the alarm colour.
    pub alarm: bool,
}

/// `+3 vs the 24 h before` and the like; empty when both are zero.
fn versus(now: u64, before: u64) -> String {
    match (now, before) {
        (0, 0) => String::new(),
        (n, b) if n == b => t!("overview-versus-same"),
        (n, b) if n > b => t!("overview-versus-more", n = n - b),
        (n, b) => t!("overview-versus-fewer", n = b - n),
    }
}

fn percent(rate: f64) -> String {
    crate::i18n::current().percent(rate)
}

impl TileView {
    fn new(key: &'static str, label: String, value: String, href: &str) -> Self {
        Self {
            key,
            label,
            value,
            detail: String::new(),
            href: href.into(),
            alarm: false,
        }
    }

    fn detail(self, detail: String) -> Self {
        Self { detail, ..self }
    }

    fn alarm(self, alarm: bool) -> Self {
        Self { alarm, ..self }
    }
}

/// The tiles, in reading order: the runs, what needs attention, then deliveries, nodes and
/// traffic.
pub fn tiles(t: &Tiles, now: DateTime<Utc>) -> Vec<TileView> {
    let mut tiles = run_tiles(t);
    tiles.extend(attention_tiles(t, now));
    tiles.extend(system_tiles(t));
    tiles
}

/// Runs in 24 hours, their success rate, and what is running or waiting to retry.
fn run_tiles(t: &Tiles) -> Vec<TileView> {
    let (rate, rate_before) = t.success_rate();
    let success_detail = match (rate, rate_before) {
        (Some(_), Some(before)) => t!(
            "overview-success-detail",
            dead = t.dead.now,
            before = percent(before)
        ),
        (Some(_), None) => t!("overview-success-dead", dead = t.dead.now),
        (None, _) => t!("overview-success-none"),
    };
    vec![
        TileView::new(
            "runs",
            t!("overview-tile-runs"),
            t.runs.now.to_string(),
            "/runs?since=24",
        )
        .detail(versus(t.runs.now, t.runs.before)),
        TileView::new(
            "success",
            t!("overview-tile-success"),
            rate.map_or("—".into(), percent),
            "/runs?since=24&status=dead",
        )
        .detail(success_detail)
        .alarm(t.dead.now > 0),
        TileView::new(
            "running",
            t!("overview-tile-running"),
            t.running.to_string(),
            "/runs?status=running",
        ),
        TileView::new(
            "retrying",
            t!("overview-tile-retrying"),
            t.retry_wait.to_string(),
            "/runs?status=retry_wait",
        ),
    ]
}

/// The failed queue, failing jobs and how late runs start.
fn attention_tiles(t: &Tiles, now: DateTime<Utc>) -> Vec<TileView> {
    let failed_detail = match t.failed_oldest {
        Some(oldest) => t!(
            "overview-failed-detail",
            oldest = ago(oldest, now),
            joined = t.failed_joined
        ),
        None => t!("overview-failed-empty"),
    };
    let escalated = if t.escalated_jobs > 0 {
        t!("overview-failing-escalated", n = t.escalated_jobs)
    } else {
        String::new()
    };
    let late_before = t
        .late_p95_before_ms
        .map(|ms| t!("overview-late-before", before = duration(ms as f64)))
        .unwrap_or_default();
    vec![
        TileView::new(
            "failed",
            t!("overview-tile-failed"),
            t.failed_queue.to_string(),
            "/failed",
        )
        .detail(failed_detail)
        .alarm(t.failed_queue > 0),
        TileView::new(
            "failing",
            t!("overview-tile-failing"),
            t.failing_jobs.to_string(),
            "/jobs?state=failing",
        )
        .detail(escalated)
        .alarm(t.failing_jobs > 0),
        TileView::new(
            "late",
            t!("overview-tile-late"),
            t.late_p95_ms.map_or("—".into(), |ms| duration(ms as f64)),
            "/runs?since=24",
        )
        .detail(late_before)
        .alarm(t.late_p95_ms.is_some_and(|ms| ms > 60_000)),
    ]
}

/// Mail and chat deliveries, the nodes, and the day's traffic.
fn system_tiles(t: &Tiles) -> Vec<TileView> {
    let deliveries_href = if t.chat_failed > 0 && t.mail_failed == 0 {
        "/channels"
    } else {
        "/notifications?status=failed"
    };
    let deliveries = t!(
        "overview-deliveries-detail",
        mail = t.mail_failed,
        chat = t.chat_failed,
        waiting = t.deliveries_waiting
    );
    let lost = if t.nodes_lost > 0 {
        t!("overview-nodes-lost", n = t.nodes_lost)
    } else {
        t!("overview-nodes-none-lost")
    };
    let traffic = t!(
        "overview-traffic-detail",
        bots = t.bots.now,
        people_before = t.people.before,
        bots_before = t.bots.before
    );
    vec![
        TileView::new(
            "deliveries",
            t!("overview-tile-deliveries"),
            (t.mail_failed + t.chat_failed).to_string(),
            deliveries_href,
        )
        .detail(deliveries)
        .alarm(t.mail_failed + t.chat_failed > 0),
        TileView::new(
            "nodes",
            t!("overview-tile-nodes"),
            t!("overview-nodes-live", n = t.nodes_live),
            "/settings#nodes",
        )
        .detail(lost)
        .alarm(t.nodes_lost > 0 || t.nodes_live == 0),
        TileView::new(
            "traffic",
            t!("overview-tile-traffic"),
            t!("overview-traffic-people", n = t.people.now),
            "/traffic?range=today",
        )
        .detail(traffic),
    ]
}

/// `5 min ago`, from the server's clock.
fn ago(t: DateTime<Utc>, now: DateTime<Utc>) -> String {
    let ms = (now - t).num_milliseconds().max(0);
    t!("time-ago", time = duration(ms as f64))
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
            .map(|e| e.explain(current()))
    };

    view! {
        <Title text=t!("nav-overview") />
        <h1>{t!("nav-overview")}</h1>
        <p class="error" role="alert">{action_error}</p>
        <Transition fallback=|| view! { <p class="muted">{t!("loading")}</p> }>
            {move || Suspend::new(async move {
                let admin = admin.await;
                match overview.await {
                    Err(e) => view! { <p class="error">{e.explain(current())}</p> }.into_any(),
                    Ok(o) => view! { <OverviewBody o admin retrigger /> }.into_any(),
                }
            })}
        </Transition>
        <section class="card">
            <h2>{t!("overview-chart-heading")}</h2>
            <p class="muted small">
                {t!("overview-chart-explained")}
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
    let tile_links = tiles(&o.tiles, now)
        .into_iter()
        .map(|t| {
            let class = if t.alarm {
                "card tile alarm"
            } else {
                "card tile"
            };
            view! {
                <a class=class href=t.href data-testid=format!("tile-{}", t.key)>
                    <span class="muted">{t.label}</span>
                    <strong class="value">{t.value}</strong>
                    <span class="muted small">{t.detail}</span>
                </a>
            }
        })
        .collect_view();
    let retrigger = admin.then_some(retrigger);
    view! {
        <section class="tiles" aria-label=t!("overview-tiles-label")>{tile_links}</section>
        <section class="card" data-testid="attention">
            <h2>{t!("overview-attention-heading")}</h2>
            {attention_table(o.attention, now, retrigger)}
            {waiting_list(o.waiting, now)}
            {pool_list(o.pools)}
            {slow_list(o.slow)}
        </section>
        <div class="two-up">
            <section class="card" data-testid="next-fires">
                <h2>{t!("overview-next-heading")}</h2>
                {next_fires(o.next_fires, now)}
            </section>
            <section class="card" data-testid="last-failures">
                <h2>{t!("overview-failures-heading")}</h2>
                {last_failures(o.failures, now)}
            </section>
        </div>
    }
}

/// The runs that need someone, with Re-trigger for admins (`retrigger` is `None` for
/// everyone else).
fn attention_table(
    attention: Vec<Attention>,
    now: DateTime<Utc>,
    retrigger: Option<ServerAction<RetriggerRun>>,
) -> AnyView {
    if attention.is_empty() {
        return view! { <p class="muted">{t!("overview-attention-none")}</p> }.into_any();
    }
    let rows = attention
        .into_iter()
        .map(|a| attention_row(a, now, retrigger))
        .collect_view();
    view! {
        <div class="table-scroll">
            <table tabindex="0" class="table">
                <thead><tr><th>{t!("overview-attention-job")}</th><th>{t!("overview-attention-run")}</th><th>{t!("overview-attention-since")}</th><th>{t!("overview-attention-error")}</th>{retrigger.map(|_| view! { <th><span class="visually-hidden">{t!("table-actions")}</span></th> })}</tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
    .into_any()
}

fn attention_row(
    a: Attention,
    now: DateTime<Utc>,
    retrigger: Option<ServerAction<RetriggerRun>>,
) -> impl IntoView {
    let id = a.run_id;
    // A watched job's run ran elsewhere: nothing to start again from here.
    let in_queue = a.in_failed_queue && !a.watched;
    let watched = a
        .watched
        .then(|| view! { " " <span class="pill off">{crate::i18n::words::job_kind(crate::domain::job::Kind::Watch)}</span> });
    let action = retrigger.map(|retrigger| {
        view! {
            <td class="actions">
                {in_queue.then(|| view! {
                    <button type="button" class="secondary" on:click=move |_| {
                        if !crate::components::layout::confirm_while_paused() { return; }
                        retrigger.dispatch(RetriggerRun { id, timeout: None, retry: None });
                    }>{t!("action-retrigger")}</button>
                })}
            </td>
        }
    });
    view! {
        <tr data-job=a.job.clone()>
            <td><a href=format!("/jobs/{}", a.job_id)>{a.job.clone()}</a>{watched}</td>
            <td><a href=format!("/runs/{id}")>{format!("#{id} ")}</a>{status_pill(a.status)}</td>
            <td title=when(a.since)>{ago(a.since, now)}</td>
            <td class="small">{a.error_class.map(|c| format!("{}: ", error_class(c)))}{a.error.clone().unwrap_or_default()}</td>
            {action}
        </tr>
    }
}

/// Runs that no live node may take: which job, since when, and what it asks of a node.
fn waiting_list(waiting: Vec<NodeWait>, now: DateTime<Utc>) -> Option<impl IntoView> {
    (!waiting.is_empty()).then(|| {
        let items = waiting
            .into_iter()
            .map(|w| {
                let asks = match w.run_on.as_str() {
                    "" => t!("no-node-asks-commands"),
                    labels => t!("no-node-asks-labels", labels = labels.to_string()),
                };
                view! {
                    <li data-job=w.job.clone()>
                        <a href=format!("/runs/{}", w.run_id)>{format!("{} #{}", w.job, w.run_id)}</a>
                        " — "
                        {t!("overview-waiting-item", since = ago(w.since, now), asks = asks)}
                    </li>
                }
            })
            .collect_view();
        view! {
            <h3>{t!("overview-waiting-heading")}</h3>
            <ul class="plain" data-testid="waiting-for-node">{items}</ul>
        }
    })
}

/// The concurrency pools: how full each is, and how many runs wait for a place.
fn pool_list(pools: Vec<PoolUsage>) -> Option<impl IntoView> {
    (!pools.is_empty()).then(|| {
        let items = pools
            .into_iter()
            .map(|p| {
                // Full with runs waiting: the pool is what holds them back.
                let holding = p.running >= p.size.max(0) as u64 && p.waiting > 0;
                view! {
                    <li data-pool=p.name.clone() class:warn=holding>
                        <strong>{p.name.clone()}</strong>
                        " — "
                        {t!("overview-pool-item", running = p.running, size = p.size, waiting = p.waiting)}
                    </li>
                }
            })
            .collect_view();
        view! {
            <h3>{t!("overview-pools-heading")}</h3>
            <ul class="plain" data-testid="pools">{items}</ul>
        }
    })
}

/// Attempts that ran (or are running) far longer than their job usually takes.
fn slow_list(slow: Vec<SlowAttempt>) -> Option<impl IntoView> {
    (!slow.is_empty()).then(|| {
        let items = slow
            .into_iter()
            .map(|s| {
                let time = duration(s.duration_ms as f64);
                let time = if s.running {
                    t!("overview-slow-running", time = time)
                } else {
                    time
                };
                view! {
                    <li>
                        <a href=format!("/runs/{}", s.run_id)>{t!("overview-slow-attempt", job = s.job.clone(), run = s.run_id, attempt = s.attempt)}</a>
                        " — "
                        {time}
                    </li>
                }
            })
            .collect_view();
        view! {
            <h3>{t!("overview-slow-heading")}</h3>
            <p class="muted small">{t!("overview-slow-explained")}</p>
            <ul class="plain" data-testid="slow">{items}</ul>
        }
    })
}

fn next_fires(fires: Vec<NextFire>, now: DateTime<Utc>) -> AnyView {
    if fires.is_empty() {
        return view! { <p class="muted">{t!("overview-next-none")}</p> }.into_any();
    }
    let items = fires
        .into_iter()
        .map(|f| view! {
            <li><a href=format!("/jobs/{}", f.job_id)>{f.job}</a>" "<span class="muted" title=when(f.at)>{in_time(f.at, now)}</span></li>
        })
        .collect_view();
    view! { <ol class="plain">{items}</ol> }.into_any()
}

fn last_failures(failures: Vec<Failure>, now: DateTime<Utc>) -> AnyView {
    if failures.is_empty() {
        return view! { <p class="muted">{t!("overview-failures-none")}</p> }.into_any();
    }
    let items = failures
        .into_iter()
        .map(|f| view! {
            <li>
                <a href=format!("/runs/{}", f.run_id)>{format!("{} #{}", f.job, f.run_id)}</a>
                " "<span class="muted" title=when(f.finished_at)>{ago(f.finished_at, now)}</span>
                <div class="small">{f.error_class.map(|c| format!("{}: ", error_class(c)))}{f.error.unwrap_or_default()}</div>
            </li>
        })
        .collect_view();
    view! { <ol class="plain">{items}</ol> }.into_any()
}

/// `in 4 min`.
fn in_time(t: DateTime<Utc>, now: DateTime<Utc>) -> String {
    let ms = (t - now).num_milliseconds().max(0);
    t!("time-in", time = duration(ms as f64))
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
            t!(
                "overview-chart-worst",
                n = b.failed,
                hour = crate::i18n::zone().format(b.hour, "%H:00 %Z")
            )
        });
    let total = ok + failed + other;
    view! {
        <p class="muted" data-testid="runs-total">
            {if total == 0 {
                t!("overview-chart-empty")
            } else {
                let summary = t!("overview-chart-summary", total = total, ok = ok, failed = failed, other = other);
                match worst {
                    Some(worst) => format!("{summary} {worst}"),
                    None => summary,
                }
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
