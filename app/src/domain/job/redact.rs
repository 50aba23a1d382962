//! Credentials in a job definition: hidden wherever the definition is shown, and kept when a
//! form that still shows them hidden is saved back.

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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
