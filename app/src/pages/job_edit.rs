//! The job editor: every part of a definition, with the cron preview and the retry editor live
//! in the browser. Admins save; viewers see the same page read-only.
//!
//! The previews work in the job's own time zone from a table of its offsets that the server
//! sends (`jobs/zone`), looked up again whenever the zone field changes: the tz database stays
//! on the server (`app/src/i18n/zone.rs`).

use crate::i18n::current;
use crate::i18n::errors::Explain;
use crate::{key, t};
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::{use_navigate, use_params_map, use_query_map};

use crate::api::AppError;
use crate::api::jobs::{SaveJob, get_job, get_job_zone, zone_names};
use crate::components::duration_chart::DurationChart;
use crate::components::layout::use_current_user;
use crate::components::retry_editor::RetryEditor;
use crate::components::retry_evidence::JobHistory;
use crate::domain::calendar::OnOffDay;
use crate::domain::cron::{CronExpr, format_fire_time};
use crate::domain::job::params::Parameter;
use crate::domain::job::{
    BUILTIN_TASKS, ExhaustedAction, JobInput, Kind, Misfire, Overlap, TimeoutMode, WhenPaused,
};
use crate::i18n::ZoneTable;
use crate::views::jobs::JobZone;

/// The editor's choices: a state's word and the message that says it.
const KINDS: &[(&str, &str)] = &[
    (Kind::Http.as_str(), key!("job-kind-http-call")),
    (Kind::Command.as_str(), key!("job-kind-command-long")),
    (Kind::Builtin.as_str(), key!("job-kind-builtin-long")),
    (Kind::Watch.as_str(), key!("job-kind-watch-long")),
];
const OVERLAPS: &[(&str, &str)] = &[
    (Overlap::Skip.as_str(), key!("job-overlap-skip")),
    (Overlap::Queue.as_str(), key!("job-overlap-queue")),
];
const ON_OFF_DAYS: &[(&str, &str)] = &[
    (OnOffDay::Skip.as_str(), key!("job-on-off-day-skip")),
    (OnOffDay::NextWorkday.as_str(), key!("job-on-off-day-next")),
];
const MISFIRES: &[(&str, &str)] = &[
    (Misfire::RunOnce.as_str(), key!("job-misfire-run-once")),
    (Misfire::Skip.as_str(), key!("job-misfire-skip")),
];
const TIMEOUT_MODES: &[(&str, &str)] = &[
    (
        TimeoutMode::Static.as_str(),
        key!("job-timeout-mode-static"),
    ),
    (TimeoutMode::P95.as_str(), key!("job-timeout-mode-p95")),
    (TimeoutMode::P99.as_str(), key!("job-timeout-mode-p99")),
];
const EXHAUSTED: &[(&str, &str)] = &[
    (
        ExhaustedAction::DeadLetter.as_str(),
        key!("job-exhausted-dead"),
    ),
    (
        ExhaustedAction::SkipToNext.as_str(),
        key!("job-exhausted-skip"),
    ),
    (
        ExhaustedAction::Fallback.as_str(),
        key!("job-exhausted-fallback"),
    ),
];

#[component]
pub fn JobEditPage() -> impl IntoView {
    let params = use_params_map();
    let id = move || {
        params
            .read()
            .get("id")
            .and_then(|id| id.parse::<i64>().ok())
    };
    // A restore (`pages::job_revisions`) comes back here with the revision it made: the form
    // and the evidence are read again, so a save cannot put back the definition just replaced.
    let query = use_query_map();
    let shown = move || (id(), query.read().get("restored"));
    // The job's zone is fetched with the job, so the server renders the previews complete.
    let detail = Resource::new(shown, |(id, _)| async move {
        let (id, input, hold) = match id {
            Some(id) => get_job(id).await.map(|d| {
                let hold = ParamsHold {
                    misplaced: d.params_misplaced,
                    held: d.params_held,
                };
                (Some(d.id), d.input, hold)
            })?,
            None => (None, JobInput::default(), ParamsHold::default()),
        };
        let zone = get_job_zone(input.timezone.clone()).await;
        // Its calendar too, so the server renders the calendar preview complete.
        let calendar = match input.calendar.trim() {
            "" => None,
            name => crate::api::calendars::get_calendar(name.to_string())
                .await
                .ok(),
        };
        Ok::<_, AppError>((id, input, (zone, calendar), hold))
    });
    let names = Resource::new(|| (), |_| zone_names());
    // The job's failures for the retry editor's evidence panel, fetched beside the job so the
    // server renders the panel complete (it replays policies in the browser as the sliders move).
    let history = Resource::new(shown, |(id, _)| async move {
        match id {
            Some(id) => match crate::api::jobs::job_episodes(id).await {
                Ok(episodes) => JobHistory::Episodes(episodes),
                Err(e) => JobHistory::Unavailable(e.explain(current())),
            },
            None => JobHistory::Unsaved,
        }
    });
    let me = use_current_user();

    view! {
        <Suspense fallback=|| view! { <p class="muted">{t!("loading")}</p> }>
            {move || Suspend::new(async move {
                let readonly = !me.await.map(|u| u.is_admin()).unwrap_or(false);
                let history = history.await;
                // Without the names the zone field still takes any name; only the picker is empty.
                let zone_names = names.await.unwrap_or_default();
                match detail.await {
                    Ok((id, input, (zone, calendar), hold)) => {
                        let hold_card = id
                            .filter(|_| !hold.misplaced.is_empty())
                            .map(|id| view! { <HeldForParameters id hold readonly /> });
                        let save = save_action(id);
                        let cards = id.map(|id| saved_job_cards(id, &input, readonly, save.version().into()));
                        view! { {hold_card} <JobForm id input zone calendar zone_names history save readonly /> {cards} }.into_any()
                    }
                    Err(e) => {
                        view! {
                            <h1>{t!("runs-filter-job")}</h1>
                            <p class="error">{e.explain(current())}</p>
                        }
                            .into_any()
                    }
                }
            })}
        </Suspense>
    }
}

