//! Credentials in a job definition: hidden wherever the definition is shown (the editor, the
//! API, the audit log), and kept when a form that still shows them hidden is saved back. A
//! credential is a secret-looking header's value, a URL's password, or a literal value labelled
//! with a credential's name: in a URL's query, a JSON or form body, an `--option=value`
//! argument or a built-in parameter. `${secret:…}` and `${param:…}` references are not
//! literals and stay as written.

use super::JobInput;

/// Shown instead of a secret; saving it back keeps the stored secret.
pub const HIDDEN: &str = "(hidden)";

/// Headers whose values are credentials.
pub fn is_secret_header(name: &str) -> bool {
    let name = name.trim().to_ascii_lowercase();
    [
        "authorization",
        "cookie",
        "token",
        "secret",
        "password",
        "api-key",
        "apikey",
        "x-api-key",
    ]
    .iter()
    .any(|word| name.contains(word))
}

/// Names whose values are credentials, wherever a name labels a value (a query's or a form's
/// field, a JSON key, an `--option=`, a built-in parameter).
pub fn is_credential_name(name: &str) -> bool {
    let name = name.trim().trim_start_matches('-').to_ascii_lowercase();
    is_secret_header(&name)
        || [
            "passwd",
            "api_key",
            "private_key",
            "signature",
            "credential",
        ]
        .iter()
        .any(|word| name.contains(word))
        || ["key", "pwd", "pass", "sig", "auth"].contains(&name.as_str())
}

/// A value worth hiding: typed literally, not a reference and not hidden already.
fn literal(value: &str) -> bool {
    let value = value.trim();
    !value.is_empty() && value != HIDDEN && !value.contains("${")
}

/// `text` split into `name<kv>value` pairs by `sep`, each value replaced by what `change`
/// returns for it (kept when it returns `None`).
fn map_pairs(
    text: &str,
    sep: char,
    kv: char,
    change: impl Fn(&str, &str) -> Option<String>,
) -> String {
    text.split(sep)
        .map(|pair| match pair.split_once(kv) {
            Some((name, value)) => match change(name, value) {
                Some(new) => format!("{name}{kv}{new}"),
                None => pair.to_string(),
            },
            None => pair.to_string(),
        })
        .collect::<Vec<_>>()
        .join(&sep.to_string())
}

/// The value of the pair named `name` in `text`, split as [`map_pairs`] splits it.
fn pair_value(text: &str, sep: char, kv: char, name: &str) -> Option<String> {
    text.split(sep)
        .filter_map(|pair| pair.split_once(kv))
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v.to_string())
}

/// Hides labelled credentials in pairs.
fn hide_pairs(text: &str, sep: char, kv: char) -> String {
    map_pairs(text, sep, kv, |name, value| {
        (is_credential_name(name) && literal(value)).then(|| HIDDEN.to_string())
    })
}

/// Puts `stored`'s values back where `text` still says [`HIDDEN`].
fn restore_pairs(text: &str, stored: &str, sep: char, kv: char) -> String {
    map_pairs(text, sep, kv, |name, value| {
        (value.trim() == HIDDEN)
            .then(|| pair_value(stored, sep, kv, name))
            .flatten()
    })
}

/// A URL as (before its query, its query, from its fragment on).
fn url_parts(url: &str) -> (&str, &str, &str) {
    let (rest, fragment) = url.find('#').map_or((url, ""), |i| url.split_at(i));
    match rest.split_once('?') {
        Some((base, query)) => (base, query, fragment),
        None => (rest, "", fragment),
    }
}

fn with_query(url: &str, query: impl FnOnce(&str) -> String) -> String {
    let (base, old, fragment) = url_parts(url);
    if old.is_empty() {
        return url.to_string();
    }
    format!("{base}?{}{fragment}", query(old))
}

