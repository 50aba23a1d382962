use crate::components::upcoming::Upcoming;
use leptos::prelude::*;

#[component]
pub fn RunsPage() -> impl IntoView {
    view! {
        <Upcoming
            title="Runs"
            summary="Every execution of every job, and every attempt inside it."
            will_hold=&[
                "runs with status, trigger (cron, manual, re-trigger, recovery) and attempts, filtered by job, status and time",
                "a run's detail: each attempt's timing, timeout used, outcome, error class, message and output tail",
                "live status while a run is in progress",
            ]
        />
    }
}
