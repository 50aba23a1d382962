//! The `isbot` pattern list (`server/data/bots/`), compiled for Rust's `regex`.
//!
//! The list is written for JavaScript and matched case-insensitively. Rust's `regex` has no
//! lookaround, which a handful of patterns use only at their edges — `(?<!cam)scan`,
//! `google(?!app|…)` — so each of those is compiled as its core plus two guards checked where
//! the core matched. Every other pattern goes into one alternation, which the lazy DFA answers in
//! one pass over the text.

use regex::bytes::{Regex, RegexBuilder};

/// Why the vendored list did not compile (a bad update of `server/data/bots/`).
#[derive(Debug, thiserror::Error)]
pub enum PatternError {
    #[error("the bot pattern list is not a JSON array of strings: {0}")]
    Json(#[from] serde_json::Error),
    #[error("bot pattern {pattern:?} does not compile: {source}")]
    Regex {
        pattern: String,
        #[source]
        source: regex::Error,
    },
    #[error("bot pattern {0:?} has a lookaround inside it, which only the edges may have")]
    Lookaround(String),
    #[error("{0:?} is listed as a broad pattern but is not in the bot pattern list")]
    UnknownWeak(String),
}

/// A pattern with a lookaround at an edge: the core must match and neither guard may.
#[derive(Debug)]
struct Guarded {
    core: Regex,
    /// Must not match the text just before the core (`(?<!…)`), anchored at its end.
    not_after: Option<Regex>,
    /// Must not match the text just after the core (`(?!…)`), anchored at its start.
    not_before: Option<Regex>,
}

/// Patterns compiled together: one alternation and the guarded ones.
#[derive(Debug)]
struct Set {
    plain: Option<Regex>,
    guarded: Vec<Guarded>,
}

impl Set {
    fn build(patterns: &[&str]) -> Result<Set, PatternError> {
        let mut plain = Vec::new();
        let mut guarded = Vec::new();
        for pattern in patterns {
            match split_lookarounds(pattern)? {
                None => plain.push(format!("(?:{pattern})")),
                Some(Parts {
                    behind,
                    core,
                    ahead,
                }) => guarded.push(Guarded {
                    core: compile(core)?,
                    not_after: behind.map(|b| compile(&format!("(?:{b})$"))).transpose()?,
                    not_before: ahead.map(|a| compile(&format!("^(?:{a})"))).transpose()?,
                }),
            }
        }
        let plain = if plain.is_empty() {
            None
        } else {
            Some(compile(&plain.join("|"))?)
        };
        Ok(Set { plain, guarded })
    }

    fn is_match(&self, text: &[u8]) -> bool {
        self.plain.as_ref().is_some_and(|r| r.is_match(text))
            || self.guarded.iter().any(|g| {
                g.core.find_iter(text).any(|m| {
                    !g.not_after
                        .as_ref()
                        .is_some_and(|r| r.is_match(&text[..m.start()]))
                        && !g
                            .not_before
                            .as_ref()
                            .is_some_and(|r| r.is_match(&text[m.end()..]))
                })
            })
    }
}

/// The compiled list, split in two: patterns that mark a bot on their own, and the broad ones
/// (see [`Patterns::from_json`]).
#[derive(Debug)]
pub struct Patterns {
    strong: Set,
    weak: Set,
    count: usize,
}

/// What the list says about a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Match {
    None,
    /// Only broad patterns matched.
    Weak,
    Strong,
}

/// JavaScript reads a `-` next to a class escape inside `[…]` (`[\w\d-.]`) as itself; Rust's
/// `regex` refuses it, so it is escaped.
fn from_javascript(pattern: &str) -> String {
    let bytes = pattern.as_bytes();
    // Bytes, copied unchanged but for the inserted `\\`, so any UTF-8 in a pattern survives.
    let mut out = Vec::with_capacity(pattern.len() + 4);
    let (mut i, mut in_class) = (0, false);
    let is_class_escape = |at: usize| {
        at + 1 < bytes.len() && bytes[at] == b'\\' && b"wdsWDS".contains(&bytes[at + 1])
    };
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'\\' if i + 1 < bytes.len() => {
                out.extend_from_slice(&bytes[i..i + 2]);
                i += 2;
                continue;
            }
            b'[' if !in_class => in_class = true,
            b']' if in_class => in_class = false,
            b'-' if in_class && ((i >= 2 && is_class_escape(i - 2)) || is_class_escape(i + 1)) => {
                out.extend_from_slice(b"\\-");
                i += 1;
                continue;
            }
            _ => {}
        }
        out.push(c);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn compile(pattern: &str) -> Result<Regex, PatternError> {
    let pattern = &from_javascript(pattern);
    // JavaScript's `\w`, `\b` and `\d` are ASCII; so are these, and matching bytes keeps any
    // text (even invalid UTF-8) answerable.
    RegexBuilder::new(pattern)
        .case_insensitive(true)
        .unicode(false)
        .size_limit(64 << 20)
        .dfa_size_limit(16 << 20)
        .build()
        .map_err(|source| PatternError::Regex {
            pattern: pattern.to_string(),
            source,
        })
}

