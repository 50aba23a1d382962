//! Where an arrival came from, as a channel: typed in or bookmarked, a search engine, a social
//! network, an AI assistant, mail, a paid campaign, or another site.
//!
//! The campaign's own tags speak first (`utm_medium=cpc` is paid whatever the referrer;
//! `utm_source=chatgpt.com`, which ChatGPT adds to the links it cites, is an AI assistant), then
//! the referring domain against the lists below. Bulwark keeps these lists: no maintained data
//! set names AI assistants' domains.

crate::text_enum! {
    /// An arrival's channel.
    pub enum Channel {
        Direct = "direct",
        Search = "search",
        Social = "social",
        AiAssistant = "ai_assistant",
        Email = "email",
        Paid = "paid",
        Referral = "referral",
    }
}

/// AI assistants' domains (and the domains their links are cited from), as referrers.
const AI_ASSISTANTS: &[&str] = &[
    "chatgpt.com",
    "chat.openai.com",
    "perplexity.ai",
    "gemini.google.com",
    "bard.google.com",
    "copilot.microsoft.com",
    "copilot.cloud.microsoft",
    "claude.ai",
    "deepseek.com",
    "kimi.moonshot.cn",
    "kimi.com",
    "doubao.com",
    "yiyan.baidu.com",
    "tongyi.aliyun.com",
    "qianwen.com",
    "yuanbao.tencent.com",
    "chatglm.cn",
    "metaso.cn",
    "chat.mistral.ai",
    "meta.ai",
    "grok.com",
    "poe.com",
    "phind.com",
    "you.com",
];

/// Words AI assistants put in `utm_source` (compared whole, without regard to case).
const AI_SOURCES: &[&str] = &[
    "chatgpt",
    "chatgpt.com",
    "openai",
    "perplexity",
    "perplexity.ai",
    "gemini",
    "copilot",
    "claude",
    "claude.ai",
    "deepseek",
    "kimi",
    "doubao",
    "grok",
    "mistral",
];

/// Search engines: a label of the domain (`google` in `google.co.uk`), or a whole domain.
const SEARCH_LABELS: &[&str] = &["google", "bing", "yandex", "baidu", "duckduckgo", "sogou"];
const SEARCH_DOMAINS: &[&str] = &[
    "search.yahoo.com",
    "search.yahoo.co.jp",
    "so.com",
    "sm.cn",
    "search.naver.com",
    "seznam.cz",
    "ecosia.org",
    "qwant.com",
    "startpage.com",
    "search.brave.com",
    "ask.com",
    "kagi.com",
    "mojeek.com",
    "yandex.ru",
];

const SOCIAL_DOMAINS: &[&str] = &[
    "facebook.com",
    "fb.com",
    "instagram.com",
    "t.co",
    "twitter.com",
    "x.com",
    "linkedin.com",
    "lnkd.in",
    "reddit.com",
    "youtube.com",
    "tiktok.com",
    "pinterest.com",
    "weibo.com",
    "weibo.cn",
    "zhihu.com",
    "douyin.com",
    "xiaohongshu.com",
    "bilibili.com",
    "mp.weixin.qq.com",
    "vk.com",
    "news.ycombinator.com",
    "mastodon.social",
    "bsky.app",
    "threads.net",
    "t.me",
    "discord.com",
    "quora.com",
    "whatsapp.com",
    "line.me",
];

const MAIL_DOMAINS: &[&str] = &[
    "mail.google.com",
    "outlook.live.com",
    "outlook.office.com",
    "mail.yahoo.com",
    "mail.qq.com",
    "mail.163.com",
];

const PAID_MEDIUMS: &[&str] = &[
    "cpc",
    "ppc",
    "cpm",
    "paid",
    "paidsearch",
    "paid_search",
    "paid-search",
    "paidsocial",
    "paid_social",
    "display",
    "banner",
];
const MAIL_MEDIUMS: &[&str] = &["email", "e-mail", "mail", "newsletter"];
const SOCIAL_MEDIUMS: &[&str] = &["social", "social-network", "social_media", "sm"];

/// The channel of an arrival from `referrer` (a domain without `www.`, `""` when typed in or
/// bookmarked) tagged with `source` and `medium` (empty when untagged).
pub fn channel(referrer: &str, source: &str, medium: &str) -> Channel {
    let is = |list: &[&str], word: &str| list.iter().any(|w| w.eq_ignore_ascii_case(word));
    if is(PAID_MEDIUMS, medium) {
        return Channel::Paid;
    }
    if is(AI_SOURCES, source) || within(AI_ASSISTANTS, referrer) {
        return Channel::AiAssistant;
    }
    if is(MAIL_MEDIUMS, medium) || within(MAIL_DOMAINS, referrer) {
        return Channel::Email;
    }
    if is(SOCIAL_MEDIUMS, medium) || within(SOCIAL_DOMAINS, referrer) {
        return Channel::Social;
    }
    let labels = || referrer.split('.');
    if within(SEARCH_DOMAINS, referrer)
        || labels().any(|l| SEARCH_LABELS.iter().any(|s| s.eq_ignore_ascii_case(l)))
    {
        return Channel::Search;
    }
    if referrer.is_empty() && source.is_empty() {
        Channel::Direct
    } else {
        Channel::Referral
    }
}

/// Whether `domain` is one of `list` or under one (`l.facebook.com` under `facebook.com`).
fn within(list: &[&str], domain: &str) -> bool {
    let domain = domain.trim_end_matches('.');
    list.iter().any(|d| {
        domain.eq_ignore_ascii_case(d)
            || (domain.len() > d.len()
                && domain.as_bytes()[domain.len() - d.len() - 1] == b'.'
                && domain[domain.len() - d.len()..].eq_ignore_ascii_case(d))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn referrers_fall_into_their_channel() {
        for (referrer, expected) in [
            ("", Channel::Direct),
            ("google.co.uk", Channel::Search),
            ("m.baidu.com", Channel::Search),
            ("duckduckgo.com", Channel::Search),
            ("l.facebook.com", Channel::Social),
            ("t.co", Channel::Social),
            ("news.ycombinator.com", Channel::Social),
            ("chatgpt.com", Channel::AiAssistant),
            ("gemini.google.com", Channel::AiAssistant),
            ("chat.deepseek.com", Channel::AiAssistant),
            ("www.kimi.com", Channel::AiAssistant),
            ("mail.google.com", Channel::Email),
            ("blog.example.org", Channel::Referral),
            // Not under a listed domain, only ending like one.
            ("notx.com", Channel::Referral),
        ] {
            assert_eq!(channel(referrer, "", ""), expected, "{referrer:?}");
        }
    }

    #[test]
    fn a_campaigns_tags_speak_first() {
        assert_eq!(channel("", "chatgpt.com", ""), Channel::AiAssistant);
        assert_eq!(channel("google.com", "google", "cpc"), Channel::Paid);
        assert_eq!(channel("", "newsletter-42", "Email"), Channel::Email);
        assert_eq!(channel("", "spring-sale", ""), Channel::Referral);
        assert_eq!(channel("example.net", "partner", "social"), Channel::Social);
    }
}
