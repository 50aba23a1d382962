//! What the figures call a bot: its source (the operator, in lowercase) and the source's
//! category. Recognising a bot from its User-Agent is the server's job
//! (`server/src/traffic/bots/`, with the maintained pattern data it needs); this is the small
//! part the dashboard, the filters and the rollups share. `docs/BOTS.md` lists the sources.

use serde::{Deserialize, Serialize};

crate::text_enum! {
    /// What kind of client a named bot is.
    pub enum BotCategory {
        /// Search engines' crawlers and their previews.
        Search = "search",
        /// Crawlers that feed AI models, assistants and AI search.
        Ai = "ai",
        /// Link previews of social networks and chat.
        Social = "social",
        /// SEO and marketing crawlers.
        Seo = "seo",
        /// Web archives and research crawlers.
        Archive = "archive",
        /// Uptime, performance and synthetic monitoring.
        Monitoring = "monitoring",
        /// HTTP libraries, command-line tools, headless browsers, link checkers.
        Tool = "tool",
        /// Everything without a name.
        Other = "other",
    }
}

/// The source a bot without a name is counted under.
pub const OTHER_SOURCE: &str = "other";

/// Every named source and its category (`docs/BOTS.md` is the same table in prose; a test
/// keeps them equal, and the server's recogniser names only these).
pub const SOURCES: &[(&str, BotCategory)] = {
    use BotCategory::*;
    &[
        // The first fifteen are the names Bulwark started with; they never change.
        ("google", Search),
        ("bing", Search),
        ("baidu", Search),
        ("yandex", Search),
        ("yahoo", Search),
        ("duckduckgo", Search),
        ("sogou", Search),
        ("facebook", Social),
        ("twitter", Social),
        ("linkedin", Social),
        ("pinterest", Social),
        ("semrush", Seo),
        ("ahrefs", Seo),
        ("majestic", Seo),
        ("dotbot", Seo),
        // Search engines.
        ("apple", Search),
        ("qihoo360", Search),
        ("shenma", Search),
        ("huawei", Search),
        ("naver", Search),
        ("seznam", Search),
        ("qwant", Search),
        ("daum", Search),
        ("coccoc", Search),
        ("mojeek", Search),
        ("ask", Search),
        ("kagi", Search),
        ("brave", Search),
        ("yep", Search),
        ("neeva", Search),
        // AI.
        ("openai", Ai),
        ("anthropic", Ai),
        ("perplexity", Ai),
        ("bytedance", Ai),
        ("commoncrawl", Ai),
        ("amazon", Ai),
        ("cohere", Ai),
        ("mistral", Ai),
        ("diffbot", Ai),
        ("you", Ai),
        ("ai2", Ai),
        ("webz", Ai),
        ("timpi", Ai),
        ("deepseek", Ai),
        ("xai", Ai),
        // Social networks and chat.
        ("slack", Social),
        ("discord", Social),
        ("telegram", Social),
        ("whatsapp", Social),
        ("snapchat", Social),
        ("reddit", Social),
        ("mastodon", Social),
        ("bluesky", Social),
        ("vk", Social),
        ("flipboard", Social),
        ("skype", Social),
        ("embedly", Social),
        ("iframely", Social),
        // SEO and marketing.
        ("screamingfrog", Seo),
        ("serpstat", Seo),
        ("sistrix", Seo),
        ("dataforseo", Seo),
        ("seranking", Seo),
        ("babbar", Seo),
        ("webmeup", Seo),
        ("megaindex", Seo),
        ("seokicks", Seo),
        ("awario", Seo),
        ("linkfluence", Seo),
        ("builtwith", Seo),
        ("similarweb", Seo),
        ("seobility", Seo),
        ("ubersuggest", Seo),
        // Archives and research.
        ("internetarchive", Archive),
        ("findlinks", Archive),
        ("archiveteam", Archive),
        ("bnf", Archive),
        ("arquivo", Archive),
        ("britishlibrary", Archive),
        ("nutch", Archive),
        // Monitoring.
        ("uptimerobot", Monitoring),
        ("pingdom", Monitoring),
        ("statuscake", Monitoring),
        ("betterstack", Monitoring),
        ("datadog", Monitoring),
        ("newrelic", Monitoring),
        ("site24x7", Monitoring),
        ("gtmetrix", Monitoring),
        ("checkly", Monitoring),
        ("hetrixtools", Monitoring),
        ("freshping", Monitoring),
        ("updown", Monitoring),
        ("uptimekuma", Monitoring),
        ("cloudflare", Monitoring),
        ("sentry", Monitoring),
        ("prtg", Monitoring),
        ("nagios", Monitoring),
        ("zabbix", Monitoring),
        ("prometheus", Monitoring),
        ("jetpack", Monitoring),
        // Tools.
        ("curl", Tool),
        ("wget", Tool),
        ("python", Tool),
        ("go", Tool),
        ("java", Tool),
        ("nodejs", Tool),
        ("php", Tool),
        ("perl", Tool),
        ("ruby", Tool),
        ("dotnet", Tool),
        ("rust", Tool),
        ("headless", Tool),
        ("scrapy", Tool),
        ("postman", Tool),
        ("httrack", Tool),
        ("linkchecker", Tool),
        ("w3c", Tool),
        (OTHER_SOURCE, Other),
    ]
};

