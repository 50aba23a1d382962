//! The job page's backfill card: the job's past ticks over a range of business dates run
//! again — previewed first (which ticks, which already have a run), then started, one run after
//! another by default; each backfill's progress (done of total) refreshed while it runs, with
//! pause, resume and cancel for admins.

use chrono::NaiveDate;
use leptos::prelude::*;

use crate::api::backfills::{ChangeBackfill, StartBackfill, list_backfills};
use crate::components::ticker::use_ticker;
use crate::domain::backfill::BackfillState;
use crate::i18n::current;
use crate::i18n::errors::Explain;
use crate::t;
use crate::views::backfills::{BackfillPlan, BackfillRow};

#[component]
pub fn BackfillCard(id: i64, readonly: bool) -> impl IntoView {
    let start = ServerAction::<StartBackfill>::new();
    let change = ServerAction::<ChangeBackfill>::new();
    let tick = use_ticker(3_000);
    let rows = Resource::new(
        move || (start.version().get(), change.version().get(), tick.get()),
        move |_| list_backfills(id),
    );
    view! {
        <section class="card" id="backfill" data-testid="backfill">
            <h2>{t!("backfill-heading")}</h2>
            <p class="muted">{t!("backfill-explained")}</p>
            {(!readonly).then(|| view! { <BackfillForm id start /> })}
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    match rows.await {
                        Ok(rows) if rows.is_empty() => ().into_any(),
                        Ok(rows) => backfill_table(rows, (!readonly).then_some(change)).into_any(),
                        Err(e) => view! { <p class="error">{e.explain(current())}</p> }.into_any(),
                    }
                })}
            </Transition>
        </section>
    }
}

#[component]
fn BackfillForm(id: i64, start: ServerAction<StartBackfill>) -> impl IntoView {
    let from = RwSignal::new(String::new());
    let to = RwSignal::new(String::new());
    let parallel = RwSignal::new("1".to_string());
    let per_minute = RwSignal::new(String::new());
    let rerun = RwSignal::new(false);
    let send = move |dry_run: bool| {
        let date = |s: RwSignal<String>| NaiveDate::parse_from_str(&s.get(), "%Y-%m-%d").ok();
        let (Some(from), Some(to)) = (date(from), date(to)) else {
            return;
        };
        start.dispatch(StartBackfill {
            job_id: id,
            from,
            to,
            parallel: parallel.get().trim().parse().unwrap_or(1),
            per_minute: per_minute.get().trim().parse().ok(),
            rerun: rerun.get(),
            dry_run,
        });
    };
    let answer = move || match start.value().get() {
        Some(Ok(plan)) => Some(plan_view(plan).into_any()),
        Some(Err(e)) => {
            Some(view! { <p class="error" role="alert">{e.explain(current())}</p> }.into_any())
        }
        None => None,
    };
    view! {
        <div class="form backfill-form">
            <div class="grid2">
                <div>
                    <label for="backfill-from">{t!("backfill-from")}</label>
                    <input id="backfill-from" type="date" prop:value=move || from.get()
                        on:input=move |ev| from.set(event_target_value(&ev)) />
                </div>
                <div>
                    <label for="backfill-to">{t!("backfill-to")}</label>
                    <input id="backfill-to" type="date" prop:value=move || to.get()
                        on:input=move |ev| to.set(event_target_value(&ev)) />
                </div>
                <div>
                    <label for="backfill-parallel">{t!("backfill-parallel")}</label>
                    <input id="backfill-parallel" type="number" min="1" max="16" prop:value=move || parallel.get()
                        on:input=move |ev| parallel.set(event_target_value(&ev)) />
                </div>
                <div>
                    <label for="backfill-per-minute">{t!("backfill-per-minute")}</label>
                    <input id="backfill-per-minute" type="number" min="1" prop:value=move || per_minute.get()
                        on:input=move |ev| per_minute.set(event_target_value(&ev)) />
                </div>
            </div>
            <label class="check">
                <input type="checkbox" prop:checked=move || rerun.get()
                    on:change=move |ev| rerun.set(event_target_checked(&ev)) />
                {t!("backfill-rerun")}
            </label>
            <div class="buttons">
                <button type="button" class="secondary" data-testid="backfill-preview"
                    on:click=move |_| send(true)>{t!("backfill-preview")}</button>
                <button type="button" data-testid="backfill-start"
                    on:click=move |_| send(false)>{t!("backfill-start")}</button>
            </div>
            {answer}
        </div>
    }
}

/// The ticks a backfill runs (or would), and the backfill made.
fn plan_view(plan: BackfillPlan) -> impl IntoView {
    let made = plan.backfill.map(|id| t!("backfill-made", id = id));
    let empty = plan.ticks.is_empty().then(|| t!("backfill-no-ticks"));
    let ticks = plan
        .ticks
        .into_iter()
        .map(|tick| {
            let note = match tick.action.as_str() {
                "has_run" => t!("backfill-has-run", id = tick.run.unwrap_or_default()),
                "rerun" => t!("backfill-rerun-of", id = tick.run.unwrap_or_default()),
                _ => String::new(),
            };
            view! { <li><code>{tick.scheduled_at}</code>" " {tick.business_date.to_string()} " " <span class="muted">{note}</span></li> }
        })
        .collect_view();
    view! {
        <p class="ok" role="status">{made}{empty}</p>
        <ol class="fire-times" data-testid="backfill-ticks">{ticks}</ol>
    }
}

fn backfill_table(
    rows: Vec<BackfillRow>,
    change: Option<ServerAction<ChangeBackfill>>,
) -> impl IntoView {
    let rows = rows
        .into_iter()
        .map(|b| {
            let actions = change.map(|change| {
                let button = move |to: BackfillState, label: String| {
                    view! {
                        <button type="button" class="link"
                            on:click=move |_| { change.dispatch(ChangeBackfill { id: b.id, state_to: to }); }>
                            {label}
                        </button>
                    }
                };
                match b.state {
                    BackfillState::Running => Some(view! { {button(BackfillState::Paused, t!("backfill-pause"))} {button(BackfillState::Cancelled, t!("backfill-cancel"))} }.into_any()),
                    BackfillState::Paused => Some(view! { {button(BackfillState::Running, t!("backfill-resume"))} {button(BackfillState::Cancelled, t!("backfill-cancel"))} }.into_any()),
                    _ => None,
                }
            });
            view! {
                <tr>
                    <td>{format!("#{}", b.id)}</td>
                    <td>{format!("{} – {}", b.from, b.to)}</td>
                    <td>{state_word(b.state)}</td>
                    <td data-testid="backfill-progress">{t!("backfill-progress", done = b.done, total = b.total)}</td>
                    <td>{b.created_by.clone()}</td>
                    <td class="actions">{actions.flatten()}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <table tabindex="0" class="table" data-testid="backfills">
            <thead>
                <tr>
                    <th>"#"</th>
                    <th>{t!("backfill-range")}</th>
                    <th>{t!("jobs-filter-state")}</th>
                    <th>{t!("backfill-done")}</th>
                    <th>{t!("backfill-by")}</th>
                    <th></th>
                </tr>
            </thead>
            <tbody>{rows}</tbody>
        </table>
    }
}

fn state_word(state: BackfillState) -> String {
    match state {
        BackfillState::Running => t!("backfill-state-running"),
        BackfillState::Paused => t!("backfill-state-paused"),
        BackfillState::Cancelled => t!("backfill-state-cancelled"),
        BackfillState::Done => t!("backfill-state-done"),
    }
}
