//! The Notifications page's Channels card: where alerts can go besides mail (WeCom, DingTalk,
//! Feishu, Slack, signed webhooks, e-mail lists). Everyone sees the channels and the last answer
//! each platform gave; admins add, edit, test and remove them. A URL's token and a signing
//! secret are typed in once and never shown again. Below it, every message sent to a channel
//! with the platform's answer, and a resend for admins.

use crate::i18n::words::{channel_kind, delivery_status};
use crate::t;
use leptos::prelude::*;

use crate::i18n::current;
use crate::i18n::errors::Explain;

use crate::api::AppError;
use crate::api::channels::{
    AddChannel, EditChannel, RemoveChannel, ResendDelivery, TestChannel, deliveries, list_channels,
};
use crate::components::admin_list::{AdminList, AdminOnly};
use crate::components::form::LocaleSelect;
use crate::components::layout::use_is_admin;
use crate::domain::chat::ChannelKind;
use crate::domain::chat::DeliveryStatus;
use crate::views::channels::{ChannelRow, DeliveryRow};

/// The card's server actions: the list reloads when one of them answers.
#[derive(Clone, Copy)]
struct Actions {
    add: ServerAction<AddChannel>,
    test: ServerAction<TestChannel>,
    remove: ServerAction<RemoveChannel>,
    change: ServerAction<EditChannel>,
}

impl Actions {
    fn new() -> Self {
        Self {
            add: ServerAction::new(),
            test: ServerAction::new(),
            remove: ServerAction::new(),
            change: ServerAction::new(),
        }
    }

    fn changes(&self) -> [usize; 4] {
        [
            self.add.version().get(),
            self.test.version().get(),
            self.remove.version().get(),
            self.change.version().get(),
        ]
    }

    /// What the platform said to the last test message.
    fn tested(&self) -> Option<AnyView> {
        self.test.value().get().map(|result| match result {
            Ok(t) if t.accepted => view! {
                <p class="ok" role="status">{format!("{} accepted: {}", t.name, t.answer)}</p>
            }
            .into_any(),
            Ok(t) => view! {
                <p class="error" role="alert">{format!("{} refused: {}", t.name, t.answer)}</p>
            }
            .into_any(),
            Err(e) => view! { <p class="error" role="alert">{e.explain(current())}</p> }.into_any(),
        })
    }

    /// Why the last edit or removal was refused.
    fn row_error(&self) -> Option<String> {
        [self.remove.value().get(), self.change.value().get()]
            .into_iter()
            .flatten()
            .find_map(Result::err)
            .map(|e: AppError| e.explain(current()))
    }
}

#[component]
pub fn ChannelsCard() -> impl IntoView {
    let is_admin = use_is_admin();
    let actions = Actions::new();
    let channels = Resource::new(move || actions.changes(), |_| list_channels());
    let changed = move || {
        actions
            .change
            .value()
            .get()
            .and_then(Result::ok)
            .map(|()| t!("account-language-saved"))
    };
    view! {
        <section class="card" data-testid="channels">
            <h2>{t!("channels-heading")}</h2>
            <p class="muted">{t!("channels-explained")}</p>
            <AdminList rows=channels is_admin table=move |rows, admin| {
                if rows.is_empty() {
                    return view! { <p class="muted">{t!("channels-none")}</p> }.into_any();
                }
                channel_table(rows, admin.then_some(actions)).into_any()
            } />
            <div data-testid="channel-test-answer">{move || actions.tested()}</div>
            <p class="error" role="alert">{move || actions.row_error()}</p>
            <p class="ok" role="status">{changed}</p>
            <AdminOnly is_admin><AddChannelForm add=actions.add /></AdminOnly>
        </section>
    }
}

/// The channels, with an admin's actions on each (`actions` is `None` for everyone else).
fn channel_table(rows: Vec<ChannelRow>, actions: Option<Actions>) -> impl IntoView {
    view! {
        <div class="table-scroll">
            <table tabindex="0" class="table" data-testid="channel-list">
                <thead>
                    <tr>
                        <th>{t!("jobs-col-name")}</th>
                        <th>{t!("jobs-filter-kind")}</th>
                        <th>{t!("channels-where")}</th>
                        <th>{t!("channels-last-answer")}</th>
                        {actions.map(|_| view! { <th></th> })}
                    </tr>
                </thead>
                <tbody>{rows.into_iter().map(|c| channel_row(c, actions)).collect_view()}</tbody>
            </table>
        </div>
    }
}

