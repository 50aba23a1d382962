//! The retry editor's evidence panel: the policy being edited and the one in force, replayed
//! against the job's own failure episodes (`crate::domain::recovery`), side by side per retry,
//! and "Suggest a policy" for a recovery target, shown as a change the administrator applies or
//! not; the episodes of every revision of the job or of its current one only. Everything is
//! computed in the browser from the episodes the page loaded once.

use leptos::prelude::*;

use crate::domain::recovery::{
    Episode, JobEpisodes, MIN_EPISODES, Replay, Suggestion, replay, suggest,
};
use crate::domain::retry::{RetryInput, RetryPolicy};
use crate::i18n::duration as human_ms;
use crate::t;

/// The recovery targets "Suggest" offers.
const TARGETS: [(u32, f64); 2] = [(95, 0.95), (99, 0.99)];

/// What the page knows of a job's failures, loaded with the job (`pages::job_edit`; serialised
/// only to carry the server's render into the browser's hydration).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum JobHistory {
    /// A job not saved yet has none.
    #[default]
    Unsaved,
    /// The episodes could not be read; the reason, ready to show.
    Unavailable(String),
    Episodes(JobEpisodes),
}

impl JobHistory {
    /// The episodes (of every revision, or of the current one only) when there are enough to
    /// replay a policy against.
    pub fn replayable(&self, current_only: bool) -> Option<Vec<Episode>> {
        match self {
            Self::Episodes(job) => {
                Some(job.select(current_only)).filter(|e| e.len() >= MIN_EPISODES)
            }
            _ => None,
        }
    }
}

/// The episodes the panel goes by, and the choice that picks them.
#[derive(Clone, Copy)]
pub struct Evidence {
    /// Only the runs of the job's current revision.
    pub current_only: RwSignal<bool>,
    /// The chosen episodes when there are enough of them.
    pub episodes: Memo<Option<Vec<Episode>>>,
}

impl Evidence {
    pub fn new(history: &JobHistory) -> Self {
        let history = StoredValue::new(history.clone());
        let current_only = RwSignal::new(false);
        let episodes = Memo::new(move |_| history.with_value(|h| h.replayable(current_only.get())));
        Self {
            current_only,
            episodes,
        }
    }
}

#[component]
pub fn RetryEvidence(
    history: JobHistory,
    evidence: Evidence,
    /// The policy being edited, when its fields parse.
    #[prop(into)]
    edited: Signal<Option<RetryPolicy>>,
    /// The edited policy replayed against the episodes (the editor computes it once for its
    /// chart and this panel).
    #[prop(into)]
    edited_replay: Signal<Option<Replay>>,
    /// The policy saved with the job.
    in_force: Option<RetryPolicy>,
    /// The editor's fields, which "Apply" fills with the suggestion.
    retry: RwSignal<RetryInput>,
    #[prop(default = false)] readonly: bool,
) -> impl IntoView {
    let job = match history {
        JobHistory::Episodes(job) if job.episodes.len() >= MIN_EPISODES => job,
        short => return too_little(short),
    };
    let episodes = evidence.episodes;
    let chosen = Chosen {
        edited,
        in_force,
        retry,
        episodes,
        readonly,
    };
    // Limiting can leave too few: then the panel says how many the current revision has.
    let of_current = job.select(true).len();
    let current = job.current;
    let scope = job
        .spans_revisions()
        .then(|| view! { <RevisionScope current current_only=evidence.current_only /> });
    let body = move || match episodes.get() {
        Some(e) => view! { <Replayed episodes=e edited_replay chosen /> }.into_any(),
        None => too_few_of(current, of_current),
    };
    view! {
        <section class="retry-evidence" data-testid="retry-evidence">
            <h3>{t!("evidence-title")}</h3>
            {scope}
            {body}
        </section>
    }
    .into_any()
}

/// The panel's body when the current revision alone has too few episodes to go by.
fn too_few_of(revision: i32, count: usize) -> AnyView {
    view! {
        <p class="muted" data-testid="evidence-few">
            {t!("evidence-too-few-revision", revision = revision, count = count, needed = MIN_EPISODES)}
        </p>
    }
    .into_any()
}

