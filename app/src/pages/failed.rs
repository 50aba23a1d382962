use crate::components::upcoming::Upcoming;
use leptos::prelude::*;

#[component]
pub fn FailedPage() -> impl IntoView {
    view! {
        <Upcoming
            title="Failed queue"
            summary="Runs that could not succeed, parked with their whole history until someone acts."
            will_hold=&[
                "every dead run with its job, first and last failure, attempts used, error class and message",
                "re-trigger one run or many (by selection or by filter, released at a rate you set)",
                "resolve or discard with a reason, and the audit of who did what",
            ]
        />
    }
}
