//! Traffic: people and bots side by side over a range, bots named by source.
//!
//! The range, the visitor type, the bot category and source, the site and the country live in
//! the URL (`?range=30d&type=bot&category=ai&source=openai&site=shop.example.com&country=DE`,
//! or `?from=…&to=…`), so a view can be bookmarked and shared and the back button works. The
//! figures come from the same service as `bulwark traffic stats`.

mod answers;
mod goals;

use crate::i18n::words::{bot_category, range_preset};
use crate::t;
use charming::{
    Chart,
    component::{Axis, Grid, Legend},
    element::{AxisType, ItemStyle, Tooltip, Trigger},
    series::Bar,
};
use leptos::prelude::*;

use crate::i18n::current;
use crate::i18n::errors::Explain;
use leptos_meta::Title;
use leptos_router::components::Form;
use leptos_router::hooks::use_query_map;

use crate::api::traffic::{traffic_dashboard, traffic_live};
use crate::components::chart::EChart;
use crate::components::ticker::use_ticker;
use crate::domain::traffic_range::{Bucket, Preset};
use crate::views::traffic::{Dashboard, LiveMinute, SeriesPoint, TopPage, TrafficStats};

const PEOPLE: &str = "#1c7ed6";
const BOTS: &str = "#f08c00";

/// The URL's filters, and links that change one of them.
#[derive(Debug, Clone, Default, PartialEq)]
struct Filters {
    range: Option<String>,
    from: Option<String>,
    to: Option<String>,
    kind: Option<String>,
    category: Option<String>,
    source: Option<String>,
    site: Option<String>,
    country: Option<String>,
    campaign: Option<String>,
    status: Option<String>,
}

impl Filters {
    fn href(&self) -> String {
        let pairs = form_pairs(self);
        crate::views::query::href("/traffic", pairs.iter().map(|(k, v)| (*k, v.as_str())))
    }

    fn with_range(&self, preset: Preset) -> String {
        Filters {
            range: Some(preset.as_str().into()),
            from: None,
            to: None,
            ..self.clone()
        }
        .href()
    }

    fn with_kind(&self, kind: &str) -> String {
        Filters {
            kind: (kind != "all").then(|| kind.to_string()),
            // People have no bot category or source.
            category: self.category.clone().filter(|_| kind != "human"),
            source: self.source.clone().filter(|_| kind != "human"),
            ..self.clone()
        }
        .href()
    }

    fn with_category(&self, category: Option<&str>) -> String {
        Filters {
            category: category.map(str::to_string),
            source: None,
            kind: category.map(|_| "bot".to_string()).or(self.kind.clone()),
            ..self.clone()
        }
        .href()
    }

    fn with_source(&self, source: Option<&str>) -> String {
        Filters {
            source: source.map(str::to_string),
            kind: source.map(|_| "bot".to_string()).or(self.kind.clone()),
            ..self.clone()
        }
        .href()
    }

    fn with_site(&self, site: Option<&str>) -> String {
        Filters {
            site: site.map(str::to_string),
            ..self.clone()
        }
        .href()
    }

    fn with_country(&self, country: Option<&str>) -> String {
        Filters {
            country: country.map(str::to_string),
            ..self.clone()
        }
        .href()
    }

    fn with_campaign(&self, campaign: Option<&str>) -> String {
        Filters {
            campaign: campaign.map(str::to_string),
            ..self.clone()
        }
        .href()
    }

    fn with_status(&self, status: Option<&str>) -> String {
        Filters {
            status: status.map(str::to_string),
            ..self.clone()
        }
        .href()
    }

    fn active_range(&self) -> Option<Preset> {
        if self.from.is_some() {
            return None;
        }
        Preset::parse(self.range.as_deref().unwrap_or("7d"))
    }
}

fn form_pairs(f: &Filters) -> Vec<(&'static str, String)> {
    vec![
        ("range", f.range.clone().unwrap_or_default()),
        ("from", f.from.clone().unwrap_or_default()),
        ("to", f.to.clone().unwrap_or_default()),
        ("type", f.kind.clone().unwrap_or_default()),
        ("category", f.category.clone().unwrap_or_default()),
        ("source", f.source.clone().unwrap_or_default()),
        ("site", f.site.clone().unwrap_or_default()),
        ("country", f.country.clone().unwrap_or_default()),
        ("campaign", f.campaign.clone().unwrap_or_default()),
        ("status", f.status.clone().unwrap_or_default()),
    ]
}

