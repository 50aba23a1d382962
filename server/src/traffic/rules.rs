//! Which requests are front-end page views (`docs/ARCHITECTURE.md` §5): GET only, not
//! prefetches, not under an excluded prefix (`/manager`, `/user`, `/api`, …), not a static
//! asset by extension.
//!
//! The layer, the collect endpoint and `traffic import` all ask [`Rules::check`], so a log
//! imported tomorrow counts exactly what the live server would have counted.

use std::collections::HashSet;

use serde::Serialize;

/// Why a request was not counted (the import summary counts each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Exclusion {
    /// Not a GET.
    Method,
    /// Under one of the excluded prefixes.
    Prefix,
    /// A stylesheet, script, image, font, map, icon, …
    Asset,
    /// A browser prefetch or preview, not a visit.
    Prefetch,
    /// From an address the site excludes (its own office, a monitor).
    Address,
    /// Someone signed in to the console: their own visits are not the site's audience.
    ConsoleUser,
    /// Reported for a host that is not a registered site.
    UnknownSite,
}

impl Exclusion {
    pub fn describe(self) -> &'static str {
        match self {
            Exclusion::Method => "not a GET",
            Exclusion::Prefix => "excluded prefix",
            Exclusion::Asset => "static asset",
            Exclusion::Prefetch => "prefetch",
            Exclusion::Address => "excluded address",
            Exclusion::ConsoleUser => "console user",
            Exclusion::UnknownSite => "unregistered site",
        }
    }
}

/// Prefixes that are never front-end pages: the admin, account and API areas of the site, and
/// Bulwark's own health checks (a load balancer polling them is not a visitor).
pub const DEFAULT_EXCLUDED_PREFIXES: &[&str] =
    &["/manager", "/user", "/api", "/healthz", "/readyz"];

/// Bulwark's machine endpoints: never pages, whatever `traffic_exclude_prefixes` says (a
/// Prometheus scrape or a pipeline's trigger is not a visitor); nor shared pages, whose path
/// holds the link's token and which are not the console's own traffic.
pub const ALWAYS_EXCLUDED_PREFIXES: &[&str] = &["/metrics", "/hooks", "/ping", "/api/v1", "/share"];

/// File extensions of static assets, lowercase.
pub const DEFAULT_ASSET_EXTENSIONS: &[&str] = &[
    "css",
    "js",
    "mjs",
    "map",
    "wasm",
    "png",
    "jpg",
    "jpeg",
    "gif",
    "svg",
    "webp",
    "avif",
    "ico",
    "bmp",
    "woff",
    "woff2",
    "ttf",
    "otf",
    "eot",
    "mp4",
    "webm",
    "mp3",
    "ogg",
    "json",
    "webmanifest",
];

#[derive(Debug, Clone)]
pub struct Rules {
    /// Each without a trailing slash; `/api` excludes `/api` and `/api/…`, not `/apiary`.
    excluded_prefixes: Vec<String>,
    asset_extensions: HashSet<String>,
}

impl Default for Rules {
    fn default() -> Self {
        Rules::new(DEFAULT_EXCLUDED_PREFIXES, DEFAULT_ASSET_EXTENSIONS)
    }
}

impl Rules {
    pub fn new<P: AsRef<str>, E: AsRef<str>>(prefixes: &[P], extensions: &[E]) -> Rules {
        Rules {
            excluded_prefixes: prefixes
                .iter()
                .map(|p| p.as_ref().trim_end_matches('/').to_string())
                .filter(|p| !p.is_empty())
                .collect(),
            asset_extensions: extensions
                .iter()
                .map(|e| e.as_ref().trim_start_matches('.').to_ascii_lowercase())
                .collect(),
        }
    }

