//! Settings: the accounts that may sign in (admins add accounts; viewers see the list), and
//! the nodes sharing the database.

use crate::i18n::duration;
use crate::i18n::words::role_name;
use crate::t;
use leptos::prelude::*;

use crate::i18n::current;
use crate::i18n::errors::Explain;
use leptos_meta::Title;

use crate::api::nodes::list_nodes;
use crate::api::users::{CreateUser, LinkUser, ManageUser, ResetPassword, list_users};
use crate::components::admin_list::{AdminList, AdminOnly};
use crate::components::form::{field_error, other_error};
use crate::components::layout::use_is_admin;
use crate::domain::node::{
    DEFAULT_LEASE_SECONDS, HEARTBEAT_SECONDS, LOST_AFTER_SECONDS, NodeState, skew_warning,
};
use crate::views::nodes::NodeView;
use crate::views::secrets::SecretRow;

#[component]
pub fn SettingsPage() -> impl IntoView {
    let create = ServerAction::<CreateUser>::new();
    let manage = ServerAction::<ManageUser>::new();
    let reset = ServerAction::<ResetPassword>::new();
    let link = ServerAction::<LinkUser>::new();
    let users = Resource::new(
        move || {
            (
                create.version().get(),
                manage.version().get(),
                reset.version().get(),
                link.version().get(),
            )
        },
        |_| list_users(),
    );
    let is_admin = use_is_admin();

    view! {
        <Title text=t!("nav-settings") />
        <h1>{t!("nav-settings")}</h1>
        <p class="notice">
            <a href="/maintenance">{t!("banner-maintenance-link")}</a>
            {t!("settings-maintenance-note")}
        </p>
        <section class="card">
            <h2>{t!("settings-users")}</h2>
            <AdminList rows=users is_admin table=move |rows, admin| view! { <UsersTable rows admin manage /> } />
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    if is_admin.await {
                        view! {
                            <ManageOutcome manage />
                            <ResetPasswordForm reset />
                            <AddUserForm create />
                            <super::user_link::LinkUserForm link />
                        }
                            .into_any()
                    } else {
                        view! {
                            <p class="muted" data-testid="viewer-note">
                                {t!("settings-viewer-note")}
                            </p>
                        }
                            .into_any()
                    }
                })}
            </Suspense>
        </section>
        <SecretsCard is_admin />
        <super::tokens::TokensCard is_admin />
        <super::calendars::CalendarsCard is_admin />
        <section class="card">
            <h2>{t!("audit-title")}</h2>
            <p>{t!("settings-audit-note")}" " <a href="/audit">{t!("audit-title")}</a></p>
        </section>
        <NodesCard />
        <section class="card">
            <h2>{t!("mail-heading")}</h2>
            <p>{t!("settings-mail-note")}" " <a href="/notifications">{t!("nav-notifications")}</a></p>
        </section>
    }
}

/// Named secrets: jobs refer to them as `${secret:NAME}`; values are written, never shown.
#[component]
fn SecretsCard(is_admin: Resource<bool>) -> impl IntoView {
    use crate::api::secrets::{RemoveSecret, SetSecret, list_secrets};
    let set = ServerAction::<SetSecret>::new();
    let remove = ServerAction::<RemoveSecret>::new();
    let secrets = Resource::new(
        move || (set.version().get(), remove.version().get()),
        |_| list_secrets(),
    );
    let removed_error = move || {
        remove
            .value()
            .get()
            .and_then(Result::err)
            .map(|e| e.explain(current()))
    };
    view! {
        <section class="card">
            <h2>{t!("secrets-heading")}</h2>
            <p class="muted">{t!("secrets-explained", reference = "${secret:NAME}")}</p>
            <AdminList rows=secrets is_admin table=move |rows, admin| {
                if rows.is_empty() {
                    return view! { <p class="muted" data-testid="secrets">{t!("secrets-none")}</p> }.into_any();
                }
                secret_table(rows, admin.then_some(remove)).into_any()
            } />
            <p class="error" role="alert">{removed_error}</p>
            <AdminOnly is_admin><SetSecretForm set /></AdminOnly>
        </section>
    }
}

