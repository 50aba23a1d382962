//! `bulwark traffic import`: Apache/nginx combined access logs → hits, by the same rules as
//! the live layer, at the log's own timestamps.
//!
//! The parser never panics and never gives up on a file: a line it cannot read is skipped and
//! reported by number, a long field is cut like any other hit's.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::Path;
use std::time::Instant;

use anyhow::Context;
use chrono::{DateTime, FixedOffset};
use sea_orm::DatabaseConnection;
use serde::Serialize;

use super::TrafficSettings;
use super::buffer::Buffer;
use super::hit::{self, Hit};
use super::rules::Exclusion;
use super::store::{self, IpPrivacy};

/// Which site a log is of, and the addresses that site does not count.
pub struct Target<'a> {
    pub site: &'a str,
    pub excluded: &'a app::domain::sites::Exclusions,
}

/// One access-log line, fields borrowed from it where no unescaping was needed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine<'a> {
    pub ip: &'a str,
    pub time: DateTime<FixedOffset>,
    pub method: Cow<'a, str>,
    pub target: Cow<'a, str>,
    pub status: u16,
    pub referer: Cow<'a, str>,
    pub user_agent: Cow<'a, str>,
}

/// Which part of a line could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("no client address")]
    Host,
    #[error("no [timestamp] or not like 10/Oct/2026:13:55:36 +0000")]
    Time,
    #[error("no quoted request \"METHOD /path PROTOCOL\"")]
    Request,
    #[error("no status code")]
    Status,
    #[error("unterminated quoted field")]
    Quote,
}

/// Parses `%h %l %u [%t] "%r" %>s %b "%{Referer}i" "%{User-Agent}i"`; lines in common log
/// format (without the last two) read with both empty. Quoted fields may hold `\"`, `\\` and
/// nginx's `\xHH` escapes.
pub fn parse_combined(line: &str) -> Result<LogLine<'_>, ParseError> {
    let line = line.trim_end_matches(['\r', '\n']);
    let (ip, rest) = line.split_once(' ').ok_or(ParseError::Host)?;
    if ip.is_empty() {
        return Err(ParseError::Host);
    }
    // Identity and user may hold spaces in odd logs: the timestamp's bracket is the anchor.
    let open = rest.find('[').ok_or(ParseError::Time)?;
    let rest = &rest[open + 1..];
    let close = rest.find(']').ok_or(ParseError::Time)?;
    let time = DateTime::parse_from_str(&rest[..close], "%d/%b/%Y:%H:%M:%S %z")
        .map_err(|_| ParseError::Time)?;
    let rest = rest[close + 1..].trim_start();
    let (request, rest) = quoted(rest).ok_or(ParseError::Request)?;
    let (method, target) = match request {
        Cow::Borrowed(request) => {
            let (method, target) = split_request(request)?;
            (Cow::Borrowed(method), Cow::Borrowed(target))
        }
        Cow::Owned(request) => {
            let (method, target) = split_request(&request)?;
            (
                Cow::Owned(method.to_string()),
                Cow::Owned(target.to_string()),
            )
        }
    };
    let rest = rest.trim_start();
    let (status, rest) = rest.split_once(' ').unwrap_or((rest, ""));
    let status: u16 = status.parse().map_err(|_| ParseError::Status)?;
    // Bytes sent: a number or "-", not needed.
    let rest = rest.trim_start();
    let rest = rest.split_once(' ').map_or("", |(_, r)| r).trim_start();
    let (referer, rest) = if rest.is_empty() {
        (Cow::Borrowed(""), "")
    } else {
        quoted(rest).ok_or(ParseError::Quote)?
    };
    let rest = rest.trim_start();
    let (user_agent, _) = if rest.is_empty() {
        (Cow::Borrowed(""), "")
    } else {
        quoted(rest).ok_or(ParseError::Quote)?
    };
    Ok(LogLine {
        ip,
        time,
        method,
        target,
        status,
        referer: dash(referer),
        user_agent: dash(user_agent),
    })
}

