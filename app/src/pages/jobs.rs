//! The jobs list: every definition with how it has been doing (last result, a strip of its
//! newest runs, its success rate over 7 days, its P95 duration) and when it fires next;
//! filtered and sorted by the URL (`crate::views::jobs::JobQuery`), so a link opens the same
//! list. Admins run, pause, enable, tag or delete jobs, one at a time or several at once.
//!
//! One row per job on a wide screen, its description cut to one line and its rarer actions
//! folded under "More" so that Run now always fits; on a phone each row is a card led by the
//! job's state, last result and strip (`style/main.css`, "The jobs list").

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::components::{A, Form};

use crate::api::jobs::{BulkJobs, DeleteJob, SetJobEnabled, list_jobs};
use crate::api::maintenance::SetJobPaused;
use crate::api::runs::RunJobNow;
use crate::components::layout::{UserResource, confirm_while_paused, use_current_user};
use crate::components::status::status_pill;
use crate::domain::job::{JobState, Kind};
use crate::domain::run::RunStatus;
use crate::i18n::errors::Explain;
use crate::i18n::words::{job_kind, job_state, run_status};
use crate::i18n::{current, duration, stamp};
use crate::t;
use crate::views::jobs::{BulkAction, JobQuery, JobRow, JobSort, STRIP};

/// The page's server actions: the rows, the bulk bar and the messages above the list share them.
#[derive(Clone, Copy)]
struct Actions {
    toggle: ServerAction<SetJobEnabled>,
    pause: ServerAction<SetJobPaused>,
    delete: ServerAction<DeleteJob>,
    bulk: ServerAction<BulkJobs>,
    run_now: ServerAction<RunJobNow>,
}

impl Actions {
    fn new() -> Self {
        Self {
            toggle: ServerAction::new(),
            pause: ServerAction::new(),
            delete: ServerAction::new(),
            bulk: ServerAction::new(),
            run_now: ServerAction::new(),
        }
    }

    /// Changes whenever an action that alters the list has answered: the list reloads.
    fn changes(&self) -> [usize; 4] {
        [
            self.toggle.version().get(),
            self.pause.version().get(),
            self.delete.version().get(),
            self.bulk.version().get(),
        ]
    }

    /// The newest refusal or failure of any of them, in the reader's words.
    fn error(&self) -> Option<String> {
        self.toggle
            .value()
            .get()
            .and_then(Result::err)
            .or_else(|| self.pause.value().get().and_then(Result::err))
            .or_else(|| self.delete.value().get().and_then(Result::err))
            .or_else(|| self.run_now.value().get().and_then(Result::err))
            .or_else(|| self.bulk.value().get().and_then(Result::err))
            .map(|e| e.explain(current()))
    }

    fn bulk_done(&self) -> Option<String> {
        self.bulk
            .value()
            .get()
            .and_then(Result::ok)
            .map(|n| t!("jobs-bulk-done", count = n))
    }
}

/// What every row needs besides its own job.
#[derive(Clone, Copy)]
struct Rows {
    admin: bool,
    now: DateTime<Utc>,
    actions: Actions,
    selected: RwSignal<BTreeSet<i64>>,
    /// The job whose Delete asks "are you sure?".
    confirming: RwSignal<Option<i64>>,
}

#[component]
pub fn JobsPage() -> impl IntoView {
    let me = use_current_user();
    let actions = Actions::new();
    let jobs = Resource::new(move || actions.changes(), |_| list_jobs());
    let params = leptos_router::hooks::use_query_map();
    let query = Signal::derive(move || params.with(|q| JobQuery::parse(|key| q.get(key))));
    let selected = RwSignal::new(BTreeSet::<i64>::new());
    let confirming = RwSignal::new(None::<i64>);
    follow_started_run(actions.run_now);
    Effect::new(move |_| {
        if let Some(Ok(_)) = actions.bulk.value().get() {
            selected.set(BTreeSet::new());
        }
    });
    view! {
        <Title text=t!("nav-jobs") />
        <PageHead me />
        <Filters query />
        <p class="error" role="alert">{move || actions.error()}</p>
        <p class="ok" role="status">{move || actions.bulk_done()}</p>
        <Transition fallback=|| view! { <p class="muted">{t!("loading")}</p> }>
            {move || Suspend::new(async move {
                let admin = me.await.map(|u| u.is_admin()).unwrap_or(false);
                match jobs.await {
                    Err(e) => view! { <p class="error">{e.explain(current())}</p> }.into_any(),
                    Ok(rows) if rows.is_empty() => no_jobs(admin).into_any(),
                    Ok(rows) => {
                        let ctx = Rows { admin, now: Utc::now(), actions, selected, confirming };
                        job_list(rows, query, ctx).into_any()
                    }
                }
            })}
        </Transition>
    }
}

