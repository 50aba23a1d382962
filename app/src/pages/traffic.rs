use crate::components::upcoming::Upcoming;
use leptos::prelude::*;

#[component]
pub fn TrafficPage() -> impl IntoView {
    view! {
        <Upcoming
            title="Traffic"
            summary="Who visits your site's front end: people and bots side by side, bots named by source."
            will_hold=&[
                "page views, visits, unique IPs and unique pages over today, yesterday, 7, 30 and 90 days or any range",
                "people and bots as separate series; bots by source (Google, Bing, Baidu …)",
                "the top pages and the stored hits, filtered and exportable as CSV",
            ]
        />
    }
}
