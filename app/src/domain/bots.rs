//! Telling people from bots by User-Agent, and naming the bot.
//!
//! Rules, in order:
//! 1. A named crawler's own token (`googlebot`, `bingbot`, `baiduspider`, …) names its source.
//!    Only such tokens count: bare brand words would misfile real visitors, whose browsers
//!    carry "Google" (the Google app), "Baidu" (baiduboxapp) or "Yandex" (YaBrowser) too.
//! 2. Otherwise a word that reads like a crawler — ending in `bot`, `crawler` or `spider`, or a
//!    known HTTP library or headless browser — is a bot of source `other`. Words are split on
//!    anything not a letter or digit, so the phone brand "CUBOT" is checked as a whole word and
//!    listed as a person.
//! 3. An empty User-Agent is a script: `other`.
//! 4. Everything else is a person.

use serde::{Deserialize, Serialize};

/// What the classifier says about one User-Agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    pub is_bot: bool,
    /// The bot's source (`google`, `bing`, …, `other`); `None` for people.
    pub source: Option<&'static str>,
}

/// Named sources and the lowercase substrings that identify each (their own crawler tokens).
pub const SOURCES: &[(&str, &[&str])] = &[
    (
        "google",
        &[
            "googlebot",
            "google-inspectiontool",
            "googleother",
            "adsbot-google",
            "mediapartners-google",
            "apis-google",
            "feedfetcher-google",
            "storebot-google",
            "google-safety",
        ],
    ),
    ("bing", &["bingbot", "bingpreview", "msnbot", "adidxbot"]),
    ("baidu", &["baiduspider"]),
    (
        "yandex",
        &[
            "yandexbot",
            "yandeximages",
            "yandexmobilebot",
            "yandexaccessibilitybot",
            "yandexmetrika",
            "yandex.com/bots",
        ],
    ),
    ("yahoo", &["yahoo! slurp", "yahooseeker", "slurp"]),
    (
        "duckduckgo",
        &["duckduckbot", "duckassistbot", "duckduckgo-favicons-bot"],
    ),
    (
        "sogou",
        &[
            "sogou web spider",
            "sogou inst spider",
            "sogou spider",
            "sogou news spider",
        ],
    ),
    (
        "facebook",
        &[
            "facebookexternalhit",
            "facebookcatalog",
            "facebookbot",
            "meta-externalagent",
            "meta-externalfetcher",
        ],
    ),
    ("twitter", &["twitterbot"]),
    ("linkedin", &["linkedinbot"]),
    ("pinterest", &["pinterestbot", "pinterest/0."]),
    ("semrush", &["semrushbot", "siteauditbot", "splitsignalbot"]),
    ("ahrefs", &["ahrefsbot", "ahrefssiteaudit"]),
    ("majestic", &["mj12bot"]),
    ("dotbot", &["dotbot"]),
];

/// Whole words that mark automated clients without a crawler-style name.
const TOOL_WORDS: &[&str] = &[
    "curl",
    "wget",
    "libwww",
    "scrapy",
    "httpclient",
    "okhttp",
    "axios",
    "headlesschrome",
    "phantomjs",
    "puppeteer",
    "playwright",
    "selenium",
    "lighthouse",
    "crawl",
    "scraper",
    "spider",
    "crawler",
    "bot",
    "python",
    "aiohttp",
    "httpx",
    "java",
    "guzzlehttp",
];

/// Real words ending in "bot" that are not crawlers (phone brands).
const NOT_BOTS: &[&str] = &["cubot"];