/// People and bots per hour or day, as stacked bars.
pub fn hits_chart(series: &[SeriesPoint], bucket: Bucket) -> Chart {
    views_chart(series, bucket, true)
}

/// People per hour or day, as bars (a shared page's chart: `super::share`).
pub fn people_chart(series: &[SeriesPoint], bucket: Bucket) -> Chart {
    views_chart(series, bucket, false)
}

fn views_chart(series: &[SeriesPoint], bucket: Bucket, with_bots: bool) -> Chart {
    let labels: Vec<String> = series
        .iter()
        .map(|p| match bucket {
            Bucket::Hour => p.start.format("%d %H:00").to_string(),
            Bucket::Day => p.start.format("%m-%d").to_string(),
        })
        .collect();
    let bars = |name: &str, color: &str, pick: fn(&SeriesPoint) -> i64| {
        Bar::new()
            .name(name)
            .stack("hits")
            .item_style(ItemStyle::new().color(color))
            .data(series.iter().map(pick).collect::<Vec<_>>())
    };
    let chart = Chart::new()
        .tooltip(Tooltip::new().trigger(Trigger::Axis))
        .legend(Legend::new().bottom(0))
        .grid(Grid::new().left(56).right(16).top(16).bottom(48))
        .x_axis(Axis::new().type_(AxisType::Category).data(labels))
        .y_axis(Axis::new().type_(AxisType::Value).min_interval(1))
        .series(bars(&t!("traffic-people-title"), PEOPLE, |p| p.human));
    if with_bots {
        chart.series(bars(&t!("traffic-bots-title"), BOTS, |p| p.bot))
    } else {
        chart
    }
}

/// Bot hits by source, largest first.
pub fn sources_chart(stats: &TrafficStats) -> Chart {
    ranked_chart(
        stats
            .by_source
            .iter()
            .map(|(s, n)| (s.clone(), *n))
            .collect(),
    )
}

/// Bot hits by category, largest first.
pub fn categories_chart(stats: &TrafficStats) -> Chart {
    ranked_chart(
        stats
            .by_category
            .iter()
            .map(|(c, n)| (c.to_string(), *n))
            .collect(),
    )
}

/// Horizontal bars of bot hits, the largest on top.
fn ranked_chart(mut sources: Vec<(String, i64)>) -> Chart {
    sources.sort_by_key(|(_, n)| *n);
    Chart::new()
        .tooltip(Tooltip::new().trigger(Trigger::Axis))
        .grid(Grid::new().left(96).right(24).top(8).bottom(24))
        .x_axis(Axis::new().type_(AxisType::Value).min_interval(1))
        .y_axis(
            Axis::new()
                .type_(AxisType::Category)
                .data(sources.iter().map(|(s, _)| s.clone()).collect()),
        )
        .series(
            Bar::new()
                .name(t!("traffic-bot-hits"))
                .item_style(ItemStyle::new().color(BOTS))
                .data(sources.iter().map(|(_, n)| *n).collect::<Vec<_>>()),
        )
}

/// "+12 % vs the previous period", or nothing when there was nothing before.
pub(crate) fn change(now: i64, before: i64) -> String {
    if before == 0 {
        return if now == 0 {
            String::new()
        } else {
            t!("traffic-change-new")
        };
    }
    let pct = (now - before) as f64 * 100.0 / before as f64;
    t!(
        "traffic-change",
        pct = format!("{pct:+.0}"),
        before = before
    )
}

#[component]
pub fn TrafficPage() -> impl IntoView {
    let query = use_query_map();
    let filters = Memo::new(move |_| {
        query.with(|q| {
            let get = |k: &str| q.get(k).filter(|v| !v.is_empty());
            Filters {
                range: get("range"),
                from: get("from"),
                to: get("to"),
                kind: get("type"),
                category: get("category"),
                source: get("source"),
                site: get("site"),
                country: get("country"),
                campaign: get("campaign"),
                status: get("status"),
            }
        })
    });
    let data = Resource::new(
        move || filters.get(),
        |f| {
            traffic_dashboard(
                f.range, f.from, f.to, f.kind, f.category, f.source, f.site, f.country, f.campaign,
                f.status,
            )
        },
    );
    view! {
        <Title text=t!("nav-traffic") />
        <h1>{t!("nav-traffic")}</h1>
        {move || view! { <FilterBar filters=filters.get() /> }}
        <Transition fallback=|| view! { <p class="muted">{t!("loading")}</p> }>
            {move || match data.get() {
                Some(Err(e)) => view! { <p class="error" role="alert" data-testid="traffic-error">{e.explain(current())}</p> }.into_any(),
                Some(Ok(d)) => view! {
                    <SiteChips dashboard=d.clone() filters=filters.get() />
                    <Figures dashboard=d.clone() />
                    <TopPages dashboard=d.clone() filters=filters.get() />
                    <PeopleLists dashboard=d.clone() />
                    <Countries dashboard=d.clone() filters=filters.get() />
                    <Campaigns dashboard=d.clone() filters=filters.get() />
                    <goals::Goals dashboard=d.clone() />
                    <answers::Answers dashboard=d.clone() filters=filters.get() />
                    <answers::AiVisibility dashboard=d />
                }
                    .into_any(),
                None => ().into_any(),
            }}
        </Transition>
        <LiveStrip />
        <TrafficCharts data />
    }
}

