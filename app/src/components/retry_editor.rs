//! The retry editor: sliders and fields for F, M and C, jitter and cap, and — recomputed in the
//! browser on every move with the same functions the engine uses — the curve, its warnings, the
//! concrete retry times and the chance of recovery. No server round trip.

use crate::i18n::current;
use crate::i18n::errors::Explain;
use crate::i18n::words::{jitter_name, retry_preset};
use crate::t;
use chrono::{DateTime, Duration, Utc};
use leptos::prelude::*;

use crate::api::AppError;
use crate::components::chart::EChart;
use crate::components::retry_chart::retry_chart;
use crate::components::retry_evidence::{JobHistory, RetryEvidence};
use crate::domain::duration;
use crate::domain::recovery::{Episode, replay};
use crate::domain::retry::{
    Jitter, RetryInput, RetryPolicy, WarningContext, presets, success_probability,
};
use crate::i18n::ZoneTable;
use crate::i18n::duration as human_ms;

/// Stops of the first-interval slider; the text field beside it takes any value.
const FIRST_STEPS_MS: &[u64] = &[
    100, 200, 500, 1_000, 2_000, 5_000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000,
    900_000, 1_800_000, 3_600_000,
];

fn nearest_step(ms: u64) -> usize {
    FIRST_STEPS_MS
        .iter()
        .enumerate()
        .min_by_key(|(_, step)| step.abs_diff(ms))
        .map_or(0, |(i, _)| i)
}

/// Milliseconds since page load, for measuring redraws (browser only).
fn now_ms() -> Option<f64> {
    #[cfg(feature = "hydrate")]
    {
        web_sys::window()
            .and_then(|w| w.performance())
            .map(|p| p.now())
    }
    #[cfg(not(feature = "hydrate"))]
    {
        None
    }
}

