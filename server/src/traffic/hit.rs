//! One counted request, normalised: what the buffer keys on and the table stores.
//!
//! Every field is bounded here, once, for all three ways in (layer, collect, import): a 64 KB
//! User-Agent or a path of 10,000 segments is cut to its limit at a character boundary and
//! counted as truncated, never refused and never a panic.

/// Longest path kept (bytes). Longer paths are cut; the cut is counted.
pub const MAX_PATH: usize = 1024;
pub const MAX_USER_AGENT: usize = 512;
pub const MAX_REFERER: usize = 1024;
pub const MAX_IP: usize = 64;
pub const MAX_METHOD: usize = 16;
/// Longest campaign tag kept (bytes).
pub const MAX_TAG: usize = 200;

/// A campaign's tags, from the landing URL's query: `utm_source` (or `ref`, as many sites link),
/// `utm_medium` and `utm_campaign`; each empty when absent. Never the whole query string.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Campaign {
    pub source: String,
    pub medium: String,
    pub name: String,
}

impl Campaign {
    /// The tags in a request target or URL (`/shop?utm_source=news&utm_campaign=spring`),
    /// bounded, with control characters as spaces.
    pub fn of(target: &str) -> Campaign {
        let mut campaign = Campaign::default();
        let Some((_, query)) = target.split_once('?') else {
            return campaign;
        };
        let query = query.split('#').next().unwrap_or(query);
        let mut referred = String::new();
        for (key, value) in form_urlencoded::parse(query.as_bytes()) {
            let slot = match key.as_ref() {
                "utm_source" => &mut campaign.source,
                "utm_medium" => &mut campaign.medium,
                "utm_campaign" => &mut campaign.name,
                "ref" => &mut referred,
                _ => continue,
            };
            if slot.is_empty() {
                *slot = tag(&value);
            }
        }
        if campaign.source.is_empty() {
            campaign.source = referred;
        }
        campaign
    }

    pub fn is_empty(&self) -> bool {
        self.source.is_empty() && self.medium.is_empty() && self.name.is_empty()
    }
}

fn tag(value: &str) -> String {
    let clean: String = value
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    truncate(clean.trim(), MAX_TAG).trim_end().to_string()
}

/// The key hits are counted under (`docs/ARCHITECTURE.md` §5): the minute and what was asked
/// by whom.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Hit {
    /// Unix time of the minute's start, in seconds.
    pub minute: i64,
    /// The site's host (`app::domain::sites`); empty when a report named none.
    pub site: String,
    pub method: String,
    pub path: String,
    pub ip: String,
    pub user_agent: String,
    pub referer: String,
    pub locale: String,
    /// The landing URL's campaign tags.
    pub campaign: Campaign,
    /// The response's HTTP status code; `0` when nothing saw it (the collect script).
    pub status: u16,
    /// A custom event sent from this page (`POST /api/collect/event`), not a page view: it is
    /// stored in `traffic_events`, apart from page views.
    pub event: Option<Box<Event>>,
}

/// A custom event: its name (`app::domain::goals::event_name`) and its properties as stored,
/// a JSON object of texts with names sorted (`{}`: none).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Event {
    pub name: String,
    pub props: String,
}

impl Event {
    /// An event of a checked name and bounded properties.
    pub fn new(name: String, props: &std::collections::BTreeMap<String, String>) -> Event {
        Event {
            name,
            props: serde_json::to_string(props).unwrap_or_else(|_| "{}".into()),
        }
    }
}