fn channel_row(c: ChannelRow, actions: Option<Actions>) -> impl IntoView {
    let signed = c.signed.then(|| format!(" {}", t!("channels-signed")));
    let last_at = c
        .last_delivery_at
        .map(|t| format!(" ({})", crate::i18n::stamp_minutes(t)));
    let cells = actions.map(|actions| view! { <ChannelActions channel=c.clone() actions /> });
    view! {
        <tr>
            <td>{c.name}</td>
            <td>{channel_kind(c.kind)}{signed}</td>
            <td>{c.target}</td>
            <td class="ua">{c.last_answer.unwrap_or_else(|| "—".into())}{last_at}</td>
            {cells}
        </tr>
    }
}

/// Send test, Edit (a URL, a secret or addresses, and the language) and Remove.
#[component]
fn ChannelActions(channel: ChannelRow, actions: Actions) -> impl IntoView {
    let (for_test, for_edit, name) = (channel.name.clone(), channel.name.clone(), channel.name);
    let locale = channel.locale;
    let fields = if channel.kind == ChannelKind::Email {
        view! {
            <label>{t!("channels-addresses-edit")}
                <input name="to" type="text" value=channel.target autocomplete="off" />
            </label>
        }
        .into_any()
    } else {
        view! {
            <label>{t!("channels-new-url")}
                <input name="url" type="password" autocomplete="off" />
            </label>
            <label>{t!("channels-new-secret")}
                <input name="secret" type="password" autocomplete="off" />
            </label>
            <label class="check">
                <input name="clear_secret" type="checkbox" value="1" />
                {t!("channels-remove-secret")}
            </label>
        }
        .into_any()
    };
    view! {
        <td class="row-actions">
            <ActionForm action=actions.test>
                <input type="hidden" name="name" value=for_test />
                <button type="submit">{t!("channels-send-test")}</button>
            </ActionForm>
            <details class="edit-channel">
                <summary>{t!("channels-edit")}</summary>
                <ActionForm action=actions.change attr:class="form">
                    <input type="hidden" name="name" value=for_edit />
                    {fields}
                    <label>{t!("channels-locale")}
                        <LocaleSelect name="locale" chosen=locale default_label=t!("channels-locale-default") />
                    </label>
                    <button type="submit">{t!("account-language-save")}</button>
                </ActionForm>
            </details>
            <ActionForm action=actions.remove>
                <input type="hidden" name="name" value=name />
                <button type="submit" class="link">{t!("channels-remove")}</button>
            </ActionForm>
        </td>
    }
}

#[component]
fn AddChannelForm(add: ServerAction<AddChannel>) -> impl IntoView {
    let add_error = move || {
        add.value()
            .get()
            .and_then(Result::err)
            .map(|e: AppError| e.explain(current()))
    };
    let kinds = ChannelKind::ALL
        .iter()
        .map(|k| view! { <option value=k.as_str()>{channel_kind(*k)}</option> })
        .collect_view();
    view! {
        <h3>{t!("channels-add-heading")}</h3>
        <ActionForm action=add attr:class="form inline-form" attr:data-testid="add-channel">
            <div>
                <label for="channel-name">{t!("jobs-col-name")}</label>
                <input id="channel-name" name="name" type="text" autocomplete="off" />
            </div>
            <div>
                <label for="channel-kind">{t!("jobs-filter-kind")}</label>
                <select id="channel-kind" name="kind">{kinds}</select>
            </div>
            <div>
                <label for="channel-url">{t!("channels-url")}</label>
                <input id="channel-url" name="url" type="password" autocomplete="off" />
            </div>
            <div>
                <label for="channel-secret">{t!("channels-secret")}</label>
                <input id="channel-secret" name="secret" type="password" autocomplete="off" />
            </div>
            <div>
                <label for="channel-to">{t!("channels-addresses")}</label>
                <input id="channel-to" name="to" type="text" autocomplete="off" />
            </div>
            <div>
                <button type="submit">{t!("channels-add")}</button>
            </div>
        </ActionForm>
        <p class="error" role="alert">{add_error}</p>
    }
}