/// The cards under a saved job's form: its durations, a run with parameters, its trigger or
/// ping URL (for admins), its backfills (for a job Bulwark runs), its revisions.
fn saved_job_cards(
    id: i64,
    input: &JobInput,
    readonly: bool,
    saves: Signal<usize>,
) -> impl IntoView + use<> {
    let declared =
        crate::domain::job::params::parse_declarations(&input.parameters).unwrap_or_default();
    let run_card =
        (!readonly && !declared.is_empty()).then(|| view! { <RunWithParameters id declared /> });
    let watched = input.kind == Kind::Watch.as_str();
    let hook_card = (!readonly).then(|| {
        if watched {
            view! { <PingUrl id /> }.into_any()
        } else {
            view! { <TriggerUrl id /> }.into_any()
        }
    });
    let backfill = (!watched).then(|| view! { <super::job_backfill::BackfillCard id readonly /> });
    view! {
        <DurationChart id />
        {run_card}
        {hook_card}
        {backfill}
        <super::job_revisions::RevisionsCard id readonly saves />
    }
}

/// What every section of the form edits and reads.
#[derive(Clone, Copy)]
struct Editing {
    job: RwSignal<JobInput>,
    readonly: bool,
    /// The last save's refusal, for the message beside each field.
    saved_error: Signal<Option<AppError>>,
}

impl Editing {
    /// The last save's message for `field`, if it named that field.
    fn error_for(self, field: &'static str) -> impl Fn() -> Option<String> + Send + Sync + Copy {
        move || self.saved_error.get().and_then(|e| e.for_field(field))
    }
}

/// The schedule as typed, read in the job's zone: the next fire times (or what is wrong) and
/// the shortest gap between two.
#[derive(Clone, Copy)]
struct Preview {
    zone: RwSignal<Result<ZoneTable, String>>,
    /// Asks for a zone's table as its name is typed.
    lookup: Action<String, (String, Result<JobZone, AppError>)>,
    schedule: Memo<Fires>,
}

/// The next fire times and the shortest gap between two, or what is wrong with the schedule.
type Fires = Result<(Vec<String>, Option<u64>), String>;

impl Preview {
    fn new(job: RwSignal<JobInput>, zone: Result<JobZone, AppError>) -> Self {
        let zone = RwSignal::new(zone_table(zone));
        // An answer for a name the field no longer holds is dropped, so the previews follow
        // the last name typed.
        let lookup = Action::new(|name: &String| {
            let name = name.clone();
            async move {
                let answer = get_job_zone(name.clone()).await;
                (name, answer)
            }
        });
        Effect::new(move |_| {
            if let Some((name, answer)) = lookup.value().get()
                && job.with_untracked(|j| j.timezone == name)
            {
                zone.set(zone_table(answer));
            }
        });
        let schedule = Memo::new(move |_| {
            job.with(|j| {
                let cron = CronExpr::parse(&j.cron).map_err(|e| e.explain(current()))?;
                let tz = zone.get()?;
                let now = chrono::Utc::now();
                let next: Vec<String> = cron
                    .next_fire_times(&tz, now, 5)
                    .iter()
                    .map(format_fire_time)
                    .collect();
                Ok::<_, String>((next, cron.shortest_gap_ms(&tz, now)))
            })
        });
        Self {
            zone,
            lookup,
            schedule,
        }
    }
}

/// Saves the form; a new job's page opens once it is saved.
fn save_action(id: Option<i64>) -> ServerAction<SaveJob> {
    let save = ServerAction::<SaveJob>::new();
    let navigate = use_navigate();
    Effect::new(move |_| {
        if let Some(Ok(saved_id)) = save.value().get()
            && id.is_none()
        {
            navigate(&format!("/jobs/{saved_id}?saved=1"), Default::default());
        }
    });
    save
}

