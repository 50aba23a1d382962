//! Traffic → Sites: which sites may report page views, the snippet each embeds, the
//! addresses each does not count, the sites' goals, scheduled reports and share links. Everyone reads; admins register,
//! remove and edit.

use crate::t;
use leptos::prelude::*;

use crate::i18n::current;
use crate::i18n::errors::Explain;
use leptos_meta::Title;

mod goals;
mod reports;
mod shares;

use crate::api::traffic::{
    AddGoal, AddSite, CreateShare, RemoveGoal, RemoveSite, ReportOff, RevokeShare, SetReport,
    SetSiteExclusions, traffic_sites,
};
use crate::components::admin_list::AdminOnly;
use crate::components::form::{field_error, other_error};
use crate::components::layout::use_is_admin;
use crate::views::traffic::SiteInfo;

#[component]
pub fn TrafficSitesPage() -> impl IntoView {
    let is_admin = use_is_admin();
    let add = ServerAction::<AddSite>::new();
    let remove = ServerAction::<RemoveSite>::new();
    let exclusions = ServerAction::<SetSiteExclusions>::new();
    let add_goal = ServerAction::<AddGoal>::new();
    let remove_goal = ServerAction::<RemoveGoal>::new();
    let set_report = ServerAction::<SetReport>::new();
    let report_off = ServerAction::<ReportOff>::new();
    let make_share = ServerAction::<CreateShare>::new();
    let revoke_share = ServerAction::<RevokeShare>::new();
    // The cards share one action; its answer belongs to the site it was sent for.
    let exclusions_for = RwSignal::new(None::<String>);
    Effect::new(move || {
        if let Some(sent) = exclusions.input().get() {
            exclusions_for.set(Some(sent.host));
        }
    });
    let page = Resource::new(
        move || {
            (
                add.version().get(),
                remove.version().get(),
                exclusions.version().get(),
                add_goal.version().get(),
                remove_goal.version().get(),
                set_report.version().get(),
                report_off.version().get(),
                make_share.version().get(),
                revoke_share.version().get(),
            )
        },
        |_| traffic_sites(),
    );
    view! {
        <Title text=t!("sites-title") />
        <h1>{t!("sites-title")}</h1>
        <p><a href="/traffic">{t!("sites-back")}</a></p>
        <Transition fallback=|| view! { <p class="muted">{t!("loading")}</p> }>
            {move || Suspend::new(async move {
                let admin = is_admin.await;
                match page.await {
                    Err(e) => view! { <p class="error" role="alert">{e.explain(current())}</p> }.into_any(),
                    Ok(p) => {
                        let mode = if p.open {
                            view! { <p class="warn" data-testid="sites-open">{t!("sites-open")}</p> }.into_any()
                        } else {
                            view! { <p class="muted" data-testid="sites-closed">{t!("sites-closed")}</p> }.into_any()
                        };
                        let console_url = p.console_url.clone();
                        let goal_sites = p.sites.clone();
                        let report_sites = p.sites.clone();
                        let share_sites = p.sites.clone();
                        view! {
                            {mode}
                            <p class="muted small">
                                {t!("sites-console-users")}
                            </p>
                            <div data-testid="site-list">
                                {p
                                    .sites
                                    .into_iter()
                                    .map(|site| view! { <SiteCard site=site console_url=console_url.clone() admin=admin remove=remove exclusions=exclusions exclusions_for=exclusions_for.read_only() /> })
                                    .collect_view()}
                            </div>
                            <goals::GoalList goals=p.goals admin=admin remove=remove_goal />
                            {admin.then(|| view! { <goals::AddGoalForm sites=goal_sites add=add_goal /> })}
                            <reports::ReportList reports=p.reports admin=admin off=report_off />
                            {admin.then(|| view! { <reports::SetReportForm sites=report_sites set=set_report /> })}
                            <shares::ShareList shares=p.shares admin=admin revoke=revoke_share />
                            {admin.then(|| view! { <shares::MakeShareForm sites=share_sites make=make_share /> })}
                        }
                            .into_any()
                    }
                }
            })}
        </Transition>
        <p class="error" role="alert">{other_error(remove.value())}</p>
        <AdminOnly is_admin><RegisterSite add /></AdminOnly>
    }
}

