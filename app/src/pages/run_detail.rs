//! One run's whole story: every attempt with its timing, timeout, outcome, class, message,
//! output tail and node — updated live while the run is still going.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_params_map;

use super::runs::{status_pill, use_ticker, when};
use crate::api::runs::{AttemptView, RunView, get_run};

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
            let active =
                crate::domain::run::RunStatus::parse(&r.status).is_some_and(|s| s.is_active());
            ended.set(!active);
        }
    });

    view! {
        <Transition fallback=|| view! { <p class="muted">"Loading…"</p> }>
            {move || Suspend::new(async move {
                match run.await {
                    Ok(run) => view! { <RunStory run /> }.into_any(),
                    Err(e) => view! { <h1>"Run"</h1><p class="error">{e.to_string()}</p> }.into_any(),
                }
            })}
        </Transition>
    }
}

#[component]
fn RunStory(run: RunView) -> impl IntoView {
    let title = format!("Run #{} of {}", run.id, run.job);
    view! {
        <Title text=title.clone() />
        <h1>{title}</h1>
        <section class="card">
            <dl class="facts wide" data-testid="run-facts">
                <dt>"Status"</dt><dd data-testid="run-status">{status_pill(&run.status)}</dd>
                <dt>"Job"</dt><dd><a href=format!("/jobs/{}", run.job_id)>{run.job.clone()}</a></dd>
                <dt>"Trigger"</dt><dd>{run.trigger.clone()}</dd>
                <dt>"Scheduled for"</dt><dd>{when(run.scheduled_for)}</dd>
                <dt>"Next attempt"</dt><dd>{run.next_attempt_at.map(when).unwrap_or_else(|| "—".into())}</dd>
                <dt>"Finished"</dt><dd>{run.finished_at.map(when).unwrap_or_else(|| "—".into())}</dd>
                <dt>"Idempotency key"</dt><dd><code>{run.idempotency_key.clone()}</code></dd>
                <dt>"Last error"</dt>
                <dd>{run.last_error_class.clone().map(|c| format!("{c}: "))}{run.last_error.clone().unwrap_or_else(|| "—".into())}</dd>
            </dl>
        </section>
        <section class="card">
            <h2>"Attempts"</h2>
            {if run.attempts.is_empty() {
                view! { <p class="muted">"No attempt yet."</p> }.into_any()
            } else {
                view! {
                    <table class="table compact" data-testid="attempts">
                        <thead>
                            <tr>
                                <th>"#"</th><th>"Started"</th><th>"Duration"</th><th>"Timeout"</th>
                                <th>"Outcome"</th><th>"Class"</th><th>"Message"</th><th>"Node"</th><th>"Load"</th>
                            </tr>
                        </thead>
                        <tbody>{run.attempts.iter().map(attempt_row).collect_view()}</tbody>
                    </table>
                }
                .into_any()
            }}
        </section>
    }
}

fn attempt_row(a: &AttemptView) -> impl IntoView + use<> {
    let tail = a.output_tail.clone().filter(|t| !t.is_empty());
    view! {
        <tr data-attempt=a.number>
            <td>{a.number}</td>
            <td>{when(a.started_at)}</td>
            <td>
                {a.duration_ms.map(|d| format!("{d} ms")).unwrap_or_else(|| "running…".into())}
                {a.slow.then_some(" (slow)")}
            </td>
            <td>{format!("{} ms", a.timeout_ms)}</td>
            <td>{a.outcome.clone().map(|o| status_pill(&o).into_any()).unwrap_or_else(|| view! { <span>"—"</span> }.into_any())}</td>
            <td>{a.error_class.clone().unwrap_or_default()}</td>
            <td class="small">
                {a.message.clone().unwrap_or_default()}
                {tail.map(|t| view! { <details><summary>"output"</summary><pre class="tail">{t}</pre></details> })}
            </td>
            <td class="small">{a.node.clone()}</td>
            <td>{a.load_avg.map(|l| format!("{l:.2}")).unwrap_or_default()}</td>
        </tr>
    }
    .into_any()
}
