//! A crontab read as cron reads it (crontab(5)), for `bulwark import crontab`: five-field
//! lines and the `@` macros, `NAME=value` settings (`MAILTO`, `CRON_TZ`, `SHELL`), comments,
//! and the `%` rule — an unescaped `%` ends the command and what follows, its `%`s turned
//! into new lines, is the command's standard input.
//!
//! Each command line becomes an [`Entry`] with its schedule in Bulwark's six fields and a name
//! made from its command (the same line always gets the same name), or a [`Skipped`] line
//! saying why it cannot be converted.

use super::cron::CronExpr;

/// A crontab line that became a job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// 1-based.
    pub line: usize,
    /// Six fields, seconds first.
    pub cron: String,
    /// The command as the shell gets it (`\%` made `%`).
    pub command: String,
    /// The command's input from the `%` rule, if it has one.
    pub stdin: Option<String>,
    /// The schedule and command exactly as written (for rewriting the line).
    pub schedule_text: String,
    pub command_text: String,
    /// The job's name: from its command, made unique within the file.
    pub name: String,
    /// The settings in force at this line.
    pub mailto: Option<String>,
    pub zone: Option<String>,
    pub shell: Option<String>,
}

/// Why a line was left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    /// `@reboot`: at start-up, not on a schedule.
    Reboot,
    /// A macro cron does not know.
    UnknownMacro(String),
    /// Fewer than five fields and a command.
    TooFewFields,
    /// The schedule does not parse (the parser's words).
    BadSchedule(String),
}

/// A line that was not converted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub line: usize,
    pub text: String,
    pub reason: Reason,
}

/// A crontab, read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Crontab {
    pub entries: Vec<Entry>,
    pub skipped: Vec<Skipped>,
}

/// Settings lines change what follows them, as cron reads them.
#[derive(Default, Clone)]
struct Settings {
    mailto: Option<String>,
    zone: Option<String>,
    shell: Option<String>,
}

/// Reads a crontab.
pub fn parse(text: &str) -> Crontab {
    let mut settings = Settings::default();
    let mut out = Crontab::default();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some((name, value)) = setting(line) {
            let value = (!value.is_empty()).then(|| value.to_string());
            match name {
                "MAILTO" => settings.mailto = value,
                "CRON_TZ" | "TZ" => settings.zone = value,
                "SHELL" => settings.shell = value,
                _ => {}
            }
            continue;
        }
        match entry(i + 1, line, &settings) {
            Ok(entry) => out.entries.push(entry),
            Err(reason) => out.skipped.push(Skipped {
                line: i + 1,
                text: line.to_string(),
                reason,
            }),
        }
    }
    name_uniquely(&mut out.entries);
    out
}

/// `NAME = value` (quotes taken off), when the line is a setting rather than a command.
fn setting(line: &str) -> Option<(&str, &str)> {
    let (name, value) = line.split_once('=')?;
    let name = name.trim();
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    let value = value.trim();
    let unquoted = value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
        .unwrap_or(value);
    Some((name, unquoted))
}

fn entry(line: usize, text: &str, settings: &Settings) -> Result<Entry, Reason> {
    let (cron, schedule_text, rest) = if let Some(after) = text.strip_prefix('@') {
        let (word, rest) = after.split_once(char::is_whitespace).unwrap_or((after, ""));
        let cron = match word {
            "reboot" => return Err(Reason::Reboot),
            "yearly" | "annually" => "0 0 0 1 1 *",
            "monthly" => "0 0 0 1 * *",
            "weekly" => "0 0 0 * * 0",
            "daily" | "midnight" => "0 0 0 * * *",
            "hourly" => "0 0 * * * *",
            other => return Err(Reason::UnknownMacro(other.to_string())),
        };
        (cron.to_string(), format!("@{word}"), rest.trim_start())
    } else {
        let mut rest = text;
        let mut fields = Vec::with_capacity(5);
        for _ in 0..5 {
            let (field, after) = rest
                .split_once(char::is_whitespace)
                .ok_or(Reason::TooFewFields)?;
            fields.push(field);
            rest = after.trim_start();
        }
        (format!("0 {}", fields.join(" ")), fields.join(" "), rest)
    };
    if rest.is_empty() {
        return Err(Reason::TooFewFields);
    }
    CronExpr::parse(&cron).map_err(|e| Reason::BadSchedule(e.to_string()))?;
    let (command, stdin) = split_percent(rest);
    Ok(Entry {
        line,
        name: name_of(&command),
        cron,
        command,
        stdin,
        schedule_text,
        command_text: rest.to_string(),
        mailto: settings.mailto.clone(),
        zone: settings.zone.clone(),
        shell: settings.shell.clone(),
    })
}

