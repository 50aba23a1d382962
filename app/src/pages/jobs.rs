use crate::components::upcoming::Upcoming;
use leptos::prelude::*;

#[component]
pub fn JobsPage() -> impl IntoView {
    view! {
        <Upcoming
            title="Jobs"
            summary="Cron jobs — HTTP calls, commands and built-in tasks — each with a retry policy you can see before you save it."
            will_hold=&[
                "every job with its schedule, next fire time, last result and whether it is enabled",
                "the job editor: cron with its next five fire times, kind-specific settings, timeout policy, what happens when retries run out, who is alerted",
                "the retry editor: sliders for first interval, multiplier and retries that redraw the interval curve live and warn where it turns dangerous",
                "Run now, enable/disable, delete",
            ]
        />
    }
}