/// Hits over time, and bots by category and by source: charts with their words below.
#[component]
fn TrafficCharts(data: Resource<Result<Dashboard, crate::api::AppError>>) -> impl IntoView {
    let loaded = move || data.get().and_then(Result::ok);
    let hits = Signal::derive(move || loaded().map(|d| hits_chart(&d.series, d.bucket)));
    let sources = Signal::derive(move || {
        loaded()
            .filter(|d| !d.current.by_source.is_empty())
            .map(|d| sources_chart(&d.current))
    });
    let categories = Signal::derive(move || {
        loaded()
            .filter(|d| !d.current.by_category.is_empty())
            .map(|d| categories_chart(&d.current))
    });
    view! {
        <section class="card">
            <h2>{t!("traffic-over-time")}</h2>
            <EChart id="traffic-hits-chart" chart=hits />
            <p class="muted small" data-testid="hits-chart-text">
                <Transition fallback=|| ()>
                    {move || Suspend::new(async move { data.await.ok().map(|d| series_text(&d.series)) })}
                </Transition>
            </p>
        </section>
        <section class="card">
            <h2>{t!("traffic-by-category")}</h2>
            <EChart id="traffic-categories-chart" chart=categories height=180 />
            <p class="muted small" data-testid="categories-chart-text">
                <Transition fallback=|| ()>
                    {move || Suspend::new(async move {
                        data.await.ok().map(|d| counts_text(d.current.by_category.iter().map(|(c, n)| (bot_category(*c), *n))))
                    })}
                </Transition>
            </p>
        </section>
        <section class="card">
            <h2>{t!("traffic-by-source")}</h2>
            <EChart id="traffic-sources-chart" chart=sources height=220 />
            <p class="muted small" data-testid="sources-chart-text">
                <Transition fallback=|| ()>
                    {move || Suspend::new(async move {
                        data.await.ok().map(|d| counts_text(d.current.by_source.iter().map(|(s, n)| (s.clone(), *n))))
                    })}
                </Transition>
            </p>
        </section>
    }
}

/// The hits chart in words (its text equivalent): the totals, and the busiest point.
pub fn series_text(series: &[SeriesPoint]) -> String {
    let people: i64 = series.iter().map(|p| p.human).sum();
    let bots: i64 = series.iter().map(|p| p.bot).sum();
    match series
        .iter()
        .max_by_key(|p| (p.human + p.bot, std::cmp::Reverse(p.start)))
    {
        Some(peak) if people + bots > 0 => t!(
            "traffic-series-text",
            people = people,
            bots = bots,
            peak = peak.start.format("%Y-%m-%d %H:%M").to_string(),
            peak_hits = peak.human + peak.bot
        ),
        _ => t!("traffic-no-views"),
    }
}

/// A bar chart of counts in words: largest first.
pub fn counts_text(counts: impl IntoIterator<Item = (String, i64)>) -> String {
    let mut counts: Vec<(String, i64)> = counts.into_iter().filter(|(_, n)| *n > 0).collect();
    if counts.is_empty() {
        return t!("traffic-no-bots");
    }
    counts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let parts: Vec<String> = counts
        .iter()
        .map(|(name, n)| format!("{name} {n}"))
        .collect();
    format!("{}.", parts.join(", "))
}