/// Logs write `-` for an absent header.
fn dash(field: Cow<'_, str>) -> Cow<'_, str> {
    if field == "-" {
        Cow::Borrowed("")
    } else {
        field
    }
}

/// `GET /path HTTP/1.1` → method and target; the protocol may be missing (HTTP/0.9).
fn split_request(request: &str) -> Result<(&str, &str), ParseError> {
    let mut parts = request.split(' ').filter(|p| !p.is_empty());
    match (parts.next(), parts.next()) {
        (Some(method), Some(target))
            if !method.is_empty() && method.bytes().all(|b| b.is_ascii_uppercase()) =>
        {
            Ok((method, target))
        }
        _ => Err(ParseError::Request),
    }
}

/// A `"…"` field at the start of `text`, unescaped, and the text after it.
fn quoted(text: &str) -> Option<(Cow<'_, str>, &str)> {
    let body = text.strip_prefix('"')?;
    let bytes = body.as_bytes();
    let mut i = 0;
    let mut escaped = false;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => {
                escaped = true;
                i += 2;
                continue;
            }
            b'"' => break,
            _ => i += 1,
        }
    }
    if i >= bytes.len() {
        return None;
    }
    let raw = &body[..i];
    let after = &body[i + 1..];
    if !escaped {
        return Some((Cow::Borrowed(raw), after));
    }
    Some((Cow::Owned(unescape(raw)), after))
}

