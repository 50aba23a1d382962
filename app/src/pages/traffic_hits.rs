//! Traffic → hits: the stored rows behind the figures, filtered like the dashboard (site
//! included) plus path text and IP, newest first or by count, paged by keyset, exportable as CSV.

use crate::i18n::words::bot_category;
use crate::t;
use leptos::prelude::*;

use crate::i18n::current;
use crate::i18n::errors::Explain;
use leptos_meta::Title;
use leptos_router::components::Form;
use leptos_router::hooks::use_query_map;

use crate::api::traffic::traffic_hits;
use crate::views::traffic::{HitRow, HitsFilter};

/// The URL's query for these filters (and an optional page cursor), `?…` or nothing.
pub fn hits_query_string(filter: &HitsFilter, after: Option<&str>) -> String {
    let pairs = [
        ("range", filter.range.as_deref()),
        ("from", filter.from.as_deref()),
        ("to", filter.to.as_deref()),
        ("type", filter.kind.as_deref()),
        ("category", filter.category.as_deref()),
        ("source", filter.source.as_deref()),
        ("site", filter.site.as_deref()),
        ("path", filter.path.as_deref()),
        ("ip", filter.ip.as_deref()),
        ("sort", filter.sort.as_deref()),
        ("after", after),
    ];
    crate::views::query::href("", pairs.map(|(k, v)| (k, v.unwrap_or_default())))
}

#[component]
pub fn TrafficHitsPage() -> impl IntoView {
    let query = use_query_map();
    let filter = Memo::new(move |_| {
        query.with(|q| {
            let get = |k: &str| q.get(k).filter(|v| !v.is_empty());
            HitsFilter {
                range: get("range"),
                from: get("from"),
                to: get("to"),
                kind: get("type"),
                category: get("category"),
                source: get("source"),
                site: get("site"),
                path: get("path"),
                ip: get("ip"),
                sort: get("sort"),
            }
        })
    });
    let after = Memo::new(move |_| query.with(|q| q.get("after")));
    let page = Resource::new(
        move || (filter.get(), after.get()),
        |(f, a)| traffic_hits(f, a),
    );
    let csv = move || {
        format!(
            "/traffic/hits.csv{}",
            hits_query_string(&filter.get(), None)
        )
    };

    view! {
        <Title text=t!("hits-title") />
        <h1>{t!("hits-title")}</h1>
        <p><a href="/traffic">{t!("sites-back")}</a></p>
        <HitsFilters />
        <p><a href=csv rel="external" download="" data-testid="export-csv">{t!("hits-export")}</a></p>
        <Transition fallback=|| view! { <p class="muted">{t!("loading")}</p> }>
            {move || match page.get() {
                None => ().into_any(),
                Some(Err(e)) => view! { <p class="error" role="alert" data-testid="hits-error">{e.explain(current())}</p> }.into_any(),
                Some(Ok(p)) if p.rows.is_empty() => view! { <p class="muted">{t!("hits-none")}</p> }.into_any(),
                Some(Ok(p)) => {
                    let next = p.next.map(|cursor| {
                        let href = format!("/traffic/hits{}", hits_query_string(&filter.get_untracked(), Some(&cursor)));
                        view! { <a href=href data-testid="next-page">{t!("hits-next")}</a> }
                    });
                    view! { <HitsTable rows=p.rows /> <p>{next}</p> }.into_any()
                }
            }}
        </Transition>
    }
}