impl Hit {
    /// Builds a hit from raw parts, bounding each; the flag says whether anything was cut.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        unix_seconds: i64,
        method: &str,
        path: &str,
        ip: &str,
        user_agent: &str,
        referer: &str,
        locale: String,
    ) -> (Hit, bool) {
        let mut cut = false;
        let mut bounded = |text: &str, max: usize| {
            // PostgreSQL's text cannot hold NUL; a log line or header smuggling one in keeps
            // the rest of its value.
            let clean = if text.contains('\0') {
                std::borrow::Cow::Owned(text.replace('\0', "\u{fffd}"))
            } else {
                std::borrow::Cow::Borrowed(text)
            };
            let kept = truncate(&clean, max);
            cut |= kept.len() < clean.len();
            kept.to_string()
        };
        let hit = Hit {
            minute: unix_seconds.div_euclid(60) * 60,
            site: String::new(),
            method: bounded(method, MAX_METHOD).to_ascii_uppercase(),
            path: bounded(path, MAX_PATH),
            ip: bounded(ip, MAX_IP),
            user_agent: bounded(user_agent, MAX_USER_AGENT),
            referer: bounded(referer, MAX_REFERER),
            locale,
            campaign: Campaign::default(),
            status: 0,
            event: None,
        };
        (hit, cut)
    }

    /// The same hit, with the campaign tags of the URL it asked for.
    pub fn tagged(mut self, campaign: Campaign) -> Hit {
        self.campaign = campaign;
        self
    }

    /// The same hit, answered with `status` (kept when it is a status code, 100–999).
    pub fn answered(mut self, status: u16) -> Hit {
        self.status = if (100..1000).contains(&status) {
            status
        } else {
            0
        };
        self
    }

    /// The same hit as an event sent from its page.
    pub fn sent(mut self, event: Event) -> Hit {
        self.event = Some(Box::new(event));
        self
    }

    /// The same hit, on `site` (a host as `app::domain::sites` writes it, so already bounded).
    pub fn on(mut self, site: &str) -> Hit {
        self.site = truncate(site, app::domain::sites::MAX_HOST).to_string();
        self
    }

    /// Bytes this key holds, with a fixed allowance for the map's own overhead: what the
    /// buffer's memory bound counts.
    pub fn weight(&self) -> usize {
        96 + self.site.len()
            + self.method.len()
            + self.path.len()
            + self.ip.len()
            + self.user_agent.len()
            + self.referer.len()
            + self.locale.len()
            + self.campaign.source.len()
            + self.campaign.medium.len()
            + self.campaign.name.len()
            + self
                .event
                .as_ref()
                .map_or(0, |e| 48 + e.name.len() + e.props.len())
    }
}

