//! Settings: the accounts that may sign in. Admins add accounts; viewers see the list.

use leptos::prelude::*;
use leptos_meta::Title;

use crate::api::users::{CreateUser, list_users};
use crate::components::layout::use_current_user;

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
        <section class="card upcoming">
            <h2>"Still to come here"</h2>
            <ul>
                <li>"the nodes of a cluster sharing one PostgreSQL, with their heartbeats"</li>
                <li>"mail settings and the daily digest time"</li>
            </ul>
        </section>
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
