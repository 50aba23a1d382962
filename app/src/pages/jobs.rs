//! The jobs list: every definition with how it has been doing (last result, a strip of its
//! newest runs, its success rate over 7 days, its P95 duration) and when it fires next;
//! filtered and sorted by the URL (`crate::views::jobs::JobQuery`), so a link opens the same
//! list. Admins run, pause, enable, tag or delete jobs, one at a time or several at once.

use std::collections::BTreeSet;

use leptos::prelude::*;

use crate::i18n::current;
use crate::i18n::errors::Explain;
use leptos_meta::Title;
use leptos_router::components::{A, Form};

use crate::api::jobs::{BulkJobs, DeleteJob, SetJobEnabled, list_jobs};
use crate::api::maintenance::SetJobPaused;
use crate::api::runs::RunJobNow;
use crate::components::layout::{confirm_while_paused, use_current_user};
use crate::domain::job::JobState;
use crate::domain::job::Kind;
use crate::domain::run::RunStatus;
use crate::i18n::duration;
use crate::i18n::words::{job_kind, job_state, run_status};
use crate::t;
use crate::views::jobs::{BulkAction, JobQuery, JobRow, JobSort, STRIP};

fn fire_time(t: chrono::DateTime<chrono::Utc>) -> String {
    crate::i18n::stamp(t)
}

/// The strip's squares, oldest first, with a text equivalent for screen readers.
fn strip(statuses: &[RunStatus]) -> impl IntoView + use<> {
    let succeeded = statuses
        .iter()
        .filter(|s| **s == RunStatus::Succeeded)
        .count();
    let dead = statuses.iter().filter(|s| **s == RunStatus::Dead).count();
    let label = if statuses.is_empty() {
        t!("jobs-strip-empty")
    } else {
        t!(
            "jobs-strip-label",
            count = statuses.len(),
            succeeded = succeeded,
            dead = dead,
            other = statuses.len() - succeeded - dead
        )
    };
    let squares = statuses
        .iter()
        .map(|s| view! { <i class=format!("sq {}", s.as_str()) title=run_status(*s)></i> })
        .collect_view();
    view! {
        <span class="strip" role="img" aria-label=label.clone() title=label data-testid="strip">
            {squares}
        </span>
    }
}

fn sort_header(
    label: String,
    column: JobSort,
    query: impl Fn() -> JobQuery + Send + Sync + Copy + 'static,
) -> impl IntoView {
    let aria = move || {
        let q = query();
        if q.sort != column {
            "none"
        } else if q.descending {
            "descending"
        } else {
            "ascending"
        }
    };
    view! {
        <th aria-sort=aria>
            <a href=move || query().sorted_by(column) data-sort=column.as_str()>{label}</a>
        </th>
    }
}