fn unescape(raw: &str) -> String {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 1 < bytes.len() {
            match bytes[i + 1] {
                b'x' if i + 3 < bytes.len() => {
                    match u8::from_str_radix(raw.get(i + 2..i + 4).unwrap_or(""), 16) {
                        Ok(byte) => {
                            out.push(byte);
                            i += 4;
                        }
                        Err(_) => {
                            out.push(b'\\');
                            i += 1;
                        }
                    }
                }
                b'n' => {
                    out.push(b'\n');
                    i += 2;
                }
                b't' => {
                    out.push(b'\t');
                    i += 2;
                }
                other => {
                    out.push(other);
                    i += 2;
                }
            }
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// How many unparsable lines are listed by number (all are counted).
const LISTED_BAD_LINES: usize = 20;

/// What an import read and wrote.
#[derive(Debug, Default, Serialize)]
pub struct ImportSummary {
    pub lines: u64,
    pub hits: u64,
    pub excluded: BTreeMap<Exclusion, u64>,
    pub unparsable: u64,
    /// The first unparsable lines: number and what was wrong.
    pub unparsable_lines: Vec<(u64, String)>,
    pub truncated: u64,
    pub dropped: u64,
    pub rows_written: u64,
    pub seconds: f64,
}

/// Reads `path` line by line (reading blocks the thread: this is a command, not the server),
/// flushing whenever the buffer is three quarters full and at the end.
pub async fn import(
    db: &DatabaseConnection,
    path: &Path,
    target: &Target<'_>,
    settings: &TrafficSettings,
    privacy: IpPrivacy,
    progress: &indicatif::ProgressBar,
) -> anyhow::Result<ImportSummary> {
    let started = Instant::now();
    let file = std::fs::File::open(path)
        .with_context(|| format!("cannot open the log file {}", path.display()))?;
    let mut reader = std::io::BufReader::with_capacity(1 << 20, file);
    let buffer = Buffer::new(settings.buffer_bytes);
    let mut summary = ImportSummary::default();
    let mut line = Vec::with_capacity(1024);
    let mut read_bytes = 0u64;
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .with_context(|| format!("could not read {}", path.display()))?;
        if n == 0 {
            break;
        }
        read_bytes += n as u64;
        summary.lines += 1;
        let text = String::from_utf8_lossy(&line);
        match parse_combined(&text) {
            Err(e) => {
                summary.unparsable += 1;
                if summary.unparsable_lines.len() < LISTED_BAD_LINES {
                    summary
                        .unparsable_lines
                        .push((summary.lines, e.to_string()));
                }
            }
            Ok(entry) => {
                let path = hit::path_only(&entry.target);
                let excluded = entry
                    .ip
                    .parse()
                    .is_ok_and(|ip| target.excluded.contains(ip));
                if let Err(why) = settings.rules.check(&entry.method, path, false) {
                    *summary.excluded.entry(why).or_default() += 1;
                } else if excluded {
                    *summary.excluded.entry(Exclusion::Address).or_default() += 1;
                } else {
                    let locale = hit::locale(path, None, &settings.path_locales);
                    let (hit, cut) = Hit::new(
                        entry.time.timestamp(),
                        &entry.method,
                        path,
                        entry.ip,
                        &entry.user_agent,
                        &entry.referer,
                        locale,
                    );
                    let campaign = hit::Campaign::of(&entry.target);
                    let hit = hit.on(target.site).tagged(campaign).answered(entry.status);
                    buffer.record(hit, 1, cut);
                }
            }
        }
        if summary.lines % 65_536 == 0 {
            progress.set_position(read_bytes);
            if buffer.stats().bytes > settings.buffer_bytes / 4 * 3 {
                summary.rows_written += store::flush(db, &buffer, privacy).await?.rows;
            }
        }
    }
    progress.set_position(read_bytes);
    summary.rows_written += store::flush(db, &buffer, privacy).await?.rows;
    let stats = buffer.stats();
    summary.hits = stats.recorded;
    summary.truncated = stats.truncated;
    summary.dropped = stats.dropped;
    summary.seconds = started.elapsed().as_secs_f64();
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const NGINX: &str = r#"66.249.66.1 - - [30/Nov/2026:08:15:02 +0100] "GET /products/42?ref=x HTTP/1.1" 200 5120 "https://www.google.com/" "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)""#;

    #[test]
    fn a_combined_line_reads_whole() {
        let line = parse_combined(NGINX).unwrap();
        assert_eq!(line.ip, "66.249.66.1");
        assert_eq!(line.time.timestamp(), 1_796_022_902);
        assert_eq!(line.method, "GET");
        assert_eq!(line.target, "/products/42?ref=x");
        assert_eq!(line.status, 200);
        assert_eq!(line.referer, "https://www.google.com/");
        assert!(line.user_agent.contains("Googlebot"));
    }

    #[test]
    fn escapes_dashes_and_common_format() {
        let apache = r#"::1 - frank [01/Dec/2026:00:00:00 -0700] "GET /a HTTP/1.0" 304 - "-" "say \"hi\" \x41\\""#;
        let line = parse_combined(apache).unwrap();
        assert_eq!(line.referer, "");
        assert_eq!(line.user_agent, r#"say "hi" A\"#);
        let common = r#"10.0.0.1 - - [01/Dec/2026:00:00:00 +0000] "GET /c HTTP/1.1" 200 12"#;
        let line = parse_combined(common).unwrap();
        assert_eq!((line.target.as_ref(), line.user_agent.as_ref()), ("/c", ""));
    }

    #[test]
    fn broken_lines_say_what_is_wrong() {
        assert_eq!(parse_combined(""), Err(ParseError::Host));
        assert_eq!(parse_combined("1.2.3.4 - - garbage"), Err(ParseError::Time));
        assert_eq!(
            parse_combined(r#"1.2.3.4 - - [99/Foo/2026:00:00:00 +0000] "GET / HTTP/1.1" 200 1"#),
            Err(ParseError::Time)
        );
        assert_eq!(
            parse_combined(
                r#"1.2.3.4 - - [01/Dec/2026:00:00:00 +0000] "\x16\x03\x01" 400 0 "-" "-""#
            ),
            Err(ParseError::Request)
        );
        assert_eq!(
            parse_combined(r#"1.2.3.4 - - [01/Dec/2026:00:00:00 +0000] "GET / HTTP/1.1" abc 1"#),
            Err(ParseError::Status)
        );
        assert_eq!(
            parse_combined(
                r#"1.2.3.4 - - [01/Dec/2026:00:00:00 +0000] "GET / HTTP/1.1" 200 1 "-" "unterminated"#
            ),
            Err(ParseError::Quote)
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]

        // Whatever the bytes, the parser answers without panicking.
        #[test]
        fn never_panics_on_arbitrary_text(text in "\\PC{0,300}") {
            let _ = parse_combined(&text);
        }

        #[test]
        fn never_panics_on_mangled_lines(cut in 0usize..260, insert in "[\\\\\" \\[\\]x0-9]{0,6}") {
            let mut line = NGINX.to_string();
            let at = (0..=cut.min(line.len())).rev().find(|i| line.is_char_boundary(*i)).unwrap_or(0);
            line.insert_str(at, &insert);
            let _ = parse_combined(&line);
            let _ = parse_combined(&line[..at]);
        }

        #[test]
        fn generated_lines_round_trip(
            ip in "[0-9a-f:.]{1,39}",
            path in "/[a-zA-Z0-9/_.-]{0,60}",
            ua in "[ -!#-\\[\\]-~]{0,120}",
            status in 100u16..600,
        ) {
            let line = format!(r#"{ip} - - [30/Nov/2026:08:15:02 +0000] "GET {path} HTTP/1.1" {status} 10 "-" "{ua}""#);
            let parsed = parse_combined(&line).unwrap();
            prop_assert_eq!(parsed.ip, ip.as_str());
            prop_assert_eq!(parsed.target.as_ref(), path.as_str());
            prop_assert_eq!(parsed.status, status);
            let expected_ua = if ua == "-" { "" } else { ua.as_str() };
            prop_assert_eq!(parsed.user_agent.as_ref(), expected_ua);
        }
    }
}