/// Run now opens the run it started.
fn follow_started_run(run_now: ServerAction<RunJobNow>) {
    let navigate = leptos_router::hooks::use_navigate();
    Effect::new(move |_| {
        if let Some(Ok(run_id)) = run_now.value().get() {
            navigate(&format!("/runs/{run_id}"), Default::default());
        }
    });
}

#[component]
fn PageHead(me: UserResource) -> impl IntoView {
    view! {
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
    }
}

/// The filter form: a GET of this page, so the URL says what is shown.
#[component]
fn Filters(query: Signal<JobQuery>) -> impl IntoView {
    let kinds = Kind::ALL
        .iter()
        .map(|k| view! { <option value=k.as_str()>{job_kind(*k)}</option> })
        .collect_view();
    let states = JobState::ALL
        .iter()
        .map(|s| view! { <option value=s.as_str()>{job_state(*s)}</option> })
        .collect_view();
    // The sort survives a new filter; the default one stays out of the URL.
    let sort = move || {
        let q = query.get();
        match (q.sort, q.descending) {
            (JobSort::Name, false) => String::new(),
            (sort, true) => format!("-{}", sort.as_str()),
            (sort, false) => sort.as_str().to_string(),
        }
    };
    view! {
        <Form method="GET" action="" attr:class="filters card" attr:data-testid="jobs-filters">
            <div>
                <label for="f-q">{t!("jobs-filter-text")}</label>
                <input id="f-q" name="q" type="search" prop:value=move || query.get().text />
            </div>
            <div>
                <label for="f-kind">{t!("jobs-filter-kind")}</label>
                <select id="f-kind" name="kind" prop:value=move || query.get().kind.map(|k| k.as_str()).unwrap_or_default()>
                    <option value="">{t!("filter-any")}</option>
                    {kinds}
                </select>
            </div>
            <div>
                <label for="f-state">{t!("jobs-filter-state")}</label>
                <select id="f-state" name="state" prop:value=move || query.get().state.map(|s| s.as_str()).unwrap_or_default()>
                    <option value="">{t!("filter-any")}</option>
                    {states}
                </select>
            </div>
            <div>
                <label for="f-tag">{t!("jobs-filter-tag")}</label>
                <input id="f-tag" name="tag" type="text" autocomplete="off" prop:value=move || query.get().tag.unwrap_or_default() />
            </div>
            <input type="hidden" name="sort" prop:value=sort />
            <div class="filter-actions">
                <button type="submit">{t!("filter-apply")}</button>
                {move || query.get().is_filtered().then(|| view! { <a href="/jobs">{t!("jobs-filter-clear")}</a> })}
            </div>
        </Form>
    }
}

fn no_jobs(admin: bool) -> impl IntoView {
    view! {
        <p class="card muted" data-testid="no-jobs">
            {t!("jobs-none")}
            {admin.then(|| format!(" {}", t!("jobs-none-admin")))}
        </p>
    }
}

/// The jobs the query picks, in its order, under the bulk bar.
fn job_list(rows: Vec<JobRow>, query: Signal<JobQuery>, ctx: Rows) -> impl IntoView {
    let q = query.get();
    let total = rows.len();
    let mut rows: Vec<JobRow> = rows.into_iter().filter(|r| q.matches(r)).collect();
    q.sort(&mut rows);
    let matches = q.is_filtered().then(|| {
        view! {
            <p class="muted" data-testid="jobs-filter">
                {t!("jobs-filter-matches", shown = rows.len(), total = total)}
            </p>
        }
    });
    view! {
        {matches}
        {ctx.admin.then(|| view! { <BulkBar actions=ctx.actions selected=ctx.selected /> })}
        <div class="scroll card">
            <table tabindex="0" class="table jobs-table" data-testid="jobs">
                {table_head(ctx.admin, query)}
                <tbody>{rows.into_iter().map(|row| job_row(row, ctx)).collect_view()}</tbody>
            </table>
        </div>
    }
}

