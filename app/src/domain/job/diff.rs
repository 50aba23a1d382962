//! Two revisions of a definition compared field by field.
//!
//! Which fields changed is decided on the definitions as stored, credentials included, so a
//! changed secret counts; what is shown of each side comes from the definitions with
//! credentials hidden (`super::redact`), so a diff never prints one.

use serde::{Deserialize, Serialize};

use super::input::JobInput;

/// One field that differs: its name as the jobs file writes it (`retry.max`), and what each
/// side shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct FieldChange {
    pub field: String,
    pub before: String,
    pub after: String,
}

/// Every field of `input` with its value as text, nested fields named with a dot.
pub fn fields(input: &JobInput) -> Vec<(String, String)> {
    let mut out = Vec::new();
    // A JobInput is plain data: it always serialises.
    if let Ok(value) = serde_json::to_value(input) {
        flatten("", &value, &mut out);
    }
    out
}

fn flatten(prefix: &str, value: &serde_json::Value, out: &mut Vec<(String, String)>) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, inner) in map {
                let name = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                flatten(&name, inner, out);
            }
        }
        serde_json::Value::String(text) => out.push((prefix.to_string(), text.clone())),
        serde_json::Value::Null => out.push((prefix.to_string(), String::new())),
        other => out.push((prefix.to_string(), other.to_string())),
    }
}

/// The fields that differ between `before` and `after` (as stored), each shown as `shown_*`
/// has it.
pub fn changes(
    (before, shown_before): (&JobInput, &JobInput),
    (after, shown_after): (&JobInput, &JobInput),
) -> Vec<FieldChange> {
    let shown_before = fields(shown_before);
    let shown_after = fields(shown_after);
    let shown = |list: &[(String, String)], field: &str| {
        list.iter()
            .find(|(name, _)| name == field)
            .map(|(_, value)| value.clone())
            .unwrap_or_default()
    };
    let after = fields(after);
    fields(before)
        .into_iter()
        .zip(after)
        .filter(|((_, a), (_, b))| a != b)
        .map(|((field, _), _)| FieldChange {
            before: shown(&shown_before, &field),
            after: shown(&shown_after, &field),
            field,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job() -> JobInput {
        JobInput {
            name: "nightly".into(),
            kind: "http".into(),
            http_url: "https://example.com/run".into(),
            http_headers: "Authorization: Bearer one".into(),
            ..JobInput::default()
        }
    }

    #[test]
    fn only_changed_fields_and_secrets_stay_hidden() {
        let before = job();
        let mut after = job();
        after.http_headers = "Authorization: Bearer two".into();
        after.timeout_static = "90s".into();
        after.retry.max_retries = "7".into();
        let list = changes((&before, &before.redacted()), (&after, &after.redacted()));
        let names: Vec<&str> = list.iter().map(|c| c.field.as_str()).collect();
        assert_eq!(
            names,
            ["http_headers", "retry.max_retries", "timeout_static"]
        );
        let header = &list[0];
        assert!(
            !header.before.contains("one") && !header.after.contains("two"),
            "{header:?}"
        );
        assert_eq!(list[1].after, "7");
        assert!(changes((&before, &before), (&before, &before)).is_empty());
    }
}
