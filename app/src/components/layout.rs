//! The frame around every signed-in page: navigation, who is signed in, sign out.

use leptos::prelude::*;
use leptos_router::components::{A, Outlet, Redirect};

use crate::api::AppError;
use crate::api::auth::{Logout, whoami};
use crate::domain::account::CurrentUser;

pub type UserResource = Resource<Result<CurrentUser, AppError>>;

/// The signed-in user, for pages that show admin-only controls. Read it inside a `Suspense`.
pub fn use_current_user() -> UserResource {
    expect_context::<UserResource>()
}

/// Whether the signed-in user is an admin, as a resource: what pages show admin controls by
/// (the server functions check again).
pub fn use_is_admin() -> Resource<bool> {
    let me = use_current_user();
    Resource::new(
        || (),
        move |_| async move { me.await.map(|u| u.is_admin()).unwrap_or(false) },
    )
}

const NAV: &[(&str, &str)] = &[
    ("/", "Overview"),
    ("/jobs", "Jobs"),
    ("/runs", "Runs"),
    ("/failed", "Failed queue"),
    ("/traffic", "Traffic"),
    ("/notifications", "Notifications"),
    ("/settings", "Settings"),
];

#[component]
pub fn Layout() -> impl IntoView {
    // Created when the layout mounts, i.e. after every sign-in: never a stale identity.
    let me: UserResource = Resource::new_blocking(|| (), |_| whoami());
    provide_context(me);
    let logout = ServerAction::<Logout>::new();

    view! {
        <div class="frame">
            <header class="topbar">
                <a class="brand" href="/">"Bulwark"</a>
                <nav class="mainnav" aria-label="Main">
                    {NAV
                        .iter()
                        .map(|(href, label)| {
                            view! {
                                <A href=*href exact=true>
                                    {*label}
                                </A>
                            }
                        })
                        .collect_view()}
                </nav>
                <Suspense fallback=|| ()>
                    {move || Suspend::new(async move {
                        match me.await {
                            Ok(user) => {
                                view! {
                                    <div class="who">
                                        <a href="/account" class="user" data-testid="current-user">
                                            {user.username.clone()}
                                        </a>
                                        <span class=format!("role role-{}", user.role)>
                                            {user.role.to_string()}
                                        </span>
                                        <ActionForm action=logout>
                                            <button type="submit" class="link">
                                                "Sign out"
                                            </button>
                                        </ActionForm>
                                    </div>
                                }
                                    .into_any()
                            }
                            Err(AppError::Unauthenticated) => {
                                view! { <Redirect path="/login" /> }.into_any()
                            }
                            Err(e) => view! { <p class="error">{e.to_string()}</p> }.into_any(),
                        }
                    })}
                </Suspense>
            </header>
            <main class="content">
                <Outlet />
            </main>
        </div>
    }
}
