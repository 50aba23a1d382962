//! The failed queue: dead runs no one has handled yet, newest failure first, with counts by job
//! and class, filters, paging, and — for admins — re-trigger (one, selected, or all matching,
//! released at a chosen rate), resolve and discard.

use crate::i18n::words::error_class;
use crate::t;
use std::collections::BTreeSet;

use leptos::prelude::*;

use crate::i18n::current;
use crate::i18n::errors::Explain;
use leptos_meta::Title;
use leptos_router::components::{A, Form};
use leptos_router::hooks::use_query_map;

use crate::api::failed::{
    ResolveRun, RetriggerMany, RetriggerRun, failed_queue, retrigger_preview,
};
use crate::components::layout::use_current_user;
use crate::components::status::when;
use crate::domain::run::ErrorClass;
use crate::views::failed::{DeadRun, QueueFilter, QueuePage};

fn query_string(filter: &QueueFilter, cursor: Option<&str>) -> String {
    let pairs = [
        ("job", filter.job.as_deref()),
        ("class", filter.class.as_deref()),
        ("from", filter.from.as_deref()),
        ("to", filter.to.as_deref()),
        ("text", filter.text.as_deref()),
        ("tag", filter.tag.as_deref()),
        ("cursor", cursor),
    ];
    crate::views::query::href("/failed", pairs.map(|(k, v)| (k, v.unwrap_or_default())))
}

#[component]
pub fn FailedPage() -> impl IntoView {
    let me = use_current_user();
    let query = use_query_map();
    let param = move |key: &str| query.with(|q| q.get(key).filter(|v| !v.is_empty()));
    let filter = Memo::new(move |_| QueueFilter {
        job: param("job"),
        class: param("class"),
        from: param("from"),
        to: param("to"),
        text: param("text"),
        tag: param("tag"),
    });
    let retrigger = ServerAction::<RetriggerRun>::new();
    let many = ServerAction::<RetriggerMany>::new();
    let resolve = ServerAction::<ResolveRun>::new();
    let page = Resource::new(
        move || {
            (
                filter.get(),
                param("cursor"),
                retrigger.version().get() + many.version().get() + resolve.version().get(),
            )
        },
        |(filter, cursor, _)| failed_queue(filter, cursor),
    );
    let selected = RwSignal::new(BTreeSet::<i64>::new());
    let outcome = move || {
        let err = retrigger
            .value()
            .get()
            .and_then(Result::err)
            .or_else(|| many.value().get().and_then(Result::err))
            .or_else(|| resolve.value().get().and_then(Result::err));
        if let Some(e) = err {
            return Some((false, e.explain(current())));
        }
        if let Some(Ok(n)) = many.value().get() {
            return Some((true, t!("failed-retriggered-many", count = n)));
        }
        retrigger
            .value()
            .get()
            .and_then(Result::ok)
            .map(|id| (true, t!("failed-retriggered-one", run = id)))
    };
    view! {
        <Title text=t!("nav-failed") />
        <h1>{t!("nav-failed")}</h1>
        <p class="lead">{t!("failed-lead")}</p>
        <QueueFilters />
        <p role="status" data-testid="queue-outcome">
            {move || outcome().map(|(ok, text)| view! { <span class=if ok { "ok" } else { "error" }>{text}</span> })}
        </p>
        <Transition fallback=|| view! { <p class="muted">{t!("loading")}</p> }>
            {move || Suspend::new(async move {
                let admin = me.await.map(|u| u.is_admin()).unwrap_or(false);
                match page.await {
                    Err(e) => view! { <p class="error">{e.explain(current())}</p> }.into_any(),
                    Ok(page) => {
                        let f = filter.get_untracked();
                        let next_link = page.next.clone().map(|c| query_string(&f, Some(&c)));
                        view! {
                            {counts(&page)}
                            {admin.then(|| view! { <BulkBar selected filter many matching=page.matching /> })}
                            <QueueTable rows=page.rows admin selected retrigger resolve />
                            <p class="paging">
                                <A href=query_string(&f, None)>{t!("paging-newest")}</A>
                                {next_link.map(|href| view! { " · " <A href=href>{t!("paging-older")}</A> })}
                            </p>
                        }
                        .into_any()
                    }
                }
            })}
        </Transition>
    }
}