/// People and bots per minute over the last hour, unwritten hits included.
pub fn live_chart(minutes: &[LiveMinute]) -> Chart {
    let series = minutes
        .iter()
        .map(|m| (m.minute.format("%H:%M").to_string(), (m.human, m.bot)))
        .collect::<Vec<_>>();
    Chart::new()
        .tooltip(Tooltip::new().trigger(Trigger::Axis))
        .grid(Grid::new().left(40).right(8).top(8).bottom(24))
        .x_axis(
            Axis::new()
                .type_(AxisType::Category)
                .data(series.iter().map(|(l, _)| l.clone()).collect()),
        )
        .y_axis(Axis::new().type_(AxisType::Value).min_interval(1))
        .series(
            Bar::new()
                .name(t!("traffic-people-title"))
                .stack("live")
                .item_style(ItemStyle::new().color(PEOPLE))
                .data(series.iter().map(|(_, (h, _))| *h).collect::<Vec<_>>()),
        )
        .series(
            Bar::new()
                .name(t!("traffic-bots-title"))
                .stack("live")
                .item_style(ItemStyle::new().color(BOTS))
                .data(series.iter().map(|(_, (_, b))| *b).collect::<Vec<_>>()),
        )
}

/// The last hour, refreshed every ten seconds, including hits this server has not flushed.
#[component]
fn LiveStrip() -> impl IntoView {
    let tick = use_ticker(10_000);
    let minutes = Resource::new(move || tick.get(), |_| traffic_live());
    let chart = Signal::derive(move || minutes.get().and_then(Result::ok).map(|m| live_chart(&m)));
    let summary = move || {
        minutes.get().map(|result| match result {
            Ok(m) => {
                let human: i64 = m.iter().map(|x| x.human).sum();
                let bot: i64 = m.iter().map(|x| x.bot).sum();
                let unflushed: i64 = m.iter().map(|x| x.unflushed).sum();
                view! {
                    <p class="muted" data-testid="live-total" data-human=human data-bot=bot data-unflushed=unflushed>
                        {t!("traffic-live-text", total = human + bot, human = human, bot = bot, unflushed = unflushed)}
                    </p>
                }
                    .into_any()
            }
            Err(e) => view! { <p class="error">{e.explain(current())}</p> }.into_any(),
        })
    };
    view! {
        <section class="card">
            <h2>{t!("traffic-live")}</h2>
            <Transition fallback=|| ()>{summary}</Transition>
            <EChart id="traffic-live-chart" chart=chart height=140 />
        </section>
    }
}

#[component]
fn FilterBar(filters: Filters) -> impl IntoView {
    let active = filters.active_range();
    let kind = filters.kind.clone().unwrap_or_else(|| "all".into());
    let presets = Preset::ALL
        .into_iter()
        .map(|p| {
            let class = if active == Some(p) { "chip on" } else { "chip" };
            view! { <a class=class href=filters.with_range(p) data-testid=format!("range-{}", p.as_str())>{range_preset(p)}</a> }
        })
        .collect_view();
    let kinds = [
        ("all", t!("traffic-everyone-title")),
        ("human", t!("traffic-people-title")),
        ("bot", t!("traffic-bots-title")),
    ]
        .into_iter()
        .map(|(k, label)| {
            let class = if kind == k { "chip on" } else { "chip" };
            view! { <a class=class href=filters.with_kind(k) data-testid=format!("type-{k}")>{label}</a> }
        })
        .collect_view();
    let category_note = filters.category.clone().map(|category| {
        view! {
            <span class="chip on" data-testid="category-filter">{t!("traffic-category-chip")}" " {category}</span>
            <a href=filters.with_category(None)>{t!("traffic-all-categories")}</a>
        }
    });
    let source_note = filters.source.clone().map(|source| {
        view! {
            <span class="chip on" data-testid="source-filter">{t!("traffic-source-chip")}" " {source}</span>
            <a href=filters.with_source(None)>{t!("traffic-all-sources")}</a>
        }
    });
    view! {
        <section class="card" data-testid="traffic-filters">
            <div class="chips">{presets}</div>
            <div class="chips">{kinds} {category_note} {source_note}</div>
            <Form method="GET" action="/traffic" attr:class="inline-form">
                <label for="t-from">{t!("failed-filter-from")}</label>
                <input id="t-from" name="from" type="date" value=filters.from.clone().unwrap_or_default() />
                <label for="t-to">{t!("traffic-to")}</label>
                <input id="t-to" name="to" type="date" value=filters.to.clone().unwrap_or_default() />
                <input type="hidden" name="type" value=filters.kind.clone().unwrap_or_default() />
                <input type="hidden" name="category" value=filters.category.clone().unwrap_or_default() />
                <input type="hidden" name="source" value=filters.source.clone().unwrap_or_default() />
                <input type="hidden" name="site" value=filters.site.clone().unwrap_or_default() />
                <input type="hidden" name="country" value=filters.country.clone().unwrap_or_default() />
                <input type="hidden" name="campaign" value=filters.campaign.clone().unwrap_or_default() />
                <input type="hidden" name="status" value=filters.status.clone().unwrap_or_default() />
                <button type="submit">{t!("traffic-show")}</button>
            </Form>
        </section>
    }
}

