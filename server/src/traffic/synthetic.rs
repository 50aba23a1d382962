//! Plausible synthetic traffic for benchmarks (and demo data): people on phones and desktops,
//! the named crawlers in rough real-world proportions, a long tail of paths, several locales.
//! Deterministic for a seed, so two runs of a benchmark see the same data.

use chrono::{DateTime, Utc};

/// Real User-Agents with a weight (out of 1000): people first, then bots.
const AGENTS: &[(u32, &str)] = &[
    (
        300,
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
    ),
    (
        150,
        "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
    ),
    (
        150,
        "Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.104 Mobile Safari/537.36",
    ),
    (
        60,
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15",
    ),
    (
        50,
        "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
    ),
    (
        30,
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0",
    ),
    (
        70,
        "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.69 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    ),
    (
        40,
        "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
    ),
    (
        25,
        "Mozilla/5.0 (compatible; Baiduspider/2.0; +http://www.baidu.com/search/spider.html)",
    ),
    (
        20,
        "Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)",
    ),
    (
        20,
        "Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)",
    ),
    (
        20,
        "Mozilla/5.0 (compatible; SemrushBot/7~bl; +http://www.semrush.com/bot.html)",
    ),
    (
        15,
        "Sogou web spider/4.0(+http://www.sogou.com/docs/help/webmasters.htm#07)",
    ),
    (
        10,
        "Mozilla/5.0 (compatible; DuckDuckBot-Https/1.1; https://duckduckgo.com/duckduckbot)",
    ),
    (
        10,
        "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
    ),
    (10, "python-requests/2.32.3"),
    (
        10,
        "Mozilla/5.0 (compatible; MJ12bot/v1.4.8; http://mj12bot.com/)",
    ),
    (
        10,
        "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)",
    ),
];

const SECTIONS: &[&str] = &["products", "blog", "docs", "category", "help", "news"];
const LOCALES: &[&str] = &["", "", "", "en", "de", "fr", "zh-CN", "ja", "es"];
const REFERERS: &[&str] = &[
    "",
    "",
    "",
    "https://www.google.com/",
    "https://www.bing.com/",
    "https://duckduckgo.com/",
    "https://t.co/abc",
];

pub struct Synthetic {
    rng: fastrand::Rng,
    agent_total: u32,
    /// Returning visitors (an address and a browser each) that most requests come from.
    visitors: u32,
}

/// Items from this number on no longer exist (about 1.7 % of requests ask for one).
const GONE_ITEMS: u32 = 19_000;

/// Of every 100 requests, how many come from someone seen once and never again.
const ONE_OFF_PERCENT: u8 = 15;

/// One generated request.
pub struct Request {
    pub at: DateTime<Utc>,
    pub path: String,
    pub ip: String,
    pub user_agent: &'static str,
    pub referer: &'static str,
    pub accept_language: &'static str,
    /// What the site answered: 404 for the rarest items (pages that no longer exist), else 200.
    pub status: u16,
}

impl Synthetic {
    pub fn new(seed: u64) -> Synthetic {
        Synthetic::with_visitors(seed, 50_000)
    }

    /// Traffic where 85% of requests come from a pool of `visitors` returning visitors (a
    /// few of them very active, as real audiences are) and 15% from one-off visitors.
    pub fn with_visitors(seed: u64, visitors: u32) -> Synthetic {
        Synthetic {
            rng: fastrand::Rng::with_seed(seed),
            agent_total: AGENTS.iter().map(|(w, _)| w).sum(),
            visitors: visitors.max(1),
        }
    }

    fn agent(&self, mut pick: u32) -> &'static str {
        AGENTS
            .iter()
            .find(|(w, _)| {
                if pick < *w {
                    true
                } else {
                    pick -= w;
                    false
                }
            })
            .map_or(AGENTS[0].1, |(_, ua)| ua)
    }

    /// A request at a random second of `[from, from + span_seconds)`.
    pub fn request(&mut self, from: DateTime<Utc>, span_seconds: i64) -> Request {
        let at = from + chrono::Duration::seconds(self.rng.i64(0..span_seconds.max(1)));
        let (ip, user_agent) = if self.rng.u8(..100) < ONE_OFF_PERCENT {
            let ip = format!(
                "{}.{}.{}.{}",
                self.rng.u8(1..224),
                self.rng.u8(..),
                self.rng.u8(..),
                self.rng.u8(1..255)
            );
            let pick = self.rng.u32(0..self.agent_total);
            (ip, self.agent(pick))
        } else {
            // Squaring skews the pick towards the pool's first members: the regulars.
            let visitor = (self.rng.f64().powi(2) * f64::from(self.visitors)) as u64;
            // The same visitor always has the same address and browser.
            let mut person = fastrand::Rng::with_seed(visitor.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let ip = format!(
                "{}.{}.{}.{}",
                person.u8(1..224),
                person.u8(..),
                person.u8(..),
                person.u8(1..255)
            );
            (ip, self.agent(person.u32(0..self.agent_total)))
        };
        // A long tail: item numbers skewed towards the low end, as popular pages are.
        let item = (self.rng.f64().powi(3) * 20_000.0) as u32;
        let locale = LOCALES[self.rng.usize(..LOCALES.len())];
        let path = match (self.rng.u8(..10), locale) {
            (0, _) => "/".to_string(),
            (_, "") => format!("/{}/{item}", SECTIONS[self.rng.usize(..SECTIONS.len())]),
            (_, l) => format!("/{l}/{}/{item}", SECTIONS[self.rng.usize(..SECTIONS.len())]),
        };
        Request {
            at,
            path,
            ip,
            user_agent,
            referer: REFERERS[self.rng.usize(..REFERERS.len())],
            accept_language: ["en-US,en;q=0.9", "de-DE,de;q=0.8", "zh-CN,zh;q=0.9", ""]
                [self.rng.usize(..4)],
            status: if item >= GONE_ITEMS { 404 } else { 200 },
        }
    }

    /// The request as an Apache/nginx combined log line (with its newline); about one line in
    /// ten is an asset or a POST, as in real logs.
    pub fn log_line(&mut self, request: &Request) -> String {
        let (method, path, status) = match self.rng.u8(..20) {
            0 => (
                "GET",
                format!("/static/app.{}.css", self.rng.u16(..100)),
                200,
            ),
            1 => ("POST", "/cart".to_string(), 303),
            _ => ("GET", request.path.clone(), request.status),
        };
        let referer = if request.referer.is_empty() {
            "-"
        } else {
            request.referer
        };
        format!(
            "{} - - [{}] \"{method} {path} HTTP/1.1\" {status} {} \"{referer}\" \"{}\"\n",
            request.ip,
            request.at.format("%d/%b/%Y:%H:%M:%S +0000"),
            self.rng.u32(200..60_000),
            request.user_agent
        )
    }
}
