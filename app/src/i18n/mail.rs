//! What Bulwark's mails say: subject, plain text and HTML for each kind, from plain facts
//! (`crate::domain::mail`), in the language they are given. Pure, so the outbox preview and
//! the tests see exactly what is sent.

use chrono::{DateTime, Duration, Utc};

use super::Locale;
use crate::domain::mail::{CONSOLE, Composed, FailedRun, escape};
use crate::domain::run::{ErrorClass, RunStatus};
use crate::t;

fn run_link(run_id: i64) -> String {
    format!("{CONSOLE}/runs/{run_id}")
}

fn queue_line(l: Locale, run: &FailedRun) -> (String, String) {
    if run.status == RunStatus::Dead {
        let link = format!("{CONSOLE}/failed");
        (
            format!("{}\n", t!(in l, "mail-queue-text", link = link.clone())),
            format!(
                "<p>{} <a href=\"{link}\">{}</a></p>",
                escape(&t!(in l, "mail-queue-html")),
                escape(&t!(in l, "mail-queue-html-link"))
            ),
        )
    } else {
        let line = t!(in l, "mail-queue-next", status = super::words::run_status_in(l, run.status));
        (format!("{line}\n"), format!("<p>{}</p>", escape(&line)))
    }
}

fn facts(l: Locale, run: &FailedRun) -> (String, String) {
    let class = run.error_class.map_or("unknown", ErrorClass::as_str);
    let no_message = t!(in l, "mail-no-message");
    let message = run.message.as_deref().unwrap_or(&no_message);
    let link = run_link(run.run_id);
    let when = run.finished_at.format("%Y-%m-%d %H:%M:%S UTC").to_string();
    let failed = t!(in l, "mail-failed-at", when = when, attempts = run.attempts);
    let rows = [
        (t!(in l, "mail-fact-job"), run.job.clone(), None),
        (
            t!(in l, "mail-fact-run"),
            format!("#{}", run.run_id),
            Some(link.clone()),
        ),
        (t!(in l, "mail-fact-failed"), failed, None),
        (t!(in l, "mail-fact-error"), class.to_string(), None),
    ];
    let mut text = String::new();
    let mut html = String::from("<table cellpadding=\"4\">");
    for (label, value, href) in &rows {
        match href {
            Some(href) => {
                text.push_str(&format!("{label}: {value} ({href})\n"));
                html.push_str(&format!(
                    "<tr><th align=\"left\">{}</th><td><a href=\"{href}\">{}</a></td></tr>",
                    escape(label),
                    escape(value)
                ));
            }
            None => {
                text.push_str(&format!("{label}: {value}\n"));
                html.push_str(&format!(
                    "<tr><th align=\"left\">{}</th><td>{}</td></tr>",
                    escape(label),
                    escape(value)
                ));
            }
        }
    }
    let message_label = t!(in l, "mail-fact-message");
    text.push_str(&format!("{message_label}: {message}\n"));
    html.push_str(&format!(
        "<tr><th align=\"left\">{}</th><td><pre>{}</pre></td></tr></table>",
        escape(&message_label),
        escape(message)
    ));
    (text, html)
}

fn page(l: Locale, title: &str, body: &str) -> String {
    format!(
        "<!doctype html><html lang=\"{}\"><body style=\"font-family:sans-serif\"><h2>{}</h2>{body}</body></html>",
        l.tag(),
        escape(title)
    )
}

/// The first failed run of an episode, in `l`.
pub fn first_failure(l: Locale, run: &FailedRun) -> Composed {
    let subject = t!(
        in l,
        "mail-first-failure-subject",
        job = run.job.clone(),
        class = run.error_class.map_or("error", ErrorClass::as_str)
    );
    let (text, html) = facts(l, run);
    let (queue_text, queue_html) = queue_line(l, run);
    let heading = t!(in l, "mail-first-failure-text", job = run.job.clone());
    let again = t!(in l, "mail-first-failure-again");
    Composed {
        text: format!("{heading}\n\n{text}\n{queue_text}\n{again}\n"),
        html: page(
            l,
            &subject,
            &format!("{html}{queue_html}<p>{}</p>", escape(&again)),
        ),
        subject,
    }
}

pub fn escalation(l: Locale, run: &FailedRun, failed_runs: i32, since: DateTime<Utc>) -> Composed {
    let subject = t!(
        in l,
        "mail-escalation-subject",
        job = run.job.clone(),
        count = failed_runs
    );
    let since = since.format("%Y-%m-%d %H:%M UTC").to_string();
    let (text, html) = facts(l, run);
    let (queue_text, queue_html) = queue_line(l, run);
    let lead = t!(
        in l,
        "mail-escalation-text",
        job = run.job.clone(),
        count = failed_runs,
        since = since
    );
    Composed {
        text: format!("{lead}\n\n{text}\n{queue_text}"),
        html: page(
            l,
            &subject,
            &format!("<p>{}</p>{html}{queue_html}", escape(&lead)),
        ),
        subject,
    }
}

