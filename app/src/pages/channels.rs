//! The Notifications page's Channels card: where alerts can go besides mail (WeCom, DingTalk,
//! Feishu, Slack, signed webhooks, e-mail lists). Everyone sees the channels and the last answer
//! each platform gave; admins add, test and remove them. A URL's token and a signing secret
//! are typed in once and never shown again.

use leptos::prelude::*;

use crate::api::AppError;
use crate::api::channels::{AddChannel, RemoveChannel, TestChannel, list_channels};
use crate::components::layout::use_is_admin;
use crate::domain::chat::ChannelKind;

#[component]
pub fn ChannelsCard() -> impl IntoView {
    let is_admin = use_is_admin();
    let add = ServerAction::<AddChannel>::new();
    let test = ServerAction::<TestChannel>::new();
    let remove = ServerAction::<RemoveChannel>::new();
    let channels = Resource::new(
        move || {
            (
                add.version().get(),
                test.version().get(),
                remove.version().get(),
            )
        },
        |_| list_channels(),
    );
    let tested = move || {
        test.value().get().map(|result| match result {
            Ok(t) if t.accepted => view! {
                <p class="ok" role="status">{format!("{} accepted: {}", t.name, t.answer)}</p>
            }
            .into_any(),
            Ok(t) => view! {
                <p class="error" role="alert">{format!("{} refused: {}", t.name, t.answer)}</p>
            }
            .into_any(),
            Err(e) => view! { <p class="error" role="alert">{e.to_string()}</p> }.into_any(),
        })
    };
    let add_error = move || {
        add.value()
            .get()
            .and_then(Result::err)
            .map(|e: AppError| e.to_string())
    };
    let time = |t: chrono::DateTime<chrono::Utc>| t.format("%Y-%m-%d %H:%M UTC").to_string();

    view! {
        <section class="card" data-testid="channels">
            <h2>"Channels"</h2>
            <p class="muted">
                "Chat robots and webhooks for alerts. A robot's URL carries its token: it is stored encrypted and only its host is shown."
            </p>
            <Transition fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    let admin = is_admin.await;
                    match channels.await {
                        Ok(rows) if rows.is_empty() => {
                            view! { <p class="muted">"No channels yet."</p> }.into_any()
                        }
                        Ok(rows) => view! {
                            <div class="table-scroll">
                                <table class="table" data-testid="channel-list">
                                    <thead>
                                        <tr>
                                            <th>"Name"</th>
                                            <th>"Kind"</th>
                                            <th>"Where"</th>
                                            <th>"Last answer"</th>
                                            {admin.then(|| view! { <th></th> })}
                                        </tr>
                                    </thead>
                                    <tbody>
                                        {rows
                                            .into_iter()
                                            .map(|c| {
                                                let name = c.name.clone();
                                                view! {
                                                    <tr>
                                                        <td>{c.name}</td>
                                                        <td>{c.kind.to_string()}{c.signed.then_some(" (signed)")}</td>
                                                        <td>{c.target}</td>
                                                        <td class="ua">
                                                            {c.last_answer.unwrap_or_else(|| "—".into())}
                                                            {c.last_delivery_at.map(|t| format!(" ({})", time(t)))}
                                                        </td>
                                                        {admin.then(move || {
                                                            let for_test = name.clone();
                                                            view! {
                                                            <td class="row-actions">
                                                                <ActionForm action=test>
                                                                    <input type="hidden" name="name" value=for_test />
                                                                    <button type="submit">"Send test"</button>
                                                                </ActionForm>
                                                                <ActionForm action=remove>
                                                                    <input type="hidden" name="name" value=name />
                                                                    <button type="submit" class="link">"Remove"</button>
                                                                </ActionForm>
                                                            </td>
                                                        }})}
                                                    </tr>
                                                }
                                            })
                                            .collect_view()}
                                    </tbody>
                                </table>
                            </div>
                        }
                        .into_any(),
                        Err(e) => view! { <p class="error">{e.to_string()}</p> }.into_any(),
                    }
                })}
            </Transition>
            <div data-testid="channel-test-answer">{tested}</div>
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    is_admin.await.then(|| view! {
                        <h3>"Add a channel"</h3>
                        <ActionForm action=add attr:class="form inline-form" attr:data-testid="add-channel">
                            <div>
                                <label for="channel-name">"Name"</label>
                                <input id="channel-name" name="name" type="text" autocomplete="off" />
                            </div>
                            <div>
                                <label for="channel-kind">"Kind"</label>
                                <select id="channel-kind" name="kind">
                                    {ChannelKind::WORDS
                                        .iter()
                                        .map(|k| view! { <option value=*k>{*k}</option> })
                                        .collect_view()}
                                </select>
                            </div>
                            <div>
                                <label for="channel-url">"URL"</label>
                                <input id="channel-url" name="url" type="password" autocomplete="off" />
                            </div>
                            <div>
                                <label for="channel-secret">"Signing secret (optional)"</label>
                                <input id="channel-secret" name="secret" type="password" autocomplete="off" />
                            </div>
                            <div>
                                <label for="channel-to">"Addresses (e-mail)"</label>
                                <input id="channel-to" name="to" type="text" autocomplete="off" />
                            </div>
                            <div>
                                <button type="submit">"Add channel"</button>
                            </div>
                        </ActionForm>
                        <p class="error" role="alert">{add_error}</p>
                    })
                })}
            </Suspense>
        </section>
    }
}
