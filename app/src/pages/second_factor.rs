//! Account → Second factor: set up an authenticator app (a QR code, the seed as text, a first
//! code), see the recovery codes once, or turn it off with the password.

use leptos::prelude::*;

use crate::api::second_factor::{
    BeginSecondFactor, ConfirmSecondFactor, SecondFactorOff, my_second_factor,
};
use crate::components::form::{field_error, other_error};
use crate::i18n::current;
use crate::i18n::errors::Explain;
use crate::t;
use crate::views::users::{Enrolling, SecondFactorState};

#[component]
pub fn SecondFactorCard() -> impl IntoView {
    let begin = ServerAction::<BeginSecondFactor>::new();
    let confirm = ServerAction::<ConfirmSecondFactor>::new();
    let off = ServerAction::<SecondFactorOff>::new();
    let state = Resource::new(
        move || (confirm.version().get(), off.version().get()),
        |_| my_second_factor(),
    );
    let body = move |s: SecondFactorState| {
        match (s.local, s.on) {
        (false, _) => view! { <p class="muted">{t!("second-factor-not-local")}</p> }.into_any(),
        (true, true) => view! {
            <p data-testid="second-factor-on">{t!("second-factor-is-on")}</p>
            <RecoveryCodes confirm />
            <TurnOffForm off />
        }
        .into_any(),
        (true, false) => view! {
            {s.required.then(|| view! {
                <p class="warning" role="alert" data-testid="second-factor-required">{t!("second-factor-required")}</p>
            })}
            <p>{t!("second-factor-is-off")}</p>
            <ActionForm action=begin attr:data-testid="second-factor-begin">
                <button type="submit">{t!("second-factor-set-up")}</button>
            </ActionForm>
            {move || begin.value().get().map(|result| match result {
                Ok(enrolling) => view! { <Enrol enrolling confirm /> }.into_any(),
                Err(e) => view! { <p class="error" role="alert">{e.explain(current())}</p> }.into_any(),
            })}
        }
        .into_any(),
    }
    };
    view! {
        <section class="card" data-testid="second-factor">
            <h2>{t!("second-factor-heading")}</h2>
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    match state.await {
                        Ok(s) => body(s),
                        Err(e) => view! { <p class="error">{e.explain(current())}</p> }.into_any(),
                    }
                })}
            </Suspense>
        </section>
    }
}

/// The QR code and seed of an enrolment under way, and the first code that turns it on.
#[component]
fn Enrol(enrolling: Enrolling, confirm: ServerAction<ConfirmSecondFactor>) -> impl IntoView {
    let field_error = move |field| field_error(confirm.value(), field);
    let other_error = other_error(confirm.value());
    view! {
        <p>{t!("second-factor-scan")}</p>
        // The SVG is drawn on the server from the link it built: no outside text reaches it.
        <div class="qr" inner_html=enrolling.qr_svg data-testid="second-factor-qr"></div>
        <p>
            {t!("second-factor-or-type")}" "
            <code data-testid="second-factor-secret">{enrolling.secret}</code>
        </p>
        <ActionForm action=confirm attr:class="form inline-form" attr:data-testid="second-factor-confirm">
            <div>
                <label for="second-factor-code">{t!("second-factor-code")}</label>
                <input id="second-factor-code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" />
                <p class="field-error">{field_error("code")}</p>
            </div>
            <div>
                <button type="submit">{t!("second-factor-turn-on")}</button>
            </div>
        </ActionForm>
        <p class="error" role="alert">{other_error}</p>
    }
}

/// The recovery codes, right after the second factor was turned on: shown this once.
#[component]
fn RecoveryCodes(confirm: ServerAction<ConfirmSecondFactor>) -> impl IntoView {
    move || {
        confirm.value().get().and_then(Result::ok).map(|codes| {
            view! {
                <p class="warning" role="status">{t!("second-factor-codes-once")}</p>
                <ul class="recovery-codes" data-testid="recovery-codes">
                    {codes.into_iter().map(|c| view! { <li><code>{c}</code></li> }).collect_view()}
                </ul>
            }
        })
    }
}

#[component]
fn TurnOffForm(off: ServerAction<SecondFactorOff>) -> impl IntoView {
    let field_error = move |field| field_error(off.value(), field);
    let other_error = other_error(off.value());
    view! {
        <ActionForm action=off attr:class="form inline-form" attr:data-testid="second-factor-off">
            <div>
                <label for="second-factor-password">{t!("account-current-password")}</label>
                <input id="second-factor-password" name="password" type="password" autocomplete="current-password" />
                <p class="field-error">{field_error("password")}</p>
            </div>
            <div>
                <button type="submit">{t!("second-factor-turn-off")}</button>
            </div>
        </ActionForm>
        <p class="error" role="alert">{other_error}</p>
    }
}
