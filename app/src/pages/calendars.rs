//! Work calendars on the Settings page: every calendar with its years and the jobs following
//! it; admins write one as a base rule and two lists of dates (one a line, `YYYY-MM-DD name`),
//! edit or remove it. The boxes take a year pasted from a data set as it is.

use leptos::prelude::*;

use crate::api::calendars::{RemoveCalendar, SaveCalendar, list_calendars};
use crate::components::admin_list::{AdminList, AdminOnly};
use crate::domain::calendar::lines_of;
use crate::i18n::current;
use crate::i18n::errors::Explain;
use crate::t;
use crate::views::calendars::CalendarSummary;

/// The form's fields, filled by Edit.
#[derive(Clone, Copy)]
struct Draft {
    name: RwSignal<String>,
    base: RwSignal<String>,
    off: RwSignal<String>,
    on: RwSignal<String>,
}

impl Draft {
    fn new() -> Self {
        Draft {
            name: RwSignal::new(String::new()),
            base: RwSignal::new("mon-fri".into()),
            off: RwSignal::new(String::new()),
            on: RwSignal::new(String::new()),
        }
    }

    fn load(self, row: &CalendarSummary) {
        self.name.set(row.calendar.name.clone());
        self.base.set(row.base.clone());
        self.off.set(lines_of(&row.calendar.off));
        self.on.set(lines_of(&row.calendar.on));
    }
}

#[component]
pub fn CalendarsCard(is_admin: Resource<bool>) -> impl IntoView {
    let save = ServerAction::<SaveCalendar>::new();
    let remove = ServerAction::<RemoveCalendar>::new();
    let rows = Resource::new(
        move || (save.version().get(), remove.version().get()),
        |_| list_calendars(),
    );
    let draft = Draft::new();
    let removed_error = move || {
        remove
            .value()
            .get()
            .and_then(Result::err)
            .map(|e| e.explain(current()))
    };
    view! {
        <section class="card" id="calendars">
            <h2>{t!("calendars-heading")}</h2>
            <p class="muted">{t!("calendars-explained")}</p>
            <AdminList rows is_admin table=move |rows, admin| {
                if rows.is_empty() {
                    return view! { <p class="muted" data-testid="calendars">{t!("calendars-none")}</p> }.into_any();
                }
                calendar_table(rows, admin.then_some((draft, remove))).into_any()
            } />
            <p class="error" role="alert">{removed_error}</p>
            <AdminOnly is_admin><CalendarForm save draft /></AdminOnly>
        </section>
    }
}

fn calendar_table(
    rows: Vec<CalendarSummary>,
    admin: Option<(Draft, ServerAction<RemoveCalendar>)>,
) -> impl IntoView {
    let rows = rows
        .into_iter()
        .map(|row| {
            let years: Vec<String> = row.years.iter().map(i32::to_string).collect();
            let actions = admin.map(|(draft, remove)| {
                let name = row.calendar.name.clone();
                let editing = row.clone();
                view! {
                    <td class="actions">
                        <button type="button" class="link" on:click=move |_| draft.load(&editing)>
                            {t!("calendars-edit")}
                        </button>
                        <ActionForm action=remove>
                            <input type="hidden" name="name" value=name />
                            <button type="submit" class="link">{t!("channels-remove")}</button>
                        </ActionForm>
                    </td>
                }
            });
            view! {
                <tr>
                    <td><code>{row.calendar.name.clone()}</code></td>
                    <td>{row.base.clone()}</td>
                    <td>{years.join(", ")}</td>
                    <td>{t!("calendars-counts", off = row.off, on = row.on)}</td>
                    <td>{row.jobs.join(", ")}</td>
                    {actions}
                </tr>
            }
        })
        .collect_view();
    view! {
        <table tabindex="0" class="table" data-testid="calendars">
            <thead>
                <tr>
                    <th>{t!("jobs-col-name")}</th>
                    <th>{t!("calendars-base")}</th>
                    <th>{t!("calendars-years")}</th>
                    <th>{t!("calendars-days")}</th>
                    <th>{t!("calendars-jobs")}</th>
                    {admin.map(|_| view! { <th></th> })}
                </tr>
            </thead>
            <tbody>{rows}</tbody>
        </table>
    }
}

#[component]
fn CalendarForm(save: ServerAction<SaveCalendar>, draft: Draft) -> impl IntoView {
    let error = move || {
        save.value()
            .get()
            .and_then(Result::err)
            .map(|e| match e.for_field("calendar") {
                Some(message) => message,
                None => e.explain(current()),
            })
    };
    let done = move || {
        save.value()
            .get()
            .and_then(Result::ok)
            .map(|name| t!("calendars-saved", name = name))
    };
    view! {
        <ActionForm action=save attr:class="form calendar-form" attr:data-testid="calendar-form">
            <div class="grid2">
                <div>
                    <label for="calendar-name">{t!("jobs-col-name")}</label>
                    <input id="calendar-name" name="name" type="text" autocomplete="off"
                        prop:value=move || draft.name.get()
                        on:input=move |ev| draft.name.set(event_target_value(&ev)) />
                </div>
                <div>
                    <label for="calendar-base">{t!("calendars-base")}</label>
                    <input id="calendar-base" name="base" type="text" autocomplete="off"
                        prop:value=move || draft.base.get()
                        on:input=move |ev| draft.base.set(event_target_value(&ev)) />
                </div>
            </div>
            <div class="grid2">
                <div>
                    <label for="calendar-off">{t!("calendars-off")}</label>
                    <textarea id="calendar-off" name="off" rows="8" placeholder="2026-10-01 国庆节"
                        prop:value=move || draft.off.get()
                        on:input=move |ev| draft.off.set(event_target_value(&ev))></textarea>
                </div>
                <div>
                    <label for="calendar-on">{t!("calendars-on")}</label>
                    <textarea id="calendar-on" name="on" rows="8" placeholder="2026-10-10 调休上班"
                        prop:value=move || draft.on.get()
                        on:input=move |ev| draft.on.set(event_target_value(&ev))></textarea>
                </div>
            </div>
            <p class="muted">{t!("calendars-lines")}</p>
            <p class="error" role="alert" data-testid="calendar-error">{error}</p>
            <div>
                <button type="submit">{t!("calendars-save")}</button>
            </div>
            <p class="ok" role="status">{done}</p>
        </ActionForm>
    }
}