/// A card's compact table under `headers` (and a last column for admins' buttons), or `none`
/// when it has no rows.
fn card_table(none: String, headers: Vec<String>, rows: Vec<AnyView>) -> AnyView {
    if rows.is_empty() {
        return view! { <p class="muted small">{none}</p> }.into_any();
    }
    let headers = headers
        .into_iter()
        .map(|h| view! { <th>{h}</th> })
        .collect_view();
    view! {
        <table tabindex="0" class="table compact">
            <thead><tr>{headers}<th></th></tr></thead>
            <tbody>{rows}</tbody>
        </table>
    }
    .into_any()
}

#[component]
fn RegisterSite(add: ServerAction<AddSite>) -> impl IntoView {
    view! {
        <section class="card">
            <h2>{t!("sites-register-heading")}</h2>
            <ActionForm action=add attr:class="form inline-form" attr:data-testid="add-site">
                <div>
                    <label for="site-host">{t!("sites-host")}</label>
                    <input id="site-host" name="host" type="text" autocomplete="off" placeholder="shop.example.com" />
                    <p class="field-error">{field_error(add.value(), "host")}</p>
                </div>
                <div><button type="submit">{t!("sites-register")}</button></div>
            </ActionForm>
            <p class="error" role="alert">{other_error(add.value())}</p>
        </section>
    }
}

#[component]
fn SiteCard(
    site: SiteInfo,
    console_url: String,
    admin: bool,
    remove: ServerAction<RemoveSite>,
    exclusions: ServerAction<SetSiteExclusions>,
    exclusions_for: ReadSignal<Option<String>>,
) -> impl IntoView {
    let snippet = format!("<script async src=\"{console_url}/collect.js\"></script>");
    let pixel =
        format!("<img src=\"{console_url}/api/collect.gif\" alt=\"\" width=\"1\" height=\"1\">");
    let title = if site.console {
        t!("sites-this-console", host = site.host.clone())
    } else {
        site.host.clone()
    };
    let host = site.host.clone();
    let excluded_id = format!("excluded-{}", site.host);
    let shown_exclusions = if site.excluded.is_empty() {
        t!("sites-excluded-none")
    } else {
        site.excluded.replace('\n', ", ")
    };
    view! {
        <section class="card" data-site=site.host.clone()>
            <h2>{title}</h2>
            {if site.console {
                view! { <p class="muted small">{t!("sites-console-counted")}</p> }.into_any()
            } else {
                view! {
                    <p class="muted small">{t!("sites-embed")}</p>
                    <pre tabindex="0" class="snippet" data-testid="snippet"><code>{snippet}</code></pre>
                    <p class="muted small">{t!("sites-pixel")}" " <code>{pixel}</code></p>
                }
                    .into_any()
            }}
            <p class="small">{t!("sites-not-counted")}" " <span data-testid="excluded">{shown_exclusions}</span></p>
            {admin.then(|| {
                let host_for_remove = host.clone();
                let this_card = host.clone();
                let error = field_error(exclusions.value(), "excluded");
                let error = move || {
                    exclusions_for
                        .with(|sent| sent.as_deref() == Some(this_card.as_str()))
                        .then(error)
                        .flatten()
                };
                view! {
                    <ActionForm action=exclusions attr:class="form">
                        <input type="hidden" name="host" value=host.clone() />
                        <label for=excluded_id.clone()>{t!("sites-excluded-label")}</label>
                        <textarea id=excluded_id name="excluded" rows="3">{site.excluded.clone()}</textarea>
                        <p class="field-error">{error}</p>
                        <button type="submit">{t!("sites-excluded-save")}</button>
                    </ActionForm>
                    {(!site.console).then(|| view! {
                        <ActionForm action=remove>
                            <input type="hidden" name="host" value=host_for_remove />
                            <button type="submit" class="link danger">{t!("sites-remove")}</button>
                        </ActionForm>
                    })}
                }
            })}
        </section>
    }
}