/// The category a source is counted in; a source this build does not know (stored by an
/// older or newer one) is `other`.
pub fn category_of(source: &str) -> BotCategory {
    SOURCES
        .iter()
        .find(|(name, _)| *name == source)
        .map_or(BotCategory::Other, |(_, category)| *category)
}

/// The sources in a category.
pub fn sources_in(category: BotCategory) -> impl Iterator<Item = &'static str> {
    SOURCES
        .iter()
        .filter(move |(_, c)| *c == category)
        .map(|(name, _)| *name)
}

/// The named sources outside `other`: a stored source not among them (unnamed, or unknown to
/// this build) counts as `other`.
pub fn named_outside_other() -> impl Iterator<Item = &'static str> {
    SOURCES
        .iter()
        .filter(|(_, c)| *c != BotCategory::Other)
        .map(|(name, _)| *name)
}

/// What the recogniser says about one User-Agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    pub is_bot: bool,
    /// The bot's source (one of [`SOURCES`]); `None` for people.
    pub source: Option<&'static str>,
}

impl Verdict {
    pub const PERSON: Verdict = Verdict {
        is_bot: false,
        source: None,
    };

    pub fn bot(source: &'static str) -> Verdict {
        Verdict {
            is_bot: true,
            source: Some(source),
        }
    }

    /// The bot's category; `None` for people.
    pub fn category(&self) -> Option<BotCategory> {
        self.source.map(category_of)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_lowercase_unique_and_the_first_fifteen_stay() {
        let names: Vec<&str> = SOURCES.iter().map(|(n, _)| *n).collect();
        assert_eq!(
            names[..15],
            [
                "google",
                "bing",
                "baidu",
                "yandex",
                "yahoo",
                "duckduckgo",
                "sogou",
                "facebook",
                "twitter",
                "linkedin",
                "pinterest",
                "semrush",
                "ahrefs",
                "majestic",
                "dotbot"
            ]
        );
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len(), "a source is listed twice");
        for name in names {
            assert!(
                name.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()),
                "{name}"
            );
        }
    }

    #[test]
    fn categories() {
        assert_eq!(category_of("openai"), BotCategory::Ai);
        assert_eq!(category_of("google"), BotCategory::Search);
        assert_eq!(category_of("someone-new"), BotCategory::Other);
        assert_eq!(Verdict::PERSON.category(), None);
        assert_eq!(Verdict::bot("curl").category(), Some(BotCategory::Tool));
        assert!(sources_in(BotCategory::Archive).any(|s| s == "internetarchive"));
        for category in BotCategory::ALL {
            assert!(sources_in(*category).next().is_some(), "{category}");
        }
    }
}