#[component]
fn Figures(dashboard: Dashboard) -> impl IntoView {
    let (now, before) = (&dashboard.current, &dashboard.previous);
    let figures = [
        (
            "page_views",
            t!("traffic-page-views"),
            now.page_views,
            before.page_views,
        ),
        ("visits", t!("traffic-visits"), now.visits, before.visits),
        (
            "unique_ips",
            t!("traffic-unique-ips"),
            now.unique_ips,
            before.unique_ips,
        ),
        (
            "unique_pages",
            t!("traffic-unique-pages"),
            now.unique_pages,
            before.unique_pages,
        ),
        ("human", t!("traffic-people-title"), now.human, before.human),
        ("bot", t!("traffic-bots-title"), now.bot, before.bot),
    ];
    view! {
        <p class="muted" data-testid="traffic-range">
            {t!("traffic-range-shown", from = dashboard.from.to_string(), to = dashboard.to.to_string(), zone = dashboard.timezone.clone())}
        </p>
        {(now.generated > 0).then(|| view! {
            <p class="warn" data-testid="generated-note">
                {t!("traffic-generated", count = now.generated, command = "bulwark traffic generate --remove")}
            </p>
        })}
        <section class="figures">
            {figures
                .into_iter()
                .map(|(key, label, value, previous)| {
                    view! {
                        <div class="card figure" data-testid=format!("fig-{key}")>
                            <div class="muted">{label}</div>
                            <div class="value">{value}</div>
                            <div class="muted small">{change(value, previous)}</div>
                        </div>
                    }
                })
                .collect_view()}
        </section>
    }
}

/// Which site the figures are of: all, or one (each a link); and whether anyone may report.
#[component]
fn SiteChips(dashboard: Dashboard, filters: Filters) -> impl IntoView {
    let chip = |label: String, key: String, href: String, on: bool| {
        let class = if on { "chip on" } else { "chip" };
        view! { <a class=class href=href data-site=key>{label}</a> }
    };
    let mut chips = vec![chip(
        t!("traffic-all-sites-title"),
        String::new(),
        filters.with_site(None),
        filters.site.is_none(),
    )];
    for (i, host) in dashboard.sites.iter().enumerate() {
        let label = if i == 0 {
            t!("sites-this-console", host = host.clone())
        } else {
            host.clone()
        };
        chips.push(chip(
            label,
            host.clone(),
            filters.with_site(Some(host)),
            filters.site.as_deref() == Some(host),
        ));
    }
    view! {
        <section class="card" data-testid="sites">
            <div class="chips">{chips}</div>
            {if dashboard.open {
                view! {
                    <p class="muted small" data-testid="open-collect">
                        {t!("traffic-open")}" "
                        <a href="/traffic/sites">{t!("traffic-register-sites")}</a>
                    </p>
                }
                    .into_any()
            } else {
                view! {
                    <p class="muted small">
                        {t!("traffic-closed")}" " <a href="/traffic/sites">{t!("traffic-sites-link")}</a>
                    </p>
                }
                    .into_any()
            }}
        </section>
    }
}

/// One row of a ranked list: its key (`data-name`), what it shows (a link when it narrows the
/// page) and its page views.
struct RankedRow {
    key: String,
    label: String,
    href: Option<String>,
    views: i64,
}

impl RankedRow {
    /// A name shown as it is, keyed by itself.
    fn plain(r: crate::views::traffic::Ranked) -> RankedRow {
        RankedRow {
            key: r.name.clone(),
            label: r.name,
            href: None,
            views: r.views,
        }
    }
}