/// The choice between every revision's runs and the current revision's alone.
#[component]
fn RevisionScope(current: i32, current_only: RwSignal<bool>) -> impl IntoView {
    view! {
        <label class="check">
            <input
                type="checkbox"
                data-testid="evidence-current-only"
                prop:checked=move || current_only.get()
                on:change=move |ev| current_only.set(event_target_checked(&ev))
            />
            {t!("evidence-current-only", revision = current)}
        </label>
    }
}

/// The chosen episodes replayed: per retry, the edited policy beside the one in force, and
/// "Suggest".
#[component]
fn Replayed(
    episodes: Vec<Episode>,
    edited_replay: Signal<Option<Replay>>,
    chosen: Chosen,
) -> impl IntoView {
    let Chosen {
        edited, in_force, ..
    } = chosen;
    let now = in_force.map(|p| replay(&p, &episodes));
    let in_force_summary = now.as_ref().map(summary);
    let censored = episodes.iter().filter(|e| !e.recovered).count();
    let count = episodes.len();
    let rows = move || {
        edited_replay.with(|r| {
            let starts = edited.get().map(|p| p.cumulative_ms()).unwrap_or_default();
            r.as_ref().map(|r| retry_rows(r, &starts, now.as_ref()))
        })
    };
    let edited_summary = move || edited_replay.with(|r| r.as_ref().map(summary));
    view! {
        <p>{t!("evidence-basis", episodes = count, censored = censored)}</p>
        <div class="table-scroll">
            <table class="evidence">
                <thead>
                    <tr>
                        <th>{t!("retry-col-retry")}</th>
                        <th>{t!("evidence-col-starts")}</th>
                        <th>{t!("evidence-col-edited")}</th>
                        <th>{t!("evidence-col-in-force")}</th>
                        <th></th>
                    </tr>
                </thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
        <dl class="facts">
            <dt>{t!("evidence-col-edited")}</dt>
            <dd data-testid="evidence-edited">{edited_summary}</dd>
            <dt>{t!("evidence-col-in-force")}</dt>
            <dd data-testid="evidence-in-force">{in_force_summary}</dd>
        </dl>
        <Suggest chosen />
    }
}

/// The panel when there is nothing to replay: a job not saved yet, episodes that could not
/// be read, or too few of them.
fn too_little(history: JobHistory) -> AnyView {
    let body = match history {
        JobHistory::Unavailable(reason) => view! {
            <p class="error" data-testid="evidence-few">{t!("evidence-unavailable", error = reason)}</p>
        }
        .into_any(),
        JobHistory::Episodes(e) => view! {
            <p class="muted" data-testid="evidence-few">
                {t!("evidence-too-few", count = e.episodes.len(), needed = MIN_EPISODES)}
            </p>
        }
        .into_any(),
        JobHistory::Unsaved => {
            view! { <p class="muted" data-testid="evidence-few">{t!("evidence-new-job")}</p> }
                .into_any()
        }
    };
    view! {
        <section class="retry-evidence" data-testid="retry-evidence">
            <h3>{t!("evidence-title")}</h3>
            {body}
        </section>
    }
    .into_any()
}

fn pct(share: f64) -> String {
    crate::i18n::current().percent(share)
}

/// A replay in a line: how much it recovers and the wait it costs.
fn summary(r: &Replay) -> String {
    t!(
        "evidence-summary",
        recovered = pct(r.recovered),
        wait = human_ms(r.expected_wait_ms)
    )
}

/// One row per retry: when it starts, what the edited policy recovers by it and what the
/// policy in force (`before`) did.
fn retry_rows(edited: &Replay, starts: &[f64], before: Option<&Replay>) -> AnyView {
    (1u8..)
        .zip(&edited.recovered_by_retry)
        .map(|(n, share)| {
            let idle = edited.idle_retries.contains(&n);
            let start = starts.get(usize::from(n) - 1).copied().unwrap_or_default();
            let before = before
                .and_then(|f| f.recovered_by_retry.get(usize::from(n) - 1))
                .map_or_else(|| "—".to_string(), |s| pct(*s));
            view! {
                <tr class:idle=idle data-retry=n>
                    <td>{n}</td>
                    <td>{human_ms(start)}</td>
                    <td data-testid="evidence-recovered">{pct(*share)}</td>
                    <td>{before}</td>
                    <td class="muted">{idle.then(|| t!("evidence-idle"))}</td>
                </tr>
            }
        })
        .collect_view()
        .into_any()
}

