//! Sites: the hosts whose page views are counted, each apart from the others.
//!
//! A site is named by its host, lowercase, without port (`shop.example.com`; an
//! internationalised name in its ASCII form). The console itself is a site too, under the host
//! of `public_url`, and needs no registering. Within the rollups a page is keyed by host and
//! path together ([`page_key`]), so one site's `/` is never another's.
//!
//! Also here: where a visit came from ([`referrer_domain`]) and which addresses a site does not
//! count ([`Exclusions`]).

use crate::domain::Problem;
use crate::problem;
use std::net::IpAddr;

use super::client_addr::Networks;

/// The longest host name DNS allows.
pub const MAX_HOST: usize = 253;

/// A host as an administrator types it: `shop.example.com`, `Shop.Example.com:8443` or a whole
/// URL (`https://shop.example.com/cart`). Returns the host alone, lowercase, in ASCII.
pub fn normalise_host(input: &str) -> Result<String, Problem> {
    let input = input.trim();
    if input.is_empty() {
        return Err(problem!("error-site-empty"));
    }
    let with_scheme = if input.contains("://") {
        input.to_string()
    } else {
        format!("http://{input}")
    };
    let host = url::Url::parse(&with_scheme)
        .ok()
        .and_then(|url| url.host_str().map(str::to_string))
        .filter(|host| !host.is_empty())
        .ok_or_else(|| problem!("error-site-host", text = input.to_string()))?;
    if host.len() > MAX_HOST {
        return Err(problem!("error-site-host-long", max = MAX_HOST));
    }
    Ok(host.trim_end_matches('.').to_string())
}

/// The host of an absolute URL (a page's address, an `Origin` or `Referer` header), as
/// [`normalise_host`] writes it; `None` for a bare path or anything without a host.
pub fn host_of(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url.trim()).ok()?;
    let host = parsed.host_str()?.trim_end_matches('.');
    (!host.is_empty() && host.len() <= MAX_HOST).then(|| host.to_string())
}

/// The host the console's own pages are counted under: that of `public_url`.
pub fn console_host(public_url: &str) -> String {
    host_of(public_url).unwrap_or_else(|| "localhost".to_string())
}

/// What a host keeps unencoded in a link: letters, digits, `.`, `-` (anything else, such as an
/// IPv6 address's brackets, is encoded).
const HOST: &percent_encoding::AsciiSet =
    &percent_encoding::NON_ALPHANUMERIC.remove(b'.').remove(b'-');

/// The Traffic page for one site, after `range` (`range=today`, `from=…&to=…`), relative to the
/// console's address.
pub fn traffic_page(site: &str, range: &str) -> String {
    format!(
        "/traffic?{range}&site={}",
        percent_encoding::utf8_percent_encode(site, HOST)
    )
}

/// The rollups' key of a page: its host and path together.
pub fn page_key(site: &str, path: &str) -> String {
    format!("{site}{path}")
}

/// A page key taken apart again: host and path. Hosts hold no `/` and paths start with one.
pub fn split_page_key(key: &str) -> (&str, &str) {
    match key.find('/') {
        Some(i) => key.split_at(i),
        None => (key, "/"),
    }
}

/// Where a visit to `site` came from, as the figures show it: the referring host without
/// `www.`, `""` for a visit with no referrer (typed, bookmarked, an app), or `None` for a step
/// from one of the site's own pages to another (not an arrival).
pub fn referrer_domain(referer: &str, site: &str) -> Option<String> {
    let referer = referer.trim();
    if referer.is_empty() || referer == "-" {
        return Some(String::new());
    }
    let Some(host) = host_of(referer) else {
        // A referrer that is no URL (a log's placeholder, a mangled header) names no site.
        return Some(String::new());
    };
    let bare = |h: &str| h.strip_prefix("www.").unwrap_or(h).to_string();
    let domain = bare(&host);
    (domain != bare(site)).then_some(domain)
}

/// The addresses whose visits a site does not count (its own office, a monitor): addresses and
/// networks, one per line or separated by commas.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Exclusions(Networks);

impl Exclusions {
    pub fn parse(text: &str) -> Result<Exclusions, String> {
        let entries: Vec<&str> = text
            .split(['\n', ',', ';'])
            .map(str::trim)
            .filter(|e| !e.is_empty())
            .collect();
        Networks::parse(&entries).map(Exclusions)
    }

    pub fn contains(&self, ip: IpAddr) -> bool {
        self.0.contains(ip)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// As stored and shown: one entry per line.
    pub fn to_text(&self) -> String {
        self.0.entries().join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_written_one_way() {
        for typed in [
            "shop.example.com",
            " Shop.Example.COM ",
            "shop.example.com:8443",
            "https://shop.example.com/cart?x=1",
            "shop.example.com.",
        ] {
            assert_eq!(normalise_host(typed).as_deref(), Ok("shop.example.com"));
        }
        assert_eq!(
            normalise_host("bücher.example").unwrap(),
            "xn--bcher-kva.example"
        );
        assert_eq!(normalise_host("127.0.0.1:3000").unwrap(), "127.0.0.1");
        for bad in ["", "   ", "http://", "exa mple.com", "shop_example!.com:x"] {
            assert!(normalise_host(bad).is_err(), "{bad:?}");
        }
        assert!(normalise_host(&"a".repeat(300)).is_err());
    }

    #[test]
    fn only_absolute_urls_have_hosts() {
        assert_eq!(
            host_of("https://Shop.example.com:8443/x").as_deref(),
            Some("shop.example.com")
        );
        assert_eq!(host_of("/cart"), None);
        assert_eq!(host_of("null"), None);
        assert_eq!(host_of(""), None);
    }

    #[test]
    fn page_keys_come_apart() {
        let key = page_key("shop.example.com", "/cart");
        assert_eq!(split_page_key(&key), ("shop.example.com", "/cart"));
        assert_eq!(split_page_key("odd"), ("odd", "/"));
    }

    #[test]
    fn arrivals_are_named_by_their_domain() {
        let site = "shop.example.com";
        assert_eq!(referrer_domain("", site).as_deref(), Some(""));
        assert_eq!(referrer_domain("-", site).as_deref(), Some(""));
        assert_eq!(
            referrer_domain("https://www.google.com/search?q=x", site).as_deref(),
            Some("google.com")
        );
        assert_eq!(
            referrer_domain("android-app://com.google.android.gm/", site).as_deref(),
            Some("com.google.android.gm")
        );
        assert_eq!(referrer_domain("https://shop.example.com/a", site), None);
        assert_eq!(
            referrer_domain("https://www.shop.example.com/a", site),
            None
        );
        assert_eq!(referrer_domain("not a url", site).as_deref(), Some(""));
    }

    #[test]
    fn exclusions_are_addresses_and_networks() {
        let ex = Exclusions::parse("192.0.2.7\n10.0.0.0/8, 2001:db8::/32\n\n").unwrap();
        assert!(ex.contains("192.0.2.7".parse().unwrap()));
        assert!(ex.contains("10.9.9.9".parse().unwrap()));
        assert!(ex.contains("2001:db8::1".parse().unwrap()));
        assert!(ex.contains("::ffff:10.1.1.1".parse().unwrap()));
        assert!(!ex.contains("192.0.2.8".parse().unwrap()));
        assert_eq!(ex.to_text(), "192.0.2.7\n10.0.0.0/8\n2001:db8::/32");
        let err = Exclusions::parse("10.0.0.0/8\nnot-an-ip").unwrap_err();
        assert!(err.contains("not-an-ip"), "{err}");
        assert!(Exclusions::parse("").unwrap().is_empty());
    }
}
