//! Notifications: where mail goes and who gets the digest when (admins change it; everyone
//! reads), a test mail that shows the SMTP server's answer, each job's alert recipients, and
//! the outbox — every mail with its status, attempts and last error, a preview and a resend.

use crate::i18n::words::mail_status;
use crate::t;
use leptos::prelude::*;

use crate::i18n::current;
use crate::i18n::errors::Explain;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::api::AppError;
use crate::api::notifications::{
    ResendMail, SaveMailSettings, SendTestMail, mail_settings, outbox, preview_mail,
};
use crate::components::form::{LocaleSelect, field_error};
use crate::components::layout::{use_current_user, use_is_admin};
use crate::domain::mail::MailStatus;
use crate::views::notifications::{AlertRoute, MailSettingsView, OutboxRow};

#[component]
pub fn NotificationsPage() -> impl IntoView {
    let save = ServerAction::<SaveMailSettings>::new();
    let test = ServerAction::<SendTestMail>::new();
    let resend = ServerAction::<ResendMail>::new();
    // Refetched after a successful save only: a refused one keeps what was typed in the form.
    let settings = Resource::new(
        move || save.value().get().and_then(Result::ok),
        |_| mail_settings(),
    );
    view! {
        <Title text=t!("nav-notifications") />
        <h1>{t!("nav-notifications")}</h1>
        <Transition fallback=|| view! { <p class="muted">{t!("loading")}</p> }>
            {move || Suspend::new(async move {
                match settings.await {
                    Ok(view) => view! { <SettingsCard view save test /> }.into_any(),
                    Err(e) => view! { <p class="error">{e.explain(current())}</p> }.into_any(),
                }
            })}
        </Transition>
        <super::channels::ChannelsCard />
        <super::channels::DeliveriesCard />
        <OutboxCard resend test />
    }
}

#[component]
fn SettingsCard(
    view: MailSettingsView,
    save: ServerAction<SaveMailSettings>,
    test: ServerAction<SendTestMail>,
) -> impl IntoView {
    let me = use_current_user();
    let MailSettingsView { route, routes, .. } = view.clone();
    let settings = view;
    view! {
        <section class="card">
            <h2>{t!("mail-heading")}</h2>
            <p data-testid="mail-route">{t!("mail-route")}" " <b>{route}</b></p>
            <Suspense fallback=|| ()>
                {move || {
                    let settings = settings.clone();
                    Suspend::new(async move {
                        if !me.await.map(|u| u.is_admin()).unwrap_or(false) {
                            return digest_summary(&settings).into_any();
                        }
                        view! {
                            <DigestForm settings save />
                            <TestMailForm test />
                        }
                        .into_any()
                    })
                }}
            </Suspense>
            <h3>{t!("mail-routes-heading")}</h3>
            <p class="muted">{t!("mail-routes-explained")}</p>
            {routes_table(routes)}
        </section>
    }
}

/// Who gets the digest when, as a viewer reads it.
fn digest_summary(settings: &MailSettingsView) -> impl IntoView {
    let to = if settings.digest_to.is_empty() {
        t!("mail-digest-everyone")
    } else {
        settings.digest_to.clone()
    };
    let channels = if settings.digest_channels.is_empty() {
        String::new()
    } else {
        let channels = settings.digest_channels.clone();
        format!(" {}", t!("mail-digest-and-channels", channels = channels))
    };
    let time = format!("{} ({})", settings.digest_time, settings.digest_timezone);
    view! {
        <p>{t!("mail-digest-summary", to = to, channels = channels, time = time)}</p>
        <p class="muted">{t!("mail-viewer-note")}</p>
    }
}

/// The digest's recipients, channels and time, and the language of mails.
#[component]
fn DigestForm(settings: MailSettingsView, save: ServerAction<SaveMailSettings>) -> impl IntoView {
    let default_name = crate::i18n::Locale::parse(&settings.default_locale)
        .unwrap_or_default()
        .name();
    let job_link = settings
        .digest_job_id
        .map(|id| format!("/jobs/{id}"))
        .unwrap_or_default();
    let saved = move || {
        save.value()
            .get()
            .and_then(Result::ok)
            .map(|_| t!("account-language-saved"))
    };
    view! {
        <h3>{t!("mail-digest-heading")}</h3>
        <ActionForm action=save attr:class="form" attr:data-testid="digest-settings">
            <label for="digest-to">{t!("mail-digest-to")}</label>
            <textarea id="digest-to" name="digest_to" rows="2">{settings.digest_to}</textarea>
            <p class="field-error" data-field="digest_to">{field_error(save.value(), "digest_to")}</p>
            <label for="digest-channels">{t!("mail-digest-channels")}</label>
            <input id="digest-channels" name="digest_channels" type="text" value=settings.digest_channels placeholder="ops-dingtalk" />
            <p class="field-error" data-field="digest_channels">{field_error(save.value(), "digest_channels")}</p>
            <label for="digest-time">{t!("mail-digest-time", zone = settings.digest_timezone)}</label>
            <input id="digest-time" name="digest_time" type="text" value=settings.digest_time placeholder="08:00" />
            <p class="field-error" data-field="digest_time">{field_error(save.value(), "digest_time")}</p>
            <label for="mail-locale">{t!("mail-locale")}</label>
            <LocaleSelect id="mail-locale" name="mail_locale" chosen=settings.mail_locale default_label=t!("mail-locale-default", name = default_name) />
            <p class="field-error" data-field="mail_locale">{field_error(save.value(), "mail_locale")}</p>
            <p class="muted">
                {t!("mail-digest-job-before")}" "
                <a href=job_link>{t!("mail-digest-job")}</a>
                {t!("mail-digest-job-after")}
            </p>
            <button type="submit">{t!("account-language-save")}</button>
        </ActionForm>
        <p class="ok" role="status">{saved}</p>
    }
}

