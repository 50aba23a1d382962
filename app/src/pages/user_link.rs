//! Settings → Users: how each person signs in, and linking a local account to a company
//! sign-in (what `bulwark user link` does) when OpenID providers are configured.

use leptos::prelude::*;

use crate::api::auth::sign_in_options;
use crate::api::users::LinkUser;
use crate::components::form::{field_error, other_error};
use crate::domain::sign_in::SignInMethod;
use crate::t;

/// An account's way of signing in, as the Users table shows it.
pub fn sign_in_name(method: &SignInMethod) -> String {
    match method {
        SignInMethod::Password => t!("users-sign-in-password"),
        SignInMethod::Header => t!("users-sign-in-header"),
        SignInMethod::Oidc(name) => name.clone(),
    }
}

/// The link form, shown only where a provider is configured.
#[component]
pub fn LinkUserForm(link: ServerAction<LinkUser>) -> impl IntoView {
    let options = Resource::new(|| (), |_| sign_in_options());
    let field_error = move |field| field_error(link.value(), field);
    let other_error = other_error(link.value());
    let done = move || {
        link.value()
            .get()
            .and_then(Result::ok)
            .map(|()| t!("users-linked"))
    };
    let form = move |providers: Vec<crate::views::users::ProviderInfo>| {
        view! {
            <h3>{t!("users-link-heading")}</h3>
            <ActionForm action=link attr:class="form inline-form" attr:data-testid="link-user">
                <div>
                    <label for="link-username">{t!("login-username")}</label>
                    <input id="link-username" name="username" type="text" autocomplete="off" />
                </div>
                <div>
                    <label for="link-provider">{t!("users-link-provider")}</label>
                    <select id="link-provider" name="provider">
                        {providers
                            .into_iter()
                            .map(|p| view! { <option value=p.name.clone()>{p.label}</option> })
                            .collect_view()}
                    </select>
                    <p class="field-error">{field_error("provider")}</p>
                </div>
                <div>
                    <label for="link-subject">{t!("users-link-subject")}</label>
                    <input id="link-subject" name="subject" type="text" autocomplete="off" />
                    <p class="field-error">{field_error("subject")}</p>
                </div>
                <div>
                    <button type="submit">{t!("users-link")}</button>
                </div>
            </ActionForm>
            <p class="ok" role="status">{done}</p>
            <p class="error" role="alert">{other_error}</p>
        }
    };
    view! {
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                options
                    .await
                    .ok()
                    .filter(|o| !o.providers.is_empty())
                    .map(|o| form(o.providers))
            })}
        </Suspense>
    }
}
