//! One run's whole story: every attempt with its timing, timeout, outcome, class, message,
//! output tail and node — updated live while the run is still going — and the attempts' whole
//! output below.

use leptos::prelude::*;

use crate::i18n::current;
use crate::i18n::errors::Explain;
use leptos_meta::Title;
use leptos_router::hooks::{use_params_map, use_query_map};

use crate::api::failed::{ResolveRun, RetriggerRun, audit_entries};
use crate::api::runs::{ReleaseRun, get_run};
use crate::components::layout::{UserResource, use_current_user};
use crate::components::log_viewer::{LogViewer, use_log};
use crate::components::status::{outcome_pill, status_pill, when};
use crate::components::ticker::use_ticker;
use crate::domain::retry::RetryInput;
use crate::domain::run::{RunStatus, TimeoutKind};
use crate::i18n::duration;
use crate::i18n::words::{error_class, trigger};
use crate::t;
use crate::views::runs::{AttemptView, RunView};

#[component]
pub fn RunDetailPage() -> impl IntoView {
    let params = use_params_map();
    let id = move || {
        params
            .read()
            .get("id")
            .and_then(|id| id.parse::<i64>().ok())
    };
    let tick = use_ticker(1_000);
    // Once the run has ended there is nothing left to follow.
    let ended = RwSignal::new(false);
    let run = Resource::new(
        move || (id(), if ended.get() { 0 } else { tick.get() }),
        |(id, _)| async move {
            match id {
                Some(id) => get_run(id).await,
                None => Err(crate::api::AppError::NotFound("that run".into())),
            }
        },
    );
    Effect::new(move |_| {
        if let Some(Ok(r)) = run.get() {
            let active = r.status.is_active();
            ended.set(!active);
        }
    });

    // The log keeps its own place (screen, filter, marked term) while the story above it
    // refreshes.
    let query = use_query_map();
    let from_query = move |key: &str| query.with_untracked(|q| q.get(key));
    let log = use_log(
        id,
        from_query("attempt").and_then(|a| a.parse().ok()),
        from_query("line").and_then(|l| l.parse().ok()),
    );
    view! {
        <Transition fallback=|| view! { <p class="muted">{t!("loading")}</p> }>
            {move || Suspend::new(async move {
                match run.await {
                    Ok(run) => view! { <RunStory run /> }.into_any(),
                    Err(e) => view! { <h1>{t!("runs-col-run")}</h1><p class="error">{e.explain(current())}</p> }.into_any(),
                }
            })}
        </Transition>
        <LogViewer state=log />
    }
}

#[component]
fn RunStory(run: RunView) -> impl IntoView {
    let title = t!("run-title", run = run.id, job = run.job.clone());
    let in_queue = run.in_failed_queue();
    let me = use_current_user();
    let id = run.id;
    let held = (run.status == RunStatus::Blocked).then(|| {
        let why = run.last_error.clone().unwrap_or_else(|| t!("run-held"));
        view! { <HeldCard id why me /> }
    });
    let elsewhere = run.runs_elsewhere;
    let retrigger = in_queue.then(|| {
        view! {
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    me.await.ok().filter(|u| u.is_admin()).map(|_| view! { <RetriggerPanel id elsewhere /> })
                })}
            </Suspense>
        }
    });
    let attempts = run.attempts.clone();
    let children = run
        .is_parent()
        .then(|| view! { <ChildrenCard run=run.clone() /> });
    view! {
        <Title text=title.clone() />
        <h1>{title}</h1>
        <RunFacts run />
        {held}
        {retrigger}
        {children}
        <AttemptsCard attempts />
        <AuditCard id />
    }
    .into_any()
}

