//! Traffic → Sites: the sites' share links. Everyone reads the list; admins make and revoke
//! links, and see a new link once, when it is made.

use leptos::prelude::*;

use crate::api::traffic::{CreateShare, RevokeShare};
use crate::components::form::{field_error, other_error};
use crate::t;
use crate::views::traffic::{ShareInfo, SiteInfo};

/// The links, each with its revoke button for admins.
#[component]
pub(super) fn ShareList(
    shares: Vec<ShareInfo>,
    admin: bool,
    revoke: ServerAction<RevokeShare>,
) -> impl IntoView {
    let rows = shares
        .into_iter()
        .map(|s| {
            let (site, key) = (s.site.clone(), s.site.clone());
            let expires = s
                .expires_at
                .map_or_else(|| t!("sites-share-never"), crate::i18n::stamp_minutes);
            let protected = if s.protected { "✓" } else { "" };
            view! {
                <tr data-site=key>
                    <td>{s.site}</td>
                    <td>{protected}</td>
                    <td>{expires}</td>
                    <td>{s.created_by}</td>
                    <td>{admin.then(|| view! {
                        <ActionForm action=revoke>
                            <input type="hidden" name="site" value=site />
                            <button type="submit" class="link danger">{t!("sites-share-revoke")}</button>
                        </ActionForm>
                    })}</td>
                </tr>
            }
            .into_any()
        })
        .collect();
    let headers = vec![
        t!("sites-share-site"),
        t!("sites-share-protected"),
        t!("sites-share-expires"),
        t!("audit-who"),
    ];
    let body = super::card_table(t!("sites-shares-none"), headers, rows);
    view! {
        <section class="card" data-testid="shares">
            <h2>{t!("sites-shares-heading")}</h2>
            <p class="muted small">{t!("sites-shares-explained")}</p>
            {body}
            <p class="error" role="alert">{other_error(revoke.value())}</p>
        </section>
    }
}

/// The form making a link for one of the registered sites (the console's own is never shared).
#[component]
pub(super) fn MakeShareForm(
    sites: Vec<SiteInfo>,
    make: ServerAction<CreateShare>,
) -> impl IntoView {
    let options = sites
        .into_iter()
        .filter(|s| !s.console)
        .map(|s| {
            let host = s.host.clone();
            view! { <option value=host>{s.host}</option> }
        })
        .collect_view();
    let made = move || {
        make.value().get().and_then(Result::ok).map(|link| {
            view! {
                <p class="small">{t!("sites-share-made")}" "<code data-testid="share-link">{link}</code></p>
            }
        })
    };
    view! {
        <section class="card">
            <h2>{t!("sites-share-make-heading")}</h2>
            <ActionForm action=make attr:class="form" attr:data-testid="make-share">
                <label for="share-site">{t!("sites-share-site")}</label>
                <select id="share-site" name="site">{options}</select>
                <p class="field-error">{field_error(make.value(), "site")}</p>
                <label for="share-password-new">{t!("sites-share-password-label")}</label>
                <input id="share-password-new" name="password" type="password" autocomplete="new-password" />
                <p class="field-error">{field_error(make.value(), "password")}</p>
                <label for="share-expires">{t!("sites-share-expires-label")}</label>
                <input id="share-expires" name="expires" type="text" autocomplete="off" />
                <p class="field-error">{field_error(make.value(), "expires")}</p>
                <button type="submit">{t!("sites-share-make")}</button>
            </ActionForm>
            {made}
            <p class="error" role="alert">{other_error(make.value())}</p>
        </section>
    }
}