/// What "Suggest" starts from and where "Apply" writes.
#[derive(Clone, Copy)]
struct Chosen {
    edited: Signal<Option<RetryPolicy>>,
    in_force: Option<RetryPolicy>,
    retry: RwSignal<RetryInput>,
    episodes: Memo<Option<Vec<Episode>>>,
    readonly: bool,
}

/// A recovery target and "Suggest a policy", then the suggestion as a change.
#[component]
fn Suggest(chosen: Chosen) -> impl IntoView {
    let Chosen {
        edited,
        in_force,
        retry,
        episodes,
        readonly,
    } = chosen;
    let target = RwSignal::new(TARGETS[0].1);
    let suggestion = RwSignal::new(None::<Option<Suggestion>>);
    // A suggestion answers the policy it was asked from; editing makes it stale.
    Effect::new(move |_| {
        retry.track();
        suggestion.set(None);
    });
    let targets = TARGETS
        .iter()
        .map(|(pct, _)| view! { <option value=pct.to_string()>{format!("{pct} %")}</option> })
        .collect_view();
    view! {
        <div class="suggest" role="group" aria-label=t!("evidence-suggest")>
            <label for="evidence-target">{t!("evidence-target")}</label>
            <select
                id="evidence-target"
                disabled=readonly
                on:change=move |ev| {
                    let chosen = event_target_value(&ev);
                    if let Some((_, share)) = TARGETS.iter().find(|(pct, _)| pct.to_string() == chosen) {
                        target.set(*share);
                        suggestion.set(None);
                    }
                }
            >
                {targets}
            </select>
            <button
                type="button"
                class="secondary"
                data-testid="evidence-suggest"
                disabled=readonly
                on:click=move |_| {
                    let from = edited.get_untracked().or(in_force);
                    let proposed = from.and_then(|p| {
                        episodes.with_untracked(|e| {
                            suggest(&p, e.as_deref()?, target.get_untracked())
                        })
                    });
                    suggestion.set(Some(proposed));
                }
            >
                {t!("evidence-suggest")}
            </button>
        </div>
        {move || suggestion.get().map(|s| view! { <SuggestedChange suggestion=s retry edited /> })}
    }
}

/// The suggested policy as a change from the fields, with "Apply".
#[component]
fn SuggestedChange(
    suggestion: Option<Suggestion>,
    retry: RwSignal<RetryInput>,
    edited: Signal<Option<RetryPolicy>>,
) -> impl IntoView {
    let Some(suggestion) = suggestion else {
        return view! { <p class="muted" data-testid="evidence-suggestion">{t!("evidence-no-suggestion")}</p> }
            .into_any();
    };
    let proposed = suggestion.policy.to_input();
    let current = retry.get_untracked();
    let changed = |label: String, from: &str, to: &str| {
        (from.trim() != to).then(|| {
            view! {
                <tr>
                    <th>{label}</th>
                    <td><del>{from.to_string()}</del></td>
                    <td><ins>{to.to_string()}</ins></td>
                </tr>
            }
        })
    };
    let rows = view! {
        {changed(t!("retry-first"), &current.first, &proposed.first)}
        {changed(t!("retry-multiplier"), &current.multiplier, &proposed.multiplier)}
        {changed(t!("retry-max"), &current.max_retries, &proposed.max_retries)}
    };
    let same = edited.get_untracked() == Some(suggestion.policy);
    let note = match (suggestion.reaches_target, suggestion.within_sound_ranges) {
        (false, _) => Some(t!("evidence-unreachable")),
        (true, false) => Some(t!("evidence-outside-ranges")),
        (true, true) => None,
    };
    view! {
        <div class="suggestion" data-testid="evidence-suggestion">
            <p>
                {t!(
                    "evidence-suggestion",
                    recovered = crate::i18n::current().percent(suggestion.replay.recovered),
                    wait = human_ms(suggestion.policy.total_ms())
                )}
            </p>
            {note.map(|n| view! { <p class="warning">{n}</p> })}
            {if same {
                view! { <p class="muted">{t!("evidence-already")}</p> }.into_any()
            } else {
                view! {
                    <table class="diff">
                        <tbody>{rows}</tbody>
                    </table>
                    <button
                        type="button"
                        data-testid="evidence-apply"
                        on:click=move |_| retry.set(proposed.clone())
                    >
                        {t!("evidence-apply")}
                    </button>
                }
                    .into_any()
            }}
        </div>
    }
    .into_any()
}