    /// `path` is the path alone (see [`super::hit::path_only`]).
    pub fn check(&self, method: &str, path: &str, prefetch: bool) -> Result<(), Exclusion> {
        if !method.eq_ignore_ascii_case("GET") {
            return Err(Exclusion::Method);
        }
        if prefetch {
            return Err(Exclusion::Prefetch);
        }
        let under = |prefix: &str| {
            path.strip_prefix(prefix)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        };
        if self.excluded_prefixes.iter().any(|prefix| under(prefix))
            || ALWAYS_EXCLUDED_PREFIXES.iter().any(|prefix| under(prefix))
        {
            return Err(Exclusion::Prefix);
        }
        let last = path.rsplit('/').next().unwrap_or("");
        if let Some((_, ext)) = last.rsplit_once('.')
            && !ext.is_empty()
            && ext.len() <= 16
            && self.asset_extensions.contains(&ext.to_ascii_lowercase())
        {
            return Err(Exclusion::Asset);
        }
        Ok(())
    }
}

/// Whether request headers mark a prefetch or preview rather than a visit (Chromium's
/// `Sec-Purpose`, the older `Purpose`, Firefox's `X-Moz`, Safari's `X-Purpose`).
pub fn is_prefetch(headers: &http::HeaderMap) -> bool {
    ["sec-purpose", "purpose", "x-moz", "x-purpose"]
        .iter()
        .filter_map(|name| headers.get(*name))
        .filter_map(|value| value.to_str().ok())
        .any(|value| {
            let value = value.to_ascii_lowercase();
            value.contains("prefetch") || value.contains("preview") || value.contains("prerender")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_count_and_everything_else_says_why_not() {
        let rules = Rules::default();
        assert_eq!(rules.check("GET", "/", false), Ok(()));
        assert_eq!(rules.check("GET", "/products/42", false), Ok(()));
        assert_eq!(rules.check("GET", "/apiary", false), Ok(()));
        assert_eq!(rules.check("GET", "/robots.txt", false), Ok(()));
        assert_eq!(rules.check("GET", "/v1.2/notes", false), Ok(()));
        assert_eq!(rules.check("POST", "/", false), Err(Exclusion::Method));
        assert_eq!(rules.check("HEAD", "/", false), Err(Exclusion::Method));
        assert_eq!(rules.check("GET", "/", true), Err(Exclusion::Prefetch));
        for path in ["/api", "/api/collect", "/manager/x", "/user/1", "/healthz"] {
            assert_eq!(
                rules.check("GET", path, false),
                Err(Exclusion::Prefix),
                "{path}"
            );
        }
        for path in [
            "/pkg/bulwark.css",
            "/app.JS",
            "/img/logo.svg",
            "/fonts/a.woff2",
            "/favicon.ico",
            "/x.js.map",
        ] {
            assert_eq!(
                rules.check("GET", path, false),
                Err(Exclusion::Asset),
                "{path}"
            );
        }
    }

    #[test]
    fn machine_endpoints_never_count_whatever_is_configured() {
        let rules = Rules::new(&["/private"], &["css"]);
        for path in [
            "/metrics",
            "/hooks/abc123",
            "/ping/abc/start",
            "/api/v1/jobs",
            "/share/0123abcd",
        ] {
            assert_eq!(
                rules.check("GET", path, false),
                Err(Exclusion::Prefix),
                "{path}"
            );
        }
        assert_eq!(rules.check("GET", "/metricsx", false), Ok(()));
    }

    #[test]
    fn rules_are_configurable() {
        let rules = Rules::new(&["/admin/"], &[".PDF"]);
        assert_eq!(
            rules.check("GET", "/admin/x", false),
            Err(Exclusion::Prefix)
        );
        assert_eq!(rules.check("GET", "/api/x", false), Ok(()));
        assert_eq!(rules.check("GET", "/doc.pdf", false), Err(Exclusion::Asset));
        assert_eq!(rules.check("GET", "/app.js", false), Ok(()));
    }

    #[test]
    fn prefetch_headers() {
        let mut headers = http::HeaderMap::new();
        assert!(!is_prefetch(&headers));
        headers.insert("sec-purpose", "prefetch;prerender".parse().unwrap());
        assert!(is_prefetch(&headers));
        let mut headers = http::HeaderMap::new();
        headers.insert("x-moz", "prefetch".parse().unwrap());
        assert!(is_prefetch(&headers));
    }
}