/// Shown while some jobs are ticked: the same change to all of them at once.
#[component]
fn BulkBar(actions: Actions, selected: RwSignal<BTreeSet<i64>>) -> impl IntoView {
    let tag = RwSignal::new(String::new());
    let apply = move |action: BulkAction| {
        let ids: Vec<i64> = selected.get_untracked().into_iter().collect();
        let tag =
            matches!(action, BulkAction::Tag | BulkAction::Untag).then(|| tag.get_untracked());
        actions.bulk.dispatch(BulkJobs { ids, action, tag });
    };
    let button = move |action: BulkAction, label: String| {
        view! { <button type="button" class="secondary" on:click=move |_| apply(action)>{label}</button> }
    };
    view! {
        <div class="bulk card" data-testid="bulk" class:hidden=move || selected.with(BTreeSet::is_empty)>
            <span>{move || t!("jobs-bulk-selected", count = selected.with(BTreeSet::len))}</span>
            {button(BulkAction::Enable, t!("jobs-enable"))}
            {button(BulkAction::Disable, t!("jobs-disable"))}
            {button(BulkAction::Pause, t!("jobs-pause"))}
            {button(BulkAction::Resume, t!("jobs-resume"))}
            <label for="bulk-tag" class="visually-hidden">{t!("jobs-filter-tag")}</label>
            <input id="bulk-tag" type="text" placeholder=t!("jobs-bulk-tag-placeholder") autocomplete="off"
                prop:value=move || tag.get()
                on:input=move |ev| tag.set(event_target_value(&ev)) />
            {button(BulkAction::Tag, t!("jobs-bulk-tag"))}
            {button(BulkAction::Untag, t!("jobs-bulk-untag"))}
        </div>
    }
}

fn table_head(admin: bool, query: Signal<JobQuery>) -> impl IntoView {
    view! {
        <thead>
            <tr>
                {admin.then(|| view! { <th class="c-select"><span class="visually-hidden">{t!("jobs-select")}</span></th> })}
                {sort_header(t!("jobs-col-name"), JobSort::Name, query)}
                {sort_header(t!("jobs-col-last"), JobSort::Last, query)}
                <th class="c-strip">{t!("jobs-col-strip", count = STRIP)}</th>
                {sort_header(t!("jobs-col-rate"), JobSort::Rate, query)}
                {sort_header(t!("jobs-col-p95"), JobSort::Duration, query)}
                {sort_header(t!("jobs-col-next"), JobSort::Next, query)}
                {admin.then(|| view! { <th class="c-actions"><span class="visually-hidden">{t!("table-actions")}</span></th> })}
            </tr>
        </thead>
    }
}

fn sort_header(label: String, column: JobSort, query: Signal<JobQuery>) -> impl IntoView {
    let aria = move || {
        let q = query.get();
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
            <a href=move || query.get().sorted_by(column) data-sort=column.as_str()>{label}</a>
        </th>
    }
}

fn job_row(row: JobRow, ctx: Rows) -> impl IntoView {
    let rate = row
        .success_rate()
        .map(|r| format!("{r:.1}%"))
        .unwrap_or_else(|| "—".into());
    let rate_title = t!(
        "jobs-rate-title",
        succeeded = row.week_succeeded,
        ended = row.week_ended
    );
    let p95 = row
        .p95_ms
        .map(|ms| duration(ms as f64))
        .unwrap_or_else(|| "—".into());
    view! {
        <tr data-job=row.name.clone()>
            {ctx.admin.then(|| select_cell(&row, ctx.selected))}
            {name_cell(&row)}
            <td class="c-last" data-testid="last">{last_result(&row, ctx.now)}</td>
            <td class="c-strip">{strip(&row.strip)}</td>
            <td class="c-rate" data-testid="rate" data-label=t!("jobs-col-rate") title=rate_title>{rate}</td>
            <td class="c-p95" data-testid="p95" data-label=t!("jobs-col-p95")>{p95}</td>
            {next_cell(&row)}
            {ctx.admin.then(|| view! { <td class="c-actions">{row_actions(&row, ctx)}</td> })}
        </tr>
    }
}

fn select_cell(row: &JobRow, selected: RwSignal<BTreeSet<i64>>) -> impl IntoView {
    let id = row.id;
    view! {
        <td class="c-select">
            <input type="checkbox" aria-label=t!("jobs-select-one", name = row.name.clone())
                prop:checked=move || selected.with(|s| s.contains(&id))
                on:change=move |ev| {
                    let on = event_target_checked(&ev);
                    selected.update(|s| { if on { s.insert(id); } else { s.remove(&id); } });
                } />
        </td>
    }
}

/// The name, kind and state; the description on one line (all of it on the job's page); tags.
fn name_cell(row: &JobRow) -> impl IntoView {
    let description = (!row.description.trim().is_empty()).then(|| {
        view! { <div class="muted small one-line" title=row.description.clone()>{row.description.clone()}</div> }
    });
    let tags = row
        .tags
        .iter()
        .map(|tag| {
            let href = JobQuery {
                tag: Some(tag.clone()),
                ..JobQuery::default()
            }
            .href();
            view! { <a class="tag" href=href data-tag=tag.clone()>{tag.clone()}</a> }
        })
        .collect_view();
    view! {
        <td class="c-name">
            <div class="job-title">
                <a href=format!("/jobs/{}", row.id)>{row.name.clone()}</a>
                <span class="muted small">{job_kind(row.kind)}</span>
                {state_pills(row)}
            </div>
            {description}
            <div class="tags">{tags}</div>
        </td>
    }
}