/// Classifies one User-Agent. Pure and allocation-light: it runs on every captured request.
pub fn classify(user_agent: &str) -> Verdict {
    let ua = user_agent.trim();
    if ua.is_empty() {
        return Verdict {
            is_bot: true,
            source: Some("other"),
        };
    }
    let lower = ua.to_ascii_lowercase();
    for (source, tokens) in SOURCES {
        if tokens.iter().any(|t| lower.contains(t)) {
            return Verdict {
                is_bot: true,
                source: Some(source),
            };
        }
    }
    let bot_like = lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .any(|word| {
            TOOL_WORDS.contains(&word)
                || (word.len() > 3 && word.ends_with("bot") && !NOT_BOTS.contains(&word))
                || word.ends_with("crawler")
                || word.ends_with("spider")
        })
        // "Go-http-client/1.1", "python-requests/2.31": the library word then its name.
        || lower.starts_with("go-http-client")
        || lower.starts_with("python-requests");
    if bot_like {
        Verdict {
            is_bot: true,
            source: Some("other"),
        }
    } else {
        Verdict {
            is_bot: false,
            source: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(ua: &str) -> Option<&'static str> {
        let v = classify(ua);
        assert_eq!(v.is_bot, v.source.is_some(), "{ua}");
        v.source
    }

    #[test]
    fn every_named_source_by_its_real_user_agent() {
        let cases = [
            (
                "google",
                "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
            ),
            (
                "google",
                "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.6422.175 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
            ),
            (
                "google",
                "Mozilla/5.0 (compatible; Google-InspectionTool/1.0;)",
            ),
            (
                "google",
                "AdsBot-Google (+http://www.google.com/adsbot.html)",
            ),
            (
                "bing",
                "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
            ),
            (
                "bing",
                "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36",
            ),
            (
                "baidu",
                "Mozilla/5.0 (compatible; Baiduspider/2.0; +http://www.baidu.com/search/spider.html)",
            ),
            (
                "baidu",
                "Mozilla/5.0 (iPhone; CPU iPhone OS 9_1 like Mac OS X) AppleWebKit/601.1.46 (KHTML, like Gecko) Version/9.0 Mobile/13B143 Safari/601.1 (compatible; Baiduspider-render/2.0; +http://www.baidu.com/search/spider.html)",
            ),
            (
                "yandex",
                "Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)",
            ),
            (
                "yahoo",
                "Mozilla/5.0 (compatible; Yahoo! Slurp; http://help.yahoo.com/help/us/ysearch/slurp)",
            ),
            (
                "duckduckgo",
                "DuckDuckBot/1.1; (+http://duckduckgo.com/duckduckbot.html)",
            ),
            (
                "sogou",
                "Sogou web spider/4.0(+http://www.sogou.com/docs/help/webmasters.htm#07)",
            ),
            (
                "facebook",
                "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
            ),
            (
                "facebook",
                "meta-externalagent/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)",
            ),
            ("twitter", "Twitterbot/1.0"),
            (
                "linkedin",
                "LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)",
            ),
            (
                "pinterest",
                "Mozilla/5.0 (compatible; Pinterestbot/1.0; +http://www.pinterest.com/bot.html)",
            ),
            (
                "semrush",
                "Mozilla/5.0 (compatible; SemrushBot/7~bl; +http://www.semrush.com/bot.html)",
            ),
            (
                "ahrefs",
                "Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)",
            ),
            (
                "majestic",
                "Mozilla/5.0 (compatible; MJ12bot/v1.4.8; http://mj12bot.com/)",
            ),
            (
                "dotbot",
                "Mozilla/5.0 (compatible; DotBot/1.2; +https://opensiteexplorer.org/dotbot; help@moz.com)",
            ),
        ];
        for (expected, ua) in cases {
            assert_eq!(source(ua), Some(expected), "{ua}");
        }
    }

    #[test]
    fn other_bots_and_tools() {
        for ua in [
            "Mozilla/5.0 (compatible; PetalBot;+https://webmaster.petalsearch.com/site/petalbot)",
            "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)",
            "Mozilla/5.0 (compatible; Applebot/0.1; +http://www.apple.com/go/applebot)",
            "CCBot/2.0 (https://commoncrawl.org/faq/)",
            "curl/8.5.0",
            "Wget/1.21.4",
            "python-requests/2.31.0",
            "Go-http-client/1.1",
            "Scrapy/2.11.0 (+https://scrapy.org)",
            "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/124.0.0.0 Safari/537.36",
            "",
            "   ",
        ] {
            assert_eq!(source(ua), Some("other"), "{ua:?}");
        }
    }

    #[test]
    fn people_on_current_browsers_are_people() {
        for ua in [
            // Desktop
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0",
            "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15",
            "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 YaBrowser/24.12.0.0 Safari/537.36",
            // Phones
            "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
            "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.39 Mobile Safari/537.36",
            "Mozilla/5.0 (Linux; Android 14; SAMSUNG SM-S921B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/26.0 Chrome/122.0.0.0 Mobile Safari/537.36",
            // The Google app and Baidu's app carry their brand, and are people.
            "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) GSA/330.0.661564097 Mobile/15E148 Safari/604.1",
            "Mozilla/5.0 (Linux; Android 12; V2134A Build/SP1A.210812.003; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/97.0.4692.98 Mobile Safari/537.36 baiduboxapp/13.40.5.10 (Baidu; P1 12)",
            "Mozilla/5.0 (Linux; U; Android 10; zh-CN; Redmi Note 8 Pro Build/QP1A.190711.020) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/78.0.3904.108 UCBrowser/13.4.0.1306 Mobile Safari/537.36",
            // A phone brand ending in "bot".
            "Mozilla/5.0 (Linux; Android 13; CUBOT P60) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/119.0.6045.163 Mobile Safari/537.36",
        ] {
            assert_eq!(
                classify(ua),
                Verdict {
                    is_bot: false,
                    source: None
                },
                "{ua}"
            );
        }
    }

    #[test]
    fn hostile_input_is_handled() {
        let huge = "A".repeat(64 * 1024);
        assert!(!classify(&huge).is_bot);
        assert!(!classify("\u{0}\u{1}\u{ffff}ü").is_bot);
        assert_eq!(
            classify(&format!("{huge} Googlebot/2.1")).source,
            Some("google")
        );
    }

    mod fuzz {
        use super::super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(20_000))]

            // Any text at all gets an answer, and a consistent one.
            #[test]
            fn any_text_gets_a_consistent_verdict(ua in "\\PC{0,400}") {
                let verdict = classify(&ua);
                prop_assert_eq!(verdict.is_bot, verdict.source.is_some());
            }

            // A named crawler's token wrapped in browser-like text is that crawler, whatever
            // surrounds it (as long as the text names no other crawler).
            #[test]
            fn a_token_names_its_source_anywhere(
                pick in 0usize..SOURCES.len(),
                before in "[A-Za-z0-9 ;/().,]{0,80}",
                after in "[A-Za-z0-9 ;/().,]{0,80}",
            ) {
                let (source, tokens) = SOURCES[pick];
                let ua = format!("{before} {} {after}", tokens[0]);
                let named: Vec<&str> = SOURCES
                    .iter()
                    .filter(|(_, tokens)| tokens.iter().any(|t| ua.to_ascii_lowercase().contains(t)))
                    .map(|(s, _)| *s)
                    .collect();
                prop_assume!(named == vec![source]);
                prop_assert_eq!(classify(&ua).source, Some(source));
            }
        }
    }
}
