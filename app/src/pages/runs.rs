//! Runs: every execution of every job, newest first, refreshed while you watch; and a search
//! through their output.

use leptos::prelude::*;

use crate::i18n::current;
use crate::i18n::errors::Explain;
use leptos_meta::Title;
use leptos_router::components::Form;
use leptos_router::hooks::use_query_map;

use crate::api::run_logs::search_output;
use crate::api::runs::list_runs;
use crate::components::log_viewer::marked;
use crate::components::status::{status_pill, when};
use crate::components::ticker::use_ticker;
use crate::domain::run::RunStatus;
use crate::i18n::words::{error_class, run_status, trigger};
use crate::t;
use crate::views::run_logs::LogMatch;
use crate::views::runs::RunView;

#[component]
pub fn RunsPage() -> impl IntoView {
    let query = use_query_map();
    let param = move |key: &str| query.with(|q| q.get(key).filter(|v| !v.is_empty()));
    let tick = use_ticker(2_000);
    let filters = move || (param("job"), param("status"), param("since"), param("tag"));
    let runs = Resource::new(
        move || (filters(), tick.get()),
        |((job, status, since, tag), _)| {
            list_runs(job, status, since.and_then(|s| s.parse().ok()), tag)
        },
    );

    view! {
        <Title text=t!("nav-runs") />
        <h1>{t!("nav-runs")}</h1>
        <Form method="GET" action="" attr:class="filters card">
            <div>
                <label for="f-job">{t!("runs-filter-job")}</label>
                <input id="f-job" name="job" type="text" prop:value=move || param("job").unwrap_or_default() />
            </div>
            <div>
                <label for="f-status">{t!("runs-filter-status")}</label>
                <select id="f-status" name="status" prop:value=move || param("status").unwrap_or_default()>
                    <option value="">{t!("filter-any")}</option>
                    {RunStatus::ALL
                        .iter()
                        .map(|s| view! { <option value=s.as_str()>{run_status(*s)}</option> })
                        .collect_view()}
                </select>
            </div>
            <div>
                <label for="f-tag">{t!("jobs-filter-tag")}</label>
                <input id="f-tag" name="tag" type="text" autocomplete="off" prop:value=move || param("tag").unwrap_or_default() />
            </div>
            <div>
                <label for="f-since">{t!("runs-filter-since")}</label>
                <select id="f-since" name="since" prop:value=move || param("since").unwrap_or_default()>
                    <option value="">{t!("runs-since-any")}</option>
                    <option value="1">{t!("runs-since-hour")}</option>
                    <option value="24">{t!("runs-since-day")}</option>
                    <option value="168">{t!("runs-since-week")}</option>
                </select>
            </div>
            <div>
                <button type="submit">{t!("filter-apply")}</button>
            </div>
        </Form>
        <OutputSearch />
        <Transition fallback=|| view! { <p class="muted">{t!("loading")}</p> }>
            {move || Suspend::new(async move {
                match runs.await {
                    Err(e) => view! { <p class="error">{e.explain(current())}</p> }.into_any(),
                    Ok(rows) if rows.is_empty() => {
                        view! { <p class="card muted" data-testid="no-runs">{t!("runs-none")}</p> }.into_any()
                    }
                    Ok(rows) => {
                        // The Overview's tiles count every run; the list stops at the newest
                        // ones, and says so rather than look like the tile is wrong.
                        let capped = rows.len() as u64 >= crate::views::runs::RUNS_PAGE_LIMIT;
                        view! {
                            {capped.then(|| view! {
                                <p class="muted" data-testid="runs-capped">
                                    {t!("runs-capped", count = crate::views::runs::RUNS_PAGE_LIMIT)}
                                </p>
                            })}
                            <RunsTable rows />
                        }
                        .into_any()
                    }
                }
            })}
        </Transition>
    }
}

