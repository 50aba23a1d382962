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
use crate::components::retry_evidence::{Evidence, JobHistory, RetryEvidence};
use crate::domain::duration::{self, DurationError};
use crate::domain::recovery::{Replay, replay};
use crate::domain::retry::{
    Jitter, RetryError, RetryInput, RetryPolicy, Warning, WarningContext, presets,
    success_probability,
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

/// What every part of the editor reads: the fields as typed and the policy they make.
#[derive(Clone, Copy)]
struct Editing {
    retry: RwSignal<RetryInput>,
    parsed: Memo<Result<RetryPolicy, Vec<RetryError>>>,
    /// The last save's errors; those for `retry.*` show beside their field.
    saved_errors: Signal<Option<AppError>>,
    /// When the latest edit happened, for the redraw latency.
    input_at: StoredValue<Option<f64>>,
    readonly: bool,
}

impl Editing {
    /// An input handler that writes the event's value into the fields with `apply`.
    fn edit(self, apply: fn(&mut RetryInput, String)) -> impl Fn(leptos::ev::Event) + Copy {
        move |ev: leptos::ev::Event| {
            self.input_at.set_value(now_ms());
            let value = event_target_value(&ev);
            self.retry.update(|r| apply(r, value));
        }
    }

    /// What is wrong with `field`: as typed now, or else as the last save was told.
    fn field_error(self, field: &'static str) -> impl Fn() -> Option<String> + Copy {
        move || {
            let live = self.parsed.with(|p| {
                p.as_ref()
                    .err()
                    .and_then(|errors| errors.iter().find(|e| e.field() == field))
                    .map(|e| e.explain(current()))
            });
            live.or_else(|| {
                self.saved_errors
                    .get()
                    .and_then(|e| e.for_field(&format!("retry.{field}")))
            })
        }
    }
}

/// The reader's own figures, not saved with the job: how late a recovery may come and how
/// likely one attempt is to succeed.
#[derive(Clone, Copy)]
struct Assumptions {
    tolerance: RwSignal<String>,
    tolerance_ms: Memo<Result<Option<u64>, DurationError>>,
    success_pct: RwSignal<u32>,
}

impl Assumptions {
    fn new() -> Self {
        let tolerance = RwSignal::new(String::new());
        let tolerance_ms = Memo::new(move |_| {
            tolerance.with(|t| {
                let t = t.trim();
                (!t.is_empty()).then(|| duration::parse_ms(t)).transpose()
            })
        });
        Self {
            tolerance,
            tolerance_ms,
            success_pct: RwSignal::new(50),
        }
    }

    fn success(self) -> f64 {
        f64::from(self.success_pct.get()) / 100.0
    }
}

/// The clock the concrete retry times count from, ticking each second in the browser.
fn ticking_now() -> RwSignal<DateTime<Utc>> {
    let now = RwSignal::new(Utc::now());
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
    now
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
    let assume = Assumptions::new();
    let now = ticking_now();
    let ed = Editing {
        retry,
        parsed: Memo::new(move |_| retry.with(RetryPolicy::parse)),
        saved_errors,
        input_at: StoredValue::new(None::<f64>),
        readonly,
    };
    let parsed = ed.parsed;
    let warnings = Memo::new(move |_| match parsed.get() {
        Ok(policy) => policy.warnings(&WarningContext {
            cron_period_ms: cron_period_ms.get(),
            tolerance_ms: assume.tolerance_ms.get().ok().flatten(),
        }),
        Err(_) => Vec::new(),
    });
    // With enough episodes, what the edited policy would have recovered of them replaces the
    // guessed per-attempt rate, in the facts and as the chart's second axis.
    let scoped = Evidence::new(&history);
    let evidence = Memo::new(move |_| {
        let policy = parsed.get().ok()?;
        scoped
            .episodes
            .with(|e| e.as_deref().map(|e| replay(&policy, e)))
    });
    let times = move || {
        parsed.get().ok().map(|policy| {
            view! {
                <RetryTimes
                    policy
                    now=now.get()
                    zone=zone.get().unwrap_or_else(ZoneTable::utc)
                    success=assume.success()
                />
            }
        })
    };
    // Redraw latency: from the input event to the end of ECharts' setOption.
    let redraw_ms = RwSignal::new(None::<f64>);
    view! {
        <div
            class="retry-editor"
            data-testid="retry-editor"
            data-redraw-ms=move || redraw_ms.get().map(|ms| format!("{ms:.2}"))
        >
            <Presets ed />
            <RetryControls ed assume />
            <RetryOutput ed assume warnings evidence redraw_ms />
            <RetryEvidence
                history
                evidence=scoped
                edited=Signal::derive(move || parsed.get().ok())
                edited_replay=evidence
                in_force
                retry
                readonly
            />
            {times}
        </div>
    }
    .into_any()
}

/// The named policies, one click each.
#[component]
fn Presets(ed: Editing) -> impl IntoView {
    let buttons = presets()
        .into_iter()
        .map(|(key, _, policy)| {
            let (short, label) = retry_preset(key);
            view! {
                <button
                    type="button"
                    class="secondary"
                    title=label
                    data-preset=key
                    disabled=ed.readonly
                    on:click=move |_| {
                        ed.input_at.set_value(now_ms());
                        ed.retry.set(policy.to_input());
                    }
                >
                    {short}
                </button>
            }
        })
        .collect_view();
    view! {
        <div class="presets" role="group" aria-label=t!("retry-presets")>
            <span class="muted">{t!("retry-presets")}":"</span>
            {buttons}
        </div>
    }
}

/// F, M, C, jitter and cap, and the reader's assumptions.
#[component]
fn RetryControls(ed: Editing, assume: Assumptions) -> impl IntoView {
    let retry = ed.retry;
    view! {
        <div class="retry-controls">
            <FirstInterval ed />
            <SliderField
                id="retry-multiplier"
                label=t!("retry-multiplier")
                slider_label=t!("retry-multiplier-slider")
                field="multiplier"
                range=("1", "8", "0.1")
                readonly=ed.readonly
                value=Signal::derive(move || retry.with(|r| r.multiplier.clone()))
                on_input=Callback::new(ed.edit(|r, v| r.multiplier = v))
                error=Signal::derive(ed.field_error("multiplier"))
            />
            <SliderField
                id="retry-max"
                label=t!("retry-max")
                slider_label=t!("retry-max-slider")
                field="max_retries"
                range=("1", "16", "1")
                readonly=ed.readonly
                value=Signal::derive(move || retry.with(|r| r.max_retries.clone()))
                on_input=Callback::new(ed.edit(|r, v| r.max_retries = v))
                error=Signal::derive(ed.field_error("max_retries"))
            />
            <JitterAndCap ed />
            <AssumptionFields assume />
        </div>
    }
}

/// The first interval: a slider over common stops and a field that takes any value.
#[component]
fn FirstInterval(ed: Editing) -> impl IntoView {
    let retry = ed.retry;
    let first_index =
        move || retry.with(|r| duration::parse_ms(&r.first).map(nearest_step).unwrap_or(0));
    view! {
        <div class="control">
            <label for="retry-first">{t!("retry-first")}</label>
            <input
                type="range"
                aria-label=t!("retry-first-slider")
                min="0"
                max=(FIRST_STEPS_MS.len() - 1).to_string()
                step="1"
                disabled=ed.readonly
                prop:value=move || first_index().to_string()
                on:input=ed.edit(|r, v| {
                    if let Some(ms) = v.parse::<usize>().ok().and_then(|i| FIRST_STEPS_MS.get(i)) {
                        r.first = duration::format_ms(*ms);
                    }
                })
            />
            <input
                id="retry-first"
                name="retry_first"
                type="text"
                disabled=ed.readonly
                prop:value=move || retry.with(|r| r.first.clone())
                on:input=ed.edit(|r, v| r.first = v)
            />
            <p class="field-error" data-field="retry.first">{ed.field_error("first")}</p>
        </div>
    }
}

#[component]
fn JitterAndCap(ed: Editing) -> impl IntoView {
    let retry = ed.retry;
    let jitters = Jitter::ALL
        .iter()
        .map(|j| view! { <option value=j.as_str()>{jitter_name(*j)}</option> })
        .collect_view();
    view! {
        <div class="control">
            <label for="retry-jitter">{t!("retry-jitter")}</label>
            <select
                id="retry-jitter"
                disabled=ed.readonly
                prop:value=move || retry.with(|r| r.jitter.clone())
                on:change=ed.edit(|r, v| r.jitter = v)
            >
                {jitters}
            </select>
            <label for="retry-cap">{t!("retry-cap")}</label>
            <input
                id="retry-cap"
                type="text"
                placeholder=t!("retry-cap-none")
                disabled=ed.readonly
                prop:value=move || retry.with(|r| r.cap.clone())
                on:input=ed.edit(|r, v| r.cap = v)
            />
            <p class="field-error" data-field="retry.cap">{ed.field_error("cap")}</p>
        </div>
    }
}

/// The tolerance and the per-attempt success chance: the reader's, not the job's.
#[component]
fn AssumptionFields(assume: Assumptions) -> impl IntoView {
    let Assumptions {
        tolerance,
        tolerance_ms,
        success_pct,
    } = assume;
    let tolerance_error = move || {
        tolerance_ms
            .get()
            .err()
            .map(|e| t!("retry-tolerance-error", error = e.explain(current())))
    };
    view! {
        <div class="control">
            <label for="retry-tolerance">{t!("retry-tolerance")}</label>
            <input
                id="retry-tolerance"
                type="text"
                placeholder=t!("retry-tolerance-example")
                prop:value=move || tolerance.get()
                on:input=move |ev| tolerance.set(event_target_value(&ev))
            />
            <p class="field-error">{tolerance_error}</p>
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
    }
}

/// The curve, the facts and the warnings, redrawn on every edit; `redraw_ms` is set to how
/// long the last redraw took.
#[component]
fn RetryOutput(
    ed: Editing,
    assume: Assumptions,
    warnings: Memo<Vec<Warning>>,
    evidence: Memo<Option<Replay>>,
    redraw_ms: RwSignal<Option<f64>>,
) -> impl IntoView {
    let parsed = ed.parsed;
    let chart = Signal::derive(move || {
        parsed.get().ok().map(|policy| {
            let recovery = evidence.with(|r| r.as_ref().map(|r| r.recovered_by_retry.clone()));
            warnings.with(|w| retry_chart(&policy, w, recovery.as_deref()))
        })
    });
    let on_drawn = Callback::new(move |()| {
        if let (Some(start), Some(end)) = (ed.input_at.get_value(), now_ms()) {
            ed.input_at.set_value(None);
            redraw_ms.set(Some(end - start));
        }
    });
    view! {
        <div class="retry-output">
            <div class="retry-chart">
                <EChart id="retry-chart" chart=chart height=320 on_drawn=on_drawn />
            </div>
            <aside class="retry-facts">
                {move || facts(parsed.get(), evidence.get(), assume.success())}
                <ul class="warnings" data-testid="warnings">
                    {move || warnings.get().into_iter().map(warning_item).collect_view()}
                </ul>
            </aside>
        </div>
    }
}

/// The total wait, the chance of recovery (replayed from the job's past when there is one)
/// and how sensitive the last retry is to M and C.
fn facts(
    parsed: Result<RetryPolicy, Vec<RetryError>>,
    evidence: Option<Replay>,
    success: f64,
) -> AnyView {
    let Ok(policy) = parsed else {
        return view! { <p class="muted">{t!("retry-fix-fields")}</p> }.into_any();
    };
    let c = policy.max_retries();
    let (recovery_label, recovery) = match evidence {
        Some(replayed) => (t!("retry-recovered-past", count = c), replayed.recovered),
        None => (
            t!("retry-recovered-within", count = c),
            success_probability(success, u32::from(c)),
        ),
    };
    let per_m = t!(
        "retry-per-m",
        wait = human_ms(policy.sensitivity_to_multiplier(c) * 0.1)
    );
    let per_retry = t!(
        "retry-per-retry",
        wait = human_ms(policy.sensitivity_to_retries(c))
    );
    view! {
        <dl class="facts">
            <dt>{t!("retry-total-wait")}</dt>
            <dd data-testid="total-wait">{human_ms(policy.total_ms())}</dd>
            <dt>{recovery_label}</dt>
            <dd data-testid="recovery">{current().percent(recovery)}</dd>
            <dt>{t!("retry-dm", retry = c)}</dt>
            <dd data-testid="sensitivity-m">{per_m}</dd>
            <dt>{t!("retry-dn", retry = c)}</dt>
            <dd data-testid="sensitivity-n">{per_retry}</dd>
        </dl>
    }
    .into_any()
}

/// One warning, led by the retries it is about.
fn warning_item(w: Warning) -> impl IntoView {
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
