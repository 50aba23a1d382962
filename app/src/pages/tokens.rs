//! Settings → API tokens: for pipelines, scripts and Prometheus. Everyone sees which tokens
//! exist and when each was last used; admins create one (shown once, to copy) and revoke them.

use leptos::prelude::*;

use crate::api::tokens::{CreateToken, RevokeToken, list_tokens};
use crate::components::form::{field_error, other_error};
use crate::domain::account::Role;

#[component]
pub fn TokensCard(is_admin: Resource<bool>) -> impl IntoView {
    let create = ServerAction::<CreateToken>::new();
    let revoke = ServerAction::<RevokeToken>::new();
    let tokens = Resource::new(
        move || (create.version().get(), revoke.version().get()),
        |_| list_tokens(),
    );
    let created = move || {
        create.value().get().and_then(Result::ok).map(|c| {
            view! {
                <div class="ok" role="status" data-testid="new-token">
                    <p>{format!("Token {} created. Copy it now: it is not shown again.", c.info.name)}</p>
                    <code class="token">{c.token}</code>
                </div>
            }
        })
    };
    let time = |t: Option<chrono::DateTime<chrono::Utc>>| {
        t.map_or_else(
            || "—".to_string(),
            |t| t.format("%Y-%m-%d %H:%M UTC").to_string(),
        )
    };
    view! {
        <section class="card">
            <h2>"API tokens"</h2>
            <p class="muted">
                "For the systems around Bulwark: send " <code>"Authorization: Bearer <token>"</code>
                " to " <a href="/api-docs">"the API"</a> " and " <code>"/metrics"</code>
                ". A token has a role like a person; it works for the API only, never for these pages."
            </p>
            <Transition fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    let admin = is_admin.await;
                    let now = chrono::Utc::now();
                    match tokens.await {
                        Ok(rows) if rows.is_empty() => {
                            view! { <p class="muted" data-testid="tokens">"No tokens yet."</p> }.into_any()
                        }
                        Ok(rows) => view! {
                            <div class="table-scroll">
                                <table tabindex="0" class="table" data-testid="tokens">
                                    <thead>
                                        <tr>
                                            <th>"Name"</th>
                                            <th>"Role"</th>
                                            <th>"State"</th>
                                            <th>"Created"</th>
                                            <th>"Expires"</th>
                                            <th>"Last used"</th>
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
                                                        <td>{t.role.to_string()}</td>
                                                        <td>{state}</td>
                                                        <td>{format!("{} by {}", time(Some(t.created_at)), t.created_by)}</td>
                                                        <td>{t.expires_at.map_or_else(|| "never".to_string(), |at| time(Some(at)))}</td>
                                                        <td>{time(t.last_used_at)}</td>
                                                        {(admin && state == "active").then(move || view! {
                                                            <td>
                                                                <ActionForm action=revoke>
                                                                    <input type="hidden" name="name" value=name />
                                                                    <button type="submit" class="link">"Revoke"</button>
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
                        Err(e) => view! { <p class="error">{e.to_string()}</p> }.into_any(),
                    }
                })}
            </Transition>
            <p class="error" role="alert">{other_error(revoke.value())}</p>
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    is_admin.await.then(|| view! {
                        <ActionForm action=create attr:class="form inline-form" attr:data-testid="create-token">
                            <div>
                                <label for="token-name">"Name"</label>
                                <input id="token-name" name="name" type="text" autocomplete="off" placeholder="deploy-pipeline" />
                                <p class="field-error">{field_error(create.value(), "name")}</p>
                            </div>
                            <div>
                                <label for="token-role">"Role"</label>
                                <select id="token-role" name="role">
                                    {Role::WORDS
                                        .iter()
                                        .rev()
                                        .map(|r| view! { <option value=*r>{*r}</option> })
                                        .collect_view()}
                                </select>
                            </div>
                            <div>
                                <label for="token-expires">"Expires (30d, 12h, 2027-06-30; blank: never)"</label>
                                <input id="token-expires" name="expires" type="text" autocomplete="off" placeholder="90d" />
                                <p class="field-error">{field_error(create.value(), "expires")}</p>
                            </div>
                            <div>
                                <button type="submit">"Create token"</button>
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
