//! The jobs list: every definition, its schedule and next fire time, enable/disable and delete.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::components::A;

use crate::api::jobs::{DeleteJob, SetJobEnabled, list_jobs};
use crate::api::runs::RunJobNow;
use crate::components::layout::use_current_user;
use crate::domain::cron::{CronExpr, format_fire_time, parse_timezone};
use crate::views::jobs::JobRow;

fn next_fire(row: &JobRow) -> String {
    match (CronExpr::parse(&row.cron), parse_timezone(&row.timezone)) {
        (Ok(cron), Ok(tz)) => cron
            .next_after(tz, chrono::Utc::now())
            .map(|t| format_fire_time(&t))
            .unwrap_or_else(|e| e.to_string()),
        _ => "—".into(),
    }
}

#[component]
pub fn JobsPage() -> impl IntoView {
    let me = use_current_user();
    let toggle = ServerAction::<SetJobEnabled>::new();
    let delete = ServerAction::<DeleteJob>::new();
    let jobs = Resource::new(
        move || (toggle.version().get(), delete.version().get()),
        |_| list_jobs(),
    );
    // `?state=failing`: only the jobs with an open alert episode (the Overview's tile).
    let query = leptos_router::hooks::use_query_map();
    let only_failing = move || query.with(|q| q.get("state").as_deref() == Some("failing"));
    let confirming = RwSignal::new(None::<i64>);
    let run_now = ServerAction::<RunJobNow>::new();
    let navigate = leptos_router::hooks::use_navigate();
    Effect::new(move |_| {
        if let Some(Ok(run_id)) = run_now.value().get() {
            navigate(&format!("/runs/{run_id}"), Default::default());
        }
    });
    let action_error = move || {
        toggle
            .value()
            .get()
            .and_then(Result::err)
            .or_else(|| delete.value().get().and_then(Result::err))
            .or_else(|| run_now.value().get().and_then(Result::err))
            .map(|e| e.to_string())
    };

    view! {
        <Title text="Jobs" />
        <div class="page-head">
            <h1>"Jobs"</h1>
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    me.await
                        .ok()
                        .filter(|u| u.is_admin())
                        .map(|_| view! { <A href="/jobs/new" attr:class="button">"New job"</A> })
                })}
            </Suspense>
        </div>
        <p class="notice">
            "Enabled jobs run on their schedule; Run now queues a run at once. Their runs are on the Runs page."
        </p>
        <p class="error" role="alert">{action_error}</p>
        <Transition fallback=|| view! { <p class="muted">"Loading…"</p> }>
            {move || Suspend::new(async move {
                let admin = me.await.map(|u| u.is_admin()).unwrap_or(false);
                match jobs.await {
                    Err(e) => view! { <p class="error">{e.to_string()}</p> }.into_any(),
                    Ok(rows) if rows.is_empty() => {
                        view! {
                            <p class="card muted" data-testid="no-jobs">
                                "No jobs yet."
                                {admin.then_some(" Define the first one with New job.")}
                            </p>
                        }
                            .into_any()
                    }
                    Ok(rows) => {
                        let filtered = only_failing();
                        let rows: Vec<JobRow> = rows
                            .into_iter()
                            .filter(|r| !filtered || r.failing)
                            .collect();
                        view! {
                            {filtered.then(|| view! {
                                <p class="card" data-testid="jobs-filter">
                                    {format!("Jobs failing now (an alert episode is open): {}. ", rows.len())}
                                    <a href="/jobs">"Show every job"</a>
                                </p>
                            })}
                            <table class="table card" data-testid="jobs">
                                <thead>
                                    <tr>
                                        <th>"Name"</th>
                                        <th>"Kind"</th>
                                        <th>"Schedule"</th>
                                        <th>"Next fire"</th>
                                        <th>"Runs"</th>
                                        <th>"State"</th>
                                        <th></th>
                                    </tr>
                                </thead>
                                <tbody>
                                    {rows
                                        .into_iter()
                                        .map(|row| {
                                            let id = row.id;
                                            let enabled = row.enabled;
                                            let takes_parameters = row.takes_parameters;
                                            let next = if enabled { next_fire(&row) } else { "disabled".into() };
                                            let name = row.name.clone();
                                            view! {
                                                <tr data-job=row.name.clone()>
                                                    <td>
                                                        <a href=format!("/jobs/{id}")>{row.name.clone()}</a>
                                                        <div class="muted small">{row.description.clone()}</div>
                                                    </td>
                                                    <td>{row.kind.as_str()}</td>
                                                    <td>
                                                        <code class="cron">{row.cron.clone()}</code>
                                                        <div class="muted small">{row.timezone.clone()}</div>
                                                    </td>
                                                    <td>{next}</td>
                                                    <td>
                                                        {row.runs}
                                                        {row.last_status.map(|s| format!(" (last: {s})"))}
                                                    </td>
                                                    <td>
                                                        <span class=if enabled { "pill ok" } else { "pill off" }>
                                                            {if enabled { "enabled" } else { "disabled" }}
                                                        </span>
                                                        {row.failing.then(|| view! { " " <span class="pill bad" data-testid="failing">"failing"</span> })}
                                                    </td>
                                                    <td class="actions">
                                                        {admin
                                                            .then(|| {
                                                                view! {
                                                                    {if takes_parameters {
                                                                        view! {
                                                                            <a class="button secondary" href=format!("/jobs/{id}#run")>"Run now…"</a>
                                                                        }.into_any()
                                                                    } else {
                                                                        view! {
                                                                            <button
                                                                                type="button"
                                                                                class="secondary"
                                                                                on:click=move |_| {
                                                                                    run_now.dispatch(RunJobNow { id, params: None });
                                                                                }
                                                                            >
                                                                                "Run now"
                                                                            </button>
                                                                        }.into_any()
                                                                    }}
                                                                    <button
                                                                        type="button"
                                                                        class="secondary"
                                                                        on:click=move |_| {
                                                                            toggle.dispatch(SetJobEnabled { id, enabled: !enabled });
                                                                        }
                                                                    >
                                                                        {if enabled { "Disable" } else { "Enable" }}
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
                                                                                    "Delete"
                                                                                </button>
                                                                            }
                                                                        }
                                                                    >
                                                                        <span class="confirm" role="alertdialog">
                                                                            {format!("Delete {name} and its {} run(s)?", row.runs)}
                                                                            <button
                                                                                type="button"
                                                                                class="danger"
                                                                                on:click=move |_| {
                                                                                    confirming.set(None);
                                                                                    delete.dispatch(DeleteJob { id });
                                                                                }
                                                                            >
                                                                                "Yes, delete"
                                                                            </button>
                                                                            <button
                                                                                type="button"
                                                                                class="secondary"
                                                                                on:click=move |_| confirming.set(None)
                                                                            >
                                                                                "Cancel"
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
                        }
                            .into_any()
                    }
                }
            })}
        </Transition>
    }
}