pub fn recovered(
    l: Locale,
    job: &str,
    run_id: i64,
    down_for: Duration,
    failed_runs: i32,
) -> Composed {
    let subject = t!(in l, "mail-recovered-subject", job = job);
    let down = l.duration(down_for.num_milliseconds().max(0) as f64);
    let link = run_link(run_id);
    let lead = t!(
        in l,
        "mail-recovered-text",
        job = job,
        run = run_id,
        count = failed_runs
    );
    let lasted = t!(in l, "mail-recovered-down", down = down.clone());
    Composed {
        text: format!("{lead} ({link})\n{lasted}\n"),
        html: page(
            l,
            &subject,
            &format!(
                "<p>{} (<a href=\"{link}\">#{run_id}</a>)</p><p>{}</p>",
                escape(&lead),
                escape(&lasted)
            ),
        ),
        subject,
    }
}

/// A run no live node may take, and what its job asks of one.
pub struct NodeWait<'a> {
    pub job: &'a str,
    pub run_id: i64,
    /// The job's `run_on` (`role=db`); empty when it asks for no label (then it is a command
    /// job, and no live node runs commands).
    pub run_on: &'a str,
    pub waited_ms: u64,
}

impl NodeWait<'_> {
    /// What the job asks of a node, in words.
    fn asks(&self, l: Locale) -> String {
        match self.run_on {
            "" => t!(in l, "no-node-asks-commands"),
            labels => t!(in l, "no-node-asks-labels", labels = labels),
        }
    }
}

/// A run that has waited a while for a node allowed to run it.
pub fn waiting_for_node(l: Locale, wait: &NodeWait<'_>) -> Composed {
    let subject = t!(in l, "mail-no-node-subject", job = wait.job);
    let link = run_link(wait.run_id);
    let lead = t!(
        in l,
        "mail-no-node-text",
        job = wait.job,
        run = wait.run_id,
        waited = l.duration(wait.waited_ms as f64),
        asks = wait.asks(l)
    );
    Composed {
        text: format!("{lead} ({link})\n"),
        html: page(
            l,
            &subject,
            &format!(
                "<p>{} (<a href=\"{link}\">#{}</a>)</p>",
                escape(&lead),
                wait.run_id
            ),
        ),
        subject,
    }
}

/// The same as a chat message's headline and facts.
pub fn waiting_for_node_event(
    l: Locale,
    wait: &NodeWait<'_>,
    at: DateTime<Utc>,
) -> crate::domain::chat::ChatEvent {
    use crate::domain::chat::{ChatEvent, Detail, EventType};
    let headline = t!(in l, "chat-no-node", job = wait.job);
    let mut event = ChatEvent::general(EventType::WaitingForNode, headline, at);
    event.job = wait.job.to_string();
    event.run_id = Some(wait.run_id);
    event.run_url = Some(run_link(wait.run_id));
    event.details = vec![
        Detail {
            label: t!(in l, "mail-fact-job"),
            value: wait.job.to_string(),
        },
        Detail {
            label: t!(in l, "chat-no-node-asks"),
            value: wait.asks(l),
        },
        Detail {
            label: t!(in l, "chat-no-node-waited"),
            value: l.duration(wait.waited_ms as f64),
        },
    ];
    event
}

/// A run that took longer than its job ever should: `took_ms` against `limit_ms`.
pub fn too_slow(l: Locale, job: &str, run_id: i64, took_ms: u64, limit_ms: u64) -> Composed {
    let subject = t!(in l, "mail-too-slow-subject", job = job);
    let link = run_link(run_id);
    let lead = t!(
        in l,
        "mail-too-slow-text",
        job = job,
        run = run_id,
        took = l.duration(took_ms as f64),
        limit = l.duration(limit_ms as f64)
    );
    Composed {
        text: format!("{lead} ({link})\n"),
        html: page(
            l,
            &subject,
            &format!(
                "<p>{} (<a href=\"{link}\">#{run_id}</a>)</p>",
                escape(&lead)
            ),
        ),
        subject,
    }
}

/// The same as a chat message's headline and facts.
pub fn too_slow_event(
    l: Locale,
    job: &str,
    run_id: i64,
    took_ms: u64,
    limit_ms: u64,
    at: DateTime<Utc>,
) -> crate::domain::chat::ChatEvent {
    use crate::domain::chat::{ChatEvent, Detail, EventType};
    let mut event =
        ChatEvent::general(EventType::TooSlow, t!(in l, "chat-too-slow", job = job), at);
    event.job = job.to_string();
    event.run_id = Some(run_id);
    event.run_url = Some(run_link(run_id));
    event.details = vec![
        Detail {
            label: t!(in l, "mail-fact-job"),
            value: job.to_string(),
        },
        Detail {
            label: t!(in l, "chat-took"),
            value: l.duration(took_ms as f64),
        },
        Detail {
            label: t!(in l, "chat-longest-usual"),
            value: l.duration(limit_ms as f64),
        },
    ];
    event
}