/// The secrets' names and when each was set, with Remove for admins (`remove` is `None` for
/// everyone else).
fn secret_table(
    rows: Vec<SecretRow>,
    remove: Option<ServerAction<crate::api::secrets::RemoveSecret>>,
) -> impl IntoView {
    let rows = rows
        .into_iter()
        .map(|s| {
            let name = s.name.clone();
            let action = remove.map(move |remove| {
                view! {
                    <td>
                        <ActionForm action=remove>
                            <input type="hidden" name="name" value=name />
                            <button type="submit" class="link">{t!("channels-remove")}</button>
                        </ActionForm>
                    </td>
                }
            });
            view! {
                <tr>
                    <td><code>{s.name}</code></td>
                    <td>{crate::i18n::stamp_minutes(s.updated_at)}</td>
                    {action}
                </tr>
            }
        })
        .collect_view();
    view! {
        <table tabindex="0" class="table" data-testid="secrets">
            <thead>
                <tr>
                    <th>{t!("jobs-col-name")}</th>
                    <th>{t!("secrets-set-at")}</th>
                    {remove.map(|_| view! { <th></th> })}
                </tr>
            </thead>
            <tbody>{rows}</tbody>
        </table>
    }
}

#[component]
fn SetSecretForm(set: ServerAction<crate::api::secrets::SetSecret>) -> impl IntoView {
    let field_error = move |field| field_error(set.value(), field);
    let done = move || {
        set.value().get().and_then(Result::ok).map(|created| {
            if created {
                t!("secrets-set-done")
            } else {
                t!("secrets-replaced")
            }
        })
    };
    view! {
        <ActionForm action=set attr:class="form inline-form" attr:data-testid="set-secret">
            <div>
                <label for="secret-name">{t!("jobs-col-name")}</label>
                <input id="secret-name" name="name" type="text" autocomplete="off" />
                <p class="field-error">{field_error("name")}</p>
            </div>
            <div>
                <label for="secret-value">{t!("secrets-value")}</label>
                <input id="secret-value" name="value" type="password" autocomplete="off" />
                <p class="field-error">{field_error("value")}</p>
            </div>
            <div>
                <button type="submit">{t!("secrets-set")}</button>
            </div>
        </ActionForm>
        <p class="ok" role="status">{done}</p>
    }
}

/// Every `bulwark serve` sharing this database, with its heartbeat and clock.
#[component]
fn NodesCard() -> impl IntoView {
    let nodes = Resource::new(|| (), |_| list_nodes());
    view! {
        <section class="card" id="nodes">
            <h2>{t!("overview-tile-nodes")}</h2>
            <p class="muted">
                {t!("nodes-explained", heartbeat = HEARTBEAT_SECONDS, lost = LOST_AFTER_SECONDS)}
            </p>
            <Transition fallback=|| view! { <p class="muted">{t!("loading")}</p> }>
                {move || Suspend::new(async move {
                    match nodes.await {
                        Ok(rows) if rows.is_empty() => view! { <p class="muted">{t!("nodes-none")}</p> }.into_any(),
                        Ok(rows) => view! { <NodesTable rows /> }.into_any(),
                        Err(e) => view! { <p class="error">{e.explain(current())}</p> }.into_any(),
                    }
                })}
            </Transition>
        </section>
    }
}

/// What a node does: console and jobs, jobs only, or the console only; its labels; whether
/// it runs commands.
fn what_it_runs(n: &NodeView) -> String {
    let mode = match (n.web, n.engine) {
        (true, true) => t!("nodes-mode-both"),
        (false, _) => t!("nodes-mode-jobs"),
        (true, false) => t!("nodes-mode-web"),
    };
    let mut parts = vec![mode];
    if n.engine {
        parts.push(match n.labels.as_str() {
            "" => t!("nodes-no-labels"),
            labels => labels.to_string(),
        });
        if !n.commands {
            parts.push(t!("nodes-no-commands"));
        }
    }
    if n.database_pooler == "transaction" {
        parts.push(t!("nodes-pooler-transaction"));
    }
    parts.join(" · ")
}

