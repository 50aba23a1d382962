//! Settings: the accounts that may sign in (admins add accounts; viewers see the list), and
//! the nodes sharing the database.

use leptos::prelude::*;
use leptos_meta::Title;

use crate::api::nodes::list_nodes;
use crate::api::users::{CreateUser, ManageUser, ResetPassword, list_users};
use crate::components::form::{field_error, other_error};
use crate::components::layout::use_is_admin;
use crate::domain::node::{
    DEFAULT_LEASE_SECONDS, HEARTBEAT_SECONDS, LOST_AFTER_SECONDS, NodeState, skew_warning,
};
use crate::views::nodes::NodeView;

#[component]
pub fn SettingsPage() -> impl IntoView {
    let create = ServerAction::<CreateUser>::new();
    let manage = ServerAction::<ManageUser>::new();
    let reset = ServerAction::<ResetPassword>::new();
    let users = Resource::new(
        move || {
            (
                create.version().get(),
                manage.version().get(),
                reset.version().get(),
            )
        },
        |_| list_users(),
    );
    let is_admin = use_is_admin();

    view! {
        <Title text="Settings" />
        <h1>"Settings"</h1>
        <p class="notice">
            <a href="/maintenance">"Maintenance"</a>
            ": pause every job (or a tag) now or in a window ahead, and resume."
        </p>
        <section class="card">
            <h2>"Users"</h2>
            <Transition fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    let admin = is_admin.await;
                    match users.await {
                        Ok(rows) => view! { <UsersTable rows admin manage /> }.into_any(),
                        Err(e) => view! { <p class="error">{e.to_string()}</p> }.into_any(),
                    }
                })}
            </Transition>
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    if is_admin.await {
                        view! {
                            <ManageOutcome manage />
                            <ResetPasswordForm reset />
                            <AddUserForm create />
                        }
                            .into_any()
                    } else {
                        view! {
                            <p class="muted" data-testid="viewer-note">
                                "You are signed in as a viewer: you can read everything, and an administrator makes changes."
                            </p>
                        }
                            .into_any()
                    }
                })}
            </Suspense>
        </section>
        <SecretsCard is_admin />
        <super::tokens::TokensCard is_admin />
        <section class="card">
            <h2>"Audit log"</h2>
            <p>"Who created, changed, deleted, re-triggered, resolved or discarded what: " <a href="/audit">"the audit log"</a>"."</p>
        </section>
        <NodesCard />
        <section class="card">
            <h2>"Mail"</h2>
            <p>"Where mail goes, the daily digest's recipients and time, a test mail and the outbox: " <a href="/notifications">"Notifications"</a>"."</p>
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
    let field_error = move |field| field_error(set.value(), field);
    let done = move || {
        set.value().get().and_then(Result::ok).map(|created| {
            if created {
                "Secret set."
            } else {
                "Secret replaced."
            }
            .to_string()
        })
    };
    let removed_error = move || {
        remove
            .value()
            .get()
            .and_then(Result::err)
            .map(|e| e.to_string())
    };
    view! {
        <section class="card">
            <h2>"Secrets"</h2>
            <p class="muted">
                "Jobs refer to a secret as " <code>"${secret:NAME}"</code>
                " in a URL, header, body, argument or parameter. Values are encrypted, filled in only when an attempt runs, and never shown again — not here, not in run output."
            </p>
            <Transition fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    let admin = is_admin.await;
                    match secrets.await {
                        Ok(rows) if rows.is_empty() => {
                            view! { <p class="muted" data-testid="secrets">"No secrets yet."</p> }.into_any()
                        }
                        Ok(rows) => {
                            view! {
                                <table tabindex="0" class="table" data-testid="secrets">
                                    <thead>
                                        <tr>
                                            <th>"Name"</th>
                                            <th>"Set"</th>
                                            {admin.then(|| view! { <th></th> })}
                                        </tr>
                                    </thead>
                                    <tbody>
                                        {rows
                                            .into_iter()
                                            .map(|s| {
                                                let name = s.name.clone();
                                                view! {
                                                    <tr>
                                                        <td><code>{s.name}</code></td>
                                                        <td>{s.updated_at.format("%Y-%m-%d %H:%M UTC").to_string()}</td>
                                                        {admin.then(move || view! {
                                                            <td>
                                                                <ActionForm action=remove>
                                                                    <input type="hidden" name="name" value=name />
                                                                    <button type="submit" class="link">"Remove"</button>
                                                                </ActionForm>
                                                            </td>
                                                        })}
                                                    </tr>
                                                }
                                            })
                                            .collect_view()}
                                    </tbody>
                                </table>
                            }
                                .into_any()
                        }
                        Err(e) => view! { <p class="error">{e.to_string()}</p> }.into_any(),
                    }
                })}
            </Transition>
            <p class="error" role="alert">{removed_error}</p>
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    is_admin.await.then(|| view! {
                        <ActionForm action=set attr:class="form inline-form" attr:data-testid="set-secret">
                            <div>
                                <label for="secret-name">"Name"</label>
                                <input id="secret-name" name="name" type="text" autocomplete="off" />
                                <p class="field-error">{field_error("name")}</p>
                            </div>
                            <div>
                                <label for="secret-value">"Value"</label>
                                <input id="secret-value" name="value" type="password" autocomplete="off" />
                                <p class="field-error">{field_error("value")}</p>
                            </div>
                            <div>
                                <button type="submit">"Set secret"</button>
                            </div>
                        </ActionForm>
                        <p class="ok" role="status">{done}</p>
                    })
                })}
            </Suspense>
        </section>
    }
}

