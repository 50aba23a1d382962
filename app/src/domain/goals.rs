//! Custom events and goals, without words: what an event's name and properties may be, what a
//! goal is (a page pattern or an event name), and which pages a pattern matches.
//!
//! A page pattern is a path where `*` stands for any characters within one segment and `**`
//! for any characters at all: `/signup/done`, `/blog/*` (a post, not `/blog/2026/x`),
//! `/docs/**` (anything under `/docs/`).

use std::collections::BTreeMap;

use crate::domain::problem::Problem;
use crate::problem;

/// Longest goal name (characters).
pub const MAX_GOAL_NAME: usize = 100;
/// Longest event name (bytes).
pub const MAX_EVENT_NAME: usize = 120;
/// Longest page pattern (bytes): the longest path kept.
pub const MAX_PATTERN: usize = 1024;
/// Most properties one event keeps; a report with more is refused.
pub const MAX_PROPS: usize = 30;
/// Longest property name (bytes).
pub const MAX_PROP_KEY: usize = 64;
/// Longest property value kept (bytes); longer ones are cut.
pub const MAX_PROP_VALUE: usize = 200;

/// What a goal counts: views of pages matching a pattern, or an event by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GoalTarget {
    Page(String),
    Event(String),
}

impl GoalTarget {
    /// How the kind is stored (`traffic_goals.kind`).
    pub fn kind(&self) -> &'static str {
        match self {
            GoalTarget::Page(_) => "page",
            GoalTarget::Event(_) => "event",
        }
    }

    /// The pattern or the event name.
    pub fn value(&self) -> &str {
        match self {
            GoalTarget::Page(value) | GoalTarget::Event(value) => value,
        }
    }

    /// A stored goal's target; `None` for a kind this build does not know.
    pub fn stored(kind: &str, value: &str) -> Option<GoalTarget> {
        match kind {
            "page" => Some(GoalTarget::Page(value.to_string())),
            "event" => Some(GoalTarget::Event(value.to_string())),
            _ => None,
        }
    }

    /// A target as typed: `page` with a pattern, or `event` with a name; checked.
    pub fn parse(page: Option<&str>, event: Option<&str>) -> Result<GoalTarget, Problem> {
        match (page, event) {
            (Some(pattern), None) => Ok(GoalTarget::Page(page_pattern(pattern)?)),
            (None, Some(name)) => Ok(GoalTarget::Event(event_name(name)?)),
            _ => Err(problem!("error-goal-target")),
        }
    }
}

/// A goal's name as typed: trimmed, 1 to [`MAX_GOAL_NAME`] characters, no control characters.
pub fn goal_name(input: &str) -> Result<String, Problem> {
    let name = input.trim();
    if name.is_empty() {
        return Err(problem!("error-goal-name-empty"));
    }
    if name.chars().count() > MAX_GOAL_NAME {
        return Err(problem!("error-goal-name-long", max = MAX_GOAL_NAME));
    }
    if name.chars().any(char::is_control) {
        return Err(problem!("error-goal-name-control"));
    }
    Ok(name.to_string())
}

/// An event's name as sent or typed: trimmed, 1 to [`MAX_EVENT_NAME`] bytes, no control
/// characters.
pub fn event_name(input: &str) -> Result<String, Problem> {
    let name = input.trim();
    if name.is_empty() {
        return Err(problem!("error-event-name-empty"));
    }
    if name.len() > MAX_EVENT_NAME {
        return Err(problem!("error-event-name-long", max = MAX_EVENT_NAME));
    }
    if name.chars().any(char::is_control) {
        return Err(problem!("error-event-name-control"));
    }
    Ok(name.to_string())
}

/// A page pattern as typed: a path (leading `/`) of at most [`MAX_PATTERN`] bytes, without
/// spaces, a query or a fragment.
pub fn page_pattern(input: &str) -> Result<String, Problem> {
    let pattern = input.trim();
    if !pattern.starts_with('/') {
        return Err(problem!("error-goal-pattern-slash", text = pattern));
    }
    if pattern.len() > MAX_PATTERN {
        return Err(problem!("error-goal-pattern-long", max = MAX_PATTERN));
    }
    if pattern
        .chars()
        .any(|c| c.is_whitespace() || c.is_control() || c == '?' || c == '#')
    {
        return Err(problem!("error-goal-pattern-path", text = pattern));
    }
    Ok(pattern.to_string())
}

/// A checked page pattern, ready to match paths.
#[derive(Debug, Clone)]
pub struct PagePattern(regex_lite::Regex);

impl PagePattern {
    /// The matcher of a pattern [`page_pattern`] accepted; `None` only if it could not be built.
    pub fn new(pattern: &str) -> Option<PagePattern> {
        let mut source = String::from("^");
        let mut rest = pattern;
        while let Some(star) = rest.find('*') {
            source.push_str(&regex_lite::escape(&rest[..star]));
            let after = &rest[star..];
            if after.starts_with("**") {
                source.push_str(".*");
                rest = after.trim_start_matches('*');
            } else {
                source.push_str("[^/]*");
                rest = &after[1..];
            }
        }
        source.push_str(&regex_lite::escape(rest));
        source.push('$');
        regex_lite::Regex::new(&source).ok().map(PagePattern)
    }

