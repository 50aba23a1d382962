//! States as people read them: a run's status or an attempt's outcome as a coloured word, and
//! a moment in the console's zone.

use leptos::prelude::*;

use crate::domain::run::{Outcome, RunStatus};

/// A state as a coloured word: `class` picks the colour, `word` is the state's stored word.
/// `word` is the stored name (what tests and filters read), `label` what people read.
fn pill(word: &'static str, label: String, class: &'static str) -> impl IntoView + use<> {
    view! { <span class=class data-status=word>{label}</span> }
}

pub fn status_pill(status: RunStatus) -> impl IntoView + use<> {
    let class = match status {
        RunStatus::Succeeded => "pill ok",
        RunStatus::Dead => "pill bad",
        RunStatus::Running | RunStatus::Pending | RunStatus::RetryWait => "pill live",
        RunStatus::Blocked | RunStatus::AwaitingPing | RunStatus::WaitingForNode => "pill warn",
        RunStatus::Skipped | RunStatus::Cancelled => "pill off",
    };
    pill(
        status.as_str(),
        crate::i18n::words::run_status(status),
        class,
    )
}

pub fn outcome_pill(outcome: Outcome) -> impl IntoView + use<> {
    let class = match outcome {
        Outcome::Succeeded => "pill ok",
        Outcome::Failed | Outcome::TimedOut | Outcome::Interrupted => "pill off",
    };
    pill(
        outcome.as_str(),
        crate::i18n::words::outcome(outcome),
        class,
    )
}

pub fn when(t: chrono::DateTime<chrono::Utc>) -> String {
    crate::i18n::stamp(t)
}