/// What the run is: its status, job, trigger, times, error, policy, overrides, parameters and
/// where it came from and went.
#[component]
fn RunFacts(run: RunView) -> impl IntoView {
    let error = view! {
        {run.last_error_class.map(|c| format!("{}: ", error_class(c)))}
        {run.last_error.clone().unwrap_or_else(|| "—".into())}
    };
    let cancel_requested = run
        .cancel_requested_at
        .filter(|_| run.status == RunStatus::Running)
        .map(|at| view! {
            <dt>{t!("run-cancel-requested")}</dt>
            <dd data-testid="run-cancel-requested">{t!("run-cancel-requested-at", at = when(at))}</dd>
        });
    let params = run.params.clone().map(|p| view! {
        <dt>{t!("run-parameters")}</dt><dd class="small" data-testid="run-params"><code>{p}</code></dd>
    });
    view! {
        <section class="card">
            <dl class="facts wide" data-testid="run-facts">
                <dt>{t!("runs-filter-status")}</dt><dd data-testid="run-status">{status_pill(run.status)}</dd>
                <dt>{t!("runs-filter-job")}</dt><dd><a href=format!("/jobs/{}", run.job_id)>{run.job.clone()}</a></dd>
                <dt>{t!("runs-col-trigger")}</dt><dd>{trigger(run.trigger)}</dd>
                <dt>{t!("runs-col-scheduled")}</dt><dd>{when(run.scheduled_for)}</dd>
                <dt>{t!("run-business-date")}</dt>
                <dd data-testid="run-business-date">
                    {run.business_date.map(|d| d.to_string()).unwrap_or_else(|| "—".into())}
                    {run.backfill_id.map(|id| view! { " " <span class="muted">{t!("run-from-backfill", id = id)}</span> })}
                </dd>
                <dt>{t!("run-next-attempt")}</dt><dd>{run.next_attempt_at.map(when).unwrap_or_else(|| "—".into())}</dd>
                <dt>{t!("run-finished")}</dt><dd>{run.finished_at.map(when).unwrap_or_else(|| "—".into())}</dd>
                <dt>{t!("run-idempotency-key")}</dt><dd><code>{run.idempotency_key.clone()}</code></dd>
                <dt>{t!("runs-col-error")}</dt>
                <dd>{error}</dd>
                <dt>{t!("run-policy")}</dt>
                <dd data-testid="run-policy">{policy_text(run.policy.clone().unwrap_or_default())}</dd>
                {overrides(&run)}
                {cancel_requested}
                {params}
                {lineage(&run)}
                {shard_of(&run)}
            </dl>
        </section>
    }
}

/// A child run's shard and the parent it is a part of.
fn shard_of(run: &RunView) -> Option<impl IntoView + use<>> {
    let (parent, shard) = (run.parent?, run.shard?);
    Some(view! {
        <dt>{t!("run-shard")}</dt>
        <dd data-testid="run-shard">
            {t!("run-shard-of", index = shard.index, total = shard.total)} " "
            <a href=format!("/runs/{parent}")>{format!("#{parent}")}</a>
        </dd>
    })
}

/// The retry policy the run was recorded with, in words when it reads as one.
fn policy_text(policy: String) -> AnyView {
    match crate::i18n::policy::snapshot(current(), &policy) {
        Some(text) => view! {
            {text}
            <details class="small"><summary>{t!("run-policy-recorded")}</summary><code>{policy.clone()}</code></details>
        }
        .into_any(),
        None if policy.is_empty() => view! { "—" }.into_any(),
        None => view! { <code class="small">{policy.clone()}</code> }.into_any(),
    }
}

/// A timeout or retry policy given to this run alone (a re-trigger's).
fn overrides(run: &RunView) -> impl IntoView + use<> {
    let timeout = run.override_timeout_ms.map(|ms| {
        view! { <dt>{t!("run-timeout-override")}</dt><dd>{t!("run-this-run-only", what = duration(ms as f64))}</dd> }
    });
    let retry = run.override_retry.clone().map(|r| {
        let text = crate::i18n::policy::retry_override(current(), &r).map_or_else(
            || view! { <code class="small">{r.clone()}</code> }.into_any(),
            |text| t!("run-this-run-only", what = text).into_any(),
        );
        view! { <dt>{t!("run-retry-override")}</dt><dd>{text}</dd> }
    });
    view! { {timeout} {retry} }
}

/// The run this one re-triggers, the runs that re-triggered it, and how it left the failed
/// queue.
fn lineage(run: &RunView) -> impl IntoView + use<> {
    let of = run.retrigger_of.map(|id| {
        view! { <dt>{t!("run-retrigger-of")}</dt><dd><a href=format!("/runs/{id}")>{format!("#{id}")}</a></dd> }
    });
    let again = (!run.retriggered_as.is_empty()).then(|| {
        let links = run
            .retriggered_as
            .iter()
            .map(|id| view! { <a href=format!("/runs/{id}")>{format!("#{id} ")}</a> })
            .collect_view();
        view! { <dt>{t!("run-retriggered-as")}</dt><dd data-testid="retriggered-as">{links}</dd> }
    });
    let by = run.resolved_by.clone().unwrap_or_default();
    let at = run.resolved_at.map(when).unwrap_or_default();
    let reason = run.resolution_reason.clone().map(|why| format!(": {why}"));
    let left = run.resolution.map(|r| {
        view! {
            <dt>{t!("run-left-queue")}</dt>
            <dd data-testid="resolution">
                {t!("run-resolution", how = r.to_string(), by = by, at = at)}
                {reason}
            </dd>
        }
    });
    view! { {of} {again} {left} }
}