/// A test mail to any address, and the SMTP server's answer to it.
#[component]
fn TestMailForm(test: ServerAction<SendTestMail>) -> impl IntoView {
    let result = move || {
        test.value().get().map(|result| match result {
            Ok(r) if r.delivered => view! {
                <p class="ok" data-testid="test-mail-result">{t!("mail-test-delivered", status = mail_status(r.status), answer = r.answer.clone())}</p>
            }
            .into_any(),
            Ok(r) => view! {
                <p class="error" data-testid="test-mail-result">
                    {t!("mail-test-not-delivered", status = mail_status(r.status), answer = r.answer.clone())}
                </p>
            }
            .into_any(),
            Err(AppError::Invalid { .. }) => ().into_any(),
            Err(e) => view! { <p class="error" data-testid="test-mail-result">{e.explain(current())}</p> }.into_any(),
        })
    };
    view! {
        <h3>{t!("mail-test-heading")}</h3>
        <ActionForm action=test attr:class="form inline-form" attr:data-testid="test-mail">
            <div>
                <label for="test-to">{t!("mail-to")}</label>
                <input id="test-to" name="to" type="text" placeholder="you@example.com" />
                <p class="field-error">{field_error(test.value(), "to")}</p>
            </div>
            <div>
                <button type="submit">{t!("mail-test-send")}</button>
            </div>
        </ActionForm>
        {result}
    }
}

