//! Links that carry a list's filters: the one way a page writes its query string (the Jobs
//! list, the failed queue, traffic and its hits), each value percent-encoded by the
//! `percent-encoding` crate. Empty values are left out, so a link holds only what narrows.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

/// What a value keeps as it is: letters, digits and `-_.~` (RFC 3986's unreserved), and `/`,
/// so a page's path reads as itself (`path=/blog/a`).
const VALUE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~')
    .remove(b'/');

/// `path` with `pairs` as its query: `/jobs?q=night%20ly&tag=ops`, or `path` alone when every
/// value is empty.
pub fn href<'a>(path: &str, pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let query: Vec<String> = pairs
        .into_iter()
        .filter(|(_, value)| !value.is_empty())
        .map(|(key, value)| format!("{key}={}", utf8_percent_encode(value, VALUE)))
        .collect();
    if query.is_empty() {
        path.to_string()
    } else {
        format!("{path}?{}", query.join("&"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_encoded_and_empty_ones_left_out() {
        assert_eq!(
            href(
                "/traffic/hits",
                [("range", "30d"), ("site", ""), ("path", "/a b&c")]
            ),
            "/traffic/hits?range=30d&path=/a%20b%26c"
        );
        assert_eq!(href("/jobs", [("q", "")]), "/jobs");
        assert_eq!(
            href("/failed", [("job", "百度")]),
            "/failed?job=%E7%99%BE%E5%BA%A6"
        );
    }
}