/// cron's `%` rule: the command up to the first unescaped `%` (with `\%` made `%`), and what
/// follows as its input, each further unescaped `%` a new line.
pub fn split_percent(text: &str) -> (String, Option<String>) {
    let mut parts: Vec<String> = vec![String::new()];
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'%') => {
                chars.next();
                if let Some(part) = parts.last_mut() {
                    part.push('%');
                }
            }
            '%' => parts.push(String::new()),
            c => {
                if let Some(part) = parts.last_mut() {
                    part.push(c);
                }
            }
        }
    }
    let command = parts.remove(0).trim_end().to_string();
    let stdin = (!parts.is_empty()).then(|| parts.join("\n") + "\n");
    (command, stdin)
}

/// A job name from a command: its program's file name and its next words, in letters, digits
/// and dashes — `/usr/local/bin/backup.sh --full /data` → `backup-sh-full-data`.
pub fn name_of(command: &str) -> String {
    let mut words = command.split_whitespace();
    let program = words
        .next()
        .map(|p| p.rsplit('/').next().unwrap_or(p))
        .unwrap_or("job");
    let mut name = String::new();
    for word in std::iter::once(program).chain(words.take(3)) {
        for c in word.chars() {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_alphanumeric() {
                name.push(c);
            } else if !name.ends_with('-') && !name.is_empty() {
                name.push('-');
            }
        }
        if !name.ends_with('-') && !name.is_empty() {
            name.push('-');
        }
        if name.len() >= 48 {
            break;
        }
    }
    let name: String = name.chars().take(48).collect();
    let name = name.trim_matches('-').to_string();
    if name.is_empty() {
        "cron-job".to_string()
    } else {
        name
    }
}

/// Entries with the same name get `-2`, `-3`… in file order.
fn name_uniquely(entries: &mut [Entry]) {
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for entry in entries {
        let count = seen.entry(entry.name.clone()).or_insert(0);
        *count += 1;
        if *count > 1 {
            entry.name = format!("{}-{count}", entry.name);
        }
    }
}

/// `text` as one word for a POSIX shell: in single quotes, each `'` written `'\''`.
pub fn shell_quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "# nightly\nMAILTO=ops@example.com\nCRON_TZ=Asia/Shanghai\n\
        30 2 * * * /usr/local/bin/backup.sh --full\n@daily mysqldump shop | gzip > /b/shop-$(date +\\%F).gz\n\
        @reboot /opt/start.sh\n*/5 * * * 1-5 curl -fsS https://x/y%hello%world\n";

    #[test]
    fn lines_macros_settings_and_the_percent_rule() {
        let tab = parse(SAMPLE);
        assert_eq!(tab.entries.len(), 3);
        let backup = &tab.entries[0];
        assert_eq!(backup.cron, "0 30 2 * * *");
        assert_eq!(backup.name, "backup-sh-full");
        assert_eq!(backup.mailto.as_deref(), Some("ops@example.com"));
        assert_eq!(backup.zone.as_deref(), Some("Asia/Shanghai"));
        let dump = &tab.entries[1];
        assert_eq!(dump.cron, "0 0 0 * * *");
        assert_eq!(
            dump.command,
            "mysqldump shop | gzip > /b/shop-$(date +%F).gz"
        );
        assert_eq!(dump.stdin, None);
        let curl = &tab.entries[2];
        assert_eq!(curl.cron, "0 */5 * * * 1-5");
        assert_eq!(curl.command, "curl -fsS https://x/y");
        assert_eq!(curl.stdin.as_deref(), Some("hello\nworld\n"));
        assert_eq!(
            tab.skipped,
            [Skipped {
                line: 6,
                text: "@reboot /opt/start.sh".into(),
                reason: Reason::Reboot
            }]
        );
    }

    #[test]
    fn bad_lines_say_why() {
        let tab = parse("61 * * * * x\n* * * *\n@often x\n");
        let reasons: Vec<&Reason> = tab.skipped.iter().map(|s| &s.reason).collect();
        assert!(matches!(reasons[0], Reason::BadSchedule(_)));
        assert_eq!(reasons[1], &Reason::TooFewFields);
        assert_eq!(reasons[2], &Reason::UnknownMacro("often".into()));
    }

    #[test]
    fn names_are_stable_and_unique() {
        let tab = parse("0 * * * * run.sh\n5 * * * * run.sh\n");
        let names: Vec<&str> = tab.entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["run-sh", "run-sh-2"]);
        assert_eq!(parse("0 * * * * run.sh\n5 * * * * run.sh\n"), tab);
        assert_eq!(name_of("!!!"), "cron-job");
    }

    #[test]
    fn quoting_survives_single_quotes() {
        assert_eq!(shell_quoted("echo 'hi'"), r"'echo '\''hi'\'''");
    }
}