fn state_pills(row: &JobRow) -> impl IntoView {
    let (class, state) = if row.enabled {
        ("pill ok", JobState::Enabled)
    } else {
        ("pill off", JobState::Disabled)
    };
    view! {
        <span class="states">
            <span class=class>{job_state(state)}</span>
            {row.paused.then(|| view! { " " <span class="pill warn" data-testid="paused">{job_state(JobState::Paused)}</span> })}
            {row.failing.then(|| view! { " " <span class="pill bad" data-testid="failing">{job_state(JobState::Failing)}</span> })}
        </span>
    }
}

fn last_result(row: &JobRow, now: DateTime<Utc>) -> AnyView {
    let Some(status) = row.last_status else {
        return view! { <span class="muted">{t!("jobs-never-ran")}</span> }.into_any();
    };
    let ago = row.last_at.map(|at| {
        let elapsed = (now - at).num_milliseconds().max(0) as f64;
        t!("time-ago", time = duration(elapsed))
    });
    view! {
        {status_pill(status)}
        <div class="muted small" title=row.last_at.map(stamp)>{ago}</div>
    }
    .into_any()
}

/// The strip's squares, oldest first, with a text equivalent for screen readers.
fn strip(statuses: &[RunStatus]) -> impl IntoView + use<> {
    let count = |status| statuses.iter().filter(|s| **s == status).count();
    let (succeeded, dead) = (count(RunStatus::Succeeded), count(RunStatus::Dead));
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

/// When the job fires next, over the schedule that says so.
fn next_cell(row: &JobRow) -> impl IntoView {
    let next = match (row.enabled, row.next_fire_at) {
        (false, _) => job_state(JobState::Disabled),
        (true, Some(at)) if row.paused => t!("jobs-next-paused", due = stamp(at)),
        (true, Some(at)) => stamp(at),
        (true, None) => "—".into(),
    };
    view! {
        <td class="c-next small">
            <div>{next}</div>
            <code class="cron">{row.cron.clone()}</code>
            " "
            <span class="muted">{row.timezone.clone()}</span>
        </td>
    }
}

/// Run now, always in sight; pause, disable and delete under "More".
fn row_actions(row: &JobRow, ctx: Rows) -> impl IntoView {
    let Rows { actions, .. } = ctx;
    let (id, enabled, paused) = (row.id, row.enabled, row.paused);
    view! {
        <div class="job-actions">
            {run_now(row, actions.run_now)}
            <details class="more">
                <summary>
                    {t!("jobs-more")}
                    <span class="visually-hidden">" " {row.name.clone()}</span>
                </summary>
                <div class="menu">
                    <button type="button" class="secondary" on:click=move |_| {
                        actions.pause.dispatch(SetJobPaused { id, paused: !paused });
                    }>{if paused { t!("jobs-resume") } else { t!("jobs-pause") }}</button>
                    <button type="button" class="secondary" on:click=move |_| {
                        actions.toggle.dispatch(SetJobEnabled { id, enabled: !enabled });
                    }>{if enabled { t!("jobs-disable") } else { t!("jobs-enable") }}</button>
                    {delete_control(row, ctx)}
                </div>
            </details>
        </div>
    }
}

/// A job that takes parameters is run from its page, where the form asks for them.
fn run_now(row: &JobRow, run_now: ServerAction<RunJobNow>) -> AnyView {
    let id = row.id;
    if row.takes_parameters {
        return view! {
            <a class="button secondary" href=format!("/jobs/{id}#run")>{t!("jobs-run-now-params")}</a>
        }
        .into_any();
    }
    view! {
        <button type="button" class="secondary" on:click=move |_| {
            if confirm_while_paused() {
                run_now.dispatch(RunJobNow { id, params: None });
            }
        }>{t!("jobs-run-now")}</button>
    }
    .into_any()
}

/// Delete, then "are you sure?" naming the job and how many runs go with it.
fn delete_control(row: &JobRow, ctx: Rows) -> impl IntoView {
    let Rows {
        actions,
        confirming,
        ..
    } = ctx;
    let id = row.id;
    let question = t!(
        "jobs-delete-confirm",
        name = row.name.clone(),
        count = row.runs
    );
    view! {
        <Show
            when=move || confirming.get() == Some(id)
            fallback=move || view! {
                <button type="button" class="danger" on:click=move |_| confirming.set(Some(id))>
                    {t!("action-delete")}
                </button>
            }
        >
            <span class="confirm" role="alertdialog">
                {question.clone()}
                <button type="button" class="danger" on:click=move |_| {
                    confirming.set(None);
                    actions.delete.dispatch(DeleteJob { id });
                }>{t!("action-delete-confirm")}</button>
                <button type="button" class="secondary" on:click=move |_| confirming.set(None)>
                    {t!("action-cancel")}
                </button>
            </span>
        </Show>
    }
}