/// Every message sent (or to send) to a channel: its status, attempts and the platform's
/// answer; admins resend one (it keeps its webhook-id, so a receiver sees the same message).
#[component]
pub fn DeliveriesCard() -> impl IntoView {
    let is_admin = use_is_admin();
    let resend = ServerAction::<ResendDelivery>::new();
    let rows = Resource::new(move || resend.version().get(), |_| deliveries(None));
    let resend_error = move || {
        resend
            .value()
            .get()
            .and_then(Result::err)
            .map(|e: AppError| e.explain(current()))
    };
    view! {
        <section class="card">
            <h2>{t!("deliveries-heading")}</h2>
            <p class="muted">
                {t!("deliveries-explained")}
            </p>
            <p class="error" role="alert">{resend_error}</p>
            <Transition fallback=|| view! { <p class="muted">{t!("loading")}</p> }>
                {move || Suspend::new(async move {
                    let admin = is_admin.await;
                    match rows.await {
                        Ok(rows) if rows.is_empty() => {
                            view! { <p class="muted" data-testid="deliveries-empty">{t!("deliveries-none")}</p> }.into_any()
                        }
                        Ok(rows) => view! { <DeliveriesTable rows admin resend /> }.into_any(),
                        Err(e) => view! { <p class="error">{e.explain(current())}</p> }.into_any(),
                    }
                })}
            </Transition>
        </section>
    }
}

#[component]
fn DeliveriesTable(
    rows: Vec<DeliveryRow>,
    admin: bool,
    resend: ServerAction<ResendDelivery>,
) -> impl IntoView {
    let time = crate::i18n::stamp;
    view! {
        <div class="table-scroll">
            <table tabindex="0" class="table" data-testid="deliveries">
                <thead>
                    <tr>
                        <th>"#"</th>
                        <th>{t!("deliveries-queued")}</th>
                        <th>{t!("deliveries-channel")}</th>
                        <th>{t!("run-col-message")}</th>
                        <th>{t!("runs-filter-status")}</th>
                        <th>{t!("runs-col-attempts")}</th>
                        <th>{t!("deliveries-answer")}</th>
                        {admin.then(|| view! { <th></th> })}
                    </tr>
                </thead>
                <tbody>
                    {rows
                        .into_iter()
                        .map(|d| {
                            let pill = match d.status {
                                DeliveryStatus::Sent | DeliveryStatus::Summarised => "pill ok",
                                DeliveryStatus::Failed => "pill bad",
                                DeliveryStatus::Pending => "pill warn",
                            };
                            let mut answer = d.answer.clone().unwrap_or_default();
                            if d.status == DeliveryStatus::Pending {
                                let at = crate::i18n::clock(d.next_attempt_at);
                                let why = if d.held { t!("deliveries-held", at = at) } else { t!("deliveries-next-try", at = at) };
                                answer = format!("{answer} — {why}");
                            }
                            if let Some(summary) = d.merged_into {
                                answer = t!("deliveries-in-summary", summary = summary);
                            }
                            let id = d.id;
                            let status = d.status.as_str();
                            let title = match d.run_id {
                                Some(run) => view! { <a href=format!("/runs/{run}")>{d.title}</a> }.into_any(),
                                None => view! { <span>{d.title}</span> }.into_any(),
                            };
                            view! {
                                <tr data-delivery=id data-status=status>
                                    <td>{id}</td>
                                    <td>{time(d.created_at)}</td>
                                    <td>{d.channel}</td>
                                    <td>{title} <span class="muted">{format!(" ({})", d.kind)}</span></td>
                                    <td><span class=pill>{delivery_status(d.status)}</span></td>
                                    <td>{d.attempts}</td>
                                    <td class="answer">{answer}</td>
                                    {admin.then(|| view! {
                                        <td>
                                            <button type="button" on:click=move |_| {
                                                resend.dispatch(ResendDelivery { id });
                                            }>{t!("deliveries-resend")}</button>
                                        </td>
                                    })}
                                </tr>
                            }
                        })
                        .collect_view()}
                </tbody>
            </table>
        </div>
    }
}
