//! The frame the administration cards share (accounts, secrets, tokens, channels, sites): a
//! list loaded from a resource — "loading…", then the rows drawn for an admin or a viewer, or
//! the error in the reader's words — and a part only admins see (the form that adds one).

use leptos::prelude::*;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::api::AppError;
use crate::i18n::current;
use crate::i18n::errors::Explain;
use crate::t;

/// `rows` as `table` draws them, told whether the reader is an admin (the server functions
/// check again); `table` also says what an empty list says.
#[component]
pub fn AdminList<T, F, V>(
    rows: Resource<Result<Vec<T>, AppError>>,
    is_admin: Resource<bool>,
    table: F,
) -> impl IntoView
where
    T: Clone + Send + Sync + Serialize + DeserializeOwned + 'static,
    F: Fn(Vec<T>, bool) -> V + Clone + Send + Sync + 'static,
    V: IntoView + 'static,
{
    view! {
        <Transition fallback=|| view! { <p class="muted">{t!("loading")}</p> }>
            {move || {
                let table = table.clone();
                Suspend::new(async move {
                    let admin = is_admin.await;
                    match rows.await {
                        Ok(rows) => table(rows, admin).into_any(),
                        Err(e) => view! { <p class="error">{e.explain(current())}</p> }.into_any(),
                    }
                })
            }}
        </Transition>
    }
}

/// Its children for admins, nothing for everyone else.
#[component]
pub fn AdminOnly(is_admin: Resource<bool>, children: ChildrenFn) -> impl IntoView {
    view! {
        <Suspense fallback=|| ()>
            {move || {
                let children = children.clone();
                Suspend::new(async move { is_admin.await.then(|| children()) })
            }}
        </Suspense>
    }
}
