//! The API reference: every operation of `/api/v1` with its parameters, body and answers, and
//! a curl line to start from. Read from the OpenAPI document the server serves, so it never
//! disagrees with it.

use crate::t;
use leptos::prelude::*;

use crate::i18n::current;
use crate::i18n::errors::Explain;
use leptos_meta::Title;

use crate::api::tokens::api_docs;
use crate::views::api_docs::ApiOperation;

#[component]
pub fn ApiDocsPage() -> impl IntoView {
    let operations = Resource::new(|| (), |_| api_docs());
    view! {
        <Title text=t!("api-title") />
        <h1>{t!("api-title")}</h1>
        <section class="card">
            <p>{t!("api-intro")}</p>
            <p>
                <a href="/settings">{t!("api-tokens-link")}</a>
                " · "
                <a href="/api/v1/openapi.json">"/api/v1/openapi.json"</a>
                " (OpenAPI 3.1)"
            </p>
        </section>
        <Transition fallback=|| view! { <p class="muted">{t!("loading")}</p> }>
            {move || Suspend::new(async move {
                match operations.await {
                    Ok(list) => view! { <Operations list /> }.into_any(),
                    Err(e) => view! { <p class="error">{e.explain(current())}</p> }.into_any(),
                }
            })}
        </Transition>
    }
}

#[component]
fn Operations(list: Vec<ApiOperation>) -> impl IntoView {
    list.into_iter()
        .map(|op| {
            let curl = format!(
                "curl -sS -X {} -H 'Authorization: Bearer $TOKEN'{} \"$BULWARK/api/v1{}\"",
                op.method,
                if op.body.is_some() {
                    " -H 'content-type: application/json' -d @body.json"
                } else {
                    ""
                },
                op.path
            );
            let id = format!("{}-{}", op.method.to_lowercase(), op.path.replace(['/', '{', '}'], "-"));
            view! {
                <section class="card api-op" id=id data-testid="api-operation">
                    <h2>
                        <span class=format!("pill method-{}", op.method.to_lowercase())>{op.method.clone()}</span>
                        " " <code>{op.path.clone()}</code>
                        <span class="muted">{format!("  ({})", op.tag)}</span>
                    </h2>
                    <p>{op.summary.clone()}</p>
                    {(!op.params.is_empty()).then(|| view! {
                        <table tabindex="0" class="table">
                            <thead><tr><th>{t!("api-parameter")}</th><th>{t!("api-in")}</th><th>{t!("api-required")}</th><th>{t!("api-what")}</th></tr></thead>
                            <tbody>
                                {op.params.iter().map(|p| view! {
                                    <tr>
                                        <td><code>{p.name.clone()}</code></td>
                                        <td>{p.location.clone()}</td>
                                        <td>{if p.required { t!("yes") } else { t!("no") }}</td>
                                        <td>{p.description.clone()}</td>
                                    </tr>
                                }).collect_view()}
                            </tbody>
                        </table>
                    })}
                    {op.body.clone().map(|b| view! { <p>{t!("api-body")}" " <code>{b}</code></p> })}
                    <ul>
                        {op.responses.iter().map(|(status, what)| view! {
                            <li><code>{status.clone()}</code> " " {what.clone()}</li>
                        }).collect_view()}
                    </ul>
                    <pre tabindex="0">{curl}</pre>
                </section>
            }
        })
        .collect_view()
}