/// What the last save said, over the form: how many fields it refused, or why it failed.
fn save_summary(error: Option<AppError>) -> Option<String> {
    error.map(|e| match e {
        AppError::Fields(list) => t!(
            "job-not-saved-fields",
            count = list.len(),
            fields = list
                .iter()
                .map(|f| f.field.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => t!("job-not-saved", error = other.explain(current())),
    })
}

#[component]
fn JobForm(
    id: Option<i64>,
    input: JobInput,
    zone: Result<JobZone, AppError>,
    calendar: Option<crate::domain::calendar::CalendarInput>,
    zone_names: String,
    history: JobHistory,
    save: ServerAction<SaveJob>,
    readonly: bool,
) -> impl IntoView {
    let title = match id {
        Some(_) => t!("job-title", name = input.name.clone()),
        None => t!("jobs-new"),
    };
    let retry = RwSignal::new(input.retry.clone());
    // The policy saved with the job: the evidence panel replays it beside the edited one.
    let in_force = id.and_then(|_| crate::domain::retry::RetryPolicy::parse(&input.retry).ok());
    let job = RwSignal::new(input);
    let saved_error = Signal::derive(move || save.value().get().and_then(Result::err));
    let ed = Editing {
        job,
        readonly,
        saved_error,
    };
    let preview = Preview::new(job, zone);
    let known_zone = Signal::derive(move || preview.zone.get().ok());
    let cron_period = Signal::derive(move || preview.schedule.get().ok().and_then(|(_, gap)| gap));
    let saved_note =
        move || matches!(save.value().get(), Some(Ok(_))).then(|| t!("account-language-saved"));
    let on_submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let mut input = job.get();
        input.retry = retry.get();
        save.dispatch(SaveJob { id, input });
    };
    view! {
        <Title text=title.clone() />
        <h1>{title}</h1>
        {readonly.then(|| view! { <p class="notice">{t!("job-read-only")}</p> })}
        <form class="job-form" on:submit=on_submit novalidate>
            <BasicsSection ed />
            <WhatRunsSection ed />
            <ScheduleSection ed preview zone_names calendar />
            <section class="card" hidden=move || job.with(|j| j.kind == Kind::Watch.as_str())>
                <h2>{t!("job-retry-policy")}</h2>
                <RetryEditor retry cron_period_ms=cron_period zone=known_zone saved_errors=saved_error readonly
                    history in_force />
            </section>
            <TimeoutSection ed id />
            <ExhaustedSection ed />
            <AlertsSection ed />
            <p class="error" role="alert" data-testid="save-error">{move || save_summary(saved_error.get())}</p>
            <p class="ok" role="status" data-testid="save-ok">{saved_note}</p>
            {(!readonly).then(|| view! {
                <button type="submit" disabled=move || save.pending().get()>
                    {move || if save.pending().get() { t!("job-saving") } else { t!("job-save") }}
                </button>
            })}
        </form>
    }
    .into_any()
}

#[component]
fn BasicsSection(ed: Editing) -> impl IntoView {
    let Editing { job, readonly, .. } = ed;
    view! {
        <section class="card">
            <h2>{t!("job-basics")}</h2>
            <div class="grid2">
                <Field label=t!("jobs-col-name") field="name" job readonly error=ed.error_for("name")
                    get=|j| j.name.clone() set=|j, v| j.name = v />
                <Choice label=t!("jobs-filter-kind") field="kind" job readonly error=ed.error_for("kind")
                    get=|j| j.kind.clone() set=|j, v| j.kind = v
                    options=KINDS />
            </div>
            <Field label=t!("job-description") field="description" job readonly error=ed.error_for("description")
                get=|j| j.description.clone() set=|j, v| j.description = v />
            <Field label=t!("job-tags") field="tags" job readonly error=ed.error_for("tags")
                get=|j| j.tags.clone() set=|j, v| j.tags = v />
            <label class="check">
                <input type="checkbox" disabled=readonly
                    prop:checked=move || job.with(|j| j.enabled)
                    on:change=move |ev| job.update(|j| j.enabled = event_target_checked(&ev)) />
                " "{t!("job-state-enabled")}
            </label>
        </section>
    }
}

/// The fields of the job's kind: a request, a command or a built-in task.
#[component]
fn WhatRunsSection(ed: Editing) -> impl IntoView {
    let kind = move || ed.job.with(|j| j.kind.clone());
    view! {
        <section class="card">
            <h2>{t!("job-what-runs")}</h2>
            <Show when=move || kind() == Kind::Http.as_str()>
                <HttpFields ed />
            </Show>
            <Show when=move || kind() == Kind::Command.as_str()>
                <CommandFields ed />
            </Show>
            <Show when=move || kind() == Kind::Builtin.as_str()>
                <BuiltinFields ed />
            </Show>
            <Show when=move || kind() == Kind::Watch.as_str()>
                <WatchFields ed />
            </Show>
            <Show when=move || kind() != Kind::Watch.as_str()>
                <Field label=t!("job-run-on") field="run_on" job=ed.job readonly=ed.readonly
                    error=ed.error_for("run_on") get=|j| j.run_on.clone() set=|j, v| j.run_on = v />
                <super::job_placement::PlacementHint job=ed.job />
                <Field label=t!("job-pool") field="pool" job=ed.job readonly=ed.readonly
                    error=ed.error_for("pool") get=|j| j.pool.clone() set=|j, v| j.pool = v />
                <Field label=t!("job-run-on-count") field="run_on_count" job=ed.job
                    readonly=ed.readonly error=ed.error_for("run_on_count")
                    get=|j| j.run_on_count.clone() set=|j, v| j.run_on_count = v />
                <Field label=t!("job-shards") field="shards" job=ed.job readonly=ed.readonly
                    error=ed.error_for("shards") get=|j| j.shards.clone() set=|j, v| j.shards = v />
            </Show>
        </section>
    }
}

#[component]
fn HttpFields(ed: Editing) -> impl IntoView {
    let Editing { job, readonly, .. } = ed;
    view! {
        <div class="grid2">
            <Choice label=t!("hits-method") field="http_method" job readonly error=ed.error_for("http_method")
                get=|j| j.http_method.clone() set=|j, v| j.http_method = v
                options=&[("GET", "GET"), ("POST", "POST"), ("PUT", "PUT"), ("PATCH", "PATCH"), ("DELETE", "DELETE"), ("HEAD", "HEAD")] />
            <Field label=t!("channels-url") field="http_url" job readonly error=ed.error_for("http_url")
                get=|j| j.http_url.clone() set=|j, v| j.http_url = v />
        </div>
        <Field label=t!("job-http-headers") field="http_headers" job readonly multiline=true
            error=ed.error_for("http_headers") get=|j| j.http_headers.clone() set=|j, v| j.http_headers = v />
        <Field label=t!("job-http-body") field="http_body" job readonly multiline=true error=ed.error_for("http_body")
            get=|j| j.http_body.clone() set=|j, v| j.http_body = v />
        <Field label=t!("job-http-expected") field="http_expected" job readonly
            error=ed.error_for("http_expected") get=|j| j.http_expected.clone() set=|j, v| j.http_expected = v />
        <Choice label=t!("job-http-redirects") field="http_follow_redirects" job readonly error=ed.error_for("http_follow_redirects")
            get=|j| j.http_follow_redirects.clone() set=|j, v| j.http_follow_redirects = v
            options=&[("same-origin", key!("job-redirects-same-origin")), ("any", key!("job-redirects-any")), ("none", key!("job-redirects-none"))] />
    }
}

#[component]
fn CommandFields(ed: Editing) -> impl IntoView {
    let Editing { job, readonly, .. } = ed;
    view! {
        <Field label=t!("job-command-program") field="command_program" job readonly error=ed.error_for("command_program")
            get=|j| j.command_program.clone() set=|j, v| j.command_program = v />
        <Field label=t!("job-command-args") field="command_args" job readonly multiline=true
            error=ed.error_for("command_args") get=|j| j.command_args.clone() set=|j, v| j.command_args = v />
        <Field label=t!("job-transient-codes") field="command_transient_codes" job readonly
            error=ed.error_for("command_transient_codes") get=|j| j.command_transient_codes.clone()
            set=|j, v| j.command_transient_codes = v />
    }
}

/// A watched job's expectations: it runs elsewhere and pings.
#[component]
fn WatchFields(ed: Editing) -> impl IntoView {
    let Editing { job, readonly, .. } = ed;
    view! {
        <p class="muted">{t!("job-watch-explained")}</p>
        <div class="grid2">
            <Field label=t!("job-watch-grace") field="watch_grace" job readonly error=ed.error_for("watch_grace")
                get=|j| j.watch_grace.clone() set=|j, v| j.watch_grace = v />
            <Field label=t!("job-watch-every") field="watch_every" job readonly error=ed.error_for("watch_every")
                get=|j| j.watch_every.clone() set=|j, v| j.watch_every = v />
            <Field label=t!("job-watch-min-duration") field="watch_min_duration" job readonly
                error=ed.error_for("watch_min_duration") get=|j| j.watch_min_duration.clone()
                set=|j, v| j.watch_min_duration = v />
            <Field label=t!("job-watch-max-duration") field="watch_max_duration" job readonly
                error=ed.error_for("watch_max_duration") get=|j| j.watch_max_duration.clone()
                set=|j, v| j.watch_max_duration = v />
        </div>
    }
}

#[component]
fn BuiltinFields(ed: Editing) -> impl IntoView {
    let Editing { job, readonly, .. } = ed;
    let tasks = BUILTIN_TASKS
        .iter()
        .map(|(name, about)| view! { <option value=*name title=*about>{*name}</option> })
        .collect_view();
    view! {
        <label for="job-builtin_task">{t!("job-builtin-task")}</label>
        <select id="job-builtin_task" disabled=readonly
            prop:value=move || job.with(|j| j.builtin_task.clone())
            on:change=move |ev| job.update(|j| j.builtin_task = event_target_value(&ev))>
            {tasks}
        </select>
        <p class="field-error">{ed.error_for("builtin_task")}</p>
        <Field label=t!("job-builtin-params") field="builtin_params" job readonly multiline=true
            error=ed.error_for("builtin_params") get=|j| j.builtin_params.clone() set=|j, v| j.builtin_params = v />
    }
}

/// The cron expression and its zone, the next fire times they make, overlap and misfire.
#[component]
fn ScheduleSection(
    ed: Editing,
    preview: Preview,
    zone_names: String,
    calendar: Option<crate::domain::calendar::CalendarInput>,
) -> impl IntoView {
    let Editing { job, readonly, .. } = ed;
    let known_zone = Signal::derive(move || preview.zone.get().ok());
    let names = zone_names
        .lines()
        .map(|name| view! { <option value=name.to_string()></option> })
        .collect_view();
    let fires = move || {
        match preview.schedule.get() {
        Ok((next, _)) => view! {
            <p class="muted">{t!("job-next-fires")}</p>
            <ol class="fire-times">{next.into_iter().map(|t| view! { <li>{t}</li> }).collect_view()}</ol>
        }
        .into_any(),
        Err(message) => view! { <p class="field-error" data-testid="cron-error">{message}</p> }.into_any(),
    }
    };
    view! {
        <section class="card">
            <h2>{t!("jobs-col-schedule")}</h2>
            <div class="grid2">
                <Field label=t!("job-cron") field="cron" job readonly
                    error=ed.error_for("cron") get=|j| j.cron.clone() set=|j, v| j.cron = v />
                <div>
                    <label for="job-timezone">{t!("job-timezone")}</label>
                    <input id="job-timezone" type="text" list="tz-names" disabled=readonly
                        prop:value=move || job.with(|j| j.timezone.clone())
                        on:input=move |ev| {
                            let name = event_target_value(&ev);
                            job.update(|j| j.timezone = name.clone());
                            preview.lookup.dispatch(name);
                        } />
                    <datalist id="tz-names">{names}</datalist>
                    <p class="field-error">{ed.error_for("timezone")}</p>
                </div>
            </div>
            <div class="grid2">
                <Field label=t!("job-calendar") field="calendar" job readonly
                    error=ed.error_for("calendar") get=|j| j.calendar.clone() set=|j, v| j.calendar = v />
                <Choice label=t!("job-on-off-day") field="on_off_day" job readonly error=ed.error_for("on_off_day")
                    get=|j| j.on_off_day.clone() set=|j, v| j.on_off_day = v
                    options=ON_OFF_DAYS />
            </div>
            <Show when=move || job.with(|j| j.calendar.trim().is_empty())
                fallback=move || view! {
                    <super::job_calendar::CalendarPreview job zone=known_zone initial=calendar.clone() />
                }>
                <div data-testid="cron-preview">{fires}</div>
            </Show>
            <div class="grid2">
                <Choice label=t!("job-overlap") field="overlap" job readonly error=ed.error_for("overlap")
                    get=|j| j.overlap.clone() set=|j, v| j.overlap = v
                    options=OVERLAPS />
                <Choice label=t!("job-misfire") field="misfire" job readonly error=ed.error_for("misfire")
                    get=|j| j.misfire.clone() set=|j, v| j.misfire = v
                    options=MISFIRES />
            </div>
        </section>
    }
}

#[component]
fn TimeoutSection(ed: Editing, id: Option<i64>) -> impl IntoView {
    let Editing { job, readonly, .. } = ed;
    view! {
        <section class="card">
            <h2>{t!("job-timeout-heading")}</h2>
            <div class="grid3">
                <Choice label=t!("job-timeout-mode") field="timeout_mode" job readonly error=ed.error_for("timeout_mode")
                    get=|j| j.timeout_mode.clone() set=|j, v| j.timeout_mode = v
                    options=TIMEOUT_MODES />
                <Field label=t!("job-timeout-static") field="timeout_static" job readonly
                    error=ed.error_for("timeout_static") get=|j| j.timeout_static.clone() set=|j, v| j.timeout_static = v />
                <Field label=t!("job-timeout-cap") field="timeout_hard_cap" job readonly error=ed.error_for("timeout_hard_cap")
                    get=|j| j.timeout_hard_cap.clone() set=|j, v| j.timeout_hard_cap = v />
            </div>
            <div class="grid3">
                <Field label=t!("job-timeout-stall") field="timeout_stall" job readonly
                    error=ed.error_for("timeout_stall") get=|j| j.timeout_stall.clone() set=|j, v| j.timeout_stall = v />
            </div>
            {id.map(|id| view! { <EffectiveTimeoutNote id /> })}
            <Show when=move || job.with(|j| j.timeout_mode != TimeoutMode::Static.as_str())>
                <div class="grid3">
                    <Field label=t!("job-timeout-window") field="timeout_window" job readonly
                        error=ed.error_for("timeout_window") get=|j| j.timeout_window.clone() set=|j, v| j.timeout_window = v />
                    <Field label=t!("job-timeout-factor") field="timeout_factor" job readonly error=ed.error_for("timeout_factor")
                        get=|j| j.timeout_factor.clone() set=|j, v| j.timeout_factor = v />
                    <Field label=t!("job-timeout-floor") field="timeout_floor" job readonly error=ed.error_for("timeout_floor")
                        get=|j| j.timeout_floor.clone() set=|j, v| j.timeout_floor = v />
                </div>
            </Show>
        </section>
    }
}

/// What happens when the retries run out, what else runs after the job, its parameters.
#[component]
fn ExhaustedSection(ed: Editing) -> impl IntoView {
    let Editing { job, readonly, .. } = ed;
    view! {
        <section class="card">
            <h2>{t!("job-exhausted-heading")}</h2>
            <div class="grid2">
                <Choice label=t!("job-exhausted-then") field="on_exhausted" job readonly error=ed.error_for("on_exhausted")
                    get=|j| j.on_exhausted.clone() set=|j, v| j.on_exhausted = v
                    options=EXHAUSTED />
                <Show when=move || job.with(|j| j.on_exhausted == ExhaustedAction::Fallback.as_str())>
                    <Field label=t!("job-fallback") field="fallback_job" job readonly error=ed.error_for("fallback_job")
                        get=|j| j.fallback_job.clone() set=|j, v| j.fallback_job = v />
                </Show>
            </div>
            <Field label=t!("job-dependants") field="dependants"
                job readonly error=ed.error_for("dependants") get=|j| j.dependants.clone() set=|j, v| j.dependants = v />
            <Field label=t!("job-parameters")
                field="parameters" job readonly error=ed.error_for("parameters") multiline=true
                get=|j| j.parameters.clone() set=|j, v| j.parameters = v />
        </section>
    }
}

#[component]
fn AlertsSection(ed: Editing) -> impl IntoView {
    let Editing { job, readonly, .. } = ed;
    view! {
        <section class="card">
            <h2>{t!("job-alerts")}</h2>
            <div class="grid3">
                <Field label=t!("job-alert-to") field="alert_to" job readonly error=ed.error_for("alert_to")
                    get=|j| j.alert_to.clone() set=|j, v| j.alert_to = v />
                <Field label=t!("job-escalate-after") field="escalate_after" job readonly
                    error=ed.error_for("escalate_after") get=|j| j.escalate_after.clone() set=|j, v| j.escalate_after = v />
                <Field label=t!("mail-routes-escalate-to") field="escalate_to" job readonly error=ed.error_for("escalate_to")
                    get=|j| j.escalate_to.clone() set=|j, v| j.escalate_to = v />
            </div>
            <div class="grid2">
                <ChannelPicker label=t!("job-alert-channels") field="alert_channels" job readonly
                    error=ed.error_for("alert_channels")
                    get=|j| j.alert_channels.clone() set=|j, v| j.alert_channels = v />
                <ChannelPicker label=t!("job-escalate-channels") field="escalate_channels"
                    job readonly error=ed.error_for("escalate_channels")
                    get=|j| j.escalate_channels.clone() set=|j, v| j.escalate_channels = v />
            </div>
        </section>
    }
}

/// The server's answer for a zone as the previews use it, or what to say instead.
fn zone_table(answer: Result<JobZone, AppError>) -> Result<ZoneTable, String> {
    let zone = answer.map_err(|e| e.explain(current()))?;
    zone.table()
        .ok_or_else(|| t!("job-zone-unreadable", zone = zone.name))
}

/// What the next attempt's timeout is, as the engine would compute it now (saved settings).
#[component]
fn EffectiveTimeoutNote(id: i64) -> impl IntoView {
    use crate::domain::timeout::TimeoutSource;
    let timeout = Resource::new(move || id, crate::api::jobs::effective_timeout);
    view! {
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                timeout.await.ok().map(|t| {
                    let source = match t.source {
                        TimeoutSource::Static => t!("job-timeout-from-static"),
                        TimeoutSource::StaticUntilLearned { samples } => t!(
                            "job-timeout-from-static-until",
                            samples = samples,
                            needed = crate::domain::timeout::MIN_SAMPLES
                        ),
                        TimeoutSource::Learned { percentile, samples, raw_ms } => t!(
                            "job-timeout-from-learned",
                            percentile = format!("{percentile:?}"),
                            samples = samples,
                            raw = crate::i18n::duration(raw_ms as f64)
                        ),
                    };
                    view! {
                        <p class="muted" data-testid="effective-timeout">
                            {t!("job-timeout-next", timeout = crate::i18n::duration(t.ms as f64), source = source)}
                        </p>
                    }
                })
            })}
        </Suspense>
    }
}