/// A ranked list as a compact table, or the words for an empty one.
#[component]
fn RankedTable(rows: Vec<RankedRow>) -> impl IntoView {
    if rows.is_empty() {
        return view! { <p class="muted small">{t!("traffic-none-in-range")}</p> }.into_any();
    }
    let rows = rows
        .into_iter()
        .map(|r| {
            let label = match r.href {
                Some(href) => view! { <a href=href>{r.label}</a> }.into_any(),
                None => r.label.into_any(),
            };
            view! { <tr data-name=r.key><td>{label}</td><td class="num">{r.views}</td></tr> }
        })
        .collect_view();
    view! {
        <table tabindex="0" class="table compact">
            <tbody>{rows}</tbody>
        </table>
    }
    .into_any()
}

/// What a card narrows the page to, with a link back to everything.
#[component]
fn FilterChip(
    testid: &'static str,
    label: String,
    clear: String,
    clear_label: String,
) -> impl IntoView {
    view! {
        <p class="chips" data-testid=testid>
            <span class="chip on">{label}</span>
            <a class="chip" href=clear>{clear_label}</a>
        </p>
    }
}

/// People's page views by country, each a link that narrows the page to it; the country the
/// page is narrowed to, with a link back to all.
#[component]
fn Countries(dashboard: Dashboard, filters: Filters) -> impl IntoView {
    let chosen = filters.country.clone().map(|code| {
        view! {
            <FilterChip
                testid="country-filter"
                label=t!("traffic-country-filter", country = country_label(&code))
                clear=filters.with_country(None)
                clear_label=t!("traffic-country-clear")
            />
        }
    });
    let rows = dashboard
        .current
        .countries
        .into_iter()
        .map(|r| {
            let code = if r.name.is_empty() {
                "unknown".to_string()
            } else {
                r.name.clone()
            };
            RankedRow {
                href: Some(filters.with_country(Some(&code))),
                label: country_label(&r.name),
                key: code,
                views: r.views,
            }
        })
        .collect();
    view! {
        <section class="card" data-testid="countries">
            <h2>{t!("traffic-countries")}</h2>
            <p class="muted small">{t!("traffic-countries-explained")}</p>
            {chosen}
            <RankedTable rows />
        </section>
    }
}

/// People's arrivals by channel, and their page views of tagged URLs by campaign, each
/// campaign a link that narrows the page to it.
#[component]
fn Campaigns(dashboard: Dashboard, filters: Filters) -> impl IntoView {
    let TrafficStats {
        campaigns,
        channels,
        ..
    } = dashboard.current;
    let chosen = filters.campaign.clone().map(|name| {
        view! {
            <FilterChip
                testid="campaign-filter"
                label=t!("traffic-campaign-filter", campaign = name)
                clear=filters.with_campaign(None)
                clear_label=t!("traffic-campaign-clear")
            />
        }
    });
    let channels = channels
        .into_iter()
        .map(|r| RankedRow {
            label: channel_label(&r.name),
            ..RankedRow::plain(r)
        })
        .collect();
    let campaigns = campaigns
        .into_iter()
        .map(|c| RankedRow {
            label: [c.source.as_str(), c.medium.as_str(), c.campaign.as_str()]
                .map(|t| if t.is_empty() { "–" } else { t })
                .join(" / "),
            href: (!c.campaign.is_empty()).then(|| filters.with_campaign(Some(&c.campaign))),
            key: c.campaign,
            views: c.views,
        })
        .collect();
    view! {
        <section class="card" data-testid="campaigns">
            <h2>{t!("traffic-campaigns")}</h2>
            <p class="muted small">{t!("traffic-campaigns-explained")}</p>
            {chosen}
            <div class="lists">
                <div class="list" data-testid="channels">
                    <h3>{t!("traffic-channels")}</h3>
                    <RankedTable rows=channels />
                </div>
                <div class="list" data-testid="campaign-list">
                    <h3>{t!("traffic-campaign-tags")}</h3>
                    <RankedTable rows=campaigns />
                </div>
            </div>
        </section>
    }
}

/// A channel's word in the reader's language.
pub(crate) fn channel_label(name: &str) -> String {
    use crate::domain::channels::Channel;
    match name.parse::<Channel>() {
        Ok(Channel::Direct) => t!("traffic-channel-direct"),
        Ok(Channel::Search) => t!("traffic-channel-search"),
        Ok(Channel::Social) => t!("traffic-channel-social"),
        Ok(Channel::AiAssistant) => t!("traffic-channel-ai-assistant"),
        Ok(Channel::Email) => t!("traffic-channel-email"),
        Ok(Channel::Paid) => t!("traffic-channel-paid"),
        Ok(Channel::Referral) => t!("traffic-channel-referral"),
        Err(_) => name.to_string(),
    }
}