/// The filter form: a GET of this page, so the URL says what is shown.
#[component]
fn HitsFilters() -> impl IntoView {
    let query = use_query_map();
    let value = move |k: &'static str| move || query.with(|q| q.get(k).unwrap_or_default());
    view! {
            <Form method="GET" action="" attr:class="filters card">
                <div>
                    <label for="h-range">{t!("traffic-range")}</label>
                    <select id="h-range" name="range" prop:value=value("range")>
                        <option value="">{t!("traffic-range-7d")}</option>
                        <option value="today">{t!("traffic-range-today")}</option>
                        <option value="yesterday">{t!("traffic-range-yesterday")}</option>
                        <option value="30d">{t!("traffic-range-30d")}</option>
                        <option value="90d">{t!("traffic-range-90d")}</option>
                    </select>
                </div>
                <div><label for="h-from">{t!("failed-filter-from")}</label><input id="h-from" name="from" type="date" prop:value=value("from") /></div>
                <div><label for="h-to">{t!("failed-filter-to")}</label><input id="h-to" name="to" type="date" prop:value=value("to") /></div>
                <div>
                    <label for="h-type">{t!("traffic-visitors")}</label>
                    <select id="h-type" name="type" prop:value=value("type")>
                        <option value="">{t!("traffic-everyone")}</option>
                        <option value="human">{t!("traffic-people")}</option>
                        <option value="bot">{t!("traffic-bots")}</option>
                    </select>
                </div>
                <div>
                    <label for="h-category">{t!("traffic-bot-category")}</label>
                    <select id="h-category" name="category" prop:value=value("category")>
                        <option value="">{t!("filter-any")}</option>
                        {crate::domain::bots::BotCategory::ALL
                            .iter()
                            .map(|c| view! { <option value=c.as_str()>{bot_category(*c)}</option> })
                            .collect_view()}
                    </select>
                </div>
                <div><label for="h-source">{t!("traffic-bot-source")}</label><input id="h-source" name="source" type="text" prop:value=value("source") /></div>
                <div><label for="h-site">{t!("traffic-site")}</label><input id="h-site" name="site" type="text" placeholder=t!("traffic-all-sites") prop:value=value("site") /></div>
                <div><label for="h-path">{t!("hits-path")}</label><input id="h-path" name="path" type="text" prop:value=value("path") /></div>
                <div><label for="h-ip">{t!("hits-ip")}</label><input id="h-ip" name="ip" type="text" prop:value=value("ip") /></div>
                <div>
                    <label for="h-sort">{t!("hits-sort")}</label>
                    <select id="h-sort" name="sort" prop:value=value("sort")>
                        <option value="">{t!("hits-sort-newest")}</option>
                        <option value="count">{t!("hits-sort-count")}</option>
                    </select>
                </div>
                <div><button type="submit">{t!("filter-apply")}</button></div>
            </Form>
    }
}

#[component]
fn HitsTable(rows: Vec<HitRow>) -> impl IntoView {
    view! {
        <table tabindex="0" class="table small" data-testid="hits">
            <thead>
                <tr>
                    <th>{t!("hits-minute")}</th><th>{t!("traffic-site")}</th><th>{t!("hits-col-path")}</th><th>{t!("hits-method")}</th><th>{t!("hits-status")}</th><th>{t!("hits-ip")}</th><th>{t!("hits-country")}</th><th>{t!("hits-user-agent")}</th>
                    <th>{t!("hits-referer")}</th><th>{t!("hits-locale")}</th><th>{t!("hits-bot")}</th><th>{t!("hits-count")}</th>
                </tr>
            </thead>
            <tbody>
                {rows
                    .into_iter()
                    .map(|r| {
                        let bot = match (r.is_bot, r.source) {
                            (true, Some(source)) => source,
                            (true, None) => t!("bot-category-other"),
                            (false, _) => t!("hits-person"),
                        };
                        let status = if r.status == 0 {
                            t!("traffic-status-unknown")
                        } else {
                            r.status.to_string()
                        };
                        let country = if r.country.is_empty() {
                            t!("traffic-country-unknown")
                        } else {
                            r.country
                        };
                        view! {
                            <tr>
                                <td>{r.minute.format("%Y-%m-%d %H:%M").to_string()}</td>
                                <td>{r.site}</td>
                                <td><code>{r.path}</code></td>
                                <td>{r.method}</td>
                                <td>{status}</td>
                                <td>{r.ip}</td>
                                <td>{country}</td>
                                <td class="ua">{r.user_agent}</td>
                                <td>{r.referer}</td>
                                <td>{r.locale}</td>
                                <td>{bot}</td>
                                <td>{r.count}</td>
                            </tr>
                        }
                    })
                    .collect_view()}
            </tbody>
        </table>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_strings_skip_empty_filters_and_encode_values() {
        let filter = HitsFilter {
            range: Some("30d".into()),
            path: Some("/a b&c".into()),
            ..HitsFilter::default()
        };
        assert_eq!(
            hits_query_string(&filter, None),
            "?range=30d&path=/a%20b%26c"
        );
        assert_eq!(
            hits_query_string(&HitsFilter::default(), Some("t1.2")),
            "?after=t1.2"
        );
        assert_eq!(hits_query_string(&HitsFilter::default(), None), "");
    }
}