#[component]
pub fn JobsPage() -> impl IntoView {
    let me = use_current_user();
    let toggle = ServerAction::<SetJobEnabled>::new();
    let pause = ServerAction::<SetJobPaused>::new();
    let delete = ServerAction::<DeleteJob>::new();
    let bulk = ServerAction::<BulkJobs>::new();
    let jobs = Resource::new(
        move || {
            (
                toggle.version().get(),
                pause.version().get(),
                delete.version().get(),
                bulk.version().get(),
            )
        },
        |_| list_jobs(),
    );
    let params = leptos_router::hooks::use_query_map();
    let query = move || params.with(|q| JobQuery::parse(|key| q.get(key)));
    let selected = RwSignal::new(BTreeSet::<i64>::new());
    let bulk_tag = RwSignal::new(String::new());
    let confirming = RwSignal::new(None::<i64>);
    let run_now = ServerAction::<RunJobNow>::new();
    let navigate = leptos_router::hooks::use_navigate();
    Effect::new(move |_| {
        if let Some(Ok(run_id)) = run_now.value().get() {
            navigate(&format!("/runs/{run_id}"), Default::default());
        }
    });
    Effect::new(move |_| {
        if let Some(Ok(_)) = bulk.value().get() {
            selected.set(BTreeSet::new());
        }
    });
    let action_error = move || {
        toggle
            .value()
            .get()
            .and_then(Result::err)
            .or_else(|| pause.value().get().and_then(Result::err))
            .or_else(|| delete.value().get().and_then(Result::err))
            .or_else(|| run_now.value().get().and_then(Result::err))
            .or_else(|| bulk.value().get().and_then(Result::err))
            .map(|e| e.explain(current()))
    };
    let bulk_done = move || {
        bulk.value()
            .get()
            .and_then(Result::ok)
            .map(|n| t!("jobs-bulk-done", count = n))
    };
    let do_bulk = move |action: BulkAction| {
        let ids: Vec<i64> = selected.get_untracked().into_iter().collect();
        let tag =
            matches!(action, BulkAction::Tag | BulkAction::Untag).then(|| bulk_tag.get_untracked());
        bulk.dispatch(BulkJobs { ids, action, tag });
    };

    view! {
        <Title text=t!("nav-jobs") />
        <div class="page-head">
            <h1>{t!("nav-jobs")}</h1>
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    me.await
                        .ok()
                        .filter(|u| u.is_admin())
                        .map(|_| view! { <A href="/jobs/new" attr:class="button">{t!("jobs-new")}</A> })
                })}
            </Suspense>
        </div>
        <Form method="GET" action="" attr:class="filters card" attr:data-testid="jobs-filters">
            <div>
                <label for="f-q">{t!("jobs-filter-text")}</label>
                <input id="f-q" name="q" type="search" prop:value=move || query().text />
            </div>
            <div>
                <label for="f-kind">{t!("jobs-filter-kind")}</label>
                <select id="f-kind" name="kind" prop:value=move || query().kind.map(|k| k.as_str()).unwrap_or_default()>
                    <option value="">{t!("filter-any")}</option>
                    {Kind::ALL.iter().map(|k| view! { <option value=k.as_str()>{job_kind(*k)}</option> }).collect_view()}
                </select>
            </div>
            <div>
                <label for="f-state">{t!("jobs-filter-state")}</label>
                <select id="f-state" name="state" prop:value=move || query().state.map(|s| s.as_str()).unwrap_or_default()>
                    <option value="">{t!("filter-any")}</option>
                    {JobState::ALL.iter().map(|s| view! { <option value=s.as_str()>{job_state(*s)}</option> }).collect_view()}
                </select>
            </div>
            <div>
                <label for="f-tag">{t!("jobs-filter-tag")}</label>
                <input id="f-tag" name="tag" type="text" autocomplete="off" prop:value=move || query().tag.unwrap_or_default() />
            </div>
            <input type="hidden" name="sort" prop:value=move || {
                let q = query();
                if q.sort == JobSort::Name && !q.descending { String::new() } else { format!("{}{}", if q.descending { "-" } else { "" }, q.sort.as_str()) }
            } />
            <div class="filter-actions">
                <button type="submit">{t!("filter-apply")}</button>
                {move || query().is_filtered().then(|| view! { <a href="/jobs">{t!("jobs-filter-clear")}</a> })}
            </div>
        </Form>
        <p class="error" role="alert">{action_error}</p>
        <p class="ok" role="status">{bulk_done}</p>
        <Transition fallback=|| view! { <p class="muted">{t!("loading")}</p> }>
            {move || Suspend::new(async move {
                let admin = me.await.map(|u| u.is_admin()).unwrap_or(false);
                match jobs.await {
                    Err(e) => view! { <p class="error">{e.explain(current())}</p> }.into_any(),
                    Ok(rows) if rows.is_empty() => {
                        view! {
                            <p class="card muted" data-testid="no-jobs">
                                {t!("jobs-none")}
                                {admin.then(|| format!(" {}", t!("jobs-none-admin")))}
                            </p>
                        }
                            .into_any()
                    }
                    Ok(rows) => {
                        let q = query();
                        let total = rows.len();
                        let mut rows: Vec<JobRow> = rows.into_iter().filter(|r| q.matches(r)).collect();
                        q.sort(&mut rows);
                        let now = chrono::Utc::now();
                        view! {
                            {q.is_filtered().then(|| view! {
                                <p class="muted" data-testid="jobs-filter">
                                    {t!("jobs-filter-matches", shown = rows.len(), total = total)}
                                </p>
                            })}
                            {admin.then(|| view! {
                                <div class="bulk card" data-testid="bulk" class:hidden=move || selected.with(BTreeSet::is_empty)>
                                    <span>{move || t!("jobs-bulk-selected", count = selected.with(BTreeSet::len))}</span>
                                    <button type="button" class="secondary" on:click=move |_| do_bulk(BulkAction::Enable)>{t!("jobs-enable")}</button>
                                    <button type="button" class="secondary" on:click=move |_| do_bulk(BulkAction::Disable)>{t!("jobs-disable")}</button>
                                    <button type="button" class="secondary" on:click=move |_| do_bulk(BulkAction::Pause)>{t!("jobs-pause")}</button>
                                    <button type="button" class="secondary" on:click=move |_| do_bulk(BulkAction::Resume)>{t!("jobs-resume")}</button>
                                    <label for="bulk-tag" class="visually-hidden">{t!("jobs-filter-tag")}</label>
                                    <input id="bulk-tag" type="text" placeholder=t!("jobs-bulk-tag-placeholder") autocomplete="off"
                                        prop:value=move || bulk_tag.get()
                                        on:input=move |ev| bulk_tag.set(event_target_value(&ev)) />
                                    <button type="button" class="secondary" on:click=move |_| do_bulk(BulkAction::Tag)>{t!("jobs-bulk-tag")}</button>
                                    <button type="button" class="secondary" on:click=move |_| do_bulk(BulkAction::Untag)>{t!("jobs-bulk-untag")}</button>
                                </div>
                            })}
                            <div class="scroll card">
                            <table tabindex="0" class="table" data-testid="jobs">
                                <thead>
                                    <tr>
                                        {admin.then(|| view! { <th><span class="visually-hidden">{t!("jobs-select")}</span></th> })}
                                        {sort_header(t!("jobs-col-name"), JobSort::Name, query)}
                                        <th>{t!("jobs-col-schedule")}</th>
                                        {sort_header(t!("jobs-col-last"), JobSort::Last, query)}
                                        <th>{t!("jobs-col-strip", count = STRIP)}</th>
                                        {sort_header(t!("jobs-col-rate"), JobSort::Rate, query)}
                                        {sort_header(t!("jobs-col-p95"), JobSort::Duration, query)}
                                        {sort_header(t!("jobs-col-next"), JobSort::Next, query)}
                                        <th>{t!("jobs-filter-state")}</th>
                                        <th><span class="visually-hidden">{t!("table-actions")}</span></th>
                                    </tr>
                                </thead>
                                <tbody>
                                    {rows
                                        .into_iter()
                                        .map(|row| {
                                            let id = row.id;
                                            let enabled = row.enabled;
                                            let paused = row.paused;
                                            let takes_parameters = row.takes_parameters;
                                            let next = match (enabled, row.next_fire_at) {
                                                (false, _) => job_state(JobState::Disabled),
                                                (true, Some(at)) if paused => t!("jobs-next-paused", due = fire_time(at)),
                                                (true, Some(at)) => fire_time(at),
                                                (true, None) => "—".into(),
                                            };
                                            let name = row.name.clone();
                                            let rate = row.success_rate().map(|r| format!("{r:.1}%")).unwrap_or_else(|| "—".into());
                                            let rate_title = t!("jobs-rate-title", succeeded = row.week_succeeded, ended = row.week_ended);
                                            let p95 = row.p95_ms.map(|ms| duration(ms as f64)).unwrap_or_else(|| "—".into());
                                            let last = row.last_status.map(|s| {
                                                let ago = row.last_at.map(|t| t!("time-ago", time = duration((now - t).num_milliseconds().max(0) as f64))).unwrap_or_default();
                                                let at = row.last_at.map(fire_time).unwrap_or_default();
                                                view! {
                                                    {crate::components::status::status_pill(s)}
                                                    <div class="muted small" title=at>{ago}</div>
                                                }
                                                .into_any()
                                            });
                                            view! {
                                                <tr data-job=row.name.clone()>
                                                    {admin.then(|| view! {
                                                        <td>
                                                            <input type="checkbox" aria-label=t!("jobs-select-one", name = row.name.clone())
                                                                prop:checked=move || selected.with(|s| s.contains(&id))
                                                                on:change=move |ev| {
                                                                    let on = event_target_checked(&ev);
                                                                    selected.update(|s| { if on { s.insert(id); } else { s.remove(&id); } });
                                                                } />
                                                        </td>
                                                    })}
                                                    <td>
                                                        <a href=format!("/jobs/{id}")>{row.name.clone()}</a>
                                                        " "<span class="muted small">{job_kind(row.kind)}</span>
                                                        <div class="muted small">{row.description.clone()}</div>
                                                        <div class="tags">
                                                            {row.tags.iter().map(|t| view! {
                                                                <a class="tag" href=format!("/jobs?tag={t}") data-tag=t.clone()>{t.clone()}</a>
                                                            }).collect_view()}
                                                        </div>
                                                    </td>
                                                    <td>
                                                        <code class="cron">{row.cron.clone()}</code>
                                                        <div class="muted small">{row.timezone.clone()}</div>
                                                    </td>
                                                    <td data-testid="last">{last.unwrap_or_else(|| view! { <span class="muted">{t!("jobs-never-ran")}</span> }.into_any())}</td>
                                                    <td>{strip(&row.strip)}</td>
                                                    <td data-testid="rate" title=rate_title>{rate}</td>
                                                    <td data-testid="p95">{p95}</td>
                                                    <td class="small">{next}</td>
                                                    <td>
                                                        <span class=if enabled { "pill ok" } else { "pill off" }>
                                                            {job_state(if enabled { JobState::Enabled } else { JobState::Disabled })}
                                                        </span>
                                                        {paused.then(|| view! { " " <span class="pill warn" data-testid="paused">{job_state(JobState::Paused)}</span> })}
                                                        {row.failing.then(|| view! { " " <span class="pill bad" data-testid="failing">{job_state(JobState::Failing)}</span> })}
                                                    </td>
                                                    <td class="actions">
                                                        {admin
                                                            .then(|| {
                                                                view! {
                                                                    {if takes_parameters {
                                                                        view! {
                                                                            <a class="button secondary" href=format!("/jobs/{id}#run")>{t!("jobs-run-now-params")}</a>
                                                                        }.into_any()
                                                                    } else {
                                                                        view! {
                                                                            <button
                                                                                type="button"
                                                                                class="secondary"
                                                                                on:click=move |_| {
                                                                                    if !confirm_while_paused() { return; }
                                                                                    run_now.dispatch(RunJobNow { id, params: None });
                                                                                }
                                                                            >
                                                                                {t!("jobs-run-now")}
                                                                            </button>
                                                                        }.into_any()
                                                                    }}
                                                                    <button
                                                                        type="button"
                                                                        class="secondary"
                                                                        on:click=move |_| {
                                                                            pause.dispatch(SetJobPaused { id, paused: !paused });
                                                                        }
                                                                    >
                                                                        {if paused { t!("jobs-resume") } else { t!("jobs-pause") }}
                                                                    </button>
                                                                    <button
                                                                        type="button"
                                                                        class="secondary"
                                                                        on:click=move |_| {
                                                                            toggle.dispatch(SetJobEnabled { id, enabled: !enabled });
                                                                        }
                                                                    >
                                                                        {if enabled { t!("jobs-disable") } else { t!("jobs-enable") }}
                                                                    </button>
                                                                    <Show
                                                                        when=move || confirming.get() == Some(id)
                                                                        fallback=move || {
                                                                            view! {
                                                                                <button
                                                                                    type="button"
                                                                                    class="danger"
                                                                                    on:click=move |_| confirming.set(Some(id))
                                                                                >
                                                                                    {t!("action-delete")}
                                                                                </button>
                                                                            }
                                                                        }
                                                                    >
                                                                        <span class="confirm" role="alertdialog">
                                                                            {t!("jobs-delete-confirm", name = name.clone(), count = row.runs)}
                                                                            <button
                                                                                type="button"
                                                                                class="danger"
                                                                                on:click=move |_| {
                                                                                    confirming.set(None);
                                                                                    delete.dispatch(DeleteJob { id });
                                                                                }
                                                                            >
                                                                                {t!("action-delete-confirm")}
                                                                            </button>
                                                                            <button
                                                                                type="button"
                                                                                class="secondary"
                                                                                on:click=move |_| confirming.set(None)
                                                                            >
                                                                                {t!("action-cancel")}
                                                                            </button>
                                                                        </span>
                                                                    </Show>
                                                                }
                                                                .into_any()
                                                            })}
                                                    </td>
                                                </tr>
                                            }
                                            .into_any()
                                        })
                                        .collect_view()}
                                </tbody>
                            </table>
                            </div>
                        }
                            .into_any()
                    }
                }
            })}
        </Transition>
    }
}