/// A labelled select bound to one field of the job; `options` are (value, label).
#[component]
fn Choice(
    label: String,
    field: &'static str,
    job: RwSignal<JobInput>,
    readonly: bool,
    get: fn(&JobInput) -> String,
    set: fn(&mut JobInput, String),
    options: &'static [(&'static str, &'static str)],
    error: impl Fn() -> Option<String> + Send + Sync + 'static,
) -> impl IntoView {
    let id = format!("job-{field}");
    let locale = crate::i18n::current();
    view! {
        <div class="field">
            <label for=id.clone()>{label}</label>
            <select id=id disabled=readonly
                prop:value=move || job.with(get)
                on:change=move |ev| { let v = event_target_value(&ev); job.update(|j| set(j, v)); }>
                {options.iter().map(|(value, text)| view! { <option value=*value>{locale.text(text)}</option> }).collect_view()}
            </select>
            <p class="field-error" data-field=field>{error}</p>
        </div>
    }
}

/// A labelled text input (or textarea) bound to one field of the job.
#[component]
fn Field(
    label: String,
    field: &'static str,
    job: RwSignal<JobInput>,
    readonly: bool,
    get: fn(&JobInput) -> String,
    set: fn(&mut JobInput, String),
    error: impl Fn() -> Option<String> + Send + Sync + 'static,
    #[prop(default = false)] multiline: bool,
) -> impl IntoView {
    let id = format!("job-{field}");
    let value = move || job.with(get);
    let on_input = move |ev: leptos::ev::Event| {
        let v = event_target_value(&ev);
        job.update(|j| set(j, v));
    };
    let control = if multiline {
        view! { <textarea id=id.clone() rows="3" disabled=readonly prop:value=value on:input=on_input></textarea> }
            .into_any()
    } else {
        view! { <input id=id.clone() type="text" disabled=readonly prop:value=value on:input=on_input /> }.into_any()
    };
    view! {
        <div class="field">
            <label for=id>{label}</label>
            {control}
            <p class="field-error" data-field=field>{error}</p>
        </div>
    }
}

