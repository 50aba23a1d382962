//! Tags: the words teams split jobs by (a service, an owner). A job has any number, up to
//! [`MAX_TAGS`]; the Jobs, Runs and Failed pages filter by one, the digest groups by them, and
//! a maintenance window can pause every job with one.

use crate::domain::Problem;
use crate::problem;

/// Tags per job, at most.
pub const MAX_TAGS: usize = 12;
/// Characters per tag, at most (the column in `maintenance_windows` holds 40).
pub const MAX_LEN: usize = 32;

/// Checks one tag: lowercase letters, digits, `-`, `_` and `.`, starting with a letter or digit.
/// Upper case is folded, so `Billing` and `billing` are one tag.
pub fn parse_tag(text: &str) -> Result<String, Problem> {
    let tag = text.trim().to_lowercase();
    if tag.is_empty() {
        return Err(problem!("error-tag-empty"));
    }
    if tag.chars().count() > MAX_LEN {
        return Err(problem!("error-tag-long", tag = tag.clone(), max = MAX_LEN));
    }
    let mut chars = tag.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    let rest_ok = tag
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '_' | '.'));
    if !first_ok || !rest_ok {
        return Err(problem!("error-tag-chars", tag = text.trim().to_string()));
    }
    Ok(tag)
}

/// Tags typed as a list separated by commas, spaces or new lines: each checked, duplicates
/// dropped, sorted.
pub fn parse_tags(text: &str) -> Result<Vec<String>, Vec<Problem>> {
    let mut tags = Vec::new();
    let mut errors = Vec::new();
    for word in text
        .split([',', ' ', '\n', '\t'])
        .filter(|w| !w.trim().is_empty())
    {
        match parse_tag(word) {
            Ok(tag) if !tags.contains(&tag) => tags.push(tag),
            Ok(_) => {}
            Err(e) => errors.push(e),
        }
    }
    if tags.len() > MAX_TAGS {
        errors.push(problem!(
            "error-tags-too-many",
            max = MAX_TAGS,
            count = tags.len()
        ));
    }
    if errors.is_empty() {
        tags.sort();
        Ok(tags)
    } else {
        Err(errors)
    }
}

/// Tags as stored (a JSON array); a row that cannot be read has none, rather than failing the
/// page that lists it.
pub fn from_column(text: &str) -> Vec<String> {
    serde_json::from_str(text).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_folded_sorted_and_deduplicated() {
        assert_eq!(
            parse_tags("Billing, ops  billing\nteam-a").unwrap(),
            vec!["billing", "ops", "team-a"]
        );
        assert_eq!(parse_tags("  ").unwrap(), Vec::<String>::new());
    }

    #[test]
    fn bad_tags_are_named() {
        let errors = parse_tags("ok, -bad, a/b").unwrap_err();
        assert_eq!(errors.len(), 2);
        assert!(errors[0].to_string().contains("-bad"), "{errors:?}");
        assert!(errors[1].to_string().contains("a/b"), "{errors:?}");
        assert!(parse_tag(&"x".repeat(MAX_LEN + 1)).is_err());
        let many: Vec<String> = (0..=MAX_TAGS).map(|i| format!("t{i}")).collect();
        assert!(parse_tags(&many.join(",")).is_err());
    }

    #[test]
    fn an_unreadable_column_has_no_tags() {
        assert_eq!(from_column("[\"a\",\"b\"]"), vec!["a", "b"]);
        assert!(from_column("nonsense").is_empty());
    }
}
