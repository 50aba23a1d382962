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
use crate::views::maintenance::{MaintenanceStatus, WindowView};

fn when(t: chrono::DateTime<chrono::Utc>) -> String {
    t.format("%Y-%m-%d %H:%M UTC").to_string()
}

fn what(w: &WindowView) -> String {
    match &w.tag {
        None => t!("maintenance-every-job"),
        Some(tag) => t!("maintenance-tagged", tag = tag.clone()),
    }
}

/// The page's server actions: the state reloads, and the banner follows, when one answers.
#[derive(Clone, Copy)]
struct Actions {
    pause_now: ServerAction<PauseJobs>,
    schedule: ServerAction<PauseJobs>,
    resume: ServerAction<ResumeJobs>,
    cancel: ServerAction<CancelWindow>,
}

impl Actions {
    fn new() -> Self {
        Self {
            pause_now: ServerAction::new(),
            schedule: ServerAction::new(),
            resume: ServerAction::new(),
            cancel: ServerAction::new(),
        }
    }

    fn changes(&self) -> [usize; 4] {
        [
            self.pause_now.version().get(),
            self.schedule.version().get(),
            self.resume.version().get(),
            self.cancel.version().get(),
        ]
    }
}

#[component]
pub fn MaintenancePage() -> impl IntoView {
    let is_admin = use_is_admin();
    let banner = use_maintenance();
    let actions = Actions::new();
    let status = Resource::new(move || actions.changes(), |_| get_maintenance());
    // The banner follows every change at once rather than at its next poll.
    Effect::new(move |first: Option<()>| {
        actions.changes();
        if first.is_some() {
            banner.0.refetch();
        }
    });
    let row_error =
        move || other_error(actions.resume.value())().or_else(other_error(actions.cancel.value()));
    view! {
        <Title text=t!("banner-maintenance-link") />
        <h1>{t!("banner-maintenance-link")}</h1>
        <p class="notice">{t!("maintenance-explained")}</p>
        <p class="error" role="alert">{row_error}</p>
        <Transition fallback=|| view! { <p class="muted">{t!("loading")}</p> }>
            {move || Suspend::new(async move {
                let admin = is_admin.await;
                match status.await {
                    Err(e) => view! { <p class="error">{e.explain(current())}</p> }.into_any(),
                    Ok(status) => {
                        let paused_all = status.pausing_all().is_some();
                        let ahead = status.ahead.clone();
                        view! {
                            <NowCard status admin actions />
                            {(admin && !paused_all).then(|| view! { <PauseAllCard pause_now=actions.pause_now /> })}
                            <AheadCard ahead admin actions />
                        }
                        .into_any()
                    }
                }
            })}
        </Transition>
    }
}

/// What is paused now, and by whom; Resume for admins.
#[component]
fn NowCard(status: MaintenanceStatus, admin: bool, actions: Actions) -> impl IntoView {
    let active = if status.active.is_empty() {
        view! { <p data-testid="not-paused">{t!("maintenance-not-paused")}</p> }.into_any()
    } else {
        let resume = actions.resume;
        view! {
            <p><strong>{status.summary(current())}</strong></p>
            {window_table(status.active.clone(), admin.then_some(actions.cancel), "active-windows")}
            {admin.then(|| view! {
                <button type="button" data-testid="resume" on:click=move |_| {
                    resume.dispatch(ResumeJobs {});
                }>{t!("maintenance-resume-all")}</button>
            })}
        }
        .into_any()
    };
    let paused_jobs = (!status.paused_jobs.is_empty()).then(|| {
        view! {
            <p>
                {t!("maintenance-paused-jobs", jobs = status.paused_jobs.join(", "))}" "
                <a href="/jobs?state=paused">{t!("maintenance-paused-jobs-link")}</a>
            </p>
        }
    });
    view! {
        <section class="card" data-testid="maintenance-now">
            <h2>{t!("maintenance-now")}</h2>
            {active}
            {paused_jobs}
        </section>
    }
}

#[component]
fn PauseAllCard(pause_now: ServerAction<PauseJobs>) -> impl IntoView {
    view! {
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
                <p class="error" role="alert">{other_error(pause_now.value())}</p>
            </ActionForm>
        </section>
    }
}

/// The windows ahead, and for admins the form that schedules one.
#[component]
fn AheadCard(ahead: Vec<WindowView>, admin: bool, actions: Actions) -> impl IntoView {
    let listed = if ahead.is_empty() {
        view! { <p class="muted">{t!("maintenance-ahead-none")}</p> }.into_any()
    } else {
        window_table(ahead, admin.then_some(actions.cancel), "ahead-windows").into_any()
    };
    view! {
        <section class="card">
            <h2>{t!("maintenance-ahead")}</h2>
            {listed}
            {admin.then(|| view! { <ScheduleForm schedule=actions.schedule /> })}
        </section>
    }
}

#[component]
fn ScheduleForm(schedule: ServerAction<PauseJobs>) -> impl IntoView {
    view! {
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
            <p class="error" role="alert">{other_error(schedule.value())}</p>
        </ActionForm>
    }
}

/// Windows, each with its end (or cancel, when it has not begun) for admins: `cancel` is
/// `None` for everyone else.
fn window_table(
    rows: Vec<WindowView>,
    cancel: Option<ServerAction<CancelWindow>>,
    testid: &'static str,
) -> impl IntoView {
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
                <tbody>{rows.into_iter().map(|w| window_row(w, cancel)).collect_view()}</tbody>
            </table>
        </div>
    }
}

fn window_row(w: WindowView, cancel: Option<ServerAction<CancelWindow>>) -> impl IntoView {
    let id = w.id;
    let ahead = w.starts_at > chrono::Utc::now();
    let until = w
        .ends_at
        .map(when)
        .unwrap_or_else(|| t!("maintenance-until-resumed"));
    let end = cancel.map(|cancel| {
        view! {
            <button type="button" class="secondary" on:click=move |_| {
                cancel.dispatch(CancelWindow { id });
            }>{if ahead { t!("action-cancel") } else { t!("maintenance-end-now") }}</button>
        }
    });
    view! {
        <tr data-window=id>
            <td>{what(&w)}</td>
            <td>{when(w.starts_at)}</td>
            <td>{until}</td>
            <td>{w.created_by.clone()}</td>
            <td>{w.reason.clone()}</td>
            <td class="actions">{end}</td>
        </tr>
    }
}