/// The end of the group that opens at `open` (a `(`), counting nested groups and skipping
/// escapes and character classes.
fn group_end(pattern: &str, open: usize) -> Option<usize> {
    let bytes = pattern.as_bytes();
    let (mut depth, mut i, mut in_class) = (0usize, open, false);
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 1,
            b'[' if !in_class => in_class = true,
            b']' if in_class => in_class = false,
            b'(' if !in_class => depth += 1,
            b')' if !in_class => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// A pattern taken apart: `(?<!behind)core(?!ahead)`.
struct Parts<'a> {
    behind: Option<&'a str>,
    core: &'a str,
    ahead: Option<&'a str>,
}

/// Splits `(?<!X)core(?!Y)` into its parts; `None` when the pattern has no lookaround.
fn split_lookarounds(pattern: &str) -> Result<Option<Parts<'_>>, PatternError> {
    if !pattern.contains("(?<") && !pattern.contains("(?!") && !pattern.contains("(?=") {
        return Ok(None);
    }
    let lookaround = || PatternError::Lookaround(pattern.to_string());
    let mut rest = pattern;
    let mut behind = None;
    if rest.starts_with("(?<!") {
        let end = group_end(rest, 0).ok_or_else(lookaround)?;
        behind = Some(&rest[4..end]);
        rest = &rest[end + 1..];
    }
    let mut ahead = None;
    if let Some(start) = rest.rfind("(?!")
        && group_end(rest, start) == Some(rest.len() - 1)
    {
        ahead = Some(&rest[start + 3..rest.len() - 1]);
        rest = &rest[..start];
    }
    if rest.contains("(?<") || rest.contains("(?!") || rest.contains("(?=") {
        return Err(lookaround());
    }
    Ok(Some(Parts {
        behind,
        core: rest,
        ahead,
    }))
}

impl Patterns {
    /// Compiles a JSON array of patterns (the vendored file's format). Those equal to one of
    /// `weak` are kept apart: they match common words (`download`, `discovery`, `server`,
    /// `proxy`) that phones, apps and browser add-ons carry too, so the caller weighs them.
    /// A `weak` entry the list does not have is an error, so an update that rewrites one is
    /// noticed instead of silently making it strong.
    pub fn from_json(json: &str, weak: &[&str]) -> Result<Patterns, PatternError> {
        let list: Vec<String> = serde_json::from_str(json)?;
        if let Some(missing) = weak.iter().find(|w| !list.iter().any(|p| p == *w)) {
            return Err(PatternError::UnknownWeak((*missing).to_string()));
        }
        let (weak_list, strong_list): (Vec<&str>, Vec<&str>) = list
            .iter()
            .map(String::as_str)
            .partition(|p| weak.contains(p));
        Ok(Patterns {
            strong: Set::build(&strong_list)?,
            weak: Set::build(&weak_list)?,
            count: list.len(),
        })
    }

    /// How many patterns the list has.
    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    pub fn find(&self, text: &[u8]) -> Match {
        if self.strong.is_match(text) {
            Match::Strong
        } else if self.weak.is_match(text) {
            Match::Weak
        } else {
            Match::None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookarounds_at_the_edges_become_guards() {
        let p = Patterns::from_json(
            r#"["(?<! cu)bots?(?:\\b|_)", "google(?!(?:wv|app| pixel))", "^curl/", "download"]"#,
            &["download"],
        )
        .expect("compiles");
        assert_eq!(p.len(), 4);
        assert_eq!(
            p.find(b"Mozilla/5.0 (compatible; SomeBot/1.0)"),
            Match::Strong
        );
        assert_eq!(
            p.find(b"Mozilla/5.0 (Linux; Android 13; CUBOT P60)"),
            Match::None
        );
        // A later match counts when the first one is guarded away.
        assert_eq!(p.find(b"CUBOT phone running a bot"), Match::Strong);
        assert_eq!(p.find(b"Google Web Preview"), Match::Strong);
        assert_eq!(p.find(b"Mozilla/5.0 GoogleApp/1.0"), Match::None);
        assert_eq!(p.find(b"CURL/8.0"), Match::Strong);
        assert_eq!(p.find(b"AndroidDownloadManager/5.1"), Match::Weak);
        assert_eq!(from_javascript(r"[\w\d-.]+[a-z]"), r"[\w\d\-.]+[a-z]");
    }

    #[test]
    fn lookarounds_inside_are_refused() {
        assert!(matches!(
            Patterns::from_json(r#"["a(?!b)c"]"#, &[]),
            Err(PatternError::Lookaround(_))
        ));
        assert!(matches!(
            Patterns::from_json(r#"["(unclosed"]"#, &[]),
            Err(PatternError::Regex { .. })
        ));
        assert!(matches!(
            Patterns::from_json(r#"["a"]"#, &["b"]),
            Err(PatternError::UnknownWeak(_))
        ));
    }
}