/// A spread job's tick: how its shards stand ("1 of 2 failed") and each child run.
#[component]
fn ChildrenCard(run: RunView) -> impl IntoView {
    let count = run.children_count();
    let summary = if count.active > 0 {
        t!(
            "run-children-going",
            going = count.active,
            total = count.total
        )
    } else if count.failed > 0 {
        t!(
            "run-children-failed",
            failed = count.failed,
            total = count.total
        )
    } else if count.cancelled > 0 {
        t!(
            "run-children-cancelled",
            cancelled = count.cancelled,
            total = count.total
        )
    } else {
        t!("run-children-succeeded", total = count.total)
    };
    let rows = run
        .children
        .iter()
        .map(|c| {
            view! {
                <tr data-testid="child-run">
                    <td>{format!("{} / {}", c.shard.index, c.shard.total)}</td>
                    <td>{status_pill(c.status)}</td>
                    <td><a href=format!("/runs/{}", c.id)>{format!("#{}", c.id)}</a></td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <section class="card" data-testid="children">
            <h2>{t!("run-children")}</h2>
            <p data-testid="children-summary">{summary}</p>
            <table tabindex="0" class="table compact">
                <thead><tr><th>{t!("run-shard")}</th><th>{t!("runs-filter-status")}</th><th>{t!("runs-col-run")}</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </section>
    }
}

/// A run held because a job it depends on is failing; admins release it.
#[component]
fn HeldCard(id: i64, why: String, me: UserResource) -> impl IntoView {
    let release = ServerAction::<ReleaseRun>::new();
    view! {
        <section class="card" data-testid="held">
            <p>{why}</p>
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    me.await.ok().filter(|u| u.is_admin()).map(|_| view! {
                        <button type="button" on:click=move |_| { release.dispatch(ReleaseRun { id }); }>{t!("run-release")}</button>
                    })
                })}
            </Suspense>
            <p class="error">{move || release.value().get().and_then(Result::err).map(|e| e.explain(current()))}</p>
        </section>
    }
}

#[component]
fn AttemptsCard(attempts: Vec<AttemptView>) -> impl IntoView {
    let listed = if attempts.is_empty() {
        view! { <p class="muted">{t!("run-no-attempt")}</p> }.into_any()
    } else {
        view! {
            <table tabindex="0" class="table compact" data-testid="attempts">
                <thead>
                    <tr>
                        <th>"#"</th><th>{t!("run-col-started")}</th><th>{t!("run-col-duration")}</th><th>{t!("run-col-timeout")}</th>
                        <th>{t!("run-col-outcome")}</th><th>{t!("failed-col-class")}</th><th>{t!("run-col-message")}</th><th>{t!("run-col-node")}</th><th>{t!("run-col-load")}</th>
                    </tr>
                </thead>
                <tbody>{attempts.iter().map(attempt_row).collect_view()}</tbody>
            </table>
        }
        .into_any()
    };
    view! {
        <section class="card">
            <h2>{t!("runs-col-attempts")}</h2>
            {listed}
        </section>
    }
}

/// Who did what to the run, newest first.
#[component]
fn AuditCard(id: i64) -> impl IntoView {
    let audit = Resource::new(
        move || format!("run {id}"),
        |subject| audit_entries(Some(subject)),
    );
    view! {
        <section class="card">
            <h2>{t!("run-audit")}</h2>
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    match audit.await {
                        Ok(entries) if entries.is_empty() => view! { <p class="muted">{t!("run-audit-none")}</p> }.into_any(),
                        Ok(entries) => view! {
                            <ul class="audit" data-testid="run-audit">
                                {entries.into_iter().map(|e| view! {
                                    <li>{format!("{} — {} {}: {}", when(e.at), e.actor, e.action, e.detail)}</li>
                                }).collect_view()}
                            </ul>
                        }.into_any(),
                        Err(e) => view! { <p class="error">{e.explain(current())}</p> }.into_any(),
                    }
                })}
            </Suspense>
        </section>
    }
}

