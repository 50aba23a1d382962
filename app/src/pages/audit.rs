//! The audit log: who changed what, newest first (sign-ins are left out).

use leptos::prelude::*;

use crate::i18n::current;
use crate::i18n::errors::Explain;
use leptos_meta::Title;

use crate::api::failed::audit_entries;
use crate::components::status::when;
use crate::t;

#[component]
pub fn AuditPage() -> impl IntoView {
    let entries = Resource::new(|| (), |_| audit_entries(None));
    view! {
        <Title text=t!("audit-title") />
        <h1>{t!("audit-title")}</h1>
        <Transition fallback=|| view! { <p class="muted">{t!("loading")}</p> }>
            {move || Suspend::new(async move {
                match entries.await {
                    Err(e) => view! { <p class="error">{e.explain(current())}</p> }.into_any(),
                    Ok(rows) => view! {
                        <table tabindex="0" class="table card" data-testid="audit">
                            <thead><tr><th>{t!("audit-when")}</th><th>{t!("audit-who")}</th><th>{t!("audit-what")}</th><th>{t!("audit-on")}</th><th>{t!("audit-details")}</th></tr></thead>
                            <tbody>
                                {rows.into_iter().map(|e| view! {
                                    <tr>
                                        <td>{when(e.at)}</td><td>{e.actor}</td><td>{e.action}</td>
                                        <td>{e.subject}</td><td class="small"><code>{e.detail}</code></td>
                                    </tr>
                                }.into_any()).collect_view()}
                            </tbody>
                        </table>
                    }.into_any(),
                }
            })}
        </Transition>
    }
}
