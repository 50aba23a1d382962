//! The traffic page's card of goals and custom events: each goal's conversions, the visits
//! that converted and their share of the site's visits; each event with its properties.

use leptos::prelude::*;

use crate::i18n::current;
use crate::t;
use crate::views::traffic::{Dashboard, EventViews, GoalViews};

/// Goals with their conversions and rate, then people's events.
#[component]
pub(super) fn Goals(dashboard: Dashboard) -> impl IntoView {
    let stats = dashboard.current;
    view! {
        <section class="card" data-testid="goals">
            <h2>{t!("traffic-goals")}</h2>
            <p class="muted small">{t!("traffic-goals-explained")}</p>
            <div class="lists">
                <div class="list wide" data-testid="goal-list">
                    <h3>{t!("traffic-goals-list")}</h3>
                    {goals_table(stats.goals)}
                </div>
                <div class="list wide" data-testid="events">
                    <h3>{t!("traffic-events")}</h3>
                    {events_table(stats.events)}
                </div>
            </div>
        </section>
    }
}

fn goals_table(goals: Vec<GoalViews>) -> AnyView {
    if goals.is_empty() {
        return view! { <p class="muted small">{t!("traffic-goals-none")}</p> }.into_any();
    }
    let show_host = goals.iter().any(|g| g.site != goals[0].site);
    let rows = goals
        .into_iter()
        .map(|g| {
            let target = crate::i18n::words::goal_target(&g.kind, &g.target);
            let name = if show_host {
                format!("{} · {}", g.site, g.name)
            } else {
                g.name.clone()
            };
            view! {
                <tr data-name=g.name>
                    <td><b>{name}</b><br /><span class="muted small">{target}</span></td>
                    <td class="num" data-testid="conversions">{g.conversions}</td>
                    <td class="num">{g.visits}</td>
                    <td class="num" data-testid="rate">{current().percent(g.rate)}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <table tabindex="0" class="table compact">
            <thead><tr>
                <th>{t!("traffic-goal")}</th>
                <th>{t!("traffic-conversions")}</th>
                <th>{t!("traffic-goal-visits")}</th>
                <th>{t!("traffic-conversion-rate")}</th>
            </tr></thead>
            <tbody>{rows}</tbody>
        </table>
    }
    .into_any()
}

fn events_table(events: Vec<EventViews>) -> AnyView {
    if events.is_empty() {
        return view! { <p class="muted small">{t!("traffic-events-none")}</p> }.into_any();
    }
    let rows = events
        .into_iter()
        .map(|e| {
            let props = e
                .props
                .into_iter()
                .map(|p| view! { <li><span class="muted">{p.key}" = "{p.value}</span>" " {p.count}</li> })
                .collect_view();
            let key = e.name.clone();
            view! {
                <tr data-name=key>
                    <td><code>{e.name}</code><ul class="plain small">{props}</ul></td>
                    <td class="num">{e.count}</td>
                    <td class="num">{e.visits}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <table tabindex="0" class="table compact">
            <thead><tr>
                <th>{t!("traffic-event")}</th>
                <th>{t!("traffic-events-count")}</th>
                <th>{t!("traffic-goal-visits")}</th>
            </tr></thead>
            <tbody>{rows}</tbody>
        </table>
    }
    .into_any()
}