/// How many runs match, by job and by class, each a link to the queue filtered by it.
fn counts(page: &QueuePage) -> impl IntoView + use<> {
    let jobs = page
        .per_job
        .iter()
        .map(|(name, n)| {
            let only = QueueFilter { job: Some(name.clone()), ..Default::default() };
            view! { <A href=query_string(&only, None) attr:class="chip">{format!("{name} {n}")}</A> }
        })
        .collect_view();
    let classes = page
        .per_class
        .iter()
        .map(|(class, n)| match class {
            Some(class) => {
                let only = QueueFilter { class: Some(class.as_str().into()), ..Default::default() };
                view! { <A href=query_string(&only, None) attr:class="chip">{format!("{} {n}", error_class(*class))}</A> }.into_any()
            }
            None => view! { <span class="chip">{t!("failed-class-unknown", count = *n)}</span> }.into_any(),
        })
        .collect_view();
    view! {
        <section class="card counts" data-testid="queue-counts">
            <strong data-testid="matching">{page.matching}</strong>" "{t!("failed-matching", count = page.matching)}" "
            <span class="muted">{t!("failed-by-job")}" "</span>
            {jobs}
            <span class="muted">" "{t!("failed-by-class")}" "</span>
            {classes}
        </section>
    }
}

/// The filter form: a GET of this page, so the URL says what is shown.
#[component]
fn QueueFilters() -> impl IntoView {
    let query = use_query_map();
    let param = move |key: &str| query.with(|q| q.get(key).filter(|v| !v.is_empty()));
    view! {
        <Form method="GET" action="" attr:class="filters card">
            <div><label for="q-job">{t!("runs-filter-job")}</label>
                <input id="q-job" name="job" type="text" prop:value=move || param("job").unwrap_or_default() /></div>
            <div><label for="q-class">{t!("failed-filter-class")}</label>
                <select id="q-class" name="class" prop:value=move || param("class").unwrap_or_default()>
                    <option value="">{t!("filter-any")}</option>
                    {ErrorClass::ALL.iter()
                        .map(|c| view! { <option value=c.as_str()>{error_class(*c)}</option> }).collect_view()}
                </select></div>
            <div><label for="q-from">{t!("failed-filter-from")}</label>
                <input id="q-from" name="from" type="date" prop:value=move || param("from").unwrap_or_default() /></div>
            <div><label for="q-to">{t!("failed-filter-to")}</label>
                <input id="q-to" name="to" type="date" prop:value=move || param("to").unwrap_or_default() /></div>
            <div><label for="q-text">{t!("failed-filter-text")}</label>
                <input id="q-text" name="text" type="text" prop:value=move || param("text").unwrap_or_default() /></div>
            <div><label for="q-tag">{t!("jobs-filter-tag")}</label>
                <input id="q-tag" name="tag" type="text" autocomplete="off" prop:value=move || param("tag").unwrap_or_default() /></div>
            <div><button type="submit">{t!("filter-apply")}</button></div>
        </Form>
    }
}

#[component]
fn BulkBar(
    selected: RwSignal<BTreeSet<i64>>,
    filter: Memo<QueueFilter>,
    many: ServerAction<RetriggerMany>,
    matching: u64,
) -> impl IntoView {
    let per_minute = RwSignal::new("60".to_string());
    // Some(None): confirming the selection; Some(Some(n)): confirming all n matching the filter.
    let confirming = RwSignal::new(None::<Option<u64>>);
    let preview = Action::new(move |filter: &QueueFilter| {
        let filter = filter.clone();
        async move { retrigger_preview(filter).await }
    });
    Effect::new(move |_| {
        if let Some(Ok(n)) = preview.value().get() {
            confirming.set(Some(Some(n)));
        }
    });
    let rate = move || per_minute.get().trim().parse::<u32>().unwrap_or(0);
    view! {
        <div class="bulk card" data-testid="bulk">
            <label for="per-minute">{t!("failed-rate-before")}</label>
            <input id="per-minute" type="number" min="1" max="6000" class="narrow"
                prop:value=move || per_minute.get() on:input=move |ev| per_minute.set(event_target_value(&ev)) />
            <span>" "{t!("failed-rate-after")}" "</span>
            <button type="button" class="secondary" disabled=move || selected.with(|s| s.is_empty())
                on:click=move |_| confirming.set(Some(None))>
                {move || t!("failed-retrigger-selected", count = selected.with(|s| s.len()))}
            </button>
            <button type="button" class="secondary" disabled=matching == 0
                on:click=move |_| { preview.dispatch(filter.get_untracked()); }>
                {t!("failed-retrigger-all")}
            </button>
            {move || confirming.get().map(|what| {
                let (text, by_filter) = match what {
                    None => (t!("failed-confirm-selected", count = selected.with(|s| s.len()), rate = rate()), false),
                    Some(n) => (t!("failed-confirm-all", count = n, rate = rate()), true),
                };
                view! {
                    <span class="confirm" role="alertdialog" data-testid="bulk-confirm">
                        {text}
                        <button type="button" class="danger" on:click=move |_| {
                            if !crate::components::layout::confirm_while_paused() { return; }
                            let ids: Vec<i64> = if by_filter { Vec::new() } else { selected.get_untracked().into_iter().collect() };
                            let filter = by_filter.then(|| filter.get_untracked());
                            many.dispatch(RetriggerMany { ids, filter, per_minute: rate() });
                            selected.set(BTreeSet::new());
                            confirming.set(None);
                        }>{t!("failed-confirm-yes")}</button>
                        <button type="button" class="secondary" on:click=move |_| confirming.set(None)>{t!("action-cancel")}</button>
                    </span>
                }
            })}
        </div>
    }
    .into_any()
}

