//! The frame around every signed-in page: navigation, who is signed in, sign out, and the
//! maintenance banner while jobs are paused.

use leptos::prelude::*;

use crate::i18n::current;
use crate::i18n::errors::Explain;
use leptos_router::components::{A, Outlet, Redirect};

use crate::api::AppError;
use crate::api::auth::{Logout, whoami};
use crate::api::maintenance::get_maintenance;
use crate::api::users::SetMyLocale;
use crate::domain::account::CurrentUser;
use crate::i18n::Locale;
use crate::t;
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
    let question = crate::t!(
        "paused-confirm",
        reason = window.reason.clone(),
        by = window.created_by.clone()
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

/// Each page of the navigation and its label's message.
const NAV: &[(&str, &str)] = &[
    ("/", crate::key!("nav-overview")),
    ("/jobs", crate::key!("nav-jobs")),
    ("/runs", crate::key!("nav-runs")),
    ("/failed", crate::key!("nav-failed")),
    ("/traffic", crate::key!("nav-traffic")),
    ("/notifications", crate::key!("nav-notifications")),
    ("/settings", crate::key!("nav-settings")),
];

#[component]
pub fn Layout() -> impl IntoView {
    // Created when the layout mounts, i.e. after every sign-in: never a stale identity.
    let me: UserResource = Resource::new_blocking(|| (), |_| whoami());
    provide_context(me);
    let logout = ServerAction::<Logout>::new();
    let tick = crate::components::ticker::use_ticker(15_000);
    let maintenance = Resource::new(move || tick.get(), |_| get_maintenance());
    provide_context(MaintenanceResource(maintenance));
    let locale = crate::i18n::current();

    view! {
        <div class="frame">
            <header class="topbar">
                <a class="brand" href="/">"Bulwark"</a>
                <nav class="mainnav" aria-label=t!("nav-label")>
                    {NAV
                        .iter()
                        .map(|(href, label)| {
                            view! {
                                <A href=*href exact=true>
                                    {locale.text(label)}
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
                                            {crate::i18n::words::role_name(user.role)}
                                        </span>
                                        <LanguageSwitcher />
                                        <ActionForm action=logout>
                                            <button type="submit" class="link">
                                                {t!("nav-sign-out")}
                                            </button>
                                        </ActionForm>
                                    </div>
                                }
                                    .into_any()
                            }
                            Err(AppError::Unauthenticated) => {
                                view! { <Redirect path="/login" /> }.into_any()
                            }
                            Err(e) => view! { <p class="error">{e.explain(current())}</p> }.into_any(),
                        }
                    })}
                </Suspense>
            </header>
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    maintenance
                        .await
                        .ok()
                        .and_then(|status| status.summary(crate::i18n::current()))
                        .map(|summary| {
                            view! {
                                <div class="banner" role="status" data-testid="maintenance-banner">
                                    <strong>{summary}</strong>
                                    " "
                                    <a href="/maintenance">{t!("banner-maintenance-link")}</a>
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

/// The header's language menu: choosing one saves it as the person's own setting and reloads
/// the page, which the server then renders in that language.
#[component]
fn LanguageSwitcher() -> impl IntoView {
    let save = ServerAction::<SetMyLocale>::new();
    let current = crate::i18n::current();
    Effect::new(move |_| {
        if let Some(Ok(())) = save.value().get() {
            let _ = window().location().reload();
        }
    });
    view! {
        <label class="language">
            <span class="visually-hidden">{t!("nav-language")}</span>
            <select
                data-testid="language-switcher"
                on:change=move |ev| {
                    save.dispatch(SetMyLocale { locale: event_target_value(&ev) });
                }
            >
                {Locale::all()
                    .map(|l| {
                        view! {
                            <option value=l.tag() selected=l == current lang=l.tag()>
                                {l.name()}
                            </option>
                        }
                    })
                    .collect_view()}
            </select>
        </label>
    }
}