/// The mail the Notifications page's "send test mail" button sends.
pub fn test_mail(l: Locale, sent_by: &str) -> Composed {
    let subject = t!(in l, "mail-test-subject");
    let line = t!(in l, "mail-test-text", by = sent_by, console = CONSOLE);
    Composed {
        text: format!("{line}\n"),
        html: page(l, &subject, &format!("<p>{}</p>", escape(&line))),
        subject,
    }
}

/// A trend alert: what was seen across all jobs.
pub fn trend(l: Locale, finding: &crate::domain::trends::Finding) -> Composed {
    let subject = t!(in l, "trend-subject", title = super::trends::title(finding, l));
    let detail = super::trends::detail(finding, l);
    let (failures, queue, quiet) = (
        t!(in l, "trend-recent-failures"),
        t!(in l, "trend-failed-queue"),
        t!(in l, "trend-quiet"),
    );
    Composed {
        text: format!(
            "{detail}\n\n{failures}: {CONSOLE}/runs?status=dead\n{queue}: {CONSOLE}/failed\n\n{quiet}\n"
        ),
        html: page(
            l,
            &subject,
            &format!(
                "<p>{}</p><p><a href=\"{CONSOLE}/runs?status=dead\">{}</a> · <a href=\"{CONSOLE}/failed\">{}</a></p><p>{}</p>",
                escape(&detail),
                escape(&failures),
                escape(&queue),
                escape(&quiet)
            ),
        ),
        subject,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::mail::with_console;

    fn run() -> FailedRun {
        FailedRun {
            job: "nightly-<export>".into(),
            run_id: 42,
            status: RunStatus::Dead,
            error_class: Some(ErrorClass::Permanent),
            message: Some("HTTP 404 <not found>".into()),
            attempts: 3,
            finished_at: DateTime::<Utc>::from_timestamp(1_800_000_000, 0).unwrap(),
        }
    }

    #[test]
    fn first_failure_names_the_job_error_and_links() {
        let mail = first_failure(Locale::english(), &run());
        assert_eq!(mail.subject, "[Bulwark] nightly-<export> failed: permanent");
        let text = with_console(&mail.text, "https://ops.example.com/");
        assert!(text.contains("https://ops.example.com/runs/42"), "{text}");
        assert!(text.contains("https://ops.example.com/failed"), "{text}");
        assert!(text.contains("HTTP 404 <not found>"));
        // Everything from a job or an error is escaped in the HTML part.
        assert!(mail.html.contains("nightly-&lt;export&gt;"));
        assert!(mail.html.contains("HTTP 404 &lt;not found&gt;"));
        assert!(!mail.html.contains("<export>"));
    }

    #[test]
    fn skipped_runs_do_not_point_at_the_queue() {
        let mail = first_failure(
            Locale::english(),
            &FailedRun {
                status: RunStatus::Skipped,
                ..run()
            },
        );
        assert!(!mail.text.contains("/failed"));
        assert!(mail.text.contains("next scheduled run"));
    }

    #[test]
    fn recovered_says_for_how_long() {
        let mail = recovered(Locale::english(), "sync", 7, Duration::minutes(95), 4);
        assert!(mail.text.contains("1 h 35 min"), "{}", mail.text);
        assert!(mail.text.contains("after 4 failed runs"), "{}", mail.text);
    }

    #[test]
    fn every_alert_mail_reads_in_both_languages() {
        let zh = Locale::parse("zh-CN").expect("zh-CN");
        let en = Locale::english();
        let since = DateTime::<Utc>::from_timestamp(1_799_990_000, 0).unwrap();
        for (l, words) in [
            (en, ["failed", "ESCALATION", "recovered", "Test mail"]),
            (zh, ["失败", "升级告警", "已恢复", "测试邮件"]),
        ] {
            let mails = [
                first_failure(l, &run()),
                escalation(l, &run(), 5, since),
                recovered(l, "sync", 7, Duration::minutes(95), 4),
                test_mail(l, "admin"),
            ];
            for (mail, word) in mails.iter().zip(words) {
                assert!(mail.subject.contains(word), "{l}: {}", mail.subject);
                assert!(mail.html.contains(&format!("lang=\"{}\"", l.tag())));
                assert!(
                    !mail.text.contains("{ $"),
                    "an argument left unfilled: {}",
                    mail.text
                );
            }
        }
        let chinese = recovered(zh, "sync", 7, Duration::minutes(95), 4);
        assert!(chinese.text.contains("1 小时 35 分钟"), "{}", chinese.text);
        let chinese = first_failure(zh, &run());
        assert!(chinese.text.contains("失败队列"), "{}", chinese.text);
        assert!(!chinese.text.contains("Job:"), "{}", chinese.text);
    }
}