/// Each job's alert recipients and channels, and where its alerts escalate.
fn routes_table(routes: Vec<AlertRoute>) -> impl IntoView {
    let none = |s: String| if s.is_empty() { "—".to_string() } else { s };
    let rows = routes
        .into_iter()
        .map(|r| {
            view! {
                <tr>
                    <td><a href=format!("/jobs/{}", r.job_id)>{r.job}</a></td>
                    <td>{none(r.to)}</td>
                    <td>{t!("mail-routes-failed-runs", count = r.escalate_after)}</td>
                    <td>{none(r.escalate_to)}</td>
                    <td>{none(r.channels)}</td>
                    <td>{none(r.escalate_channels)}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <table tabindex="0" class="table" data-testid="alert-routes">
            <thead>
                <tr>
                    <th>{t!("runs-filter-job")}</th>
                    <th>{t!("mail-routes-to")}</th>
                    <th>{t!("mail-routes-after")}</th>
                    <th>{t!("mail-routes-escalate-to")}</th>
                    <th>{t!("channels-heading")}</th>
                    <th>{t!("mail-routes-escalate-channels")}</th>
                </tr>
            </thead>
            <tbody>{rows}</tbody>
        </table>
    }
}

#[component]
fn OutboxCard(resend: ServerAction<ResendMail>, test: ServerAction<SendTestMail>) -> impl IntoView {
    let query = use_query_map();
    let status = move || query.with(|q| q.get("status")).filter(|s| !s.is_empty());
    // Refreshed every few seconds too: a mail queued or resent turns sent (or failed) by
    // itself, without a reload.
    let tick = crate::components::ticker::use_ticker(3_000);
    let rows = Resource::new(
        move || {
            (
                status(),
                resend.version().get(),
                test.version().get(),
                tick.get(),
            )
        },
        |(status, _, _, _)| outbox(status),
    );
    let is_admin = use_is_admin();
    // `?mail=ID` opens a mail's preview: the link a chat digest carries to the full digest.
    let selected = RwSignal::new(
        query
            .with_untracked(|q| q.get("mail"))
            .and_then(|id| id.parse::<i64>().ok()),
    );
    let resend_error = move || {
        resend
            .value()
            .get()
            .and_then(Result::err)
            .map(|e| e.explain(current()))
    };
    view! {
        <section class="card">
            <h2>{t!("outbox-heading")}</h2>
            <p class="filters" data-testid="outbox-filter">
                <a href="/notifications" class:active=move || status().is_none()>{t!("outbox-all")}</a>
                {MailStatus::ALL
                    .iter()
                    .map(|status_word| {
                        let label = mail_status(*status_word);
                        let s = status_word.as_str();
                        view! {
                            " · "
                            <a
                                href=format!("/notifications?status={s}")
                                class:active=move || status().as_deref() == Some(s)
                            >
                                {label}
                            </a>
                        }
                    })
                    .collect_view()}
            </p>
            <p class="error" role="alert">{resend_error}</p>
            <Transition fallback=|| view! { <p class="muted">{t!("loading")}</p> }>
                {move || Suspend::new(async move {
                    let admin = is_admin.await;
                    match rows.await {
                        Ok(rows) if rows.is_empty() => {
                            view! { <p class="muted" data-testid="outbox-empty">{t!("outbox-empty")}</p> }.into_any()
                        }
                        Ok(rows) => view! { <OutboxTable rows admin selected resend /> }.into_any(),
                        Err(e) => view! { <p class="error">{e.explain(current())}</p> }.into_any(),
                    }
                })}
            </Transition>
            <Preview selected />
        </section>
    }
}

#[component]
fn OutboxTable(
    rows: Vec<OutboxRow>,
    admin: bool,
    selected: RwSignal<Option<i64>>,
    resend: ServerAction<ResendMail>,
) -> impl IntoView {
    view! {
        <table tabindex="0" class="table" data-testid="outbox">
            <thead>
                <tr>
                    <th>"#"</th>
                    <th>{t!("deliveries-queued")}</th>
                    <th>{t!("jobs-filter-kind")}</th>
                    <th>{t!("mail-to")}</th>
                    <th>{t!("outbox-subject")}</th>
                    <th>{t!("runs-filter-status")}</th>
                    <th>{t!("runs-col-attempts")}</th>
                    <th>{t!("outbox-answer")}</th>
                    <th></th>
                </tr>
            </thead>
            <tbody>
                {rows
                    .into_iter()
                    .map(|m| {
                        let pill = match m.status {
                            MailStatus::Sent | MailStatus::Written => "pill ok",
                            MailStatus::Failed => "pill bad",
                            MailStatus::Pending => "pill warn",
                        };
                        let answer = match (m.status, &m.reply, &m.last_error) {
                            (MailStatus::Pending, _, Some(error)) => format!(
                                "{error} — {}",
                                t!("deliveries-next-try", at = crate::i18n::clock(m.next_attempt_at))
                            ),
                            (status, Some(reply), _) if status != MailStatus::Failed => reply.clone(),
                            (_, _, Some(error)) => error.clone(),
                            _ => String::new(),
                        };
                        let id = m.id;
                        let status = m.status.as_str();
                        view! {
                            <tr data-mail=id data-status=status>
                                <td>{id}</td>
                                <td>{crate::i18n::stamp(m.created_at)}</td>
                                <td>{m.kind}</td>
                                <td>{m.recipients}</td>
                                <td>{m.subject}</td>
                                <td><span class=pill>{mail_status(m.status)}</span></td>
                                <td>{m.attempts}</td>
                                <td class="answer">{answer}</td>
                                <td>
                                    <button type="button" class="secondary" on:click=move |_| selected.set(Some(id))>
                                        {t!("outbox-preview")}
                                    </button>
                                    {admin
                                        .then(|| {
                                            view! {
                                                <button type="button" on:click=move |_| {
                                                    resend.dispatch(ResendMail { id });
                                                }>{t!("deliveries-resend")}</button>
                                            }
                                        })}
                                </td>
                            </tr>
                        }
                    })
                    .collect_view()}
            </tbody>
        </table>
    }
}

/// The selected mail as it was sent: its HTML in a sandboxed frame (no scripts, no requests to
/// this site), and its plain-text part.
#[component]
fn Preview(selected: RwSignal<Option<i64>>) -> impl IntoView {
    let mail = Resource::new(
        move || selected.get(),
        |id| async move {
            match id {
                Some(id) => preview_mail(id).await.map(Some),
                None => Ok(None),
            }
        },
    );
    view! {
        <Transition fallback=|| ()>
            {move || Suspend::new(async move {
                match mail.await {
                    Ok(Some(m)) => view! {
                        <div class="preview" data-testid="mail-preview">
                            <h3>{format!("#{}: {}", m.id, m.subject)}</h3>
                            <p class="muted">{t!("mail-to")}": " {m.recipients}</p>
                            {m.html.map(|html| view! { <iframe sandbox="" srcdoc=html title=t!("outbox-html-part")></iframe> })}
                            <pre tabindex="0">{m.text}</pre>
                        </div>
                    }
                        .into_any(),
                    Ok(None) => ().into_any(),
                    Err(e) => view! { <p class="error">{e.explain(current())}</p> }.into_any(),
                }
            })}
        </Transition>
    }
}