#[component]
pub fn RetryEditor(
    retry: RwSignal<RetryInput>,
    /// The job's shortest cron period, for the "overruns the next run" warning.
    #[prop(into)]
    cron_period_ms: Signal<Option<u64>>,
    /// The job's time zone, for the concrete retry times (UTC while it is unknown).
    #[prop(into)]
    zone: Signal<Option<ZoneTable>>,
    /// The last save's errors; those for `retry.*` show beside their field.
    #[prop(into)]
    saved_errors: Signal<Option<AppError>>,
    /// The job's failure episodes, for the evidence panel.
    #[prop(optional)]
    history: JobHistory,
    /// The policy saved with the job, replayed beside the edited one.
    #[prop(default = None)]
    in_force: Option<RetryPolicy>,
    #[prop(default = false)] readonly: bool,
) -> impl IntoView {
    let tolerance = RwSignal::new(String::new());
    let success_pct = RwSignal::new(50u32);
    let now = RwSignal::new(Utc::now());
    // The concrete times follow the clock; the interval exists only in the browser.
    #[cfg(feature = "hydrate")]
    {
        let handle = set_interval_with_handle(
            move || now.set(Utc::now()),
            std::time::Duration::from_secs(1),
        );
        if let Ok(handle) = handle {
            on_cleanup(move || handle.clear());
        }
    }

    let parsed = Memo::new(move |_| retry.with(RetryPolicy::parse));
    let tolerance_ms = Memo::new(move |_| {
        tolerance.with(|t| {
            let t = t.trim();
            (!t.is_empty()).then(|| duration::parse_ms(t)).transpose()
        })
    });
    let warnings = Memo::new(move |_| match parsed.get() {
        Ok(policy) => policy.warnings(&WarningContext {
            cron_period_ms: cron_period_ms.get(),
            tolerance_ms: tolerance_ms.get().ok().flatten(),
        }),
        Err(_) => Vec::new(),
    });
    // With enough episodes, what the edited policy would have recovered of them replaces the
    // guessed per-attempt rate, in the facts and as the chart's second axis.
    let episodes = StoredValue::new(history.replayable().map(<[Episode]>::to_vec));
    let evidence = Memo::new(move |_| {
        let policy = parsed.get().ok()?;
        episodes.with_value(|e| e.as_deref().map(|e| replay(&policy, e)))
    });
    let chart = Signal::derive(move || {
        parsed.get().ok().map(|policy| {
            let recovery = evidence.with(|r| r.as_ref().map(|r| r.recovered_by_retry.clone()));
            warnings.with(|w| retry_chart(&policy, w, recovery.as_deref()))
        })
    });

    // Redraw latency: from the input event to the end of ECharts' setOption.
    let input_at = StoredValue::new(None::<f64>);
    let redraw_ms = RwSignal::new(None::<f64>);
    let on_drawn = Callback::new(move |()| {
        if let (Some(start), Some(end)) = (input_at.get_value(), now_ms()) {
            input_at.set_value(None);
            redraw_ms.set(Some(end - start));
        }
    });
    let edit = move |apply: fn(&mut RetryInput, String)| {
        move |ev: leptos::ev::Event| {
            input_at.set_value(now_ms());
            let value = event_target_value(&ev);
            retry.update(|r| apply(r, value));
        }
    };

    let field_error = move |field: &'static str| {
        move || {
            let live = parsed.with(|p| {
                p.as_ref()
                    .err()
                    .and_then(|errors| errors.iter().find(|e| e.field() == field))
                    .map(|e| e.explain(current()))
            });
            live.or_else(|| {
                saved_errors
                    .get()
                    .and_then(|e| e.for_field(&format!("retry.{field}")))
            })
        }
    };

    let first_index =
        move || retry.with(|r| duration::parse_ms(&r.first).map(nearest_step).unwrap_or(0));

    view! {
        <div
            class="retry-editor"
            data-testid="retry-editor"
            data-redraw-ms=move || redraw_ms.get().map(|ms| format!("{ms:.2}"))
        >
            {view! {
            <div class="presets" role="group" aria-label=t!("retry-presets")>
                <span class="muted">{t!("retry-presets")}":"</span>
                {presets()
                    .into_iter()
                    .map(|(key, _, policy)| {
                        let (short, label) = retry_preset(key);
                        view! {
                            <button
                                type="button"
                                class="secondary"
                                title=label
                                data-preset=key
                                disabled=readonly
                                on:click=move |_| {
                                    input_at.set_value(now_ms());
                                    retry.set(policy.to_input());
                                }
                            >
                                {short}
                            </button>
                        }
                    })
                    .collect_view()}
            </div>
            }.into_any()}

            {view! {
            <div class="retry-controls">
                <div class="control">
                    <label for="retry-first">{t!("retry-first")}</label>
                    <input
                        type="range"
                        aria-label=t!("retry-first-slider")
                        min="0"
                        max=(FIRST_STEPS_MS.len() - 1).to_string()
                        step="1"
                        disabled=readonly
                        prop:value=move || first_index().to_string()
                        on:input=edit(|r, v| {
                            if let Some(ms) = v.parse::<usize>().ok().and_then(|i| FIRST_STEPS_MS.get(i)) {
                                r.first = duration::format_ms(*ms);
                            }
                        })
                    />
                    <input
                        id="retry-first"
                        name="retry_first"
                        type="text"
                        disabled=readonly
                        prop:value=move || retry.with(|r| r.first.clone())
                        on:input=edit(|r, v| r.first = v)
                    />
                    <p class="field-error" data-field="retry.first">{field_error("first")}</p>
                </div>
                <SliderField
                    id="retry-multiplier"
                    label=t!("retry-multiplier")
                    slider_label=t!("retry-multiplier-slider")
                    field="multiplier"
                    range=("1", "8", "0.1")
                    readonly
                    value=Signal::derive(move || retry.with(|r| r.multiplier.clone()))
                    on_input=Callback::new(edit(|r, v| r.multiplier = v))
                    error=Signal::derive(field_error("multiplier"))
                />
                <SliderField
                    id="retry-max"
                    label=t!("retry-max")
                    slider_label=t!("retry-max-slider")
                    field="max_retries"
                    range=("1", "16", "1")
                    readonly
                    value=Signal::derive(move || retry.with(|r| r.max_retries.clone()))
                    on_input=Callback::new(edit(|r, v| r.max_retries = v))
                    error=Signal::derive(field_error("max_retries"))
                />
                <div class="control">
                    <label for="retry-jitter">{t!("retry-jitter")}</label>
                    <select
                        id="retry-jitter"
                        disabled=readonly
                        prop:value=move || retry.with(|r| r.jitter.clone())
                        on:change=edit(|r, v| r.jitter = v)
                    >
                        {Jitter::ALL
                            .iter()
                            .map(|j| view! { <option value=j.as_str()>{jitter_name(*j)}</option> })
                            .collect_view()}
                    </select>
                    <label for="retry-cap">{t!("retry-cap")}</label>
                    <input
                        id="retry-cap"
                        type="text"
                        placeholder=t!("retry-cap-none")
                        disabled=readonly
                        prop:value=move || retry.with(|r| r.cap.clone())
                        on:input=edit(|r, v| r.cap = v)
                    />
                    <p class="field-error" data-field="retry.cap">{field_error("cap")}</p>
                </div>
                <div class="control">
                    <label for="retry-tolerance">{t!("retry-tolerance")}</label>
                    <input
                        id="retry-tolerance"
                        type="text"
                        placeholder=t!("retry-tolerance-example")
                        prop:value=move || tolerance.get()
                        on:input=move |ev| tolerance.set(event_target_value(&ev))
                    />
                    <p class="field-error">
                        {move || tolerance_ms.get().err().map(|e| t!("retry-tolerance-error", error = e.explain(current())))}
                    </p>
                    <label for="retry-success">
                        {move || t!("retry-success-chance", pct = success_pct.get())}
                    </label>
                    <input
                        id="retry-success"
                        type="range"
                        min="1"
                        max="99"
                        step="1"
                        prop:value=move || success_pct.get().to_string()
                        on:input=move |ev| {
                            if let Ok(v) = event_target_value(&ev).parse() {
                                success_pct.set(v);
                            }
                        }
                    />
                </div>
            </div>
            }.into_any()}

            {view! {
            <div class="retry-output">
                <div class="retry-chart">
                    <EChart id="retry-chart" chart=chart height=320 on_drawn=on_drawn />
                </div>
                <aside class="retry-facts">
                    {move || match parsed.get() {
                        Err(_) => {
                            view! {
                                <p class="muted">{t!("retry-fix-fields")}</p>
                            }
                                .into_any()
                        }
                        Ok(policy) => {
                            let c = policy.max_retries();
                            let p = f64::from(success_pct.get()) / 100.0;
                            let (recovery_label, recovery) = match evidence.get() {
                                Some(replayed) => (
                                    t!("retry-recovered-past", count = c),
                                    replayed.recovered,
                                ),
                                None => (
                                    t!("retry-recovered-within", count = c),
                                    success_probability(p, u32::from(c)),
                                ),
                            };
                            view! {
                                <dl class="facts">
                                    <dt>{t!("retry-total-wait")}</dt>
                                    <dd data-testid="total-wait">{human_ms(policy.total_ms())}</dd>
                                    <dt>{recovery_label}</dt>
                                    <dd data-testid="recovery">
                                        {crate::i18n::current().percent(recovery)}
                                    </dd>
                                    <dt>{t!("retry-dm", retry = c)}</dt>
                                    <dd data-testid="sensitivity-m">
                                        {t!("retry-per-m", wait = human_ms(policy.sensitivity_to_multiplier(c) * 0.1))}
                                    </dd>
                                    <dt>{t!("retry-dn", retry = c)}</dt>
                                    <dd data-testid="sensitivity-n">
                                        {t!("retry-per-retry", wait = human_ms(policy.sensitivity_to_retries(c)))}
                                    </dd>
                                </dl>
                            }
                                .into_any()
                        }
                    }}
                    <ul class="warnings" data-testid="warnings">
                        {move || {
                            warnings
                                .get()
                                .into_iter()
                                .map(|w| {
                                    let retries = match (w.retries.first(), w.retries.last()) {
                                        (Some(a), Some(b)) if a == b => t!("retry-one", retry = *a),
                                        (Some(a), Some(b)) => t!("retry-range", first = *a, last = *b),
                                        _ => String::new(),
                                    };
                                    view! {
                                        <li class="warning" data-kind=format!("{:?}", w.kind)>
                                            <strong>{retries}</strong>
                                            " "
                                            {w.problem.explain(current())}
                                        </li>
                                    }
                                })
                                .collect_view()
                        }}
                    </ul>
                </aside>
            </div>
            }.into_any()}

            <RetryEvidence
                history
                edited=Signal::derive(move || parsed.get().ok())
                edited_replay=evidence
                in_force
                retry
                readonly
            />

            {move || {
                parsed
                    .get()
                    .ok()
                    .map(|policy| {
                        view! {
                            <RetryTimes
                                policy
                                now=now.get()
                                zone=zone.get().unwrap_or_else(ZoneTable::utc)
                                success=f64::from(success_pct.get()) / 100.0
                            />
                        }
                    })
            }}
        </div>
    }
    .into_any()
}