/// A country code with its flag (regional indicator letters, drawn by the reader's fonts), or
/// the word for unknown.
pub(crate) fn country_label(code: &str) -> String {
    let letters: Option<String> = (code.len() == 2)
        .then(|| {
            code.chars()
                .map(|c| {
                    char::from_u32(
                        0x1F1E6 + (c.to_ascii_uppercase() as u32).wrapping_sub('A' as u32),
                    )
                })
                .collect()
        })
        .flatten();
    match letters {
        Some(flag) => format!("{flag} {}", code.to_ascii_uppercase()),
        None => t!("traffic-country-unknown"),
    }
}

/// Where people came from and what they used, as short ranked tables.
#[component]
fn PeopleLists(dashboard: Dashboard) -> impl IntoView {
    let people = dashboard.current.people;
    let several_sites = people
        .landing_pages
        .iter()
        .map(|r| crate::domain::sites::split_page_key(&r.name).0)
        .collect::<std::collections::BTreeSet<_>>()
        .len()
        > 1;
    let landing = people
        .landing_pages
        .into_iter()
        .map(|r| {
            let (site, path) = crate::domain::sites::split_page_key(&r.name);
            let name = if several_sites {
                format!("{site}{path}")
            } else {
                path.to_string()
            };
            crate::views::traffic::Ranked { name, ..r }
        })
        .collect();
    let referrers = people
        .referrers
        .into_iter()
        .map(|r| crate::views::traffic::Ranked {
            name: if r.name.is_empty() {
                t!("traffic-direct")
            } else {
                r.name
            },
            ..r
        })
        .collect();
    let lists = [
        ("referrers", t!("traffic-referrers"), referrers),
        ("landing", t!("traffic-landing"), landing),
        ("browsers", t!("traffic-browsers"), people.browsers),
        ("systems", t!("traffic-systems"), people.systems),
        ("devices", t!("traffic-devices"), people.devices),
    ];
    view! {
        <section class="card" data-testid="people-lists">
            <h2>{t!("traffic-people-title")}</h2>
            <p class="muted small">{t!("traffic-people-explained")}</p>
            <RankedLists prefix="people" lists=lists.into() />
        </section>
    }
}

