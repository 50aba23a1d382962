//! An honest page for a feature that is not built yet: what it will hold, and no fake data.

use leptos::prelude::*;
use leptos_meta::Title;

#[component]
pub fn Upcoming(
    title: &'static str,
    summary: &'static str,
    will_hold: &'static [&'static str],
) -> impl IntoView {
    view! {
        <Title text=title />
        <h1>{title}</h1>
        <p class="lead">{summary}</p>
        <section class="card upcoming" data-testid="upcoming">
            <h2>"Not built yet"</h2>
            <p>"This page will hold:"</p>
            <ul>{will_hold.iter().map(|item| view! { <li>{*item}</li> }).collect_view()}</ul>
        </section>
    }
}