/// The longest prefix of `text` of at most `max` bytes that ends on a character boundary.
pub fn truncate(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The path of a request target or URL, without query string and fragment. Absolute URLs
/// (what the collect script sends) lose their scheme and host; an empty path is `/`.
pub fn path_only(target: &str) -> &str {
    let without_origin = match target.find("://") {
        Some(i) if !target[..i].contains('/') => {
            let rest = &target[i + 3..];
            rest.find(['/', '?', '#']).map_or("", |j| &rest[j..])
        }
        _ => target,
    };
    let path = without_origin
        .split(['?', '#'])
        .next()
        .unwrap_or(without_origin);
    if path.is_empty() { "/" } else { path }
}

/// The visitor's locale: a language prefix of the path (`/de/…`, `/zh-CN/…`) when present,
/// else the first language of `Accept-Language`, else empty. Normalised to `ll` or `ll-RR`.
/// `path_locales`, when not empty, limits which path prefixes count (a site whose `/my/…` is
/// "my account" rather than Burmese lists its real locales).
pub fn locale(path: &str, accept_language: Option<&str>, path_locales: &[String]) -> String {
    let first = path.trim_start_matches('/').split('/').next().unwrap_or("");
    if let Some(tag) = normalise_tag(first)
        && (path_locales.is_empty() || path_locales.iter().any(|l| l.eq_ignore_ascii_case(&tag)))
    {
        return tag;
    }
    accept_language
        .and_then(|header| header.split(',').next())
        .and_then(|tag| normalise_tag(tag.split(';').next().unwrap_or("").trim()))
        .unwrap_or_default()
}

/// `ll` or `ll-RR` (also `ll_rr`), where `ll` is an ISO 639-1 language code.
fn normalise_tag(tag: &str) -> Option<String> {
    let (lang, region) = match tag.split_once(['-', '_']) {
        Some((lang, region)) => (lang, Some(region)),
        None => (tag, None),
    };
    let code: [u8; 2] = match lang.as_bytes() {
        [a, b] => [a.to_ascii_lowercase(), b.to_ascii_lowercase()],
        _ => return None,
    };
    if ISO_639_1.binary_search(&code).is_err() {
        return None;
    }
    let lang = lang.to_ascii_lowercase();
    match region {
        None => Some(lang),
        Some(region) if region.len() == 2 && region.bytes().all(|b| b.is_ascii_alphabetic()) => {
            Some(format!("{lang}-{}", region.to_ascii_uppercase()))
        }
        // Script subtags (zh-Hans) and other forms keep the language alone.
        Some(_) => Some(lang),
    }
}

/// The ISO 639-1 language codes, sorted (for a binary search on every request).
const ISO_639_1: &[[u8; 2]] = &[
    *b"aa", *b"ab", *b"ae", *b"af", *b"ak", *b"am", *b"an", *b"ar", *b"as", *b"av", *b"ay", *b"az",
    *b"ba", *b"be", *b"bg", *b"bh", *b"bi", *b"bm", *b"bn", *b"bo", *b"br", *b"bs", *b"ca", *b"ce",
    *b"ch", *b"co", *b"cr", *b"cs", *b"cu", *b"cv", *b"cy", *b"da", *b"de", *b"dv", *b"dz", *b"ee",
    *b"el", *b"en", *b"eo", *b"es", *b"et", *b"eu", *b"fa", *b"ff", *b"fi", *b"fj", *b"fo", *b"fr",
    *b"fy", *b"ga", *b"gd", *b"gl", *b"gn", *b"gu", *b"gv", *b"ha", *b"he", *b"hi", *b"ho", *b"hr",
    *b"ht", *b"hu", *b"hy", *b"hz", *b"ia", *b"id", *b"ie", *b"ig", *b"ii", *b"ik", *b"io", *b"is",
    *b"it", *b"iu", *b"ja", *b"jv", *b"ka", *b"kg", *b"ki", *b"kj", *b"kk", *b"kl", *b"km", *b"kn",
    *b"ko", *b"kr", *b"ks", *b"ku", *b"kv", *b"kw", *b"ky", *b"la", *b"lb", *b"lg", *b"li", *b"ln",
    *b"lo", *b"lt", *b"lu", *b"lv", *b"mg", *b"mh", *b"mi", *b"mk", *b"ml", *b"mn", *b"mr", *b"ms",
    *b"mt", *b"my", *b"na", *b"nb", *b"nd", *b"ne", *b"ng", *b"nl", *b"nn", *b"no", *b"nr", *b"nv",
    *b"ny", *b"oc", *b"oj", *b"om", *b"or", *b"os", *b"pa", *b"pi", *b"pl", *b"ps", *b"pt", *b"qu",
    *b"rm", *b"rn", *b"ro", *b"ru", *b"rw", *b"sa", *b"sc", *b"sd", *b"se", *b"sg", *b"si", *b"sk",
    *b"sl", *b"sm", *b"sn", *b"so", *b"sq", *b"sr", *b"ss", *b"st", *b"su", *b"sv", *b"sw", *b"ta",
    *b"te", *b"tg", *b"th", *b"ti", *b"tk", *b"tl", *b"tn", *b"to", *b"tr", *b"ts", *b"tt", *b"tw",
    *b"ty", *b"ug", *b"uk", *b"ur", *b"uz", *b"ve", *b"vi", *b"vo", *b"wa", *b"wo", *b"xh", *b"yi",
    *b"yo", *b"za", *b"zh", *b"zu",
];

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn paths_lose_query_fragment_and_origin() {
        assert_eq!(path_only("/a/b?x=1#top"), "/a/b");
        assert_eq!(path_only("https://shop.example/cart?id=3"), "/cart");
        assert_eq!(path_only("https://shop.example"), "/");
        assert_eq!(path_only("?x"), "/");
        assert_eq!(path_only("/redirect?to=https://x/y"), "/redirect");
    }

    #[test]
    fn campaign_tags_and_nothing_else_of_the_query() {
        let c = Campaign::of(
            "/shop?id=7&utm_source=news%20letter&utm_medium=email&utm_campaign=spring&token=s3cret#x",
        );
        assert_eq!(
            c,
            Campaign {
                source: "news letter".into(),
                medium: "email".into(),
                name: "spring".into()
            }
        );
        assert_eq!(
            Campaign::of("https://shop.example/?ref=producthunt").source,
            "producthunt"
        );
        assert_eq!(
            Campaign::of("/?ref=a&utm_source=b").source,
            "b",
            "utm_source wins over ref"
        );
        assert!(Campaign::of("/plain").is_empty());
        assert!(Campaign::of("/?utm_term=x").is_empty());
        let long = Campaign::of(&format!("/?utm_campaign={}\u{7}", "é".repeat(300)));
        assert!(long.name.len() <= MAX_TAG && !long.name.contains('\u{7}'));
    }

    #[test]
    fn locale_from_path_then_header() {
        assert_eq!(locale("/de/produkte", Some("en-US,en;q=0.9"), &[]), "de");
        assert_eq!(locale("/zh-cn/", None, &[]), "zh-CN");
        assert_eq!(locale("/pt_br/x", None, &[]), "pt-BR");
        assert_eq!(locale("/products", Some("fr-CH, fr;q=0.9"), &[]), "fr-CH");
        assert_eq!(locale("/products", Some("zh-Hans-CN"), &[]), "zh");
        assert_eq!(locale("/products", Some("*"), &[]), "");
        assert_eq!(locale("/js/app", None, &[]), "");
        let only = vec!["en".to_string(), "de".to_string()];
        assert_eq!(locale("/my/account", Some("en-GB"), &only), "en-GB");
        assert_eq!(locale("/my/account", Some("en-GB"), &[]), "my");
    }

    #[test]
    fn the_code_list_is_sorted_for_binary_search() {
        assert!(ISO_639_1.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(ISO_639_1.len(), 184);
    }

    #[test]
    fn long_fields_are_cut_and_flagged() {
        let ua = "é".repeat(40_000);
        let path = "/a".repeat(10_000);
        let (hit, cut) = Hit::new(125, "get", &path, "1.2.3.4", &ua, "", String::new());
        assert!(cut);
        assert_eq!(hit.minute, 120);
        assert_eq!(hit.method, "GET");
        assert!(hit.path.len() <= MAX_PATH);
        assert!(
            hit.user_agent.len() <= MAX_USER_AGENT && hit.user_agent.len() >= MAX_USER_AGENT - 1
        );
        let (_, cut) = Hit::new(0, "GET", "/", "::1", "curl/8", "", String::new());
        assert!(!cut);
    }

    proptest! {
        #[test]
        fn any_input_is_bounded_and_valid(
            method in ".{0,40}", path in ".{0,3000}", ua in ".{0,3000}", referer in ".{0,3000}",
            accept in ".{0,100}", seconds in any::<i64>(),
        ) {
            let locale = locale(path_only(&path), Some(&accept), &[]);
            let (hit, _) = Hit::new(seconds, &method, path_only(&path), "ip", &ua, &referer, locale);
            prop_assert!(hit.path.len() <= MAX_PATH);
            prop_assert!(hit.user_agent.len() <= MAX_USER_AGENT);
            prop_assert!(!hit.user_agent.contains('\0') && !hit.path.contains('\0'));
            prop_assert!(hit.referer.len() <= MAX_REFERER);
            prop_assert!(hit.method.len() <= MAX_METHOD);
            prop_assert!(hit.locale.len() <= 5);
            prop_assert_eq!(hit.minute.rem_euclid(60), 0);
        }
    }
}