/// `"name": "value"` in a JSON text (a template, so not always JSON that parses).
fn json_strings() -> regex_lite::Regex {
    regex_lite::Regex::new(r#""((?:[^"\\]|\\.)*)"(\s*:\s*)"((?:[^"\\]|\\.)*)""#)
        .expect("a valid pattern")
}

fn map_json(body: &str, change: impl Fn(&str, &str) -> Option<String>) -> String {
    json_strings()
        .replace_all(body, |c: &regex_lite::Captures| {
            let (name, colon, value) = (&c[1], &c[2], &c[3]);
            let value = change(name, value).unwrap_or_else(|| value.to_string());
            format!("\"{name}\"{colon}\"{value}\"")
        })
        .into_owned()
}

/// Whether a body is a form (`a=1&b=2`) rather than JSON or text.
fn is_form(body: &str) -> bool {
    let body = body.trim();
    !body.is_empty()
        && !body.starts_with(['{', '['])
        && body.contains('=')
        && !body.contains(char::is_whitespace)
}

/// `scheme://user:password@host/…` → where the password is, if the URL has one.
pub fn url_password(url: &str) -> Option<(usize, usize)> {
    let start = url.find("://")? + 3;
    let authority_end = url[start..].find('/').map_or(url.len(), |i| start + i);
    let at = url[start..authority_end].rfind('@')? + start;
    let colon = url[start..at].find(':')? + start;
    Some((colon + 1, at))
}

impl JobInput {
    /// The definition with credentials replaced by [`HIDDEN`]: secret header values and URL
    /// passwords. What the editor shows; the stored definition keeps them.
    pub fn redacted(&self) -> JobInput {
        let mut out = self.clone();
        out.http_headers = self
            .http_headers
            .lines()
            .map(|line| match line.split_once(':') {
                Some((name, _)) if is_secret_header(name) => format!("{name}: {HIDDEN}"),
                _ => line.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n");
        if let Some((from, to)) = url_password(&self.http_url) {
            out.http_url = format!("{}{HIDDEN}{}", &self.http_url[..from], &self.http_url[to..]);
        }
        out.http_url = with_query(&out.http_url, |q| hide_pairs(q, '&', '='));
        out.http_body = if is_form(&self.http_body) {
            hide_pairs(&self.http_body, '&', '=')
        } else {
            map_json(&self.http_body, |name, value| {
                (is_credential_name(name) && literal(value)).then(|| HIDDEN.to_string())
            })
        };
        out.command_args = hide_pairs(&self.command_args, '\n', '=');
        out.builtin_params = hide_pairs(&self.builtin_params, '\n', '=');
        out
    }

    /// Puts back the stored credentials where the form still says [`HIDDEN`].
    pub fn restore_secrets(&mut self, stored: &JobInput) {
        let stored_headers: Vec<(String, String)> = stored
            .http_headers
            .lines()
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        self.http_headers = self
            .http_headers
            .lines()
            .map(|line| match line.split_once(':') {
                Some((name, value)) if value.trim() == HIDDEN => {
                    let key = name.trim().to_ascii_lowercase();
                    match stored_headers.iter().find(|(k, _)| *k == key) {
                        Some((_, v)) => format!("{}: {v}", name.trim()),
                        None => line.to_string(),
                    }
                }
                _ => line.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n");
        if let (Some((from, to)), Some((sfrom, sto))) =
            (url_password(&self.http_url), url_password(&stored.http_url))
            && &self.http_url[from..to] == HIDDEN
        {
            self.http_url = format!(
                "{}{}{}",
                &self.http_url[..from],
                &stored.http_url[sfrom..sto],
                &self.http_url[to..]
            );
        }
        let (_, stored_query, _) = url_parts(&stored.http_url);
        self.http_url = with_query(&self.http_url, |q| restore_pairs(q, stored_query, '&', '='));
        self.http_body = if is_form(&self.http_body) {
            restore_pairs(&self.http_body, &stored.http_body, '&', '=')
        } else {
            let kept: Vec<(String, String)> = json_strings()
                .captures_iter(&stored.http_body)
                .map(|c| (c[1].to_string(), c[3].to_string()))
                .collect();
            map_json(&self.http_body, |name, value| {
                (value == HIDDEN)
                    .then(|| kept.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone()))
                    .flatten()
            })
        };
        self.command_args = restore_pairs(&self.command_args, &stored.command_args, '\n', '=');
        self.builtin_params =
            restore_pairs(&self.builtin_params, &stored.builtin_params, '\n', '=');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labelled_literals_are_hidden_everywhere_and_kept_on_save() {
        let stored = JobInput {
            http_url: "https://api.example.com/x?region=eu&access_token=tok-123#top".into(),
            http_body: r#"{"user": "ops", "password": "pw-456", "ref": "${secret:KEY}"}"#.into(),
            command_args: "--verbose\n--api-key=key-789\nname=${param:name}".into(),
            builtin_params: "days=90\nsecret=sec-000".into(),
            ..JobInput::default()
        };
        let shown = stored.redacted();
        let text = format!("{shown:?}");
        for value in ["tok-123", "pw-456", "key-789", "sec-000"] {
            assert!(!text.contains(value), "{value} shown: {text}");
        }
        assert_eq!(
            shown.http_url,
            "https://api.example.com/x?region=eu&access_token=(hidden)#top"
        );
        assert!(
            shown.http_body.contains(r#""ref": "${secret:KEY}""#),
            "references stay"
        );
        assert!(shown.command_args.contains("name=${param:name}"));
        assert!(shown.builtin_params.starts_with("days=90\n"));

        let mut saved = shown.clone();
        saved.restore_secrets(&stored);
        assert_eq!(saved, stored);
        let form = JobInput {
            http_body: "user=ops&passwd=pw-1".into(),
            ..JobInput::default()
        };
        assert_eq!(form.redacted().http_body, "user=ops&passwd=(hidden)");
    }

    #[test]
    fn secrets_are_hidden_and_kept_on_save() {
        let stored = JobInput {
            http_url: "https://bot:s3cret@api.example.com/hook".into(),
            http_headers: "Authorization: Bearer abc123\nAccept: application/json".into(),
            ..JobInput::default()
        };
        let shown = stored.redacted();
        assert_eq!(shown.http_url, "https://bot:(hidden)@api.example.com/hook");
        assert_eq!(
            shown.http_headers,
            "Authorization: (hidden)\nAccept: application/json"
        );
        assert!(
            !format!("{shown:?}").contains("s3cret") && !format!("{shown:?}").contains("abc123")
        );

        let mut edited = shown.clone();
        edited.http_headers.push_str("\nX-Extra: 1");
        edited.restore_secrets(&stored);
        assert_eq!(edited.http_url, stored.http_url);
        assert_eq!(
            edited.http_headers,
            "Authorization: Bearer abc123\nAccept: application/json\nX-Extra: 1"
        );
        let mut replaced = shown;
        replaced.http_headers = "Authorization: Bearer new".into();
        replaced.restore_secrets(&stored);
        assert_eq!(
            replaced.http_headers, "Authorization: Bearer new",
            "a new value wins"
        );
    }
}
