//! The traffic page's cards of what visitors were answered — statuses and the pages not
//! found, with who linked to them — and of what AI crawlers fetched.

use leptos::prelude::*;

use super::{FilterChip, Filters, RankedRow, RankedTable};
use crate::t;
use crate::views::traffic::{AiCrawler, Dashboard, NotFound, PageViews};

/// People's page views by status code, each a link that narrows the page to it, and the pages
/// people were answered 404 for.
#[component]
pub(super) fn Answers(dashboard: Dashboard, filters: Filters) -> impl IntoView {
    let chosen = filters.status.clone().map(|code| {
        view! {
            <FilterChip
                testid="status-filter"
                label=t!("traffic-status-filter", status = code)
                clear=filters.with_status(None)
                clear_label=t!("traffic-status-clear")
            />
        }
    });
    let statuses = dashboard
        .current
        .statuses
        .into_iter()
        .map(|s| RankedRow {
            key: s.status.to_string(),
            label: s.status.to_string(),
            href: Some(filters.with_status(Some(&s.status.to_string()))),
            views: s.views,
        })
        .collect();
    view! {
        <section class="card" data-testid="answers">
            <h2>{t!("traffic-answers")}</h2>
            <p class="muted small">{t!("traffic-answers-explained")}</p>
            {chosen}
            <div class="lists">
                <div class="list" data-testid="statuses">
                    <h3>{t!("traffic-statuses")}</h3>
                    <RankedTable rows=statuses />
                </div>
                <div class="list wide" data-testid="not-found">
                    <h3>{t!("traffic-not-found")}</h3>
                    {not_found_table(dashboard.current.not_found)}
                </div>
            </div>
        </section>
    }
}

fn not_found_table(pages: Vec<NotFound>) -> AnyView {
    if pages.is_empty() {
        return view! { <p class="muted small">{t!("traffic-none-in-range")}</p> }.into_any();
    }
    let show_host = pages.iter().any(|p| p.site != pages[0].site);
    let rows = pages
        .into_iter()
        .map(|p| {
            let shown = if show_host {
                format!("{}{}", p.site, p.path)
            } else {
                p.path.clone()
            };
            let referrers = p
                .referrers
                .into_iter()
                .map(|r| {
                    let name = if r.name.is_empty() {
                        t!("traffic-not-found-no-referrer")
                    } else {
                        r.name
                    };
                    view! { <li><span class="muted">{name}</span>" " {r.views}</li> }
                })
                .collect_view();
            view! {
                <tr data-path=p.path>
                    <td><code>{shown}</code><ul class="plain small">{referrers}</ul></td>
                    <td class="num">{p.count}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <table tabindex="0" class="table compact">
            <thead><tr><th>{t!("traffic-page")}" · "{t!("traffic-not-found-referrers")}</th><th>{t!("traffic-hits")}</th></tr></thead>
            <tbody>{rows}</tbody>
        </table>
    }
    .into_any()
}

/// Per AI crawler what it fetched and how it was answered; the popular pages none fetched in
/// 30 days; and how many people AI assistants sent (their channel).
#[component]
pub(super) fn AiVisibility(dashboard: Dashboard) -> impl IntoView {
    let assistants = dashboard
        .current
        .channels
        .iter()
        .find(|r| r.name == crate::domain::channels::Channel::AiAssistant.as_str())
        .map_or(0, |r| r.views);
    let ai = dashboard.current.ai_crawlers;
    let crawlers = if ai.crawlers.is_empty() {
        view! { <p class="muted small">{t!("traffic-none-in-range")}</p> }.into_any()
    } else {
        ai.crawlers
            .into_iter()
            .map(crawler)
            .collect_view()
            .into_any()
    };
    view! {
        <section class="card" data-testid="ai-visibility">
            <h2>{t!("traffic-ai")}</h2>
            <p class="muted small">{t!("traffic-ai-explained")}</p>
            <p data-testid="ai-assistant-referrals">{t!("traffic-ai-referrals", count = assistants)}</p>
            <div class="lists">
                <div class="list wide" data-testid="ai-crawlers">
                    <h3>{t!("traffic-ai-crawlers")}</h3>
                    {crawlers}
                </div>
                <div class="list" data-testid="ai-unvisited">
                    <h3>{t!("traffic-ai-unvisited")}</h3>
                    {unvisited(ai.unvisited)}
                </div>
            </div>
        </section>
    }
}

fn crawler(c: AiCrawler) -> impl IntoView {
    let statuses = c
        .statuses
        .iter()
        .map(|s| format!("{} × {}", status_word(s.status), s.views))
        .collect::<Vec<_>>()
        .join(", ");
    let pages = c
        .pages
        .into_iter()
        .map(|p| {
            let key = p.path.clone();
            view! {
                <tr data-path=key>
                    <td><code>{p.path}</code></td>
                    <td>{status_word(p.status)}</td>
                    <td class="num">{p.count}</td>
                </tr>
            }
        })
        .collect_view();
    let key = c.source.clone();
    view! {
        <details data-name=key>
            <summary><b>{c.source}</b>" " {c.fetches}" · "<span class="muted small">{statuses}</span></summary>
            <table tabindex="0" class="table compact"><tbody>{pages}</tbody></table>
        </details>
    }
}

/// A status code, or the word for a fetch nothing saw answered.
fn status_word(status: u16) -> String {
    if status == 0 {
        t!("traffic-status-unknown")
    } else {
        status.to_string()
    }
}

fn unvisited(pages: Vec<PageViews>) -> AnyView {
    let rows: Vec<RankedRow> = pages
        .into_iter()
        .map(|p| RankedRow {
            key: p.path.clone(),
            label: format!("{}{}", p.site, p.path),
            href: None,
            views: p.views,
        })
        .collect();
    if rows.is_empty() {
        return view! { <p class="muted small">{t!("traffic-ai-all-visited")}</p> }.into_any();
    }
    view! { <RankedTable rows /> }.into_any()
}