/// Re-trigger this dead run — now, or once with another timeout or retry policy — or take it
/// out of the queue by hand (only that for a watched job's run, which ran elsewhere).
#[component]
fn RetriggerPanel(id: i64, elsewhere: bool) -> impl IntoView {
    let retrigger = ServerAction::<RetriggerRun>::new();
    let resolve = ServerAction::<ResolveRun>::new();
    let timeout = RwSignal::new(String::new());
    let custom_retry = RwSignal::new(false);
    let retry = RwSignal::new(RetryInput {
        first: "10s".into(),
        multiplier: "2.0".into(),
        max_retries: "3".into(),
        jitter: crate::domain::retry::Jitter::None.as_str().into(),
        cap: String::new(),
    });
    let navigate = leptos_router::hooks::use_navigate();
    Effect::new(move |_| {
        if let Some(Ok(new_id)) = retrigger.value().get() {
            navigate(&format!("/runs/{new_id}"), Default::default());
        }
    });
    let error = move || {
        retrigger
            .value()
            .get()
            .and_then(Result::err)
            .or_else(|| resolve.value().get().and_then(Result::err))
            .map(|e| e.explain(current()))
    };
    view! {
        <section class="card" data-testid="retrigger-panel">
            <h2>{t!("overview-tile-failed")}</h2>
            {elsewhere.then(|| view! { <p class="muted">{t!("error-watch-retrigger")}</p> })}
            {(!elsewhere).then(|| view! { <Overrides timeout custom_retry retry /> })}
            <p class="actions">
                <button type="button" hidden=elsewhere on:click=move |_| {
                    if !crate::components::layout::confirm_while_paused() { return; }
                    let t = timeout.get_untracked();
                    retrigger.dispatch(RetriggerRun {
                        id,
                        timeout: (!t.trim().is_empty()).then_some(t),
                        retry: custom_retry.get_untracked().then(|| retry.get_untracked()),
                    });
                }>{t!("run-retrigger-now")}</button>
                " "
                <super::failed::RowActionsResolveOnly id resolve />
            </p>
            <p class="error" role="alert">{error}</p>
        </section>
    }
    .into_any()
}

/// Another timeout, or another retry policy (F, M, C), for the re-triggered run alone.
#[component]
fn Overrides(
    timeout: RwSignal<String>,
    custom_retry: RwSignal<bool>,
    retry: RwSignal<RetryInput>,
) -> impl IntoView {
    let retry_field = move |label: &'static str,
                            get: fn(&RetryInput) -> String,
                            set: fn(&mut RetryInput, String)| {
        view! {
            <label>{label}
                <input type="text" class="narrow" prop:value=move || retry.with(get)
                    on:input=move |ev| { let v = event_target_value(&ev); retry.update(|r| set(r, v)); } />
            </label>
        }
        .into_any()
    };
    view! {
        <div class="grid3">
            <div>
                <label for="override-timeout">{t!("run-override-timeout")}</label>
                <input id="override-timeout" type="text" placeholder=t!("run-override-timeout-example") prop:value=move || timeout.get()
                    on:input=move |ev| timeout.set(event_target_value(&ev)) />
            </div>
            <div>
                <label class="check">
                    <input type="checkbox" prop:checked=move || custom_retry.get()
                        on:change=move |ev| custom_retry.set(event_target_checked(&ev)) />
                    " "{t!("run-override-retry")}
                </label>
                <Show when=move || custom_retry.get()>
                    <div class="inline-fields">
                        {retry_field("F", |r| r.first.clone(), |r, v| r.first = v)}
                        {retry_field("M", |r| r.multiplier.clone(), |r, v| r.multiplier = v)}
                        {retry_field("C", |r| r.max_retries.clone(), |r, v| r.max_retries = v)}
                    </div>
                </Show>
            </div>
        </div>
    }
}

fn attempt_row(a: &AttemptView) -> impl IntoView + use<> {
    let tail = a.output_tail.clone().filter(|t| !t.is_empty());
    let running = a.outcome.is_none();
    view! {
        <tr data-attempt=a.number>
            <td>{a.number}</td>
            <td>{when(a.started_at)}</td>
            <td>
                {a.duration_ms.map(|d| duration(d as f64)).unwrap_or_else(|| t!("run-attempt-running"))}
                {a.slow.then(|| format!(" {}", t!("run-attempt-slow")))}
            </td>
            <td>{duration(a.timeout_ms as f64)}</td>
            <td>
                {a.outcome.map(|o| outcome_pill(o).into_any()).unwrap_or_else(|| view! { <span>"—"</span> }.into_any())}
                {(a.outcome.is_some() && !a.spent_retry).then(|| view! { <span class="small muted" title=t!("run-no-retry-spent-title")>" "{t!("run-no-retry-spent")}</span> })}
            </td>
            <td>
                {a.error_class.map(error_class)}
                {(a.timeout_kind == Some(TimeoutKind::Stalled)).then(|| format!(" {}", t!("run-attempt-stalled")))}
            </td>
            <td class="small">
                {a.message.clone().unwrap_or_default()}
                // While the attempt runs its output is shown open, as it comes (written to the
                // attempt's row every second by the node running it); afterwards, folded.
                {tail.map(|t| if running {
                    view! { <details open data-testid="live-output"><summary>{t!("run-output-so-far")}</summary><pre tabindex="0" class="tail" aria-live="polite">{t}</pre></details> }.into_any()
                } else {
                    view! { <details><summary>{t!("run-output")}</summary><pre tabindex="0" class="tail">{t}</pre></details> }.into_any()
                })}
            </td>
            <td class="small">{a.node.clone()}</td>
            <td>{a.load_avg.map(|l| format!("{l:.2}")).unwrap_or_default()}</td>
        </tr>
    }
    .into_any()
}