/// A slider and a number field for one value, kept in step, with the value's error below.
#[component]
fn SliderField(
    id: &'static str,
    label: String,
    slider_label: String,
    /// The retry field this edits, for the error's `data-field`.
    field: &'static str,
    /// (min, max, step)
    range: (&'static str, &'static str, &'static str),
    readonly: bool,
    value: Signal<String>,
    on_input: Callback<leptos::ev::Event>,
    error: Signal<Option<String>>,
) -> impl IntoView {
    let (min, max, step) = range;
    view! {
        <div class="control">
            <label for=id>{label}</label>
            <input
                type="range"
                aria-label=slider_label
                min=min
                max=max
                step=step
                disabled=readonly
                prop:value=move || value.get()
                on:input=move |ev| on_input.run(ev)
            />
            <input
                id=id
                type="number"
                min=min
                max=max
                step=step
                disabled=readonly
                prop:value=move || value.get()
                on:input=move |ev| on_input.run(ev)
            />
            <p class="field-error" data-field=format!("retry.{field}")>{move || error.get()}</p>
        </div>
    }
}

/// "If the first attempt failed now, retry n would start at …".
#[component]
fn RetryTimes(
    policy: RetryPolicy,
    now: DateTime<Utc>,
    zone: ZoneTable,
    success: f64,
) -> impl IntoView {
    let tz = zone;
    let envelope = policy.jitter_envelope_ms();
    let jittered = policy.jitter() != Jitter::None;
    let rows = policy
        .delays_ms()
        .into_iter()
        .zip(policy.cumulative_ms())
        .zip(envelope)
        .enumerate()
        .map(|(i, ((delay, cumulative), (lo, hi)))| {
            let n = i + 1;
            let at = now + Duration::milliseconds(cumulative.round() as i64);
            let local = at.with_timezone(&tz);
            let same_day = local.date_naive() == now.with_timezone(&tz).date_naive();
            let when = if same_day {
                local.format("%H:%M:%S").to_string()
            } else {
                local.format("%a %d %b %H:%M:%S").to_string()
            };
            let wait = if jittered {
                format!("{} ({} – {})", human_ms(delay), human_ms(lo), human_ms(hi))
            } else {
                human_ms(delay)
            };
            view! {
                <tr>
                    <td>{n}</td>
                    <td>{wait}</td>
                    <td>{human_ms(cumulative)}</td>
                    <td>{when}</td>
                    <td>{crate::i18n::current().percent(success_probability(success, n as u32))}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <table tabindex="0" class="table compact" data-testid="retry-times">
            <caption>
                {t!("retry-times-caption", zone = tz.name())}
                {jittered.then(|| format!(" {}", t!("retry-times-jitter")))}
            </caption>
            <thead>
                <tr>
                    <th>{t!("retry-col-retry")}</th>
                    <th>{t!("retry-col-waits")}</th>
                    <th>{t!("retry-col-after")}</th>
                    <th>{t!("retry-col-at")}</th>
                    <th>{t!("retry-col-recovered")}</th>
                </tr>
            </thead>
            <tbody>{rows}</tbody>
        </table>
    }
}