#[component]
fn QueueTable(
    rows: Vec<DeadRun>,
    admin: bool,
    selected: RwSignal<BTreeSet<i64>>,
    retrigger: ServerAction<RetriggerRun>,
    resolve: ServerAction<ResolveRun>,
) -> impl IntoView {
    if rows.is_empty() {
        return view! { <p class="card muted" data-testid="queue-empty">{t!("failed-empty")}</p> }
            .into_any();
    }
    view! {
        <table tabindex="0" class="table card" data-testid="queue">
            <thead><tr>
                {admin.then(|| view! { <th></th> })}
                <th>{t!("runs-col-run")}</th><th>{t!("runs-filter-job")}</th><th>{t!("failed-col-first")}</th><th>{t!("failed-col-last")}</th>
                <th>{t!("runs-col-attempts")}</th><th>{t!("failed-col-class")}</th><th>{t!("failed-col-message")}</th>
                {admin.then(|| view! { <th></th> })}
            </tr></thead>
            <tbody>
                {rows.into_iter().map(|run| {
                    let id = run.id;
                    view! {
                        <tr data-run=id data-job=run.job.clone()>
                            {admin.then(|| view! {
                                <td><input type="checkbox" aria-label=t!("failed-select-run", run = id)
                                    prop:checked=move || selected.with(|s| s.contains(&id))
                                    on:change=move |ev| selected.update(|s| {
                                        if event_target_checked(&ev) { s.insert(id); } else { s.remove(&id); }
                                    }) /></td>
                            })}
                            <td><a href=format!("/runs/{id}")>{format!("#{id}")}</a></td>
                            <td>{run.job.clone()}</td>
                            <td>{run.first_failure.map(when).unwrap_or_default()}</td>
                            <td>{run.last_failure.map(when).unwrap_or_default()}</td>
                            <td>{run.attempts}</td>
                            <td>{run.error_class.map(error_class)}</td>
                            <td class="small">{run.message.clone().unwrap_or_default()}</td>
                            {admin.then(|| if run.runs_elsewhere {
                                // A watched job's run: it runs elsewhere, nothing to start again.
                                view! { <td class="actions"><RowActionsResolveOnly id resolve /></td> }.into_any()
                            } else {
                                view! { <td class="actions"><RowActions id retrigger resolve /></td> }.into_any()
                            })}
                        </tr>
                    }
                    .into_any()
                }).collect_view()}
            </tbody>
        </table>
    }
    .into_any()
}

/// Re-trigger now, or resolve / discard with a reason.
#[component]
pub fn RowActions(
    id: i64,
    retrigger: ServerAction<RetriggerRun>,
    resolve: ServerAction<ResolveRun>,
) -> impl IntoView {
    view! {
        <button type="button" class="secondary" on:click=move |_| {
            if !crate::components::layout::confirm_while_paused() { return; }
            retrigger.dispatch(RetriggerRun { id, timeout: None, retry: None });
        }>{t!("action-retrigger")}</button>
        <RowActionsResolveOnly id resolve />
    }
}

/// Resolve or discard with a reason, asked for inline.
#[component]
pub fn RowActionsResolveOnly(id: i64, resolve: ServerAction<ResolveRun>) -> impl IntoView {
    let asking = RwSignal::new(None::<bool>);
    let reason = RwSignal::new(String::new());
    view! {
        <Show when=move || asking.get().is_none() fallback=move || {
            let discard = asking.get().unwrap_or(false);
            view! {
                <span class="confirm">
                    <input type="text" class="narrow" aria-label=t!("failed-reason")
                        placeholder=if discard { t!("failed-reason-discard") } else { t!("failed-reason-resolve") }
                        prop:value=move || reason.get()
                        on:input=move |ev| reason.set(event_target_value(&ev)) />
                    <button type="button" class="danger" on:click=move |_| {
                        resolve.dispatch(ResolveRun { id, reason: reason.get_untracked(), discard });
                        asking.set(None);
                    }>{if discard { t!("failed-discard") } else { t!("failed-resolve") }}</button>
                    <button type="button" class="secondary" on:click=move |_| asking.set(None)>{t!("action-cancel")}</button>
                </span>
            }
        }>
            <button type="button" class="secondary" on:click=move |_| asking.set(Some(false))>{t!("failed-resolve-ask")}</button>
            <button type="button" class="secondary" on:click=move |_| asking.set(Some(true))>{t!("failed-discard-ask")}</button>
        </Show>
    }
}
