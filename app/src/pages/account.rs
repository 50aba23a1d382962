//! The signed-in person's own account: a new password (the current one required), a second
//! factor, and the sessions they are signed in with, each of which they can end. After an administrator reset
//! their password this is the only page they can reach until they choose a new one.

use leptos::prelude::*;

use crate::i18n::current;
use crate::i18n::errors::Explain;
use leptos_meta::Title;

use crate::api::users::{ChangePassword, EndMySessions, SetMyLocale, my_sessions};
use crate::components::form::{LocaleSelect, field_error, other_error};
use crate::components::layout::use_current_user;
use crate::t;
use crate::views::users::SessionRow;

#[component]
pub fn AccountPage() -> impl IntoView {
    let me = use_current_user();
    let change = ServerAction::<ChangePassword>::new();
    let end = ServerAction::<EndMySessions>::new();
    let sessions = Resource::new(
        move || (change.version().get(), end.version().get()),
        |_| my_sessions(),
    );

    view! {
        <Title text=t!("account-title") />
        <h1>{t!("account-title")}</h1>
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                me.await
                    .ok()
                    .filter(|u| u.must_change_password)
                    .map(|_| {
                        view! {
                            <p class="warning" role="alert" data-testid="must-change">
                                {t!("account-must-change")}
                            </p>
                        }
                    })
            })}
        </Suspense>
        <section class="card">
            <h2>{t!("account-password-heading")}</h2>
            <ChangePasswordForm change />
        </section>
        <super::second_factor::SecondFactorCard />
        <section class="card">
            <h2>{t!("account-language-heading")}</h2>
            <LanguageForm me />
        </section>
        <section class="card">
            <h2>{t!("account-sessions-heading")}</h2>
            <Transition fallback=|| view! { <p class="muted">{t!("loading")}</p> }>
                {move || Suspend::new(async move {
                    match sessions.await {
                        Ok(rows) => view! { <SessionsTable rows end /> }.into_any(),
                        Err(e) => view! { <p class="error">{e.explain(current())}</p> }.into_any(),
                    }
                })}
            </Transition>
            <ActionForm action=end attr:data-testid="end-other-sessions">
                <input type="hidden" name="all" value="true" />
                <button type="submit">{t!("account-sign-out-elsewhere")}</button>
            </ActionForm>
            <p class="ok" role="status">
                {move || {
                    end.value()
                        .get()
                        .and_then(Result::ok)
                        .map(|n| t!("count-sessions-ended", count = n))
                }}
            </p>
        </section>
    }
}

#[component]
fn ChangePasswordForm(change: ServerAction<ChangePassword>) -> impl IntoView {
    let field_error = move |field| field_error(change.value(), field);
    let other_error = other_error(change.value());
    let done = move || {
        change
            .value()
            .get()
            .and_then(Result::ok)
            .map(|()| t!("account-password-changed"))
    };
    view! {
        <ActionForm action=change attr:class="form" attr:data-testid="change-password">
            <div>
                <label for="current-password">{t!("account-current-password")}</label>
                <input id="current-password" name="current" type="password" autocomplete="current-password" required />
                <p class="field-error">{field_error("current")}</p>
            </div>
            <div>
                <label for="new-password">{t!("account-new-password")}</label>
                <input id="new-password" name="password" type="password" autocomplete="new-password" required />
                <p class="field-error">{field_error("password")}</p>
            </div>
            <div>
                <button type="submit">{t!("account-change-password")}</button>
            </div>
        </ActionForm>
        <p class="ok" role="status">{done}</p>
        <p class="error" role="alert">{other_error}</p>
    }
}

#[component]
fn SessionsTable(rows: Vec<SessionRow>, end: ServerAction<EndMySessions>) -> impl IntoView {
    let time = |t: chrono::DateTime<chrono::Utc>| crate::i18n::stamp_minutes(t);
    view! {
        <div class="table-scroll">
            <table tabindex="0" class="table" data-testid="sessions">
                <thead>
                    <tr>
                        <th>{t!("account-session-signed-in")}</th>
                        <th>{t!("account-session-last-seen")}</th>
                        <th>{t!("account-session-address")}</th>
                        <th>{t!("account-session-browser")}</th>
                        <th></th>
                    </tr>
                </thead>
                <tbody>
                    {rows
                        .into_iter()
                        .map(|s| {
                            view! {
                                <tr>
                                    <td>{time(s.created_at)}</td>
                                    <td>{time(s.last_seen_at)}</td>
                                    <td>{s.ip.unwrap_or_else(|| "—".into())}</td>
                                    <td class="ua">{s.user_agent.unwrap_or_else(|| "—".into())}</td>
                                    <td>
                                        {if s.current {
                                            view! { <span class="muted">{t!("account-this-session")}</span> }.into_any()
                                        } else {
                                            view! {
                                                <ActionForm action=end>
                                                    <input type="hidden" name="id" value=s.id />
                                                    <button type="submit" class="link">{t!("account-sign-out")}</button>
                                                </ActionForm>
                                            }
                                                .into_any()
                                        }}
                                    </td>
                                </tr>
                            }
                        })
                        .collect_view()}
                </tbody>
            </table>
        </div>
    }
}

/// The person's own language, or their browser's. Saving reloads the page in it.
#[component]
fn LanguageForm(me: crate::components::layout::UserResource) -> impl IntoView {
    let save = ServerAction::<SetMyLocale>::new();
    Effect::new(move |_| {
        if let Some(Ok(())) = save.value().get() {
            let _ = window().location().reload();
        }
    });
    view! {
        <ActionForm action=save attr:class="form" attr:data-testid="language-form">
            <div>
                <label for="locale">{t!("account-language-label")}</label>
                <Suspense fallback=|| ()>
                    {move || {
                        Suspend::new(async move {
                            let chosen = me.await.ok().and_then(|u| u.locale);
                            view! {
                                <LocaleSelect id="locale" name="locale" chosen default_label=t!("account-language-browser") />
                            }
                        })
                    }}
                </Suspense>
                <p class="field-error">{field_error(save.value(), "locale")}</p>
            </div>
            <div>
                <button type="submit">{t!("account-language-save")}</button>
            </div>
        </ActionForm>
    }
}