/// The channels (Notifications page) as checkboxes, kept in the job as a comma-separated list
/// of names. A name the list holds that no channel has stays shown, so saving names the problem.
#[component]
fn ChannelPicker(
    label: String,
    field: &'static str,
    job: RwSignal<JobInput>,
    readonly: bool,
    get: fn(&JobInput) -> String,
    set: fn(&mut JobInput, String),
    error: impl Fn() -> Option<String> + Send + Sync + 'static,
) -> impl IntoView {
    let channels = Resource::new(|| (), |_| crate::api::channels::list_channels());
    let chosen = move || -> Vec<String> {
        job.with(get)
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(str::to_string)
            .collect()
    };
    let toggle = move |name: String, on: bool| {
        let mut names = chosen();
        names.retain(|n| n != &name);
        if on {
            names.push(name);
        }
        job.update(|j| set(j, names.join(", ")));
    };
    view! {
        <fieldset class="field channel-picker" data-field-group=field>
            <legend>{label}</legend>
            <Transition fallback=|| view! { <p class="muted">{t!("loading")}</p> }>
                {move || Suspend::new(async move {
                    let mut names: Vec<String> = channels
                        .await
                        .map(|rows| rows.into_iter().map(|c| c.name).collect())
                        .unwrap_or_default();
                    for name in chosen() {
                        if !names.contains(&name) {
                            names.push(name);
                        }
                    }
                    if names.is_empty() {
                        return view! {
                            <p class="muted">{t!("job-no-channels")}" " <a href="/notifications">{t!("nav-notifications")}</a></p>
                        }
                        .into_any();
                    }
                    names
                        .into_iter()
                        .map(|name| {
                            let checked_name = name.clone();
                            let toggled_name = name.clone();
                            view! {
                                <label class="check">
                                    <input
                                        type="checkbox"
                                        data-channel=name.clone()
                                        disabled=readonly
                                        prop:checked=move || chosen().contains(&checked_name)
                                        on:change=move |ev| toggle(toggled_name.clone(), event_target_checked(&ev))
                                    />
                                    {name}
                                </label>
                            }
                        })
                        .collect_view()
                        .into_any()
                })}
            </Transition>
            <p class="field-error" data-field=field>{error}</p>
        </fieldset>
    }
}

