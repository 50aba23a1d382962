//! An attempt's whole output on the run page: a screen of lines at a time (the last screen
//! first, whatever the size), paged or jumped to by line number, stdout or stderr alone, a
//! search term marked, the whole log downloadable. Following a running attempt, the last
//! screen refreshes as it prints.

use leptos::prelude::*;

use crate::api::run_logs::read_log;
use crate::components::ticker::use_ticker;
use crate::domain::run_log::Stream;
use crate::i18n::current;
use crate::i18n::errors::Explain;
use crate::t;
use crate::views::run_logs::{Anchor, LogLine, LogPage};

/// What the viewer shows: which attempt, from where, which stream, what is marked.
#[derive(Clone, Copy)]
struct View {
    attempt: RwSignal<Option<i32>>,
    anchor: RwSignal<Anchor>,
    stream: RwSignal<String>,
    mark: RwSignal<String>,
    /// The line jumped to.
    target: RwSignal<Option<i64>>,
    /// What the "go to line" box holds.
    goto: RwSignal<String>,
}

type Page = Resource<Result<Option<LogPage>, crate::api::AppError>>;

/// The viewer's place and the screen it shows, made where the page makes its other
/// resources: a resource made later (inside another's `<Transition>`) would be made in
/// another order in the browser than on the server, and take another's data while hydrating.
#[derive(Clone, Copy)]
pub struct LogState {
    view: View,
    page: Page,
}

/// The log of the run `id` names, opening on `attempt` (the last when `None`) at `line` (the
/// last screen when `None`).
pub fn use_log(
    id: impl Fn() -> Option<i64> + Send + Sync + 'static,
    attempt: Option<i32>,
    line: Option<i64>,
) -> LogState {
    let view = View {
        attempt: RwSignal::new(attempt),
        anchor: RwSignal::new(line.map_or(Anchor::End, Anchor::From)),
        stream: RwSignal::new(String::new()),
        mark: RwSignal::new(String::new()),
        target: RwSignal::new(line),
        goto: RwSignal::new(String::new()),
    };
    let tick = use_ticker(2_000);
    let following = RwSignal::new(false);
    let page = Resource::new(
        move || {
            let refresh = if following.get() { tick.get() } else { 0 };
            let v = view;
            (
                id(),
                v.attempt.get(),
                v.anchor.get(),
                v.stream.get(),
                refresh,
            )
        },
        move |(id, attempt, anchor, stream, _)| async move {
            match id {
                Some(id) => read_log(id, attempt, anchor, Some(stream)).await,
                None => Ok(None),
            }
        },
    );
    Effect::new(move |_| {
        if let Some(Ok(Some(p))) = page.get() {
            following.set(p.summary.running && view.anchor.get_untracked() == Anchor::End);
        }
    });
    LogState { view, page }
}

/// The log viewer's card.
#[component]
pub fn LogViewer(state: LogState) -> impl IntoView {
    let LogState { view, page } = state;
    view! {
        <section class="card log-viewer" id="log" data-testid="log-viewer">
            <h2>{t!("log-title")}</h2>
            <Transition fallback=|| view! { <p class="muted">{t!("loading")}</p> }>
                {move || Suspend::new(async move {
                    match page.await {
                        Ok(Some(p)) => view! {
                            <Tools id=p.run view attempts=p.attempts shown=p.summary.attempt />
                            <Screen page=p view />
                        }.into_any(),
                        Ok(None) => view! { <p class="muted" data-testid="log-empty">{t!("log-no-attempt")}</p> }.into_any(),
                        Err(e) => view! { <p class="error">{e.explain(current())}</p> }.into_any(),
                    }
                })}
            </Transition>
        </section>
    }
}

/// Attempt, stream, marked term, go to line, download.
#[component]
fn Tools(id: i64, view: View, attempts: i32, shown: i32) -> impl IntoView {
    let goto = view.goto;
    let jump = move || {
        if let Ok(n) = goto.get_untracked().trim().parse::<i64>()
            && n > 0
        {
            view.target.set(Some(n));
            view.anchor.set(Anchor::From(n));
        }
    };
    let download = format!("/api/v1/runs/{id}/log?attempt={shown}");
    view! {
        <div class="log-tools">
            {(attempts > 1).then(|| view! {
                <label>{t!("log-attempt")}" "
                    <select data-testid="log-attempt" prop:value=shown.to_string()
                        on:change=move |ev| {
                            view.attempt.set(event_target_value(&ev).parse().ok());
                            view.anchor.set(Anchor::End);
                            view.target.set(None);
                        }>
                        {(1..=attempts).map(|n| view! { <option value=n.to_string()>{n}</option> }).collect_view()}
                    </select>
                </label>
            })}
            <label>{t!("log-stream")}" "
                <select data-testid="log-stream" prop:value=move || view.stream.get()
                    on:change=move |ev| view.stream.set(event_target_value(&ev))>
                    <option value="">{t!("log-stream-both")}</option>
                    <option value="stdout">{t!("log-stream-stdout")}</option>
                    <option value="stderr">{t!("log-stream-stderr")}</option>
                </select>
            </label>
            <label>{t!("log-mark")}" "
                <input type="search" data-testid="log-mark" prop:value=move || view.mark.get()
                    on:input=move |ev| view.mark.set(event_target_value(&ev)) />
            </label>
            <form class="inline" on:submit=move |ev| { ev.prevent_default(); jump(); }>
                <label>{t!("log-goto")}" "
                    <input type="number" min="1" class="narrow" data-testid="log-goto" prop:value=move || goto.get()
                        on:input=move |ev| goto.set(event_target_value(&ev)) />
                </label>
                " "<button type="submit">{t!("log-goto-button")}</button>
            </form>
            <a class="button" data-testid="log-download" href=download download="">{t!("log-download")}</a>
        </div>
    }
}

