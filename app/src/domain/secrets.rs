//! Named secrets as a job refers to them: `${secret:NAME}` in its URL, headers, body,
//! arguments or built-in parameters. The definition holds only the reference; the value is
//! filled in at the last moment before an attempt runs, and taken out again of whatever the
//! attempt reports (output, error message) before anything is stored.

use crate::domain::Problem;
use crate::problem;
use std::fmt;

use serde::{Deserialize, Serialize};

/// A secret's name: 1–64 characters of letters, digits, `_`, `-` and `.`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SecretName(String);

impl SecretName {
    pub const MAX_LEN: usize = 64;

    pub fn parse(value: &str) -> Result<SecretName, Problem> {
        let value = value.trim();
        if value.is_empty() {
            return Err(problem!("error-secret-name-empty"));
        }
        if value.chars().count() > Self::MAX_LEN {
            return Err(problem!("error-secret-name-long", max = Self::MAX_LEN));
        }
        if !value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        {
            return Err(problem!(
                "error-secret-name-chars",
                name = value.to_string()
            ));
        }
        Ok(SecretName(value.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SecretName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

const OPEN: &str = "${secret:";

/// The reference to a secret, as written in a job.
pub fn reference(name: &str) -> String {
    format!("{OPEN}{name}}}")
}

/// Where a run's parameter goes in a job's text (`crate::domain::job::params`).
const OPEN_PARAM: &str = "${param:";

/// The names `text` refers to, in order, each once.
pub fn references(text: &str) -> Vec<String> {
    references_of(text, OPEN)
}

/// The parameters `text` refers to (`${param:NAME}`), in order, each once.
pub fn param_references(text: &str) -> Vec<String> {
    references_of(text, OPEN_PARAM)
}

fn references_of(text: &str, open: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(open) {
        let after = &rest[start + open.len()..];
        let Some(end) = after.find('}') else { break };
        let name = &after[..end];
        if SecretName::parse(name).is_ok() && !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
        rest = &after[end + 1..];
    }
    names
}

/// `text` with every reference replaced by its value; the names not found are the error.
pub fn substitute(
    text: &str,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<String, Vec<String>> {
    substitute_with_params(text, lookup, None::<fn(&str) -> Option<String>>)
}

/// [`substitute`], filling `${param:NAME}` from `params` in the same single pass: a value put
/// in is never read again, so a parameter whose value spells `${secret:…}` stays that text
/// and cannot pull a secret out. Without `params`, parameter references are kept as written.
/// Missing names come back as `NAME` for secrets and `param:NAME` for parameters.
pub fn substitute_with_params(
    text: &str,
    secret: impl Fn(&str) -> Option<String>,
    params: Option<impl Fn(&str) -> Option<String>>,
) -> Result<String, Vec<String>> {
    substitute_placed(
        text,
        secret,
        params.map(|f| move |name: &str, _at: usize| f(name)),
    )
}

/// [`substitute_with_params`] where a parameter's value may depend on where its reference
/// stands: `param` gets the name and the byte offset of the reference's `$` in `text`
/// (`crate::domain::job::placement` encodes a value for its place).
pub fn substitute_placed(
    text: &str,
    secret: impl Fn(&str) -> Option<String>,
    mut param: Option<impl FnMut(&str, usize) -> Option<String>>,
) -> Result<String, Vec<String>> {
    let mut out = String::with_capacity(text.len());
    let mut missing: Vec<String> = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let at = text.len() - rest.len() + start;
        let here = &rest[start..];
        let (open, is_param) = if here.starts_with(OPEN) {
            (OPEN, false)
        } else if param.is_some() && here.starts_with(OPEN_PARAM) {
            (OPEN_PARAM, true)
        } else {
            out.push_str("${");
            rest = &here[2..];
            continue;
        };
        let after = &here[open.len()..];
        match after.find('}') {
            Some(end) if SecretName::parse(&after[..end]).is_ok() => {
                let name = &after[..end];
                let found = if is_param {
                    param.as_mut().and_then(|lookup| lookup(name, at))
                } else {
                    secret(name)
                };
                match found {
                    Some(value) => out.push_str(&value),
                    None => {
                        let label = if is_param {
                            format!("param:{name}")
                        } else {
                            name.to_string()
                        };
                        if !missing.contains(&label) {
                            missing.push(label);
                        }
                    }
                }
                rest = &after[end + 1..];
            }
            // Not a reference after all: kept as written.
            _ => {
                out.push_str(open);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    if missing.is_empty() {
        Ok(out)
    } else {
        Err(missing)
    }
}

/// Where each parameter reference in `text` starts (the byte offset of its `$`), with its
/// name, in order.
pub fn param_spans(text: &str) -> Vec<(usize, String)> {
    let mut spans = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(OPEN_PARAM) {
        let at = text.len() - rest.len() + start;
        let after = &rest[start + OPEN_PARAM.len()..];
        let Some(end) = after.find('}') else { break };
        let name = &after[..end];
        if SecretName::parse(name).is_ok() {
            spans.push((at, name.to_string()));
            rest = &after[end + 1..];
        } else {
            rest = after;
        }
    }
    spans
}

/// `text` with every occurrence of a secret's value put back as its reference: the value as it
/// is, and the forms output shows it in — percent- and form-encoded (a URL, a form body, `set -x`
/// of a curl line) and base64 (`Authorization: Basic`, a token piped through `base64`, also where
/// the value sits inside a longer base64 text). Values shorter than four characters are left
/// alone: they would match ordinary text everywhere.
pub fn redact(text: &str, secrets: &[(String, String)]) -> String {
    let mut out = text.to_string();
    let mut by_length: Vec<(&str, String)> = secrets
        .iter()
        .filter(|(_, v)| v.len() >= 4)
        .flat_map(|(name, value)| forms(value).into_iter().map(move |f| (name.as_str(), f)))
        .collect();
    // Longest first, so a value containing another is replaced whole.
    by_length.sort_by_key(|(_, v)| std::cmp::Reverse(v.len()));
    for (name, value) in by_length {
        if out.contains(value.as_str()) {
            out = out.replace(value.as_str(), &reference(name));
        }
    }
    out
}

/// The shortest derived form worth looking for: shorter ones match ordinary text.
const MIN_FORM: usize = 6;

/// `value` and the encoded forms [`redact`] takes out, each once.
pub(crate) fn forms(value: &str) -> Vec<String> {
    use base64::Engine;
    use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
    use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
    let mut derived = vec![
        utf8_percent_encode(value, NON_ALPHANUMERIC).to_string(),
        url::form_urlencoded::byte_serialize(value.as_bytes()).collect(),
    ];
    // Inside a longer base64 text the value starts at one of three alignments; keep only the
    // characters its own bits decide (`Basic base64("user:" + value)` holds one of these).
    for skip in 0..3usize {
        let mut bytes = vec![0u8; skip];
        bytes.extend_from_slice(value.as_bytes());
        let from = (skip * 8).div_ceil(6);
        let to = bytes.len() * 8 / 6;
        for engine in [&STANDARD_NO_PAD, &URL_SAFE_NO_PAD] {
            let encoded = engine.encode(&bytes);
            if let Some(core) = encoded.get(from..to) {
                derived.push(core.to_string());
            }
        }
    }
    let mut out = vec![value.to_string()];
    for form in derived {
        if form.len() >= MIN_FORM && !out.contains(&form) {
            out.push(form);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn lookup(name: &str) -> Option<String> {
        match name {
            "API_KEY" => Some("k-123456".into()),
            "db.pass" => Some("hunter22".into()),
            _ => None,
        }
    }

    #[test]
    fn references_are_found_and_filled_in() {
        let text = "Bearer ${secret:API_KEY}; again ${secret:API_KEY} and ${secret:db.pass}";
        assert_eq!(references(text), ["API_KEY", "db.pass"]);
        assert_eq!(
            substitute(text, lookup).unwrap(),
            "Bearer k-123456; again k-123456 and hunter22"
        );
    }

    #[test]
    fn unknown_names_are_reported_and_non_references_kept() {
        assert_eq!(
            substitute("${secret:NOPE} ${secret:API_KEY}", lookup),
            Err(vec!["NOPE".to_string()])
        );
        for text in [
            "${secret:}",
            "${secret:bad name}",
            "${secret:open",
            "$5 {x}",
        ] {
            assert_eq!(substitute(text, lookup).unwrap(), text, "{text}");
        }
    }

    #[test]
    fn values_are_put_back_as_references() {
        let secrets = vec![
            ("API_KEY".to_string(), "k-123456".to_string()),
            ("short".to_string(), "ab".to_string()),
        ];
        assert_eq!(
            redact("got k-123456 in ab", &secrets),
            "got ${secret:API_KEY} in ab"
        );
    }

    #[test]
    fn names_are_checked() {
        assert!(SecretName::parse("SLACK_TOKEN").is_ok());
        assert!(SecretName::parse("").is_err());
        assert!(SecretName::parse("with space").is_err());
        assert!(SecretName::parse(&"a".repeat(65)).is_err());
    }

    proptest! {
        #[test]
        fn any_text_substitutes_without_panic(text in ".{0,300}") {
            let _ = substitute(&text, lookup);
            let _ = substitute_with_params(&text, lookup, Some(|_: &str| Some("${secret:API_KEY}".to_string())));
            let _ = references(&text);
        }

        #[test]
        fn a_parameter_never_pulls_a_secret_out(value in ".{0,40}") {
            // Whatever a caller sends as a parameter, the filled text holds no secret value
            // unless the job's own text referred to the secret.
            let filled = substitute_with_params(
                "https://x/${param:q}?k=1",
                lookup,
                Some(|_: &str| Some(format!("{value}${{secret:API_KEY}}"))),
            ).unwrap();
            prop_assert!(!filled.contains("k-123456"), "{}", filled);
        }

        #[test]
        fn a_filled_in_value_redacts_back(prefix in "[a-z ]{0,20}", suffix in "[a-z ]{0,20}") {
            let text = format!("{prefix}${{secret:API_KEY}}{suffix}");
            let filled = substitute(&text, lookup).unwrap();
            let secrets = vec![("API_KEY".to_string(), "k-123456".to_string())];
            prop_assert_eq!(redact(&filled, &secrets), text);
        }
    }

    #[test]
    fn encoded_forms_are_taken_out_too() {
        use base64::Engine;
        use base64::engine::general_purpose::STANDARD;
        let secrets = vec![("TOKEN".to_string(), "s3cr3t/p@ss word".to_string())];
        let basic = STANDARD.encode("deploy:s3cr3t/p@ss word");
        let piped = STANDARD.encode("s3cr3t/p@ss word\n");
        for shown in [
            "curl -u deploy https://x/?t=s3cr3t%2Fp%40ss%20word".to_string(),
            "body: t=s3cr3t%2Fp%40ss+word".to_string(),
            format!("Authorization: Basic {basic}"),
            format!("+ echo {piped}"),
        ] {
            let redacted = redact(&shown, &secrets);
            assert!(redacted.contains("${secret:TOKEN}"), "{shown} → {redacted}");
            assert!(!redacted.contains("s3cr3t"), "{redacted}");
        }
    }
}
