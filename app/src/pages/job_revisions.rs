//! The job page's revisions card: every saved definition — who, when, note — with what its runs
//! did (runs, success rate, P95), a revision that did worse than the one before marked; two
//! revisions compared side by side (credentials hidden); and, for admins, restoring one.

use leptos::prelude::*;
use leptos_router::hooks::{use_navigate, use_query_map};

use crate::api::revisions::{RestoreRevision, diff_revisions, list_revisions};
use crate::domain::job::diff::FieldChange;
use crate::i18n::current;
use crate::i18n::errors::Explain;
use crate::t;
use crate::views::jobs::RevisionView;

#[component]
pub fn RevisionsCard(
    id: i64,
    readonly: bool,
    /// Counts the form's saves: each may have made a revision.
    saves: Signal<usize>,
) -> impl IntoView {
    let restore = ServerAction::<RestoreRevision>::new();
    let rows = Resource::new(move || saves.get(), move |_| list_revisions(id));
    let compare = RwSignal::new(None::<(i32, i32)>);
    // The page reads the restored definition again (`pages::job_edit`), and says so here.
    let navigate = use_navigate();
    Effect::new(move |_| {
        if let Some(Ok(revision)) = restore.value().get() {
            navigate(
                &format!("/jobs/{id}?restored={revision}#revisions"),
                Default::default(),
            );
        }
    });
    let query = use_query_map();
    let restored = move || {
        query
            .read()
            .get("restored")
            .and_then(|r| r.parse::<i32>().ok())
    };
    view! {
        <section class="card" id="revisions" data-testid="revisions">
            <h2>{t!("revisions-heading")}</h2>
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    match rows.await {
                        Ok(rows) if rows.is_empty() => {
                            view! { <p class="muted">{t!("revisions-none")}</p> }.into_any()
                        }
                        Ok(rows) => {
                            let restore = (!readonly).then_some(restore);
                            revision_table(id, rows, compare, restore).into_any()
                        }
                        Err(e) => view! { <p class="error">{e.explain(current())}</p> }.into_any(),
                    }
                })}
            </Transition>
            {move || restored().map(|revision| view! {
                <p class="ok" role="status">{t!("revisions-restored", revision = revision)}</p>
            })}
            {move || restore.value().get().and_then(Result::err).map(|e| view! {
                <p class="error" role="alert">{e.explain(current())}</p>
            })}
            {move || compare.get().map(|(from, to)| view! { <RevisionDiff id from to /> })}
        </section>
    }
}

fn revision_table(
    id: i64,
    rows: Vec<RevisionView>,
    compare: RwSignal<Option<(i32, i32)>>,
    restore: Option<ServerAction<RestoreRevision>>,
) -> impl IntoView {
    let locale = current();
    let latest = rows.first().map(|r| r.row.revision);
    view! {
        <div class="table-scroll">
            <table tabindex="0" class="table" data-testid="revision-list">
                <thead>
                    <tr>
                        <th>{t!("revisions-col-revision")}</th>
                        <th>{t!("revisions-col-at")}</th>
                        <th>{t!("revisions-col-actor")}</th>
                        <th>{t!("revisions-col-note")}</th>
                        <th>{t!("revisions-col-runs")}</th>
                        <th>{t!("revisions-col-success")}</th>
                        <th>{t!("revisions-col-p95")}</th>
                        <th></th>
                    </tr>
                </thead>
                <tbody>
                    {rows
                        .into_iter()
                        .map(|r| {
                            let revision = r.row.revision;
                            let outcome = r.outcome.clone();
                            let rate = outcome.as_ref().and_then(|o| o.success_rate());
                            let worse = r.worse.is_some();
                            let previous = (revision > 1).then_some(revision - 1);
                            view! {
                                <tr data-revision=revision class:worse=worse>
                                    <td>{revision}</td>
                                    <td>{crate::i18n::stamp_minutes(r.row.at)}</td>
                                    <td>{r.row.actor.clone()}</td>
                                    <td>{r.row.note.clone().unwrap_or_default()}</td>
                                    <td>{outcome.as_ref().map_or(0, |o| o.runs)}</td>
                                    <td>
                                        {rate.map(|rate| locale.percent(rate)).unwrap_or_else(|| "—".into())}
                                        {worse.then(|| view! { " " <span class="pill bad">{t!("revisions-worse")}</span> })}
                                    </td>
                                    <td>{outcome.and_then(|o| o.p95_ms).map_or_else(|| "—".into(), |ms| locale.duration(ms as f64))}</td>
                                    <td class="row-actions">
                                        {previous.map(|p| view! {
                                            <button type="button" class="link" on:click=move |_| compare.set(Some((p, revision)))>
                                                {t!("revisions-changes", from = p, to = revision)}
                                            </button>
                                        })}
                                        {restore.filter(|_| Some(revision) != latest).map(|restore| view! {
                                            <ActionForm action=restore>
                                                <input type="hidden" name="id" value=id />
                                                <input type="hidden" name="revision" value=revision />
                                                <button type="submit" class="link">{t!("revisions-restore")}</button>
                                            </ActionForm>
                                        })}
                                    </td>
                                </tr>
                            }
                        })
                        .collect_view()}
                </tbody>
            </table>
        </div>
    }
}

/// Two revisions side by side: each field that differs, with what each says.
#[component]
fn RevisionDiff(id: i64, from: i32, to: i32) -> impl IntoView {
    let changes = Resource::new(
        move || (from, to),
        move |(from, to)| diff_revisions(id, from, to),
    );
    let table = move |changes: Vec<FieldChange>| {
        view! {
            <div class="table-scroll">
                <table tabindex="0" class="table diff" data-testid="revision-diff">
                    <thead>
                        <tr>
                            <th>{t!("revisions-col-field")}</th>
                            <th>{t!("revisions-col-revision-n", revision = from)}</th>
                            <th>{t!("revisions-col-revision-n", revision = to)}</th>
                        </tr>
                    </thead>
                    <tbody>
                        {changes
                            .into_iter()
                            .map(|c| {
                                let field = c.field.clone();
                                view! {
                                <tr data-field=field>
                                    <td><code>{c.field}</code></td>
                                    <td class="before"><pre>{c.before}</pre></td>
                                    <td class="after"><pre>{c.after}</pre></td>
                                </tr>
                                }
                            })
                            .collect_view()}
                    </tbody>
                </table>
            </div>
        }
    };
    view! {
        <h3>{t!("revisions-diff-heading", from = from, to = to)}</h3>
        <Transition fallback=|| ()>
            {move || Suspend::new(async move {
                match changes.await {
                    Ok(list) if list.is_empty() => view! { <p class="muted">{t!("revisions-same")}</p> }.into_any(),
                    Ok(list) => table(list).into_any(),
                    Err(e) => view! { <p class="error">{e.explain(current())}</p> }.into_any(),
                }
            })}
        </Transition>
    }
}
