//! Settings: the accounts that may sign in (admins add accounts; viewers see the list), and
//! the nodes sharing the database.

use leptos::prelude::*;
use leptos_meta::Title;

use crate::api::nodes::list_nodes;
use crate::api::users::{CreateUser, list_users};
use crate::components::layout::use_current_user;
use crate::domain::node::{
    DEFAULT_LEASE_SECONDS, HEARTBEAT_SECONDS, LOST_AFTER_SECONDS, NodeState, skew_warning,
};
use crate::views::nodes::NodeView;

#[component]
pub fn SettingsPage() -> impl IntoView {
    let me = use_current_user();
    let create = ServerAction::<CreateUser>::new();
    let users = Resource::new(move || create.version().get(), |_| list_users());

    view! {
        <Title text="Settings" />
        <h1>"Settings"</h1>
        <section class="card">
            <h2>"Users"</h2>
            <Transition fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match users.await {
                        Ok(rows) => {
                            view! {
                                <table class="table" data-testid="users">
                                    <thead>
                                        <tr>
                                            <th>"Username"</th>
                                            <th>"Role"</th>
                                            <th>"Created"</th>
                                        </tr>
                                    </thead>
                                    <tbody>
                                        {rows
                                            .into_iter()
                                            .map(|u| {
                                                view! {
                                                    <tr>
                                                        <td>{u.username}</td>
                                                        <td>{u.role.to_string()}</td>
                                                        <td>{u.created_at.format("%Y-%m-%d %H:%M UTC").to_string()}</td>
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
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    let admin = me.await.map(|u| u.is_admin()).unwrap_or(false);
                    if admin {
                        view! { <AddUserForm create /> }.into_any()
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

/// Every `bulwark serve` sharing this database, with its heartbeat and clock.
#[component]
fn NodesCard() -> impl IntoView {
    let nodes = Resource::new(|| (), |_| list_nodes());
    view! {
        <section class="card">
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
        <table class="table" data-testid="nodes">
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

#[component]
fn AddUserForm(create: ServerAction<CreateUser>) -> impl IntoView {
    let error = move || create.value().get().and_then(Result::err);
    let field_error = move |field: &'static str| move || error().and_then(|e| e.for_field(field));
    let other_error = move || {
        error()
            .filter(|e| !matches!(e, crate::api::AppError::Invalid { .. }))
            .map(|e| e.to_string())
    };
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
