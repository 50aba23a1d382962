//! Maintenance: pause every job (or a tag) now or in a window ahead, and resume. While paused
//! no cron run and no retry starts; running attempts finish; Run now and re-triggers still
//! work after a confirmation. The rules are in `app/src/domain/maintenance.rs`.

use leptos::prelude::*;

use crate::i18n::current;
use crate::i18n::errors::Explain;
use leptos_meta::Title;

use crate::api::maintenance::{CancelWindow, PauseJobs, ResumeJobs, get_maintenance};
use crate::components::form::{field_error, other_error};
use crate::components::layout::{use_is_admin, use_maintenance};
use crate::t;
use crate::views::maintenance::WindowView;

fn when(t: chrono::DateTime<chrono::Utc>) -> String {
    t.format("%Y-%m-%d %H:%M UTC").to_string()
}

fn what(w: &WindowView) -> String {
    match &w.tag {
        None => t!("maintenance-every-job"),
        Some(tag) => t!("maintenance-tagged", tag = tag.clone()),
    }
}

#[component]
pub fn MaintenancePage() -> impl IntoView {
    let is_admin = use_is_admin();
    let banner = use_maintenance();
    let pause_now = ServerAction::<PauseJobs>::new();
    let schedule = ServerAction::<PauseJobs>::new();
    let resume = ServerAction::<ResumeJobs>::new();
    let cancel = ServerAction::<CancelWindow>::new();
    let status = Resource::new(
        move || {
            (
                pause_now.version().get(),
                schedule.version().get(),
                resume.version().get(),
                cancel.version().get(),
            )
        },
        |_| get_maintenance(),
    );
    // The banner follows every change at once rather than at its next poll.
    Effect::new(move |first: Option<()>| {
        let _ = (
            pause_now.version().get(),
            schedule.version().get(),
            resume.version().get(),
            cancel.version().get(),
        );
        if first.is_some() {
            banner.0.refetch();
        }
    });
    let now_error = other_error(pause_now.value());
    let schedule_error = other_error(schedule.value());
    let row_error = move || other_error(resume.value())().or_else(other_error(cancel.value()));

    let window_row = move |w: WindowView, admin: bool| {
        let id = w.id;
        let ahead = w.starts_at > chrono::Utc::now();
        view! {
            <tr data-window=id>
                <td>{what(&w)}</td>
                <td>{when(w.starts_at)}</td>
                <td>{w.ends_at.map(when).unwrap_or_else(|| t!("maintenance-until-resumed"))}</td>
                <td>{w.created_by.clone()}</td>
                <td>{w.reason.clone()}</td>
                <td class="actions">
                    {admin.then(|| view! {
                        <button type="button" class="secondary" on:click=move |_| {
                            cancel.dispatch(CancelWindow { id });
                        }>{if ahead { t!("action-cancel") } else { t!("maintenance-end-now") }}</button>
                    })}
                </td>
            </tr>
        }
    };
    let table = move |rows: Vec<WindowView>, admin: bool, testid: &'static str| {
        view! {
            <div class="scroll">
                <table tabindex="0" class="table" data-testid=testid>
                    <thead>
                        <tr>
                            <th>{t!("maintenance-col-pauses")}</th>
                            <th>{t!("maintenance-col-from")}</th>
                            <th>{t!("maintenance-col-until")}</th>
                            <th>{t!("maintenance-col-by")}</th>
                            <th>{t!("maintenance-col-reason")}</th>
                            <th><span class="visually-hidden">{t!("table-actions")}</span></th>
                        </tr>
                    </thead>
                    <tbody>
                        {rows.into_iter().map(|w| window_row(w, admin)).collect_view()}
                    </tbody>
                </table>
            </div>
        }
    };

    view! {
        <Title text=t!("banner-maintenance-link") />
        <h1>{t!("banner-maintenance-link")}</h1>
        <p class="notice">
            {t!("maintenance-explained")}
        </p>
        <p class="error" role="alert">{row_error}</p>
        <Transition fallback=|| view! { <p class="muted">{t!("loading")}</p> }>
            {move || Suspend::new(async move {
                let admin = is_admin.await;
                match status.await {
                    Err(e) => view! { <p class="error">{e.explain(current())}</p> }.into_any(),
                    Ok(status) => {
                        let paused_all = status.pausing_all().is_some();
                        view! {
                            <section class="card" data-testid="maintenance-now">
                                <h2>{t!("maintenance-now")}</h2>
                                {if status.active.is_empty() {
                                    view! { <p data-testid="not-paused">{t!("maintenance-not-paused")}</p> }.into_any()
                                } else {
                                    view! {
                                        <p><strong>{status.summary(crate::i18n::current())}</strong></p>
                                        {table(status.active.clone(), admin, "active-windows")}
                                        {admin.then(|| view! {
                                            <button type="button" data-testid="resume" on:click=move |_| {
                                                resume.dispatch(ResumeJobs {});
                                            }>{t!("maintenance-resume-all")}</button>
                                        })}
                                    }.into_any()
                                }}
                                {(!status.paused_jobs.is_empty()).then(|| view! {
                                    <p>
                                        {t!("maintenance-paused-jobs", jobs = status.paused_jobs.join(", "))}" "
                                        <a href="/jobs?state=paused">{t!("maintenance-paused-jobs-link")}</a>
                                    </p>
                                })}
                            </section>
                            {(admin && !paused_all).then(|| view! {
                                <section class="card">
                                    <h2>{t!("maintenance-pause-heading")}</h2>
                                    <ActionForm action=pause_now attr:class="form" attr:data-testid="pause-all">
                                        <div>
                                            <label for="pause-reason">{t!("maintenance-reason-banner")}</label>
                                            <input id="pause-reason" name="reason" type="text" required maxlength="500" />
                                            <p class="field-error">{field_error(pause_now.value(), "maintenance")}</p>
                                        </div>
                                        <div>
                                            <label for="pause-until">{t!("maintenance-until-optional")}</label>
                                            <input id="pause-until" name="until" type="text" autocomplete="off" />
                                            <p class="field-error">{field_error(pause_now.value(), "until")}</p>
                                        </div>
                                        <div><button type="submit">{t!("maintenance-pause-all")}</button></div>
                                        <p class="error" role="alert">{now_error}</p>
                                    </ActionForm>
                                </section>
                            })}
                            <section class="card">
                                <h2>{t!("maintenance-ahead")}</h2>
                                {if status.ahead.is_empty() {
                                    view! { <p class="muted">{t!("maintenance-ahead-none")}</p> }.into_any()
                                } else {
                                    table(status.ahead.clone(), admin, "ahead-windows").into_any()
                                }}
                                {admin.then(|| view! {
                                    <ActionForm action=schedule attr:class="form" attr:data-testid="schedule-window">
                                        <div>
                                            <label for="window-starts">{t!("maintenance-starts")}</label>
                                            <input id="window-starts" name="starts" type="datetime-local" required />
                                            <p class="field-error">{field_error(schedule.value(), "starts")}</p>
                                        </div>
                                        <div>
                                            <label for="window-until">{t!("maintenance-ends")}</label>
                                            <input id="window-until" name="until" type="datetime-local" required />
                                            <p class="field-error">{field_error(schedule.value(), "until")}</p>
                                        </div>
                                        <div>
                                            <label for="window-reason">{t!("maintenance-col-reason")}</label>
                                            <input id="window-reason" name="reason" type="text" required maxlength="500" />
                                            <p class="field-error">{field_error(schedule.value(), "maintenance")}</p>
                                        </div>
                                        <div>
                                            <label for="window-tag">{t!("maintenance-only-tag")}</label>
                                            <input id="window-tag" name="tag" type="text" autocomplete="off" />
                                        </div>
                                        <div><button type="submit">{t!("maintenance-schedule")}</button></div>
                                        <p class="error" role="alert">{schedule_error}</p>
                                    </ActionForm>
                                })}
                            </section>
                        }.into_any()
                    }
                }
            })}
        </Transition>
    }
}
