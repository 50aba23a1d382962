//! Settings → API tokens: for pipelines, scripts and Prometheus. Everyone sees which tokens
//! exist and when each was last used; admins create one (shown once, to copy) and revoke them.

use leptos::prelude::*;

use crate::i18n::errors::Explain;

use crate::api::tokens::{CreateToken, RevokeToken, list_tokens};
use crate::components::form::{field_error, other_error};
use crate::domain::account::Role;
use crate::i18n::words::role_name;
use crate::t;

#[component]
pub fn TokensCard(is_admin: Resource<bool>) -> impl IntoView {
    let create = ServerAction::<CreateToken>::new();
    let locale = crate::i18n::current();
    let revoke = ServerAction::<RevokeToken>::new();
    let tokens = Resource::new(
        move || (create.version().get(), revoke.version().get()),
        |_| list_tokens(),
    );
    let created = move || {
        create.value().get().and_then(Result::ok).map(|c| {
            view! {
                <div class="ok" role="status" data-testid="new-token">
                    <p>{t!("tokens-created", name = c.info.name.clone())}</p>
                    <code class="token">{c.token}</code>
                </div>
            }
        })
    };
    let time = |t: Option<chrono::DateTime<chrono::Utc>>| {
        t.map_or_else(|| "—".to_string(), crate::i18n::stamp_minutes)
    };
    view! {
        <section class="card">
            <h2>{t!("tokens-heading")}</h2>
            <p class="muted">
                {t!("tokens-explained", header = "Authorization: Bearer <token>")}" "
                <a href="/api-docs">{t!("tokens-api-reference")}</a>
            </p>
            <Transition fallback=|| view! { <p class="muted">{t!("loading")}</p> }>
                {move || Suspend::new(async move {
                    let admin = is_admin.await;
                    let now = chrono::Utc::now();
                    match tokens.await {
                        Ok(rows) if rows.is_empty() => {
                            view! { <p class="muted" data-testid="tokens">{t!("tokens-none")}</p> }.into_any()
                        }
                        Ok(rows) => view! {
                            <div class="table-scroll">
                                <table tabindex="0" class="table" data-testid="tokens">
                                    <thead>
                                        <tr>
                                            <th>{t!("jobs-col-name")}</th>
                                            <th>{t!("tokens-role")}</th>
                                            <th>{t!("jobs-filter-state")}</th>
                                            <th>{t!("tokens-created-col")}</th>
                                            <th>{t!("tokens-expires-col")}</th>
                                            <th>{t!("tokens-last-used")}</th>
                                            {admin.then(|| view! { <th></th> })}
                                        </tr>
                                    </thead>
                                    <tbody>
                                        {rows
                                            .into_iter()
                                            .map(|t| {
                                                let state = if t.revoked_at.is_some() {
                                                    "revoked"
                                                } else if t.expires_at.is_some_and(|at| at <= now) {
                                                    "expired"
                                                } else {
                                                    "active"
                                                };
                                                let name = t.name.clone();
                                                let row_name = t.name.clone();
                                                view! {
                                                    <tr data-token=row_name data-state=state>
                                                        <td>{t.name}</td>
                                                        <td>{role_name(t.role)}</td>
                                                        <td>{locale.text(match state {
                                                            "revoked" => crate::key!("tokens-state-revoked"),
                                                            "expired" => crate::key!("tokens-state-expired"),
                                                            _ => crate::key!("tokens-state-active"),
                                                        })}</td>
                                                        <td>{t!("tokens-created-by", at = time(Some(t.created_at)), by = t.created_by.clone())}</td>
                                                        <td>{t.expires_at.map_or_else(|| t!("tokens-never"), |at| time(Some(at)))}</td>
                                                        <td>{time(t.last_used_at)}</td>
                                                        {(admin && state == "active").then(move || view! {
                                                            <td>
                                                                <ActionForm action=revoke>
                                                                    <input type="hidden" name="name" value=name />
                                                                    <button type="submit" class="link">{t!("tokens-revoke")}</button>
                                                                </ActionForm>
                                                            </td>
                                                        })}
                                                    </tr>
                                                }
                                            })
                                            .collect_view()}
                                    </tbody>
                                </table>
                            </div>
                        }
                        .into_any(),
                        Err(e) => view! { <p class="error">{e.explain()}</p> }.into_any(),
                    }
                })}
            </Transition>
            <p class="error" role="alert">{other_error(revoke.value())}</p>
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    is_admin.await.then(|| view! {
                        <ActionForm action=create attr:class="form inline-form" attr:data-testid="create-token">
                            <div>
                                <label for="token-name">{t!("jobs-col-name")}</label>
                                <input id="token-name" name="name" type="text" autocomplete="off" placeholder="deploy-pipeline" />
                                <p class="field-error">{field_error(create.value(), "name")}</p>
                            </div>
                            <div>
                                <label for="token-role">{t!("tokens-role")}</label>
                                <select id="token-role" name="role">
                                    {Role::ALL
                                        .iter()
                                        .rev()
                                        .map(|r| view! { <option value=r.as_str()>{role_name(*r)}</option> })
                                        .collect_view()}
                                </select>
                            </div>
                            <div>
                                <label for="token-expires">{t!("tokens-expires-label")}</label>
                                <input id="token-expires" name="expires" type="text" autocomplete="off" placeholder="90d" />
                                <p class="field-error">{field_error(create.value(), "expires")}</p>
                            </div>
                            <div>
                                <button type="submit">{t!("tokens-create")}</button>
                            </div>
                        </ActionForm>
                        {created}
                        <p class="error" role="alert">{other_error(create.value())}</p>
                    })
                })}
            </Suspense>
        </section>
    }
}