    pub fn matches(&self, path: &str) -> bool {
        self.0.is_match(path)
    }
}

/// Why an event's properties were refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PropsRefused {
    NotAnObject,
    TooMany,
    Nested,
}

impl PropsRefused {
    pub fn problem(self) -> Problem {
        match self {
            PropsRefused::NotAnObject => problem!("error-event-props-object"),
            PropsRefused::TooMany => problem!("error-event-props-many", max = MAX_PROPS),
            PropsRefused::Nested => problem!("error-event-props-nested"),
        }
    }
}

/// An event's properties as kept: names and values as text, each bounded (control characters
/// become spaces), `null`s left out. Strings, numbers and booleans are accepted; an array or an
/// object as a value is refused, as are more than [`MAX_PROPS`] properties.
pub fn event_props(
    value: Option<&serde_json::Value>,
) -> Result<BTreeMap<String, String>, PropsRefused> {
    use serde_json::Value;
    let object = match value {
        None | Some(Value::Null) => return Ok(BTreeMap::new()),
        Some(Value::Object(object)) => object,
        Some(_) => return Err(PropsRefused::NotAnObject),
    };
    if object.len() > MAX_PROPS {
        return Err(PropsRefused::TooMany);
    }
    let mut props = BTreeMap::new();
    for (key, value) in object {
        let text = match value {
            Value::Null => continue,
            Value::String(text) => text.clone(),
            Value::Bool(b) => b.to_string(),
            Value::Number(n) => n.to_string(),
            Value::Array(_) | Value::Object(_) => return Err(PropsRefused::Nested),
        };
        let key = bounded(key, MAX_PROP_KEY);
        if !key.is_empty() {
            props.insert(key, bounded(&text, MAX_PROP_VALUE));
        }
    }
    Ok(props)
}

/// `text` trimmed, control characters as spaces, cut to `max` bytes at a character boundary.
fn bounded(text: &str, max: usize) -> String {
    let clean: String = text
        .trim()
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    clean[..clean.floor_char_boundary(max)]
        .trim_end()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_within_and_across_segments() {
        let exact = PagePattern::new("/signup/done").unwrap();
        assert!(exact.matches("/signup/done"));
        assert!(!exact.matches("/signup/done/x") && !exact.matches("/signup"));
        let one = PagePattern::new("/blog/*").unwrap();
        assert!(one.matches("/blog/a") && one.matches("/blog/"));
        assert!(!one.matches("/blog/2026/a"));
        let any = PagePattern::new("/docs/**").unwrap();
        assert!(any.matches("/docs/a/b/c") && !any.matches("/doc"));
        let dots = PagePattern::new("/a.b/(x)+").unwrap();
        assert!(dots.matches("/a.b/(x)+") && !dots.matches("/aXb/(x)+"));
        let middle = PagePattern::new("/shop/*/thanks").unwrap();
        assert!(middle.matches("/shop/42/thanks") && !middle.matches("/shop/4/2/thanks"));
    }

    #[test]
    fn patterns_and_names_are_checked() {
        assert_eq!(page_pattern(" /a/* ").unwrap(), "/a/*");
        assert!(page_pattern("a").is_err());
        assert!(page_pattern("/a b").is_err());
        assert!(page_pattern("/a?b=1").is_err());
        assert!(page_pattern(&format!("/{}", "a".repeat(MAX_PATTERN))).is_err());
        assert!(goal_name("  ").is_err());
        assert!(goal_name(&"é".repeat(MAX_GOAL_NAME)).is_ok());
        assert!(goal_name(&"é".repeat(MAX_GOAL_NAME + 1)).is_err());
        assert!(event_name("sign\nup").is_err());
        assert_eq!(event_name(" Signup ").unwrap(), "Signup");
        assert!(GoalTarget::parse(Some("/x"), Some("e")).is_err());
        assert!(GoalTarget::parse(None, None).is_err());
        assert_eq!(
            GoalTarget::parse(None, Some("Signup")).unwrap(),
            GoalTarget::Event("Signup".into())
        );
    }

    #[test]
    fn props_are_text_bounded_and_flat() {
        let value = serde_json::json!({
            "plan": "pro", "seats": 3, "trial": true, "gone": null,
            "long": "x".repeat(500), "ctl": "a\u{7}b",
        });
        let props = event_props(Some(&value)).unwrap();
        assert_eq!(props["plan"], "pro");
        assert_eq!(props["seats"], "3");
        assert_eq!(props["trial"], "true");
        assert_eq!(props["ctl"], "a b");
        assert_eq!(props["long"].len(), MAX_PROP_VALUE);
        assert!(!props.contains_key("gone"));
        assert_eq!(
            event_props(Some(&serde_json::json!({"a": [1]}))),
            Err(PropsRefused::Nested)
        );
        assert_eq!(
            event_props(Some(&serde_json::json!("x"))),
            Err(PropsRefused::NotAnObject)
        );
        let many: serde_json::Map<_, _> = (0..=MAX_PROPS)
            .map(|i| (i.to_string(), serde_json::json!(i)))
            .collect();
        assert_eq!(
            event_props(Some(&serde_json::Value::Object(many))),
            Err(PropsRefused::TooMany)
        );
        assert!(event_props(None).unwrap().is_empty());
    }
}