#[component]
fn RunsTable(rows: Vec<RunView>) -> impl IntoView {
    view! {
        <table tabindex="0" class="table card" data-testid="runs">
            <thead>
                <tr>
                    <th>{t!("runs-col-run")}</th>
                    <th>{t!("runs-filter-job")}</th>
                    <th>{t!("runs-col-trigger")}</th>
                    <th>{t!("runs-filter-status")}</th>
                    <th>{t!("runs-col-scheduled")}</th>
                    <th>{t!("runs-col-attempts")}</th>
                    <th>{t!("runs-col-error")}</th>
                </tr>
            </thead>
            <tbody>
                {rows
                    .into_iter()
                    .map(|run| {
                        view! {
                            <tr data-run=run.id>
                                <td><a href=format!("/runs/{}", run.id)>{format!("#{}", run.id)}</a></td>
                                <td>{run.job.clone()}</td>
                                <td>{trigger(run.trigger)}</td>
                                <td>{status_pill(run.status)}</td>
                                <td>{when(run.scheduled_for)}</td>
                                <td>{run.attempts.len()}</td>
                                <td class="small">
                                    {run.last_error_class.map(|c| format!("{}: ", error_class(c)))}
                                    {run.last_error.clone()}
                                </td>
                            </tr>
                        }
                        .into_any()
                    })
                    .collect_view()}
            </tbody>
        </table>
    }
}

/// Lines of runs' output holding a text (`?q=`), with the list's job, status and period
/// filters; each links to its line on the run's page.
#[component]
fn OutputSearch() -> impl IntoView {
    let query = use_query_map();
    let param = move |key: &str| query.with(|q| q.get(key).filter(|v| !v.is_empty()));
    let found = Resource::new(
        move || (param("q"), param("job"), param("status"), param("since")),
        |(q, job, status, since)| async move {
            match q {
                Some(text) => {
                    let since = since.and_then(|s| s.parse().ok());
                    search_output(text, job, status, since).await.map(Some)
                }
                None => Ok(None),
            }
        },
    );
    let hidden = move |key: &'static str| {
        param(key).map(|v| view! { <input type="hidden" name=key value=v /> })
    };
    view! {
        <Form method="GET" action="" attr:class="filters card" attr:role="search">
            <div class="grow">
                <label for="f-q">{t!("runs-search")}</label>
                <input id="f-q" name="q" type="search" minlength="3" data-testid="output-search"
                    prop:value=move || param("q").unwrap_or_default() />
            </div>
            {hidden("job")}{hidden("status")}{hidden("since")}
            <div>
                <button type="submit">{t!("runs-search-button")}</button>
            </div>
        </Form>
        <Transition fallback=|| ()>
            {move || Suspend::new(async move {
                let term = param("q").unwrap_or_default();
                match found.await {
                    Ok(None) => ().into_any(),
                    Ok(Some(hits)) if hits.is_empty() => view! {
                        <p class="card muted" data-testid="search-none">{t!("runs-search-none", text = term)}</p>
                    }.into_any(),
                    Ok(Some(hits)) => view! { <SearchHits hits term /> }.into_any(),
                    Err(e) => view! { <p class="error" role="alert">{e.explain(current())}</p> }.into_any(),
                }
            })}
        </Transition>
    }
}

#[component]
fn SearchHits(hits: Vec<LogMatch>, term: String) -> impl IntoView {
    let count = hits.len();
    let rows = hits
        .into_iter()
        .map(|hit| {
            let href = format!(
                "/runs/{}?attempt={}&line={}#log",
                hit.run, hit.attempt, hit.line
            );
            view! {
                <tr data-run=hit.run data-line=hit.line>
                    <td><a href=href>{format!("#{}", hit.run)}</a></td>
                    <td>{hit.job}</td>
                    <td>{hit.attempt}</td>
                    <td>{hit.line}</td>
                    <td class="log-text">{marked(&hit.text, &term)}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <section class="card" data-testid="search-hits">
            <p class="small muted">{t!("runs-search-found", count = count)}</p>
            <table tabindex="0" class="table">
                <thead>
                    <tr>
                        <th>{t!("runs-col-run")}</th>
                        <th>{t!("runs-filter-job")}</th>
                        <th>{t!("log-attempt")}</th>
                        <th>{t!("runs-search-col-line")}</th>
                        <th>{t!("log-title")}</th>
                    </tr>
                </thead>
                <tbody>{rows}</tbody>
            </table>
        </section>
    }
}