/// One screen: what is kept, paging, the lines.
#[component]
fn Screen(page: LogPage, view: View) -> impl IntoView {
    let s = &page.summary;
    let summary = t!(
        "log-summary",
        lines = s.last_line,
        size = format!("{:.1}", s.bytes as f64 / 1_000_000.0)
    );
    let omitted = (s.omitted_bytes > 0).then(|| {
        t!(
            "log-omitted",
            size = format!("{:.1}", s.omitted_bytes as f64 / 1_000_000.0),
            lines = s.omitted_lines
        )
    });
    let first = page.lines.first().map(|l| l.number);
    let last = page.lines.last().map(|l| l.number);
    let go = move |anchor: Anchor| {
        view.target.set(None);
        view.anchor.set(anchor);
    };
    let (before, after) = (page.more_before, page.more_after);
    let empty = page.lines.is_empty();
    let marker = omitted.clone();
    let lines = page
        .lines
        .into_iter()
        .map(|l| line_view(l, view, marker.clone()))
        .collect_view();
    view! {
        <p class="small muted" data-testid="log-summary">
            {summary}
            {s.running.then(|| format!(" · {}", t!("log-running")))}
            {omitted.map(|o| format!(" · {o}"))}
        </p>
        <p class="log-nav">
            <button type="button" disabled=!before on:click=move |_| go(Anchor::From(1))>{t!("log-first")}</button>
            <button type="button" disabled=!before data-testid="log-earlier"
                on:click=move |_| go(Anchor::Before(first.unwrap_or(1)))>{t!("log-earlier")}</button>
            <button type="button" disabled=!after data-testid="log-later"
                on:click=move |_| go(Anchor::From(last.unwrap_or(0) + 1))>{t!("log-later")}</button>
            <button type="button" disabled=!after data-testid="log-last" on:click=move |_| go(Anchor::End)>{t!("log-last")}</button>
        </p>
        {if empty {
            view! { <p class="muted" data-testid="log-empty">{t!("log-empty")}</p> }.into_any()
        } else {
            view! { <div class="log" role="log" tabindex="0" data-testid="log-lines">{lines}</div> }.into_any()
        }}
    }
}

fn line_view(line: LogLine, view: View, omitted: Option<String>) -> impl IntoView {
    let number = line.number;
    let stream = line.stream;
    // The marker is stored in English in the log itself; here it is said in the reader's words.
    let text = match (stream, omitted) {
        (Stream::Note, Some(said)) => said,
        _ => line.text,
    };
    let title = crate::i18n::stamp(line.at);
    view! {
        <div class="line" class:stderr=stream == Stream::Stderr class:note=stream == Stream::Note
            class:target=move || view.target.get() == Some(number) data-line=number>
            <span class="ln" title=title>{number}</span>
            <span class="text">{move || marked(&text, &view.mark.get())}</span>
        </div>
    }
}

/// `text` with each occurrence of `term` (case ignored) in a `<mark>`.
pub fn marked(text: &str, term: &str) -> impl IntoView + use<> {
    let mut parts = Vec::new();
    let term = term.trim();
    let lower = text.to_lowercase();
    // Lower-casing keeps byte offsets only where it keeps lengths (ASCII, most scripts).
    if term.is_empty() || lower.len() != text.len() {
        parts.push(view! { <span>{text.to_string()}</span> }.into_any());
        return parts;
    }
    let needle = term.to_lowercase();
    let mut from = 0;
    while let Some(at) = lower[from..].find(&needle).map(|i| i + from) {
        let end = at + needle.len();
        if !text.is_char_boundary(at) || !text.is_char_boundary(end) {
            break;
        }
        parts.push(view! { <span>{text[from..at].to_string()}</span> }.into_any());
        parts.push(view! { <mark>{text[at..end].to_string()}</mark> }.into_any());
        from = end;
    }
    parts.push(view! { <span>{text[from..].to_string()}</span> }.into_any());
    parts
}
