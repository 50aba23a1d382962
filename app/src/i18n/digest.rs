//! The daily health digest in words: the mail (a table per job, the failed queue, the day's
//! runs per hour) and the chat message, from the facts (`crate::domain::digest`) in the
//! language they are given.

use super::Locale;
use crate::domain::digest::{Digest, Hour, JobDigest, PolicyFinding, QueuedRun, TagDigest, by_tag};
use std::fmt::Write;

use crate::domain::mail::{CONSOLE, escape};
use crate::{key, t};

/// The digest for chat: a few lines (runs, failures, the failed queue, the jobs failing most)
/// and `full` — the link to the whole digest.
pub fn chat_event(
    digest: &Digest,
    zone: chrono_tz::Tz,
    full: String,
    l: Locale,
) -> crate::domain::chat::ChatEvent {
    use crate::domain::chat::{ChatEvent, Detail, EventType};
    let day = digest.end.with_timezone(&zone).format("%Y-%m-%d");
    let runs: u64 = digest.jobs.iter().map(|j| j.runs).sum();
    let succeeded: u64 = digest.jobs.iter().map(|j| j.succeeded).sum();
    let mut event = ChatEvent::general(
        EventType::Digest,
        t!(in l, "digest-title", day = day.to_string()),
        digest.end,
    );
    let rate = if runs > 0 {
        t!(
            in l,
            "digest-succeeded",
            rate = format!("{:.1}%", succeeded as f64 * 100.0 / runs as f64)
        )
    } else {
        String::new()
    };
    event.details.push(Detail::new(
        t!(in l, "digest-col-runs"),
        format!("{runs}{rate}"),
    ));
    event.details.push(Detail::new(
        t!(in l, "digest-failed"),
        (runs - succeeded).to_string(),
    ));
    event.details.push(Detail::new(
        t!(in l, "digest-in-queue"),
        digest.queue.len().to_string(),
    ));
    let mut failing: Vec<&JobDigest> = digest
        .jobs
        .iter()
        .filter(|j| j.runs > j.succeeded)
        .collect();
    failing.sort_by(|a, b| {
        (b.runs - b.succeeded)
            .cmp(&(a.runs - a.succeeded))
            .then_with(|| a.job.cmp(&b.job))
    });
    if !failing.is_empty() {
        let worst: Vec<String> = failing
            .iter()
            .take(3)
            .map(|j| {
                t!(
                    in l,
                    "digest-failing-job",
                    job = j.job.clone(),
                    failed = j.runs - j.succeeded,
                    runs = j.runs
                )
            })
            .collect();
        event.details.push(Detail::new(
            t!(in l, "digest-failing-most"),
            worst.join(", "),
        ));
    }
    event.queue_url =
        (!digest.queue.is_empty()).then(|| format!("{}/failed", crate::domain::mail::CONSOLE));
    event.more_url = Some(full);
    event
}

/// The digest as a mail: a table per job, the failed queue, and the day's runs per hour drawn
/// as table cells (mail clients show no scripts or remote images; a coloured cell works
/// everywhere), with the same in plain text.
pub fn compose(digest: &Digest, zone: chrono_tz::Tz, l: Locale) -> crate::domain::mail::Composed {
    let words = Words {
        digest,
        zone,
        l,
        tags: by_tag(&digest.jobs),
        columns: columns(l),
        peak: peak(digest),
    };
    let subject = words.subject();
    crate::domain::mail::Composed {
        text: words.text(),
        html: words.html(&subject),
        subject,
    }
}

/// A digest's figures as both parts of the mail write them, in one language.
struct Words<'a> {
    digest: &'a Digest,
    zone: chrono_tz::Tz,
    l: Locale,
    tags: Vec<TagDigest>,
    /// The jobs table's column titles.
    columns: [String; 8],
    /// The busiest hour's runs: the longest bar.
    peak: u64,
}

fn columns(l: Locale) -> [String; 8] {
    [
        key!("digest-col-job"),
        key!("digest-col-runs"),
        key!("digest-col-success"),
        key!("digest-col-p95"),
        key!("digest-col-trend"),
        key!("digest-col-timeouts"),
        key!("digest-col-retries"),
        key!("digest-col-slow"),
    ]
    .map(|key| l.text(key))
}

fn peak(digest: &Digest) -> u64 {
    let busiest = digest.hours.iter().map(|h| h.succeeded + h.failed);
    busiest.max().unwrap_or(0).max(1)
}

