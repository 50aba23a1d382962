use crate::components::upcoming::Upcoming;
use leptos::prelude::*;

#[component]
pub fn NotificationsPage() -> impl IntoView {
    view! {
        <Upcoming
            title="Notifications"
            summary="Mail that reaches the right people: first failure, escalation, recovery and a daily digest."
            will_hold=&[
                "the outbox: every mail with its status, attempts and last error, a preview and a resend",
                "recipients, escalation threshold and digest time",
                "a test mail that reports the SMTP server's answer",
            ]
        />
    }
}
