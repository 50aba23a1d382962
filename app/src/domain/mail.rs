//! What Bulwark's mails say: subject, plain text and HTML for each kind, from plain facts.
//! Pure, so the outbox preview and the tests see exactly what is sent.
//!
//! Links are written as `{console}/runs/42`: the sender replaces [`CONSOLE`] with the
//! configured `public_url` when it delivers ([`with_console`]), so mails waiting in the outbox
//! follow a changed address.

use chrono::{DateTime, Duration, Utc};

use super::alerts::human_duration;
use super::run::{ErrorClass, RunStatus};

/// Where the console's address goes in a stored mail.
pub const CONSOLE: &str = "{console}";

crate::text_enum! {
    /// Where a mail in the outbox is.
    pub enum MailStatus {
        /// Waiting for (another) delivery attempt.
        Pending = "pending",
        /// The SMTP server accepted it.
        Sent = "sent",
        /// No SMTP server configured: kept in the outbox and written as an .eml file.
        Written = "written",
        /// Refused for good (or out of attempts); a person can resend it.
        Failed = "failed",
    }
}

impl MailStatus {
    /// Delivered as far as Bulwark can tell (sent, or written where it was told to write).
    pub fn is_delivered(self) -> bool {
        matches!(self, MailStatus::Sent | MailStatus::Written)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Composed {
    pub subject: String,
    pub text: String,
    pub html: String,
}

/// A run that ended without success.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedRun {
    pub job: String,
    pub run_id: i64,
    /// `dead` (in the failed queue), `skipped`, or `dead` with a fallback job triggered.
    pub status: RunStatus,
    pub error_class: Option<ErrorClass>,
    pub message: Option<String>,
    pub attempts: i32,
    pub finished_at: DateTime<Utc>,
}

/// The stored text with the console's address in place of [`CONSOLE`].
pub fn with_console(text: &str, public_url: &str) -> String {
    text.replace(CONSOLE, public_url.trim_end_matches('/'))
}

/// `&`, `<`, `>`, `"` and `'` as entities: every value put into the HTML part goes through this.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn run_link(run_id: i64) -> String {
    format!("{CONSOLE}/runs/{run_id}")
}

fn queue_line(run: &FailedRun) -> (String, String) {
    if run.status == RunStatus::Dead {
        let link = format!("{CONSOLE}/failed");
        (
            format!("It is in the failed queue; re-trigger it there: {link}\n"),
            format!(
                "<p>It is in the failed queue: <a href=\"{link}\">re-trigger it there</a>.</p>"
            ),
        )
    } else {
        (
            format!(
                "It was {}; the next scheduled run will try again.\n",
                run.status
            ),
            format!(
                "<p>It was {}; the next scheduled run will try again.</p>",
                escape(run.status.as_str())
            ),
        )
    }
}

fn facts(run: &FailedRun) -> (String, String) {
    let class = run.error_class.map_or("unknown", ErrorClass::as_str);
    let message = run.message.as_deref().unwrap_or("(no message)");
    let link = run_link(run.run_id);
    let when = run.finished_at.format("%Y-%m-%d %H:%M:%S UTC");
    (
        format!(
            "Job:      {}\nRun:      #{} ({link})\nFailed:   {when}, after {} attempt(s)\nError:    {class}\nMessage:  {message}\n",
            run.job, run.run_id, run.attempts
        ),
        format!(
            "<table cellpadding=\"4\">\
             <tr><th align=\"left\">Job</th><td>{}</td></tr>\
             <tr><th align=\"left\">Run</th><td><a href=\"{link}\">#{}</a></td></tr>\
             <tr><th align=\"left\">Failed</th><td>{when}, after {} attempt(s)</td></tr>\
             <tr><th align=\"left\">Error</th><td>{}</td></tr>\
             <tr><th align=\"left\">Message</th><td><pre>{}</pre></td></tr></table>",
            escape(&run.job),
            run.run_id,
            run.attempts,
            escape(class),
            escape(message)
        ),
    )
}

fn page(title: &str, body: &str) -> String {
    format!(
        "<!doctype html><html><body style=\"font-family:sans-serif\"><h2>{}</h2>{body}</body></html>",
        escape(title)
    )
}