/// Run now for a job that takes parameters: a field per declared parameter, its default
/// filled in; the server checks the values again and names each problem.
#[component]
fn RunWithParameters(id: i64, declared: Vec<Parameter>) -> impl IntoView {
    use crate::api::runs::RunJobNow;
    use crate::domain::job::params::as_text;
    let run_now = ServerAction::<RunJobNow>::new();
    let navigate = leptos_router::hooks::use_navigate();
    Effect::new(move |_| {
        if let Some(Ok(run_id)) = run_now.value().get() {
            navigate(&format!("/runs/{run_id}"), Default::default());
        }
    });
    let values: Vec<(Parameter, RwSignal<String>)> = declared
        .into_iter()
        .map(|p| {
            let initial = p.default.as_ref().map(as_text).unwrap_or_default();
            (p, RwSignal::new(initial))
        })
        .collect();
    let fields = values.clone();
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let params = Some(typed_values(&values).to_string());
        if crate::components::layout::confirm_while_paused() {
            run_now.dispatch(RunJobNow { id, params });
        }
    };
    let other = move || {
        run_now
            .value()
            .get()
            .and_then(Result::err)
            .filter(|e| !matches!(e, crate::api::AppError::Fields(_)))
            .map(|e| e.explain(current()))
    };
    let errors = Signal::derive(move || run_now.value().get().and_then(Result::err));
    view! {
        <section class="card" id="run" data-testid="run-with-parameters">
            <h2>{t!("jobs-run-now")}</h2>
            <form class="form" on:submit=submit>
                {fields.into_iter().map(|(p, value)| param_field(p, value, errors)).collect_view()}
                <p class="error" role="alert">{other}</p>
                <button type="submit" disabled=move || run_now.pending().get()>{t!("job-start-run")}</button>
            </form>
        </section>
    }
}

