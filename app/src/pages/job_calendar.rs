//! The job editor's preview for a job that follows a work calendar: its next ticks from a
//! chosen day, in the job's zone, make-up workdays marked and off days named with what becomes
//! of their ticks (skipped, or run on the next workday). Worked out in the browser from the
//! calendar the server sends (`crate::domain::calendar`), as the plain cron preview is.

use chrono::NaiveDate;
use leptos::prelude::*;

use crate::api::calendars::get_calendar;
use crate::domain::calendar::{
    Calendar, CalendarInput, OnOffDay, PreviewKind, Schedule, days_from_calendar, start_of_day,
};
use crate::domain::cron::{CronExpr, format_fire_time};
use crate::domain::job::JobInput;
use crate::i18n::errors::Explain;
use crate::i18n::{ZoneTable, current};
use crate::t;

/// Ticks the preview lists.
const ROWS: usize = 15;

/// A previewed tick: when, and what its day is (`None`: a plain workday).
type Row = (String, Option<String>, &'static str);

#[component]
pub fn CalendarPreview(
    job: RwSignal<JobInput>,
    zone: Signal<Option<ZoneTable>>,
    initial: Option<CalendarInput>,
) -> impl IntoView {
    let loaded = RwSignal::new(initial.and_then(|i| i.parse().ok()));
    // The calendar named in the field, fetched as it changes; an answer for a name the field
    // no longer holds is dropped.
    let lookup = Action::new(|name: &String| {
        let name = name.clone();
        async move { (name.clone(), get_calendar(name).await) }
    });
    Effect::new(move |_| {
        let name = job.with(|j| j.calendar.trim().to_string());
        let have = loaded.with_untracked(|c: &Option<Calendar>| c.as_ref().map(|c| c.name.clone()));
        if !name.is_empty() && have.as_deref() != Some(name.as_str()) {
            lookup.dispatch(name);
        }
    });
    Effect::new(move |_| {
        if let Some((name, answer)) = lookup.value().get()
            && job.with_untracked(|j| j.calendar.trim() == name)
        {
            loaded.set(answer.ok().and_then(|input| input.parse().ok()));
        }
    });
    let from = RwSignal::new(chrono::Utc::now().date_naive().to_string());
    let rows = Memo::new(move |_| preview_rows(job, zone, loaded, from));
    view! {
        <div class="calendar-preview" data-testid="calendar-preview">
            <label for="job-preview-from">{t!("job-preview-from")}</label>
            <input id="job-preview-from" type="date" prop:value=move || from.get()
                on:input=move |ev| from.set(event_target_value(&ev)) />
            {move || match rows.get() {
                Ok(rows) => view! {
                    <ol class="fire-times">
                        {rows.into_iter().map(|(at, mark, class)| view! {
                            <li class=class>{at}{mark.map(|m| view! { " " <span class="mark">{m}</span> })}</li>
                        }).collect_view()}
                    </ol>
                }.into_any(),
                Err(message) => view! { <p class="field-error" data-testid="calendar-preview-error">{message}</p> }.into_any(),
            }}
        </div>
    }
}

/// The preview's rows, or why there are none.
fn preview_rows(
    job: RwSignal<JobInput>,
    zone: Signal<Option<ZoneTable>>,
    loaded: RwSignal<Option<Calendar>>,
    from: RwSignal<String>,
) -> Result<Vec<Row>, String> {
    let zone = zone.get().ok_or_else(|| t!("loading"))?;
    let (cron, on_off_day) = job.with(|j| {
        (
            CronExpr::parse(&j.cron).map_err(|e| e.explain(current())),
            OnOffDay::parse(j.on_off_day.trim()).unwrap_or_default(),
        )
    });
    let cron = cron?;
    loaded.with(|calendar| {
        let Some(calendar) = calendar else {
            return Err(t!("job-preview-no-calendar"));
        };
        let open = days_from_calendar(&cron, calendar).map_err(|e| current().say(&e.problem()))?;
        let day = NaiveDate::parse_from_str(&from.get(), "%Y-%m-%d")
            .unwrap_or_else(|_| chrono::Utc::now().date_naive());
        let start = start_of_day(&zone, day)
            .map(|t| t - chrono::Duration::milliseconds(1))
            .unwrap_or_else(chrono::Utc::now);
        let schedule = Schedule {
            cron: &open,
            zone: &zone,
            calendar,
            on_off_day,
        };
        Ok(schedule
            .preview(start, ROWS)
            .into_iter()
            .map(|row| {
                let at = format_fire_time(&row.at.with_timezone(&zone));
                let named = |name: &str, what: String| match name {
                    "" => what,
                    name => format!("{name}: {what}"),
                };
                let (mark, class) = match row.kind {
                    PreviewKind::Workday => (None, "workday"),
                    PreviewKind::MakeUp(name) => {
                        (Some(named(name, t!("job-preview-make-up"))), "make-up")
                    }
                    PreviewKind::Skipped(name) => {
                        (Some(named(name, t!("job-preview-skipped"))), "off")
                    }
                    PreviewKind::Moved { name, to } => {
                        let to = to.map(|d| d.to_string()).unwrap_or_else(|| "—".into());
                        (Some(named(name, t!("job-preview-moved", to = to))), "off")
                    }
                };
                (at, mark, class)
            })
            .collect())
    })
}