/// Every `bulwark serve` sharing this database, with its heartbeat and clock.
#[component]
fn NodesCard() -> impl IntoView {
    let nodes = Resource::new(|| (), |_| list_nodes());
    view! {
        <section class="card" id="nodes">
            <h2>"Nodes"</h2>
            <p class="muted">
                "Each running instance heart-beats every " {HEARTBEAT_SECONDS} " s; one silent for more than "
                {LOST_AFTER_SECONDS} " s is lost, and its runs are taken over when their leases expire."
            </p>
            <Transition fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match nodes.await {
                        Ok(rows) if rows.is_empty() => view! { <p class="muted">"No node has registered yet."</p> }.into_any(),
                        Ok(rows) => view! { <NodesTable rows /> }.into_any(),
                        Err(e) => view! { <p class="error">{e.to_string()}</p> }.into_any(),
                    }
                })}
            </Transition>
        </section>
    }
}

#[component]
fn NodesTable(rows: Vec<NodeView>) -> impl IntoView {
    view! {
        <table tabindex="0" class="table" data-testid="nodes">
            <thead>
                <tr>
                    <th>"Node"</th>
                    <th>"State"</th>
                    <th>"Last heartbeat"</th>
                    <th>"Clock"</th>
                    <th>"Host / address"</th>
                    <th>"Version"</th>
                    <th>"Started"</th>
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
                                Some(warning) => {
                                    let title = warning.clone();
                                    view! { <span class="warn" title=title>{text} " ⚠ " {warning}</span> }.into_any()
                                }
                                None => view! { <span>{text}</span> }.into_any(),
                            }
                        });
                        let id = n.node_id.clone();
                        view! {
                            <tr data-node=id data-state=n.state.as_str()>
                                <td>{n.node_id}</td>
                                <td><span class=class>{n.state.as_str()}</span></td>
                                <td>{format!("{} s ago", n.silent_s)}</td>
                                <td>{skew}</td>
                                <td>{format!("{} pid {} · {}", n.host, n.pid, n.addr)}</td>
                                <td>{n.version}</td>
                                <td>{n.started_at.format("%Y-%m-%d %H:%M:%S UTC").to_string()}</td>
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
    use crate::domain::account::{AccountState, Role};
    let time = |t: chrono::DateTime<chrono::Utc>| t.format("%Y-%m-%d %H:%M UTC").to_string();
    view! {
        <div class="table-scroll">
            <table tabindex="0" class="table" data-testid="users">
                <thead>
                    <tr>
                        <th>"Username"</th>
                        <th>"Role"</th>
                        <th>"State"</th>
                        <th>"Last sign-in"</th>
                        <th>"Created"</th>
                        {admin.then(|| view! { <th>"Change"</th> })}
                    </tr>
                </thead>
                <tbody>
                    {rows
                        .into_iter()
                        .map(|u| {
                            let name = u.username.clone();
                            let actions = admin.then(move || {
                                let label = format!("Change {name}");
                                let testid = format!("manage-{name}");
                                let role_change = match u.role {
                                    Role::Admin => ("viewer", "Make viewer"),
                                    Role::Viewer => ("admin", "Make admin"),
                                };
                                let toggle = match u.state {
                                    AccountState::Disabled => ("enable", "Enable"),
                                    _ => ("disable", "Disable"),
                                };
                                view! {
                                    <td>
                                        <ActionForm action=manage attr:class="row-actions" attr:data-testid=testid>
                                            <input type="hidden" name="username" value=name />
                                            <select name="action" aria-label=label>
                                                <option value=role_change.0>{role_change.1}</option>
                                                <option value=toggle.0>{toggle.1}</option>
                                                <option value="end-sessions">"Sign out everywhere"</option>
                                                <option value="delete">"Delete"</option>
                                            </select>
                                            <button type="submit">"Apply"</button>
                                        </ActionForm>
                                    </td>
                                }
                            });
                            view! {
                                <tr>
                                    <td>{u.username}</td>
                                    <td>{u.role.to_string()}</td>
                                    <td>{u.state.to_string().replace('_', " ")}</td>
                                    <td>{u.last_sign_in_at.map_or_else(|| "never".to_string(), time)}</td>
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
            Ok(true) => view! { <p class="ok" role="status">"Done."</p> }.into_any(),
            Ok(false) => {
                view! { <p class="muted" role="status">"Nothing to change."</p> }.into_any()
            }
            Err(e) => view! { <p class="error" role="alert">{e.to_string()}</p> }.into_any(),
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
        reset.value().get().and_then(Result::ok).map(|()| {
            "Password set; they choose their own at the next sign-in, and their sessions ended."
                .to_string()
        })
    };
    view! {
        <h3>"Reset a password"</h3>
        <ActionForm action=reset attr:class="form inline-form" attr:data-testid="reset-password">
            <div>
                <label for="reset-username">"Username"</label>
                <input id="reset-username" name="username" type="text" autocomplete="off" />
            </div>
            <div>
                <label for="reset-password">"Temporary password"</label>
                <input id="reset-password" name="password" type="password" autocomplete="new-password" />
                <p class="field-error">{field_error("password")}</p>
            </div>
            <div>
                <button type="submit">"Reset"</button>
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
        create
            .value()
            .get()
            .and_then(Result::ok)
            .map(|u| format!("Added {} ({}).", u.username, u.role))
    };

    view! {
        <h3>"Add a user"</h3>
        <ActionForm action=create attr:class="form inline-form" attr:data-testid="add-user">
            <div>
                <label for="new-username">"Username"</label>
                <input id="new-username" name="username" type="text" autocomplete="off" />
                <p class="field-error">{field_error("username")}</p>
            </div>
            <div>
                <label for="new-password">"Password"</label>
                <input id="new-password" name="password" type="password" autocomplete="new-password" />
                <p class="field-error">{field_error("password")}</p>
            </div>
            <div>
                <label for="new-role">"Role"</label>
                <select id="new-role" name="role">
                    <option value="viewer">"viewer"</option>
                    <option value="admin">"admin"</option>
                </select>
                <p class="field-error">{field_error("role")}</p>
            </div>
            <div>
                <button type="submit">"Add user"</button>
            </div>
        </ActionForm>
        <p class="ok" role="status">{created}</p>
        <p class="error" role="alert">{other_error}</p>
    }
}
