//! Traffic → Sites: the sites' scheduled reports. Everyone reads; admins set and stop them.

use leptos::prelude::*;

use crate::api::traffic::{ReportOff, SetReport};
use crate::components::form::{field_error, other_error};
use crate::domain::traffic_report::Every;
use crate::t;
use crate::views::traffic::{ReportInfo, SiteInfo};

fn every_word(every: Every) -> String {
    match every {
        Every::Day => t!("sites-report-every-day"),
        Every::Week => t!("sites-report-every-week"),
    }
}

/// The reports, each with its stop button for admins.
#[component]
pub(super) fn ReportList(
    reports: Vec<ReportInfo>,
    admin: bool,
    off: ServerAction<ReportOff>,
) -> impl IntoView {
    let rows = reports
        .into_iter()
        .map(|r| {
            let (site, key) = (r.site.clone(), r.site.clone());
            view! {
                <tr data-site=key>
                    <td>{r.site}</td>
                    <td>{every_word(r.every)}</td>
                    <td>{r.to.join(", ")}</td>
                    <td>{r.channels.join(", ")}</td>
                    <td>{admin.then(|| view! {
                        <ActionForm action=off>
                            <input type="hidden" name="site" value=site />
                            <button type="submit" class="link danger">{t!("sites-report-off")}</button>
                        </ActionForm>
                    })}</td>
                </tr>
            }
            .into_any()
        })
        .collect();
    let headers = vec![
        t!("sites-host"),
        t!("sites-report-every"),
        t!("sites-report-to"),
        t!("sites-report-channels"),
    ];
    let body = super::card_table(t!("sites-reports-none"), headers, rows);
    view! {
        <section class="card" data-testid="reports">
            <h2>{t!("sites-reports-heading")}</h2>
            <p class="muted small">{t!("sites-reports-explained")}</p>
            {body}
            <p class="error" role="alert">{other_error(off.value())}</p>
        </section>
    }
}

/// The form setting (or replacing) one site's report.
#[component]
pub(super) fn SetReportForm(sites: Vec<SiteInfo>, set: ServerAction<SetReport>) -> impl IntoView {
    let options = sites
        .into_iter()
        .map(|s| {
            let host = s.host.clone();
            view! { <option value=host>{s.host}</option> }
        })
        .collect_view();
    view! {
        <section class="card">
            <h2>{t!("sites-report-set-heading")}</h2>
            <ActionForm action=set attr:class="form" attr:data-testid="set-report">
                <label for="report-site">{t!("sites-host")}</label>
                <select id="report-site" name="site">{options}</select>
                <p class="field-error">{field_error(set.value(), "host")}</p>
                <label for="report-every">{t!("sites-report-every")}</label>
                <select id="report-every" name="every">
                    <option value="week">{every_word(Every::Week)}</option>
                    <option value="day">{every_word(Every::Day)}</option>
                </select>
                <label for="report-to">{t!("sites-report-to")}</label>
                <input id="report-to" name="to" type="text" autocomplete="off" placeholder=t!("sites-report-to-example") />
                <p class="field-error">{field_error(set.value(), "to")}</p>
                <label for="report-channels">{t!("sites-report-channels")}</label>
                <input id="report-channels" name="channels" type="text" autocomplete="off" />
                <p class="muted small">{t!("sites-report-help")}</p>
                <p class="field-error">{field_error(set.value(), "channels")}</p>
                <button type="submit">{t!("sites-report-save")}</button>
            </ActionForm>
            <p class="error" role="alert">{other_error(set.value())}</p>
        </section>
    }
}