/// The values as typed, each read as its parameter's type; what does not read as its type is
/// sent as typed, and the server names the problem. An empty field of a type other than
/// text is left out (its default, if any, applies).
fn typed_values(values: &[(Parameter, RwSignal<String>)]) -> serde_json::Value {
    use crate::domain::job::params::{ParamType, from_text};
    let mut object = serde_json::Map::new();
    for (p, value) in values {
        let text = value.get_untracked();
        if text.is_empty() && p.kind != ParamType::String {
            continue;
        }
        let typed = match p.kind {
            ParamType::String => serde_json::Value::String(text),
            kind => from_text(kind, text.trim()).unwrap_or(serde_json::Value::String(text)),
        };
        object.insert(p.name.clone(), typed);
    }
    serde_json::Value::Object(object)
}

/// One parameter's field (a yes/no choice for a boolean), with the server's word on it.
fn param_field(
    p: Parameter,
    value: RwSignal<String>,
    errors: Signal<Option<AppError>>,
) -> impl IntoView {
    use crate::domain::job::params::ParamType;
    let field_id = format!("param-{}", p.name);
    let label = if p.required {
        t!(
            "job-param-required",
            name = p.name.clone(),
            kind = p.kind.to_string()
        )
    } else {
        t!(
            "job-param",
            name = p.name.clone(),
            kind = p.kind.to_string()
        )
    };
    let control = match p.kind {
        ParamType::Bool => view! {
            <select id=field_id.clone() prop:value=move || value.get()
                on:change=move |ev| value.set(event_target_value(&ev))>
                <option value="false">{t!("no")}</option>
                <option value="true">{t!("yes")}</option>
            </select>
        }
        .into_any(),
        _ => view! {
            <input id=field_id.clone() type="text" prop:value=move || value.get()
                on:input=move |ev| value.set(event_target_value(&ev)) />
        }
        .into_any(),
    };
    let field = format!("params.{}", p.name);
    let error = {
        let field = field.clone();
        move || errors.get().and_then(|e| e.for_field(&field))
    };
    view! {
        <div class="field">
            <label for=field_id>{label}</label>
            {control}
            <p class="field-error" data-field=field>{error}</p>
        </div>
    }
}

/// The job's trigger URL, for admins: create (optionally signed), rotate, remove.
/// Where a job uses a run parameter where it is no longer allowed, from its detail.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
struct ParamsHold {
    misplaced: Vec<crate::views::FieldError>,
    held: bool,
}

/// The banner of a job saved before parameters became data (`crate::services::held`): each
/// place named with what to do, and for an admin the confirmation that lets it run as written.
#[component]
fn HeldForParameters(id: i64, hold: ParamsHold, readonly: bool) -> impl IntoView {
    use crate::api::jobs::ConfirmJobParams;
    let confirm = ServerAction::<ConfirmJobParams>::new();
    let done = move || matches!(confirm.value().get(), Some(Ok(())));
    let intro = if hold.held {
        t!("job-held-banner")
    } else {
        t!("job-held-confirmed")
    };
    let places = hold
        .misplaced
        .into_iter()
        .map(|e| view! { <li class="warning"><code>{e.field}</code>": "{e.message}</li> })
        .collect_view();
    let can_confirm = hold.held && !readonly;
    let button = move || {
        (can_confirm && !done()).then(|| {
            view! {
                <ActionForm action=confirm>
                    <input type="hidden" name="id" value=id />
                    <button type="submit" data-testid="params-confirm">{t!("job-held-confirm")}</button>
                </ActionForm>
            }
        })
    };
    view! {
        <section class="card" data-testid="params-held">
            <p>{intro}</p>
            <ul class="warnings">{places}</ul>
            {button}
            <p class="ok" role="status">{move || done().then(|| t!("job-held-confirmed"))}</p>
            <p class="error" role="alert">{move || confirm.value().get().and_then(Result::err).map(|e| e.explain(current()))}</p>
        </section>
    }
}