pub fn first_failure(run: &FailedRun) -> Composed {
    let subject = format!(
        "[Bulwark] {} failed: {}",
        run.job,
        run.error_class.map_or("error", ErrorClass::as_str)
    );
    let (text, html) = facts(run);
    let (queue_text, queue_html) = queue_line(run);
    Composed {
        text: format!(
            "{} failed.\n\n{text}\n{queue_text}\nYou will hear again if it keeps failing, and when it recovers.\n",
            run.job
        ),
        html: page(
            &subject,
            &format!(
                "{html}{queue_html}<p>You will hear again if it keeps failing, and when it recovers.</p>"
            ),
        ),
        subject,
    }
}

pub fn escalation(run: &FailedRun, failed_runs: i32, since: DateTime<Utc>) -> Composed {
    let subject = format!(
        "[Bulwark] ESCALATION: {} failed {failed_runs} runs in a row",
        run.job
    );
    let since = since.format("%Y-%m-%d %H:%M UTC");
    let (text, html) = facts(run);
    let (queue_text, queue_html) = queue_line(run);
    Composed {
        text: format!(
            "{} has failed {failed_runs} consecutive runs since {since}. The latest:\n\n{text}\n{queue_text}",
            run.job
        ),
        html: page(
            &subject,
            &format!(
                "<p>{} has failed {failed_runs} consecutive runs since {since}. The latest:</p>{html}{queue_html}",
                escape(&run.job)
            ),
        ),
        subject,
    }
}

pub fn recovered(job: &str, run_id: i64, down_for: Duration, failed_runs: i32) -> Composed {
    let subject = format!("[Bulwark] {job} recovered");
    let down = human_duration(down_for);
    let link = run_link(run_id);
    Composed {
        text: format!(
            "{job} succeeded again (run #{run_id}, {link}) after {failed_runs} failed run(s).\nIt was failing for {down}.\n"
        ),
        html: page(
            &subject,
            &format!(
                "<p>{} succeeded again (<a href=\"{link}\">run #{run_id}</a>) after {failed_runs} failed run(s).</p><p>It was failing for <b>{down}</b>.</p>",
                escape(job)
            ),
        ),
        subject,
    }
}

/// The mail the Notifications page's "send test mail" button sends.
pub fn test_mail(sent_by: &str) -> Composed {
    let subject = "[Bulwark] Test mail".to_string();
    Composed {
        text: format!("{sent_by} sent this from Bulwark ({CONSOLE}) to check that mail arrives.\n"),
        html: page(
            &subject,
            &format!(
                "<p>{} sent this from <a href=\"{CONSOLE}\">Bulwark</a> to check that mail arrives.</p>",
                escape(sent_by)
            ),
        ),
        subject,
    }
}

/// A trend alert: what was seen across all jobs.
pub fn trend(finding: &super::trends::Finding) -> Composed {
    let subject = format!("[Bulwark] Trend: {}", finding.title);
    Composed {
        text: format!(
            "{}\n\nRecent failures: {CONSOLE}/runs?status=dead\nThe failed queue: {CONSOLE}/failed\n\nYou will not hear about this again until it has been clear for a while.\n",
            finding.detail
        ),
        html: page(
            &subject,
            &format!(
                "<p>{}</p><p><a href=\"{CONSOLE}/runs?status=dead\">Recent failures</a> · <a href=\"{CONSOLE}/failed\">the failed queue</a></p><p>You will not hear about this again until it has been clear for a while.</p>",
                escape(&finding.detail)
            ),
        ),
        subject,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let mail = first_failure(&run());
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
        let mail = first_failure(&FailedRun {
            status: RunStatus::Skipped,
            ..run()
        });
        assert!(!mail.text.contains("/failed"));
        assert!(mail.text.contains("next scheduled run"));
    }

    #[test]
    fn recovered_says_for_how_long() {
        let mail = recovered("sync", 7, Duration::minutes(95), 4);
        assert!(mail.text.contains("1 h 35 min"), "{}", mail.text);
        assert!(mail.text.contains("4 failed run(s)"));
    }
}
