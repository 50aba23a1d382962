//! The frame around every signed-in page: navigation, who is signed in, sign out, and the
//! maintenance banner while jobs are paused.

use leptos::prelude::*;
use leptos_router::components::{A, Outlet, Redirect};

use crate::api::AppError;
use crate::api::auth::{Logout, whoami};
use crate::api::maintenance::get_maintenance;
use crate::domain::account::CurrentUser;
use crate::views::maintenance::MaintenanceStatus;

pub type UserResource = Resource<Result<CurrentUser, AppError>>;

/// Whether (and why) jobs are paused, polled by the layout for the banner; pages that start
/// runs read it to ask first ([`confirm_while_paused`]) and refetch it after a change.
#[derive(Clone, Copy)]
pub struct MaintenanceResource(pub Resource<Result<MaintenanceStatus, AppError>>);

pub fn use_maintenance() -> MaintenanceResource {
    expect_context::<MaintenanceResource>()
}

/// Asks before a run is started by hand while every job is paused (it will run: a pause holds
/// only cron ticks and retries). `true`: go ahead.
pub fn confirm_while_paused() -> bool {
    let Some(MaintenanceResource(status)) = use_context::<MaintenanceResource>() else {
        return true;
    };
    let Some(Ok(status)) = status.get_untracked() else {
        return true;
    };
    let Some(window) = status.pausing_all() else {
        return true;
    };
    let question = format!(
        "Bulwark is paused ({}, by {}). Start this run anyway?",
        window.reason, window.created_by
    );
    #[cfg(feature = "hydrate")]
    {
        web_sys::window()
            .and_then(|w| w.confirm_with_message(&question).ok())
            .unwrap_or(false)
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = question;
        true
    }
}

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
    let tick = crate::pages::runs::use_ticker(15_000);
    let maintenance = Resource::new(move || tick.get(), |_| get_maintenance());
    provide_context(MaintenanceResource(maintenance));

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
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    maintenance
                        .await
                        .ok()
                        .and_then(|status| status.summary())
                        .map(|summary| {
                            view! {
                                <div class="banner" role="status" data-testid="maintenance-banner">
                                    <strong>{summary}</strong>
                                    " "
                                    <a href="/maintenance">"Maintenance"</a>
                                </div>
                            }
                        })
                })}
            </Transition>
            <main class="content">
                <Outlet />
            </main>
        </div>
    }
}
