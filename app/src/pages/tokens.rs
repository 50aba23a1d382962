//! Settings → API tokens: for pipelines, scripts and Prometheus. Everyone sees which tokens
//! exist and when each was last used; admins create one (shown once, to copy) and revoke them.

use leptos::prelude::*;

use crate::i18n::current;

use crate::api::tokens::{CreateToken, RevokeToken, list_tokens};
use crate::components::admin_list::{AdminList, AdminOnly};
use crate::components::form::{field_error, other_error};
use crate::domain::api_token::Scope;
use crate::t;
use crate::views::tokens::TokenInfo;

#[component]
pub fn TokensCard(is_admin: Resource<bool>) -> impl IntoView {
    let create = ServerAction::<CreateToken>::new();
    let revoke = ServerAction::<RevokeToken>::new();
    let tokens = Resource::new(
        move || (create.version().get(), revoke.version().get()),
        |_| list_tokens(),
    );
    view! {
        <section class="card">
            <h2>{t!("tokens-heading")}</h2>
            <p class="muted">
                {t!("tokens-explained", header = "Authorization: Bearer <token>")}" "
                <a href="/api-docs">{t!("tokens-api-reference")}</a>
            </p>
            <AdminList rows=tokens is_admin table=move |rows, admin| {
                if rows.is_empty() {
                    return view! { <p class="muted" data-testid="tokens">{t!("tokens-none")}</p> }.into_any();
                }
                token_table(rows, admin.then_some(revoke)).into_any()
            } />
            <p class="error" role="alert">{other_error(revoke.value())}</p>
            <AdminOnly is_admin><CreateTokenForm create /></AdminOnly>
        </section>
    }
}

/// The tokens, with Revoke on the working ones for admins (`revoke` is `None` for everyone
/// else).
fn token_table(rows: Vec<TokenInfo>, revoke: Option<ServerAction<RevokeToken>>) -> impl IntoView {
    let now = chrono::Utc::now();
    view! {
        <div class="table-scroll">
            <table tabindex="0" class="table" data-testid="tokens">
                <thead>
                    <tr>
                        <th>{t!("jobs-col-name")}</th>
                        <th>{t!("tokens-scope")}</th>
                        <th>{t!("tokens-owner")}</th>
                        <th>{t!("jobs-filter-state")}</th>
                        <th>{t!("tokens-created-col")}</th>
                        <th>{t!("tokens-expires-col")}</th>
                        <th>{t!("tokens-last-used")}</th>
                        {revoke.map(|_| view! { <th></th> })}
                    </tr>
                </thead>
                <tbody>{rows.into_iter().map(|t| token_row(t, now, revoke)).collect_view()}</tbody>
            </table>
        </div>
    }
}

fn time(at: Option<chrono::DateTime<chrono::Utc>>) -> String {
    at.map_or_else(|| "—".to_string(), crate::i18n::stamp_minutes)
}

fn token_row(
    t: TokenInfo,
    now: chrono::DateTime<chrono::Utc>,
    revoke: Option<ServerAction<RevokeToken>>,
) -> impl IntoView {
    let state = t.state(now);
    let last_used = match (&t.last_used_at, &t.last_used_from) {
        (Some(at), Some(from)) => {
            t!(
                "tokens-used-from",
                at = time(Some(*at)),
                from = from.clone()
            )
        }
        (at, _) => time(*at),
    };
    let state_text = current().text(match state {
        "revoked" => crate::key!("tokens-state-revoked"),
        "expired" => crate::key!("tokens-state-expired"),
        "stopped" => crate::key!("tokens-state-stopped"),
        _ => crate::key!("tokens-state-active"),
    });
    let (name, row_name) = (t.name.clone(), t.name.clone());
    let revoke_cell = revoke.filter(|_| state == "active").map(move |revoke| {
        view! {
            <td>
                <ActionForm action=revoke>
                    <input type="hidden" name="name" value=name />
                    <button type="submit" class="link">{t!("tokens-revoke")}</button>
                </ActionForm>
            </td>
        }
    });
    view! {
        <tr data-token=row_name data-state=state>
            <td>{t.name}</td>
            <td>{scope_text(t.scope, &t.tags)}</td>
            <td>{t.owner.clone().unwrap_or_else(|| "—".to_string())}</td>
            <td>{state_text}</td>
            <td>{t!("tokens-created-by", at = time(Some(t.created_at)), by = t.created_by.clone())}</td>
            <td>{t.expires_at.map_or_else(|| t!("tokens-never"), |at| time(Some(at)))}</td>
            <td>{last_used}</td>
            {revoke_cell}
        </tr>
    }
}

/// Name, scope, tags and expiry; the new token shown once, to copy.
#[component]
fn CreateTokenForm(create: ServerAction<CreateToken>) -> impl IntoView {
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
    let scopes = Scope::ALL
        .iter()
        .map(|s| view! { <option value=s.as_str()>{scope_name(*s)}</option> })
        .collect_view();
    view! {
        <ActionForm action=create attr:class="form inline-form" attr:data-testid="create-token">
            <div>
                <label for="token-name">{t!("jobs-col-name")}</label>
                <input id="token-name" name="name" type="text" autocomplete="off" placeholder="deploy-pipeline" />
                <p class="field-error">{field_error(create.value(), "name")}</p>
            </div>
            <div>
                <label for="token-scope">{t!("tokens-scope")}</label>
                <select id="token-scope" name="scope">{scopes}</select>
                <p class="field-error">{field_error(create.value(), "scope")}</p>
            </div>
            <div>
                <label for="token-tags">{t!("tokens-tags-label")}</label>
                <input id="token-tags" name="tags" type="text" autocomplete="off" placeholder="deploy" />
                <p class="field-error">{field_error(create.value(), "tags")}</p>
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
    }
}

/// A scope in the reader's language.
fn scope_name(scope: Scope) -> String {
    match scope {
        Scope::Read => t!("tokens-scope-read"),
        Scope::Trigger => t!("tokens-scope-trigger"),
        Scope::Admin => t!("tokens-scope-admin"),
    }
}

/// A scope with the tags a trigger token is kept to.
fn scope_text(scope: Scope, tags: &[String]) -> String {
    if tags.is_empty() {
        scope_name(scope)
    } else {
        t!(
            "tokens-scope-tagged",
            scope = scope_name(scope),
            tags = tags.join(", ")
        )
    }
}
