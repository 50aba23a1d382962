//! `/share/{token}`: a site's people's figures for someone without an account
//! (`crate::services::traffic::shares`). The token is the credential: no session, no console
//! navigation, `noindex`; a link that was revoked or has expired is a 404; one with a password
//! asks for it first.

use leptos::prelude::*;
use leptos_meta::{Meta, Title};
use leptos_router::hooks::{use_params_map, use_query_map};

use crate::api::AppError;
use crate::api::share::{SharedAnswer, UnlockShare, shared_view};
use crate::components::chart::EChart;
use crate::components::form::field_error;
use crate::domain::traffic_range::Preset;
use crate::i18n::current;
use crate::i18n::errors::Explain;
use crate::pages::traffic::{RankedLists, change, channel_label, country_label};
use crate::t;
use crate::views::traffic::{Ranked, SeriesPoint, SharedDashboard};

/// The ranges a shared page offers.
const RANGES: [Preset; 4] = [Preset::Today, Preset::Last7, Preset::Last30, Preset::Last90];

#[component]
pub fn SharePage() -> impl IntoView {
    let params = use_params_map();
    let query = use_query_map();
    let token = move || params.with(|p| p.get("token").unwrap_or_default());
    let range = move || query.with(|q| q.get("range"));
    let unlock = ServerAction::<UnlockShare>::new();
    let answer = Resource::new(
        move || (token(), range(), unlock.version().get()),
        |(token, range, _)| shared_view(token, range),
    );
    view! {
        <Title text=t!("share-title") />
        <Meta name="robots" content="noindex, nofollow" />
        <main class="share">
            <Transition fallback=|| view! { <p class="muted">{t!("loading")}</p> }>
                {move || Suspend::new(async move {
                    match answer.await {
                        Err(AppError::NotFound(_)) => {
                            view! { <crate::pages::not_found::NotFound /> }.into_any()
                        }
                        Err(e) => view! { <p class="error" role="alert">{e.explain(current())}</p> }.into_any(),
                        Ok(SharedAnswer::Locked { site }) => {
                            view! { <Locked site token=token() unlock /> }.into_any()
                        }
                        Ok(SharedAnswer::Open(dashboard)) => {
                            view! { <Shared dashboard=*dashboard /> }.into_any()
                        }
                    }
                })}
            </Transition>
        </main>
    }
}

/// The password form of a protected link.
#[component]
fn Locked(site: String, token: String, unlock: ServerAction<UnlockShare>) -> impl IntoView {
    view! {
        <h1>{site}</h1>
        <ActionForm action=unlock attr:class="card form" attr:data-testid="share-password">
            <input type="hidden" name="token" value=token />
            <label for="share-password">{t!("share-password")}</label>
            <input id="share-password" name="password" type="password" autocomplete="off" autofocus />
            <p class="field-error">{field_error(unlock.value(), "password")}</p>
            <button type="submit">{t!("share-open")}</button>
        </ActionForm>
    }
}

#[component]
fn Shared(dashboard: SharedDashboard) -> impl IntoView {
    let d = dashboard;
    let series: Vec<SeriesPoint> = d
        .series
        .iter()
        .map(|p| SeriesPoint {
            start: p.start,
            human: p.views,
            bot: 0,
        })
        .collect();
    let chart = crate::pages::traffic::people_chart(&series, d.bucket);
    let figures = [
        ("people", t!("share-people"), d.people, d.people_before),
        (
            "page_views",
            t!("traffic-page-views"),
            d.page_views,
            d.page_views_before,
        ),
    ];
    view! {
        <h1>{d.site.clone()}</h1>
        <p class="muted" data-testid="traffic-range">
            {t!("traffic-range-shown", from = d.from.to_string(), to = d.to.to_string(), zone = d.timezone.clone())}
        </p>
        <nav class="chips" data-testid="share-ranges">
            {RANGES
                .into_iter()
                .map(|p| {
                    let href = format!("?range={}", p.as_str());
                    view! { <a class="chip" href=href>{crate::i18n::words::range_preset(p)}</a> }
                })
                .collect_view()}
        </nav>
        <section class="figures">
            {figures
                .into_iter()
                .map(|(key, label, value, previous)| view! {
                    <div class="card figure" data-testid=format!("fig-{key}")>
                        <div class="muted">{label}</div>
                        <div class="value">{value}</div>
                        <div class="muted small">{change(value, previous)}</div>
                    </div>
                })
                .collect_view()}
            <div class="card figure" data-testid="fig-bots">
                <div class="muted">{t!("traffic-bots-title")}</div>
                <div class="value">{d.bots}</div>
            </div>
        </section>
        <section class="card">
            <EChart id="share-chart" chart=Signal::derive(move || Some(chart.clone())) />
        </section>
        <Lists dashboard=d />
        <p class="muted small">{t!("share-footer")}</p>
    }
}

/// The people's ranked lists.
#[component]
fn Lists(dashboard: SharedDashboard) -> impl IntoView {
    let d = dashboard;
    let named = |rows: Vec<Ranked>, name: fn(&str) -> String| {
        rows.into_iter()
            .map(|r| Ranked {
                name: name(&r.name),
                views: r.views,
            })
            .collect::<Vec<_>>()
    };
    let referrers = named(d.referrers, |n| {
        if n.is_empty() {
            t!("traffic-direct")
        } else {
            n.to_string()
        }
    });
    let campaigns = d
        .campaigns
        .into_iter()
        .map(|c| Ranked {
            name: format!("{} ({} / {})", c.campaign, c.source, c.medium),
            views: c.views,
        })
        .collect();
    let lists = [
        ("pages", t!("share-pages"), d.pages),
        ("referrers", t!("traffic-referrers"), referrers),
        (
            "channels",
            t!("traffic-channels"),
            named(d.channels, channel_label),
        ),
        (
            "countries",
            t!("traffic-countries"),
            named(d.countries, country_label),
        ),
        ("campaigns", t!("report-campaigns"), campaigns),
        ("browsers", t!("traffic-browsers"), d.browsers),
        ("systems", t!("traffic-systems"), d.systems),
        ("devices", t!("traffic-devices"), d.devices),
    ];
    view! {
        <section class="card" data-testid="share-lists">
            <RankedLists prefix="share" lists=lists.into() />
        </section>
    }
}