/// Short ranked tables side by side, each titled and named `{prefix}-{key}` for tests.
#[component]
pub fn RankedLists(
    prefix: &'static str,
    lists: Vec<(&'static str, String, Vec<crate::views::traffic::Ranked>)>,
) -> impl IntoView {
    view! {
        <div class="lists">
            {lists
                .into_iter()
                .map(|(key, title, rows)| {
                    view! {
                        <div class="list" data-testid=format!("{prefix}-{key}")>
                            <h3>{title}</h3>
                            <RankedTable rows=rows.into_iter().map(RankedRow::plain).collect() />
                        </div>
                    }
                })
                .collect_view()}
        </div>
    }
}

/// Bot hits per category or source, each a link that filters by it (`data-key` names it).
#[component]
fn BotChips(
    title: String,
    testid: &'static str,
    chips: Vec<(String, i64, String, String)>,
) -> impl IntoView {
    view! {
        <section class="card">
            <h2>{title}</h2>
            {if chips.is_empty() {
                view! { <p class="muted">{t!("traffic-no-bots")}</p> }.into_any()
            } else {
                view! {
                    <div class="chips" data-testid=testid>
                        {chips
                            .into_iter()
                            .map(|(key, n, href, label)| {
                                let text = format!("{label} {n}");
                                view! { <a class="chip" href=href data-key=key>{text}</a> }
                            })
                            .collect_view()}
                    </div>
                }
                    .into_any()
            }}
        </section>
    }
}

#[component]
fn TopPages(dashboard: Dashboard, filters: Filters) -> impl IntoView {
    let top = dashboard.current.top_pages.clone();
    let categories = dashboard
        .current
        .by_category
        .iter()
        .map(|(category, n)| {
            let href = filters.with_category(Some(category.as_str()));
            (category.to_string(), *n, href, bot_category(*category))
        })
        .collect();
    let sources = dashboard
        .current
        .by_source
        .iter()
        .map(|(source, n)| {
            let href = filters.with_source(Some(source));
            (source.clone(), *n, href, source.clone())
        })
        .collect();
    let listed = if top.is_empty() {
        view! { <p class="muted">{t!("traffic-no-views")}</p> }.into_any()
    } else {
        top_pages_table(top, &filters).into_any()
    };
    view! {
        <BotChips title=t!("traffic-bot-categories") testid="categories" chips=categories />
        <BotChips title=t!("traffic-bot-sources") testid="sources" chips=sources />
        <section class="card">
            <h2>{t!("traffic-top-pages")}</h2>
            <p class="muted small">{t!("traffic-top-pages-explained")}" " <a href="/traffic/hits">{t!("traffic-all-hits")}</a></p>
            {listed}
        </section>
    }
}

/// The pages most viewed, each with its people and bots as bars and a link to its hits.
fn top_pages_table(top: Vec<TopPage>, filters: &Filters) -> impl IntoView {
    // When the list holds pages of several sites, a path alone does not say whose page it is.
    let show_host = top.iter().any(|p| p.site != top[0].site);
    let max = top.iter().map(|p| p.count).max().unwrap_or(1).max(1);
    let rows = top
        .into_iter()
        .map(|p| top_page_row(p, filters, show_host, max))
        .collect_view();
    view! {
        <table tabindex="0" class="table" data-testid="top-pages">
            <thead>
                <tr><th>{t!("traffic-page")}</th><th>{t!("traffic-hits")}</th><th>{t!("traffic-people-title")}</th><th>{t!("traffic-bots-title")}</th><th></th></tr>
            </thead>
            <tbody>{rows}</tbody>
        </table>
    }
}

fn top_page_row(p: TopPage, filters: &Filters, show_host: bool, max: i64) -> impl IntoView {
    let human_pct = p.human * 100 / max;
    let bot_pct = p.bot * 100 / max;
    let shown = if show_host {
        format!("{}{}", p.site, p.path)
    } else {
        p.path.clone()
    };
    let only_this = crate::views::traffic::HitsFilter {
        range: filters.range.clone(),
        from: filters.from.clone(),
        to: filters.to.clone(),
        kind: filters.kind.clone(),
        category: filters.category.clone(),
        source: filters.source.clone(),
        site: Some(p.site.clone()),
        path: Some(p.path.clone()),
        ..Default::default()
    };
    let hits = format!(
        "/traffic/hits{}",
        crate::pages::traffic_hits::hits_query_string(&only_this, None)
    );
    view! {
        <tr data-path=p.path.clone()>
            <td><a href=hits><code>{shown}</code></a></td>
            <td>{p.count}</td>
            <td>{p.human}</td>
            <td>{p.bot}</td>
            <td class="bar-cell">
                <span class="bar" style=format!("width:{human_pct}%;background:{PEOPLE}")></span>
                <span class="bar" style=format!("width:{bot_pct}%;background:{BOTS}")></span>
            </td>
        </tr>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charts_say_in_words_what_they_draw() {
        let at = |h: u32| {
            chrono::TimeZone::with_ymd_and_hms(&chrono::Utc, 2026, 12, 2, h, 0, 0).unwrap()
        };
        let series = [
            SeriesPoint {
                start: at(1),
                human: 3,
                bot: 1,
            },
            SeriesPoint {
                start: at(2),
                human: 10,
                bot: 5,
            },
        ];
        assert_eq!(
            series_text(&series),
            "13 page views by people and 6 by bots; the busiest point, 2026-12-02 02:00 UTC, had 15."
        );
        assert_eq!(series_text(&[]), "No page views in this range.");
        assert_eq!(
            counts_text([
                ("ai".to_string(), 2),
                ("search".to_string(), 9),
                ("seo".to_string(), 0)
            ]),
            "search 9, ai 2."
        );
        assert_eq!(counts_text(Vec::new()), "No bot hits in this range.");
    }

    #[test]
    fn links_keep_the_other_filters() {
        let f = Filters {
            range: Some("30d".into()),
            kind: Some("bot".into()),
            ..Filters::default()
        };
        assert_eq!(f.with_range(Preset::Today), "/traffic?range=today&type=bot");
        assert_eq!(f.with_kind("all"), "/traffic?range=30d");
        assert_eq!(
            f.with_source(Some("google")),
            "/traffic?range=30d&type=bot&source=google"
        );
        assert_eq!(Filters::default().href(), "/traffic");
        assert_eq!(f.active_range(), Some(Preset::Last30));
    }

    #[test]
    fn changes_read_as_percentages() {
        assert_eq!(change(150, 100), "+50 % vs the previous period (100)");
        assert_eq!(change(5, 0), "new in this period");
        assert_eq!(change(0, 0), "");
    }
}
