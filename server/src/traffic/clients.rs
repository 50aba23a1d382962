//! What people browse with: browser and operating system from the uap-core regexes (the
//! maintained data behind every `ua-parser` port, vendored in `server/data/uap/`), and the
//! device type from the system and the tokens browsers use to say "phone" or "tablet".
//!
//! Only people are described (a bot's device is `bot`); each distinct User-Agent once per
//! flush. The extractors are built on first use, in the flusher, not at start.

use std::sync::LazyLock;

/// uap-core's `regexes.yaml` as JSON (`make uap-data` converts a newer release; see
/// `server/data/uap/README.md`).
const REGEXES: &str = include_str!("../../data/uap/regexes.json");

/// Browser, system and device type of one User-Agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Client {
    pub browser: String,
    pub os: String,
    pub device: &'static str,
}

/// The device of a bot's row.
pub const BOT_DEVICE: &str = "bot";

struct Extractors {
    browsers: ua_parser::user_agent::Extractor<'static>,
    systems: ua_parser::os::Extractor<'static>,
}

static EXTRACTORS: LazyLock<Option<Extractors>> = LazyLock::new(|| match build() {
    Ok(extractors) => Some(extractors),
    Err(error) => {
        // The data is compiled in and tested: this is a broken build, not bad input.
        tracing::error!(%error, "the vendored uap-core regexes do not load; browsers and systems are recorded as Other");
        None
    }
});

fn build() -> Result<Extractors, String> {
    let regexes: ua_parser::Regexes<'static> =
        serde_json::from_str(REGEXES).map_err(|e| e.to_string())?;
    let browsers = regexes
        .user_agent_parsers
        .into_iter()
        .try_fold(ua_parser::user_agent::Builder::new(), |b, p| b.push(p))
        .map_err(|e| e.to_string())?
        .build()
        .map_err(|e| e.to_string())?;
    let systems = regexes
        .os_parsers
        .into_iter()
        .try_fold(ua_parser::os::Builder::new(), |b, p| b.push(p))
        .map_err(|e| e.to_string())?
        .build()
        .map_err(|e| e.to_string())?;
    Ok(Extractors { browsers, systems })
}

/// The longest name kept (the columns hold 64 characters).
const MAX_NAME: usize = 64;

fn name(text: Option<std::borrow::Cow<'_, str>>) -> String {
    match text {
        Some(t) if !t.trim().is_empty() => super::hit::truncate(t.trim(), MAX_NAME).to_string(),
        _ => "Other".to_string(),
    }
}

/// Describes a person's User-Agent.
pub fn describe(user_agent: &str) -> Client {
    let (browser, os) = match EXTRACTORS.as_ref() {
        Some(x) => (
            name(x.browsers.extract(user_agent).map(|v| v.family)),
            name(x.systems.extract(user_agent).map(|v| v.os)),
        ),
        None => ("Other".to_string(), "Other".to_string()),
    };
    let device = device_type(user_agent, &os);
    Client {
        browser,
        os,
        device,
    }
}

/// `phone`, `tablet`, `desktop` or `other`. Android without `Mobile` is a tablet (Google's own
/// rule for its browsers); an iPad that asks for desktop pages says Macintosh and is counted a
/// desktop, as every parser must.
fn device_type(user_agent: &str, os: &str) -> &'static str {
    let has = |token: &str| user_agent.contains(token);
    if has("iPad") || has("Tablet") || has("Kindle") || has("Silk/") || has("PlayBook") {
        return "tablet";
    }
    match os {
        "iOS" => "phone",
        "Android" if has("Mobile") => "phone",
        "Android" => "tablet",
        "Windows Phone" | "KaiOS" | "BlackBerry OS" | "Symbian OS" | "Firefox OS" => "phone",
        "Windows" | "Mac OS X" | "Linux" | "Ubuntu" | "Chrome OS" | "Fedora" | "Debian"
        | "FreeBSD" | "OpenBSD" | "NetBSD" | "Solaris" => {
            if has("Mobile") && !has("Windows NT") {
                "phone"
            } else {
                "desktop"
            }
        }
        _ if has("Mobile") || has("iPhone") => "phone",
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn browsers_systems_and_devices() {
        let cases = [
            (
                "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
                ("Chrome", "Windows", "desktop"),
            ),
            (
                "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
                ("Mobile Safari", "iOS", "phone"),
            ),
            (
                "Mozilla/5.0 (iPad; CPU OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1",
                ("Mobile Safari", "iOS", "tablet"),
            ),
            (
                "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36",
                ("Chrome Mobile", "Android", "phone"),
            ),
            (
                "Mozilla/5.0 (Linux; Android 13; SM-X200) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
                ("Chrome", "Android", "tablet"),
            ),
            (
                "Mozilla/5.0 (Macintosh; Intel Mac OS X 14.5; rv:133.0) Gecko/20100101 Firefox/133.0",
                ("Firefox", "Mac OS X", "desktop"),
            ),
            (
                "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0",
                ("Edge", "Linux", "desktop"),
            ),
        ];
        for (ua, (browser, os, device)) in cases {
            let c = describe(ua);
            assert_eq!(
                (c.browser.as_str(), c.os.as_str(), c.device),
                (browser, os, device),
                "{ua}"
            );
        }
        let odd = describe("");
        assert_eq!((odd.browser.as_str(), odd.os.as_str()), ("Other", "Other"));
        assert_eq!(odd.device, "other");
    }
}