#[component]
fn NodesTable(rows: Vec<NodeView>) -> impl IntoView {
    let locale = crate::i18n::current();
    view! {
        <table tabindex="0" class="table" data-testid="nodes">
            <thead>
                <tr>
                    <th>{t!("run-col-node")}</th>
                    <th>{t!("jobs-filter-state")}</th>
                    <th>{t!("nodes-heartbeat")}</th>
                    <th>{t!("nodes-clock")}</th>
                    <th>{t!("nodes-runs")}</th>
                    <th>{t!("nodes-host")}</th>
                    <th>{t!("nodes-version")}</th>
                    <th>{t!("run-col-started")}</th>
                </tr>
            </thead>
            <tbody>
                {rows
                    .into_iter()
                    .map(|n| {
                        let class = match n.state {
                            NodeState::Live => "pill ok",
                            NodeState::Lost => "pill bad",
                            NodeState::Stopped => "pill off",
                        };
                        let skew = n.clock_skew_ms.map(|ms| {
                            let text = format!("{:+.1} s", ms as f64 / 1000.0);
                            match skew_warning(ms, DEFAULT_LEASE_SECONDS) {
                                Some(w) => {
                                    let seconds = format!("{:.1}", w.seconds);
                                    let mut warning = if w.ahead {
                                        t!("nodes-skew-ahead", seconds = seconds)
                                    } else {
                                        t!("nodes-skew-behind", seconds = seconds)
                                    };
                                    if w.may_jump {
                                        warning = format!("{warning}{}", t!("nodes-skew-jump"));
                                    }
                                    let title = warning.clone();
                                    view! { <span class="warn" title=title>{text} " ⚠ " {warning}</span> }.into_any()
                                }
                                None => view! { <span>{text}</span> }.into_any(),
                            }
                        });
                        let id = n.node_id.clone();
                        let runs = what_it_runs(&n);
                        view! {
                            <tr data-node=id data-state=n.state.as_str()>
                                <td>{n.node_id}</td>
                                <td><span class=class>{locale.text(match n.state {
                                    NodeState::Live => crate::key!("node-state-live"),
                                    NodeState::Lost => crate::key!("node-state-lost"),
                                    NodeState::Stopped => crate::key!("node-state-stopped"),
                                })}</span></td>
                                // Heartbeats are counted in whole seconds: "0 s ago", never "0 ms ago".
                                <td>{t!("time-ago", time = match n.silent_s {
                                    0 => t!("unit-s", n = 0),
                                    s => duration(s as f64 * 1000.0),
                                })}</td>
                                <td>{skew}</td>
                                <td data-testid="node-runs">{runs}</td>
                                <td>{t!("nodes-host-pid", host = n.host.clone(), pid = n.pid, addr = n.addr.clone())}</td>
                                <td>{n.version}</td>
                                <td>{crate::i18n::stamp(n.started_at)}</td>
                            </tr>
                        }
                    })
                    .collect_view()}
            </tbody>
        </table>
    }
}

/// The accounts; for admins each row has its changes (role, disable or enable, sign out
/// everywhere, delete).
#[component]
fn UsersTable(
    rows: Vec<crate::views::users::UserRow>,
    admin: bool,
    manage: ServerAction<ManageUser>,
) -> impl IntoView {
    let locale = crate::i18n::current();
    use crate::domain::account::{AccountState, Role};
    let time = crate::i18n::stamp_minutes;
    view! {
        <div class="table-scroll">
            <table tabindex="0" class="table" data-testid="users">
                <thead>
                    <tr>
                        <th>{t!("login-username")}</th>
                        <th>{t!("tokens-role")}</th>
                        <th>{t!("jobs-filter-state")}</th>
                        <th>{t!("users-last-sign-in")}</th>
                        <th>{t!("users-sign-in")}</th>
                        <th>{t!("tokens-created-col")}</th>
                        {admin.then(|| view! { <th>{t!("users-change")}</th> })}
                    </tr>
                </thead>
                <tbody>
                    {rows
                        .into_iter()
                        .map(|u| {
                            let name = u.username.clone();
                            let stops = tokens_stopped(&u.tokens, u.role);
                            let actions = admin.then(move || {
                                let label = t!("users-change-one", name = name.clone());
                                let testid = format!("manage-{name}");
                                let role_change = match u.role {
                                    Role::Admin => ("viewer", t!("users-make-viewer")),
                                    Role::Viewer => ("admin", t!("users-make-admin")),
                                };
                                let toggle = match u.state {
                                    AccountState::Disabled => ("enable", t!("jobs-enable")),
                                    _ => ("disable", t!("jobs-disable")),
                                };
                                view! {
                                    <td>
                                        <ActionForm action=manage attr:class="row-actions" attr:data-testid=testid>
                                            <input type="hidden" name="username" value=name />
                                            <select name="action" aria-label=label>
                                                <option value=role_change.0>{role_change.1}</option>
                                                <option value=toggle.0>{toggle.1}</option>
                                                <option value="end-sessions">{t!("users-sign-out-everywhere")}</option>
                                                <option value="second-factor-off">{t!("users-second-factor-off")}</option>
                                                <option value="delete">{t!("action-delete")}</option>
                                            </select>
                                            <button type="submit">{t!("users-apply")}</button>
                                        </ActionForm>
                                        {stops}
                                    </td>
                                }
                            });
                            view! {
                                <tr>
                                    <td>{u.username}</td>
                                    <td>{role_name(u.role)}</td>
                                    <td>{locale.text(match u.state {
                                        AccountState::Active => crate::key!("account-state-active"),
                                        AccountState::Disabled => crate::key!("account-state-disabled"),
                                        AccountState::MustChangePassword => crate::key!("account-state-must-change"),
                                    })}</td>
                                    <td>{u.last_sign_in_at.map_or_else(|| t!("tokens-never"), time)}</td>
                                    <td data-sign-in=u.sign_in.to_string()>{super::user_link::sign_in_name(&u.sign_in)}</td>
                                    <td>{time(u.created_at)}</td>
                                    {actions}
                                </tr>
                            }
                        })
                        .collect_view()}
                </tbody>
            </table>
        </div>
    }
}