const DASH: &str = "–";

impl Words<'_> {
    fn subject(&self) -> String {
        let d = self.digest;
        let day = d.end.with_timezone(&self.zone).format("%Y-%m-%d");
        let runs: u64 = d.jobs.iter().map(|j| j.runs).sum();
        let succeeded: u64 = d.jobs.iter().map(|j| j.succeeded).sum();
        t!(
            in self.l,
            "digest-subject",
            day = day.to_string(),
            runs = runs,
            failed = runs - succeeded,
            queue = d.queue.len()
        )
    }

    fn waiting(&self, q: &QueuedRun) -> String {
        let waited = (self.digest.end - q.dead_since).num_milliseconds() as f64;
        t!(in self.l, "digest-waiting", wait = self.l.duration(waited))
    }

    fn hour_counts(&self, h: &Hour) -> String {
        t!(in self.l, "digest-hour-counts", ok = h.succeeded, failed = h.failed)
    }

    fn ms(v: Option<u64>) -> String {
        v.map_or(DASH.to_string(), |ms| format!("{ms} ms"))
    }

    /// P95 now against the window before, as a signed percentage.
    fn trend(j: &JobDigest) -> String {
        match (j.p95_ms, j.p95_before_ms) {
            (Some(now), Some(before)) if before > 0 => {
                let change = (now as f64 - before as f64) * 100.0 / before as f64;
                format!("{change:+.0}%")
            }
            _ => DASH.to_string(),
        }
    }

    fn rate(j: &JobDigest) -> String {
        j.success_rate()
            .map_or(DASH.to_string(), |r| format!("{r:.1}%"))
    }

    fn tag_rate(t: &TagDigest) -> String {
        if t.runs == 0 {
            DASH.to_string()
        } else {
            format!("{:.1}%", t.succeeded as f64 * 100.0 / t.runs as f64)
        }
    }

    fn tag_name(&self, t: &TagDigest) -> String {
        if t.tag.is_empty() {
            t!(in self.l, "digest-no-tag")
        } else {
            t.tag.clone()
        }
    }

    fn finding(&self, f: &PolicyFinding) -> String {
        let l = self.l;
        match f.concern {
            crate::domain::recovery::PolicyConcern::RecoversTooFew => t!(
                in l,
                "digest-policy-recovers-few",
                recovered = l.percent(f.recovered),
                episodes = f.episodes
            ),
            crate::domain::recovery::PolicyConcern::WaitsTooLong => t!(
                in l,
                "digest-policy-waits-long",
                wait = l.duration(f.total_wait_ms),
                longest = l.duration(f.longest_recovery_ms.unwrap_or_default() as f64),
                episodes = f.episodes
            ),
        }
    }

    /// "revision 8 by token:ci (http_url): succeeded 99.5 % → 88.0 %".
    fn change(&self, f: &crate::domain::digest::ChangeFinding) -> String {
        let l = self.l;
        let mut what = Vec::new();
        if let Some((before, after)) = f.worse.rate {
            let (before, after) = (l.percent(before), l.percent(after));
            what.push(t!(in l, "digest-change-rate", before = before, after = after));
        }
        if let Some((before, after)) = f.worse.p95_ms {
            let (before, after) = (l.duration(before as f64), l.duration(after as f64));
            what.push(t!(in l, "digest-change-p95", before = before, after = after));
        }
        t!(
            in l,
            "digest-change",
            revision = f.revision,
            actor = f.actor.clone(),
            fields = f.fields.join(", "),
            what = what.join("; ")
        )
    }

    fn queue_heading(&self) -> String {
        t!(in self.l, "digest-queue-heading", count = self.digest.queue.len())
    }

    fn text(&self) -> String {
        let (d, zone, l) = (self.digest, self.zone, self.l);
        let mut text = t!(
            in l,
            "digest-health",
            from = d.start.with_timezone(&zone).format("%Y-%m-%d %H:%M").to_string(),
            to = d.end.with_timezone(&zone).format("%Y-%m-%d %H:%M").to_string(),
            zone = zone.name()
        );
        text.push_str("\n\n");
        self.text_jobs(&mut text);
        self.text_tags(&mut text);
        self.text_queue_and_policies(&mut text);
        self.text_hours(&mut text);
        let _ = writeln!(text, "\n{}", t!(in l, "digest-console", url = CONSOLE));
        text
    }

    /// A job's row of the table: its name and seven figures.
    fn cells(j: &JobDigest) -> [String; 8] {
        [
            j.job.clone(),
            j.runs.to_string(),
            Self::rate(j),
            Self::ms(j.p95_ms),
            Self::trend(j),
            j.timeouts.to_string(),
            j.retries.to_string(),
            j.slow.to_string(),
        ]
    }

    fn text_jobs(&self, text: &mut String) {
        let line = |text: &mut String, c: &[String; 8]| {
            let _ = writeln!(
                text,
                "{:<32} {:>6} {:>8} {:>10} {:>7} {:>8} {:>7} {:>5}",
                c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]
            );
        };
        line(text, &self.columns.clone().map(|c| c.to_lowercase()));
        for j in &self.digest.jobs {
            line(text, &Self::cells(j));
        }
    }

    fn text_tags(&self, text: &mut String) {
        let (tags, l) = (&self.tags, self.l);
        if tags.is_empty() {
            return;
        }
        let _ = writeln!(text, "\n{}", t!(in l, "digest-by-tag"));
        for t in tags {
            let _ = writeln!(
                text,
                "  {:<30} {:>4} {} {:>6} {} {:>8}",
                self.tag_name(t),
                t.jobs,
                t!(in l, "digest-unit-jobs"),
                t.runs,
                t!(in l, "digest-unit-runs"),
                Self::tag_rate(t)
            );
        }
    }

    fn text_queue_and_policies(&self, text: &mut String) {
        let _ = writeln!(text, "\n{}", self.queue_heading());
        for q in &self.digest.queue {
            let (id, job, waiting) = (q.run_id, &q.job, self.waiting(q));
            let _ = writeln!(text, "  #{id} {job} — {waiting} ({CONSOLE}/runs/{id})");
        }
        if !self.digest.policies.is_empty() {
            let _ = writeln!(text, "\n{}", t!(in self.l, "digest-policies"));
            for f in &self.digest.policies {
                let (job, finding, id) = (&f.job, self.finding(f), f.job_id);
                let _ = writeln!(text, "  {job} — {finding} ({CONSOLE}/jobs/{id})");
            }
        }
        if !self.digest.worse_after_change.is_empty() {
            let _ = writeln!(text, "\n{}", t!(in self.l, "digest-worse-after-change"));
            for f in &self.digest.worse_after_change {
                let (job, change, id) = (&f.job, self.change(f), f.job_id);
                let _ = writeln!(text, "  {job} — {change} ({CONSOLE}/jobs/{id}#revisions)");
            }
        }
    }

    fn text_hours(&self, text: &mut String) {
        let peak = self.peak;
        let _ = writeln!(text, "\n{}", t!(in self.l, "digest-per-hour-text"));
        for h in &self.digest.hours {
            let width = |n: u64| ((n * 40).div_ceil(peak)) as usize;
            let _ = writeln!(
                text,
                "  {} {}{} {}",
                h.start.with_timezone(&self.zone).format("%H:%M"),
                "#".repeat(width(h.succeeded)),
                "x".repeat(width(h.failed)),
                self.hour_counts(h)
            );
        }
    }

    fn html(&self, subject: &str) -> String {
        let mut html = format!(
            "<!doctype html><html><body style=\"font-family:sans-serif\"><h2>{}</h2>",
            escape(subject)
        );
        self.html_jobs(&mut html);
        self.html_tags(&mut html);
        self.html_queue_and_policies(&mut html);
        self.html_hours(&mut html);
        html.push_str("</body></html>");
        html
    }

    fn html_jobs(&self, html: &mut String) {
        html.push_str(
            "<table cellpadding=\"4\" cellspacing=\"0\" border=\"1\" style=\"border-collapse:collapse\"><tr>",
        );
        for (i, name) in self.columns.iter().enumerate() {
            let align = if i == 0 { " align=\"left\"" } else { "" };
            let _ = write!(html, "<th{align}>{}</th>", escape(name));
        }
        html.push_str("</tr>");
        for j in &self.digest.jobs {
            let [name, figures @ ..] = Self::cells(j);
            let _ = write!(html, "<tr><td>{}</td>", escape(&name));
            for figure in figures {
                let _ = write!(html, "<td align=\"right\">{figure}</td>");
            }
            html.push_str("</tr>");
        }
        html.push_str("</table>");
    }

    fn html_tags(&self, html: &mut String) {
        let (tags, l, columns) = (&self.tags, self.l, &self.columns);
        if tags.is_empty() {
            return;
        }
        let _ = write!(
            html,
            "<h3>{}</h3><table cellpadding=\"4\" cellspacing=\"0\" border=\"1\" \
             style=\"border-collapse:collapse\"><tr><th align=\"left\">{}</th><th>{}</th>\
             <th>{}</th><th>{}</th></tr>",
            t!(in l, "digest-by-tag"),
            t!(in l, "digest-col-tag"),
            t!(in l, "digest-col-jobs"),
            columns[1],
            columns[2]
        );
        for t in tags {
            let _ = write!(
                html,
                "<tr><td>{}</td><td align=\"right\">{}</td><td align=\"right\">{}</td>\
                 <td align=\"right\">{}</td></tr>",
                escape(&self.tag_name(t)),
                t.jobs,
                t.runs,
                Self::tag_rate(t)
            );
        }
        html.push_str("</table>");
    }

    fn html_queue_and_policies(&self, html: &mut String) {
        let l = self.l;
        let _ = write!(html, "<h3>{}</h3><ul>", escape(&self.queue_heading()));
        for q in &self.digest.queue {
            let _ = write!(
                html,
                "<li><a href=\"{CONSOLE}/runs/{}\">#{}</a> {} — {}</li>",
                q.run_id,
                q.run_id,
                escape(&q.job),
                escape(&self.waiting(q))
            );
        }
        let _ = write!(
            html,
            "</ul><p><a href=\"{CONSOLE}/failed\">{}</a></p>",
            t!(in l, "digest-open-queue"),
        );
        if !self.digest.policies.is_empty() {
            let _ = write!(html, "<h3>{}</h3><ul>", t!(in l, "digest-policies"));
            for f in &self.digest.policies {
                let _ = write!(
                    html,
                    "<li><a href=\"{CONSOLE}/jobs/{}\">{}</a> — {}</li>",
                    f.job_id,
                    escape(&f.job),
                    escape(&self.finding(f))
                );
            }
            html.push_str("</ul>");
        }
        if !self.digest.worse_after_change.is_empty() {
            let heading = t!(in l, "digest-worse-after-change");
            let _ = write!(html, "<h3>{}</h3><ul>", escape(&heading));
            for f in &self.digest.worse_after_change {
                let _ = write!(
                    html,
                    "<li><a href=\"{CONSOLE}/jobs/{}#revisions\">{}</a> — {}</li>",
                    f.job_id,
                    escape(&f.job),
                    escape(&self.change(f))
                );
            }
            html.push_str("</ul>");
        }
    }

    fn html_hours(&self, html: &mut String) {
        let peak = self.peak;
        let _ = write!(
            html,
            "<h3>{}</h3><table cellpadding=\"1\" cellspacing=\"0\">",
            t!(in self.l, "digest-per-hour")
        );
        let bar = |n: u64, colour: &str| {
            if n == 0 {
                String::new()
            } else {
                let width = (n * 300).div_ceil(peak);
                format!("<td bgcolor=\"{colour}\" width=\"{width}\" height=\"12\"></td>")
            }
        };
        for h in &self.digest.hours {
            let _ = write!(
                html,
                "<tr><td style=\"font-family:monospace\">{}</td><td><table cellpadding=\"0\" cellspacing=\"0\"><tr>{}{}<td>&nbsp;{}</td></tr></table></td></tr>",
                h.start.with_timezone(&self.zone).format("%H:%M"),
                bar(h.succeeded, "#2e7d32"),
                bar(h.failed, "#c62828"),
                escape(&self.hour_counts(h))
            );
        }
        html.push_str("</table>");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Duration;
    use chrono::{DateTime, Utc};

    #[test]
    fn the_mail_has_every_job_the_queue_and_a_bar_per_hour() {
        let end = DateTime::<Utc>::from_timestamp(1_800_000_000, 0).unwrap();
        let start = end - Duration::hours(24);
        let digest = Digest {
            start,
            end,
            jobs: vec![JobDigest {
                job: "sync <db>".into(),
                runs: 10,
                succeeded: 9,
                p95_ms: Some(1200),
                p95_before_ms: Some(1000),
                timeouts: 1,
                retries: 2,
                slow: 0,
                tags: vec!["db".into()],
            }],
            queue: vec![QueuedRun {
                job: "sync <db>".into(),
                run_id: 5,
                dead_since: end - Duration::hours(3),
            }],
            hours: (0..24)
                .map(|h| Hour {
                    start: start + Duration::hours(h),
                    succeeded: h as u64 % 3,
                    failed: u64::from(h == 5),
                })
                .collect(),
            worse_after_change: vec![crate::domain::digest::ChangeFinding {
                job: "sync <db>".into(),
                job_id: 3,
                revision: 8,
                actor: "token:ci".into(),
                fields: vec!["http_url".into()],
                worse: crate::domain::job::outcomes::Worse {
                    rate: Some((0.995, 0.88)),
                    p95_ms: None,
                },
            }],
            policies: Vec::new(),
        };
        let mail = compose(&digest, chrono_tz::Tz::UTC, Locale::english());
        assert!(
            mail.subject
                .contains("10 runs, 1 failed, 1 in the failed queue")
        );
        assert!(
            mail.text.contains("90.0%") && mail.text.contains("+20%"),
            "{}",
            mail.text
        );
        assert!(mail.text.contains("waiting 3 h"), "{}", mail.text);
        assert!(mail.text.contains("By tag") && mail.html.contains("<h3>By tag</h3>"));
        assert_eq!(mail.html.matches("bgcolor=\"#c62828\"").count(), 1);
        assert!(mail.html.contains("sync &lt;db&gt;") && !mail.html.contains("<db>"));
        assert!(!mail.html.contains("<script") && !mail.html.contains("<img"));
        // No policy findings, no section.
        assert!(!mail.text.contains("Retry policies worth a look"));
        // A change that made a job worse: who, what, and the rate before and after.
        assert!(
            mail.text.contains("Got worse after a change:")
                && mail
                    .text
                    .contains("revision 8 by token:ci (http_url): succeeded 99.5 % → 88.0 %"),
            "{}",
            mail.text
        );
        assert!(mail.html.contains("/jobs/3#revisions"), "{}", mail.html);

        // A policy its own history questions is named, with a link to its editor.
        let mut questioned = digest.clone();
        questioned.policies = vec![
            PolicyFinding {
                job: "sync <db>".into(),
                job_id: 7,
                concern: crate::domain::recovery::PolicyConcern::RecoversTooFew,
                episodes: 12,
                recovered: 0.5,
                total_wait_ms: 3_000.0,
                longest_recovery_ms: Some(60_000),
            },
            PolicyFinding {
                job: "report".into(),
                job_id: 8,
                concern: crate::domain::recovery::PolicyConcern::WaitsTooLong,
                episodes: 20,
                recovered: 1.0,
                total_wait_ms: 7_200_000.0,
                longest_recovery_ms: Some(90_000),
            },
        ];
        let mail = compose(&questioned, chrono_tz::Tz::UTC, Locale::english());
        assert!(
            mail.text.contains("Retry policies worth a look"),
            "{}",
            mail.text
        );
        assert!(
            mail.text
                .contains("sync <db> — recovers only 50.0 % of its 12 past outages"),
            "{}",
            mail.text
        );
        assert!(
            mail.text.contains("report — waits up to 2 h"),
            "{}",
            mail.text
        );
        assert!(mail.html.contains("/jobs/8\">report</a>"), "{}", mail.html);
        let zh = compose(
            &questioned,
            chrono_tz::Tz::UTC,
            Locale::parse("zh-CN").unwrap(),
        );
        assert!(zh.text.contains("值得检查的重试策略"), "{}", zh.text);

        let zh = crate::i18n::Locale::parse("zh-CN").expect("zh-CN");
        let mail = compose(&digest, chrono_tz::Tz::UTC, zh);
        assert!(
            mail.subject
                .contains("运行 10 次，失败 1 次，失败队列中 1 个"),
            "{}",
            mail.subject
        );
        assert!(mail.text.contains("已等待 3 小时") && mail.html.contains("<h3>按标签</h3>"));
        assert!(!mail.text.contains("By tag") && !mail.html.contains("Open the failed queue"));
        let chat = chat_event(&digest, chrono_tz::Tz::UTC, "x".into(), zh);
        assert!(
            chat.details
                .iter()
                .any(|d| d.label == "失败队列中" && d.value == "1")
        );
    }
}