#[component]
fn TriggerUrl(id: i64) -> impl IntoView {
    use crate::api::jobs::{ChangeJobHook, SetJobHook, job_hook};
    let set = ServerAction::<SetJobHook>::new();
    let change = ServerAction::<ChangeJobHook>::new();
    let hook = Resource::new(
        move || (set.version().get(), change.version().get()),
        move |_| job_hook(id),
    );
    view! {
        <section class="card" data-testid="trigger-url">
            <h2>{t!("hook-heading")}</h2>
            <p class="muted">
                {t!("hook-explained")}
            </p>
            {move || {
                set.value().get().and_then(Result::ok).flatten().and_then(|h| h.path).map(|path| view! {
                    <div class="ok" role="status">
                        <p>{t!("hook-created")}</p>
                        <p><code data-testid="trigger-url-path">{path}</code>" "{t!("hook-on-console")}</p>
                    </div>
                })
            }}
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    match hook.await {
                        Ok(Some(h)) => view! {
                            <p data-testid="trigger-url-state">
                                {t!("hook-exists")} {h.signed.then(|| format!(" {}", t!("channels-signed")))}
                            </p>
                            <ActionForm action=change attr:class="form inline-form">
                                <input type="hidden" name="id" value=id />
                                <WhenPausedChoice chosen=h.when_paused id="hook-when-paused-now" />
                                <div>
                                    <button type="submit">{t!("hook-when-paused-save")}</button>
                                </div>
                            </ActionForm>
                            {move || change.value().get().and_then(Result::ok).map(|_| view! {
                                <p class="ok" role="status">{t!("hook-when-paused-saved")}</p>
                            })}
                        }.into_any(),
                        Ok(None) => view! { <p class="muted">{t!("hook-none")}</p> }.into_any(),
                        Err(e) => view! { <p class="error">{e.explain(current())}</p> }.into_any(),
                    }
                })}
            </Transition>
            <ActionForm action=set attr:class="form inline-form">
                <input type="hidden" name="id" value=id />
                <div>
                    <label for="hook-secret">{t!("channels-secret")}</label>
                    <input id="hook-secret" name="secret" type="password" autocomplete="off" />
                </div>
                <WhenPausedChoice chosen=WhenPaused::Refuse id="hook-when-paused" />
                <div>
                    <button type="submit">{t!("hook-new")}</button>
                </div>
            </ActionForm>
            <ActionForm action=set>
                <input type="hidden" name="id" value=id />
                <input type="hidden" name="remove" value="1" />
                <button type="submit" class="link">{t!("hook-remove")}</button>
            </ActionForm>
            <p class="error" role="alert">
                {move || {
                    set.value().get().and_then(Result::err)
                        .or_else(|| change.value().get().and_then(Result::err))
                        .map(|e| e.explain(current()))
                }}
            </p>
        </section>
    }
}

/// A watched job's ping URL, with the ways to call it; admins only.
#[component]
fn PingUrl(id: i64) -> impl IntoView {
    use crate::api::jobs::{JobPingUrl, job_ping_url};
    let rotate = ServerAction::<JobPingUrl>::new();
    let url = Resource::new(
        move || rotate.version().get(),
        move |_| job_ping_url(id, None),
    );
    view! {
        <section class="card" data-testid="ping-url">
            <h2>{t!("ping-heading")}</h2>
            <p class="muted">{t!("ping-explained")}</p>
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    match url.await {
                        Ok(url) => view! {
                            <p><code class="url" data-testid="ping-url-value">{url.clone()}</code></p>
                            <pre class="snippet">{format!("curl -fsS -m 10 --retry 3 {url}/start
# … the work …
curl -fsS -m 10 --retry 3 {url}

# or, wrapping a command:
bulwark exec --ping-url {url} -- /usr/local/bin/backup.sh")}</pre>
                        }.into_any(),
                        Err(e) => view! { <p class="error">{e.explain(current())}</p> }.into_any(),
                    }
                })}
            </Transition>
            <ActionForm action=rotate>
                <input type="hidden" name="id" value=id />
                <input type="hidden" name="rotate" value="1" />
                <button type="submit" class="link">{t!("ping-rotate")}</button>
            </ActionForm>
            {move || rotate.value().get().and_then(Result::ok).map(|_| view! {
                <p class="ok" role="status">{t!("ping-rotated")}</p>
            })}
        </section>
    }
}

/// The choice of what a trigger URL does while its job is paused, as a form's `when_paused`.
#[component]
fn WhenPausedChoice(chosen: WhenPaused, id: &'static str) -> impl IntoView {
    let options = [
        (WhenPaused::Refuse, key!("hook-when-paused-refuse")),
        (WhenPaused::Queue, key!("hook-when-paused-queue")),
    ];
    let locale = crate::i18n::current();
    view! {
        <div>
            <label for=id>{t!("hook-when-paused")}</label>
            <select id=id name="when_paused">
                {options.into_iter().map(|(value, label)| view! {
                    <option value=value.as_str() selected=value == chosen>{locale.text(label)}</option>
                }).collect_view()}
            </select>
        </div>
    }
}