/// What the last change on the Users table did, or why it was refused.
#[component]
fn ManageOutcome(manage: ServerAction<ManageUser>) -> impl IntoView {
    let outcome = move || {
        manage.value().get().map(|result| match result {
            Ok(true) => view! { <p class="ok" role="status">{t!("users-done")}</p> }.into_any(),
            Ok(false) => {
                view! { <p class="muted" role="status">{t!("users-nothing")}</p> }.into_any()
            }
            Err(e) => view! { <p class="error" role="alert">{e.explain(current())}</p> }.into_any(),
        })
    };
    view! { <div data-testid="manage-outcome">{outcome}</div> }
}

/// An administrator sets someone's password; they must choose their own at the next sign-in.
#[component]
fn ResetPasswordForm(reset: ServerAction<ResetPassword>) -> impl IntoView {
    let field_error = move |field| field_error(reset.value(), field);
    let other_error = other_error(reset.value());
    let done = move || {
        reset
            .value()
            .get()
            .and_then(Result::ok)
            .map(|()| t!("users-reset-done"))
    };
    view! {
        <h3>{t!("users-reset-heading")}</h3>
        <ActionForm action=reset attr:class="form inline-form" attr:data-testid="reset-password">
            <div>
                <label for="reset-username">{t!("login-username")}</label>
                <input id="reset-username" name="username" type="text" autocomplete="off" />
            </div>
            <div>
                <label for="reset-password">{t!("users-temporary-password")}</label>
                <input id="reset-password" name="password" type="password" autocomplete="new-password" />
                <p class="field-error">{field_error("password")}</p>
            </div>
            <div>
                <button type="submit">{t!("users-reset")}</button>
            </div>
        </ActionForm>
        <p class="ok" role="status">{done}</p>
        <p class="error" role="alert">{other_error}</p>
    }
}

#[component]
fn AddUserForm(create: ServerAction<CreateUser>) -> impl IntoView {
    let field_error = move |field| field_error(create.value(), field);
    let other_error = other_error(create.value());
    let created = move || {
        create.value().get().and_then(Result::ok).map(|u| {
            t!(
                "users-added",
                name = u.username.clone(),
                role = role_name(u.role)
            )
        })
    };

    view! {
        <h3>{t!("users-add-heading")}</h3>
        <ActionForm action=create attr:class="form inline-form" attr:data-testid="add-user">
            <div>
                <label for="new-username">{t!("login-username")}</label>
                <input id="new-username" name="username" type="text" autocomplete="off" />
                <p class="field-error">{field_error("username")}</p>
            </div>
            <div>
                <label for="new-password">{t!("login-password")}</label>
                <input id="new-password" name="password" type="password" autocomplete="new-password" />
                <p class="field-error">{field_error("password")}</p>
            </div>
            <div>
                <label for="new-role">{t!("tokens-role")}</label>
                <select id="new-role" name="role">
                    <option value="viewer">{role_name(crate::domain::account::Role::Viewer)}</option>
                    <option value="admin">{role_name(crate::domain::account::Role::Admin)}</option>
                </select>
                <p class="field-error">{field_error("role")}</p>
            </div>
            <div>
                <button type="submit">{t!("users-add")}</button>
            </div>
        </ActionForm>
        <p class="ok" role="status">{created}</p>
        <p class="error" role="alert">{other_error}</p>
    }
}

/// What a change to an account would stop of its API tokens, said beside the change before it
/// is applied: disabling or deleting stops them all, making an admin a viewer those that need one.
fn tokens_stopped(
    tokens: &[(String, crate::domain::api_token::Scope)],
    role: crate::domain::account::Role,
) -> Option<impl IntoView + use<>> {
    if tokens.is_empty() {
        return None;
    }
    let names = |keep: &dyn Fn(crate::domain::api_token::Scope) -> bool| {
        tokens
            .iter()
            .filter(|(_, scope)| keep(*scope))
            .map(|(name, _)| name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let all = names(&|_| true);
    let demoted = names(&|scope| !scope.allowed_for(crate::domain::account::Role::Viewer));
    let demote = (role.can_change() && !demoted.is_empty())
        .then(|| t!("users-tokens-demote", names = demoted));
    Some(view! {
        <p class="muted small" data-testid="tokens-stopped">
            {t!("users-tokens-all", names = all)}" "{demote}
        </p>
    })
}
