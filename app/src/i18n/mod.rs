//! The console's languages: message catalogues in Fluent, one file per language
//! (`app/locales/<tag>/bulwark.ftl`), the [`Locale`] a page, mail or chat message is written
//! in, and [`t!`](crate::t) to look a message up.
//!
//! A page's language is chosen once per request on the server (`server/src/web/session.rs`):
//! the signed-in person's own setting, else the browser's `Accept-Language`, else
//! `default_locale` from the configuration. The server writes it into `<html lang>` and the
//! browser reads it back from there when it hydrates, so both sides render the same words and
//! no English flashes by. Mails and chat alerts name their locale (`t!(in locale, …)`): the
//! one set for their recipient list or channel.
//!
//! Adding a language is one file: copy `app/locales/en/bulwark.ftl` to
//! `app/locales/<tag>/bulwark.ftl` and translate it. `tests::catalogues_have_the_same_keys`
//! fails until every key is there; `app/tests/i18n_scan.rs` fails on a key the code does not
//! use and on text in a page that bypasses the catalogue.

pub mod chat;
pub mod digest;
pub mod errors;
pub mod mail;
pub mod policy;
pub mod report;
pub mod traffic_alerts;
pub mod trends;
pub mod words;

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::sync::LazyLock;

use crate::domain::problem::{Fact, Problem};
pub use crate::domain::zone::ZoneTable;
pub use fluent_templates::fluent_bundle::FluentValue;
use fluent_templates::{LanguageIdentifier, Loader};

fluent_templates::static_loader! {
    static CATALOGUES = {
        locales: "./locales",
        fallback_language: "en",
        // Fluent wraps arguments in Unicode isolation marks by default; the console is written
        // left to right only, and the marks would end up in copied text.
        customise: |bundle| bundle.set_use_isolating(false),
    };
}

/// Every language with a catalogue: English (the fallback) first, the rest by tag.
static LOCALES: LazyLock<Vec<LanguageIdentifier>> = LazyLock::new(|| {
    let mut all: Vec<LanguageIdentifier> = CATALOGUES.locales().cloned().collect();
    all.sort_by_key(|l| (l.language.as_str() != "en", l.to_string()));
    all
});

/// A language the console speaks: one of the catalogues.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Locale(&'static LanguageIdentifier);

impl Default for Locale {
    fn default() -> Self {
        Locale(&LOCALES[0])
    }
}

impl fmt::Debug for Locale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Locale({})", self.0)
    }
}

impl fmt::Display for Locale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl Locale {
    /// English, the language every catalogue falls back to.
    pub fn english() -> Locale {
        Locale::default()
    }

    pub fn all() -> impl Iterator<Item = Locale> {
        LOCALES.iter().map(Locale)
    }

    /// The catalogue with exactly this tag (`en`, `zh-CN`; case does not matter).
    pub fn parse(tag: &str) -> Option<Locale> {
        let wanted: LanguageIdentifier = tag.trim().parse().ok()?;
        Locale::all().find(|l| *l.0 == wanted)
    }

    /// The tags there are, for messages that list them.
    pub fn tags() -> String {
        Locale::all()
            .map(|l| l.tag())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The best catalogue for an `Accept-Language` header, if any fits: `zh`, `zh-CN` or
    /// `zh-Hans` all pick `zh-CN`; languages are tried by weight (`q=`), then in order.
    pub fn from_accept_language(header: &str) -> Option<Locale> {
        let mut weighted: Vec<(f32, LanguageIdentifier)> = header
            .split(',')
            .filter_map(|item| {
                let mut parts = item.split(';');
                let tag = parts.next()?.trim();
                let weight = parts
                    .find_map(|p| p.trim().strip_prefix("q="))
                    .map_or(Some(1.0), |q| q.trim().parse::<f32>().ok())?;
                let id = tag.parse::<LanguageIdentifier>().ok()?;
                (weight > 0.0).then_some((weight, id))
            })
            .collect();
        // Stable: equal weights keep the browser's order.
        weighted.sort_by(|a, b| b.0.total_cmp(&a.0));
        let requested: Vec<LanguageIdentifier> = weighted.into_iter().map(|(_, id)| id).collect();
        fluent_langneg::negotiate_languages(
            &requested,
            LOCALES.as_slice(),
            None,
            fluent_langneg::NegotiationStrategy::Filtering,
        )
        .first()
        .copied()
        .map(Locale)
    }

    /// `en`, `zh-CN`: what `<html lang>`, settings and the configuration hold.
    pub fn tag(self) -> String {
        self.0.to_string()
    }

    /// The language's own name for itself (`English`, `简体中文`), for the switcher.
    pub fn name(self) -> String {
        crate::t!(in self, "language-name")
    }

    /// A wait for people to read, in this language: `2 h 5 min`, `2 小时 5 分钟`.
    pub fn duration(self, ms: f64) -> String {
        use crate::domain::duration::{TimeUnit, human_parts};
        human_parts(ms)
            .into_iter()
            .map(|(n, unit)| match unit {
                TimeUnit::Ms => crate::t!(in self, "unit-ms", n = n),
                TimeUnit::S => crate::t!(in self, "unit-s", n = n),
                TimeUnit::Min => crate::t!(in self, "unit-min", n = n),
                TimeUnit::H => crate::t!(in self, "unit-h", n = n),
                TimeUnit::D => crate::t!(in self, "unit-d", n = n),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// A percentage for people: `90.0 %`, `100 %` (whole at the ends, one decimal between).
    pub fn percent(self, rate: f64) -> String {
        let pct = rate * 100.0;
        let n = if !(0.05..=99.95).contains(&pct) {
            format!("{pct:.0}")
        } else {
            format!("{pct:.1}")
        };
        crate::t!(in self, "unit-percent", n = n)
    }

    /// What the domain found ([`Problem`]), in this language: its message with each fact
    /// written for this reader (numbers as numbers, waits in this language's units).
    pub fn say(self, problem: &Problem) -> String {
        let args: Vec<(&'static str, FluentValue<'_>)> = problem
            .facts()
            .iter()
            .map(|(name, fact)| {
                let value = match fact {
                    Fact::Text(text) => FluentValue::from(text.as_str()),
                    Fact::Number(n) => FluentValue::from(*n),
                    Fact::Decimal(n) => FluentValue::from(*n),
                    Fact::Wait(ms) => FluentValue::from(self.duration(*ms)),
                    Fact::Problem(inner) => FluentValue::from(self.say(inner)),
                };
                (*name, value)
            })
            .collect();
        self.text_with(problem.id(), &args)
    }

    pub fn text(self, key: &str) -> String {
        self.text_with(key, &[])
    }

    /// The message `key` with its arguments. A key missing from this catalogue falls back to
    /// English; one missing everywhere shows as itself (the catalogue tests keep that from
    /// shipping).
    pub fn text_with(self, key: &str, args: &[(&'static str, FluentValue<'_>)]) -> String {
        let args: Option<HashMap<Cow<'static, str>, FluentValue<'_>>> =
            (!args.is_empty()).then(|| {
                args.iter()
                    .map(|(name, value)| (Cow::Borrowed(*name), value.clone()))
                    .collect()
            });
        CATALOGUES
            .try_lookup_complete(self.0, key, args.as_ref())
            .unwrap_or_else(|| key.to_string())
    }
}

/// A [`Problem`] in English, the way logs and the command line show it (and the way the
/// domain's other errors read, so one failure reads the same in both).
impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&Locale::english().say(self))
    }
}

impl std::error::Error for Problem {}

/// The locale of the page being rendered or the server function being answered: the one the
/// app provided as context, else the request's; English outside both.
pub fn current() -> Locale {
    leptos::prelude::use_context::<Locale>().unwrap_or_else(request_locale)
}

#[cfg(feature = "ssr")]
tokio::task_local! {
    static REQUEST_LOCALE: Locale;
}

/// Runs `work` (a request's handling) in `locale`: what [`t!`](crate::t) says in the plain
/// routes (the REST API's problem details), which have no Leptos context to read it from.
#[cfg(feature = "ssr")]
pub async fn scope<F: std::future::Future>(locale: Locale, work: F) -> F::Output {
    REQUEST_LOCALE.scope(locale, work).await
}

/// The language of this request. On the server the session layer chose it
/// (`server/src/web/session.rs`) and the shell wrote it into `<html lang>`; the browser reads
/// it back from there, so hydration renders the very same words.
pub fn request_locale() -> Locale {
    #[cfg(feature = "ssr")]
    let chosen = leptos::prelude::use_context::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Locale>().copied())
        .or_else(|| REQUEST_LOCALE.try_with(|l| *l).ok());
    #[cfg(feature = "hydrate")]
    let chosen = leptos::prelude::document()
        .document_element()
        .and_then(|root| root.get_attribute("lang"))
        .and_then(|tag| Locale::parse(&tag));
    #[cfg(not(any(feature = "ssr", feature = "hydrate")))]
    let chosen = None;
    chosen.unwrap_or_default()
}

/// The zone the console shows times in: the one the app provided (read once per render rather
/// than from the state or the document per time), else the request's.
pub fn zone() -> ZoneTable {
    leptos::prelude::use_context::<ZoneTable>().unwrap_or_else(request_zone)
}

/// `timezone` from the configuration. On the server the render's context holds its table
/// (`server/src/web/mod.rs` provides it); the shell writes the table into `<html data-zone
/// data-zone-spans>`, where the browser reads it back, as with the language.
pub fn request_zone() -> ZoneTable {
    #[cfg(feature = "ssr")]
    let zone = leptos::prelude::use_context::<ZoneTable>();
    #[cfg(feature = "hydrate")]
    let zone = leptos::prelude::document()
        .document_element()
        .and_then(|root| {
            ZoneTable::decode(
                &root.get_attribute("data-zone")?,
                &root.get_attribute("data-zone-spans")?,
            )
        });
    #[cfg(not(any(feature = "ssr", feature = "hydrate")))]
    let zone = None;
    zone.unwrap_or_else(ZoneTable::utc)
}

/// A moment as the console writes it: `2026-12-03 17:30:05 CST`, in [`zone`]; the same in
/// every language (24-hour, year first, which Chinese and international readers both use).
pub fn stamp(t: chrono::DateTime<chrono::Utc>) -> String {
    zone().format(t, "%Y-%m-%d %H:%M:%S %Z")
}

/// [`stamp`] to the minute: `2026-12-03 17:30 CST`.
pub fn stamp_minutes(t: chrono::DateTime<chrono::Utc>) -> String {
    zone().format(t, "%Y-%m-%d %H:%M %Z")
}

/// The time of day alone: `17:30:05 CST`.
pub fn clock(t: chrono::DateTime<chrono::Utc>) -> String {
    zone().format(t, "%H:%M:%S %Z")
}

/// [`Locale::duration`] in the page's language.
pub fn duration(ms: f64) -> String {
    current().duration(ms)
}

/// A message from the catalogue, in the page's language or, with `in`, a given one:
/// `t!("nav-jobs")`, `t!("count-runs", count = 3)`, `t!(in locale, "run-title", run = 7, job = name)`.
/// Arguments become Fluent variables of the same name (`{ $count }`).
#[macro_export]
macro_rules! t {
    (in $locale:expr, $key:literal $(, $name:ident = $value:expr)* $(,)?) => {
        $locale.text_with(
            $key,
            &[$((stringify!($name), $crate::i18n::FluentValue::from($value))),*],
        )
    };
    ($key:literal $(, $name:ident = $value:expr)* $(,)?) => {
        $crate::i18n::current().text_with(
            $key,
            &[$((stringify!($name), $crate::i18n::FluentValue::from($value))),*],
        )
    };
}

/// Names a message whose key is chosen at run time (a state, a kind) so the catalogue scan
/// (`app/tests/i18n_scan.rs`) sees that it is used: `key!("run-status-dead")`.
#[macro_export]
macro_rules! key {
    ($key:literal) => {
        $key
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn keys(tag: &str) -> BTreeSet<String> {
        use fluent_syntax::ast::Entry;
        let path = format!("{}/locales/{tag}/bulwark.ftl", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let resource = fluent_syntax::parser::parse(text.as_str())
            .unwrap_or_else(|(_, errors)| panic!("{path} does not parse: {errors:?}"));
        resource
            .body
            .iter()
            .filter_map(|entry| match entry {
                Entry::Message(m) => Some(m.id.name.to_string()),
                Entry::Term(t) => Some(format!("-{}", t.id.name)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn catalogues_have_the_same_keys() {
        let english = keys("en");
        assert!(english.len() > 10, "the English catalogue looks empty");
        for locale in Locale::all() {
            let theirs = keys(&locale.tag());
            let missing: Vec<_> = english.difference(&theirs).collect();
            let extra: Vec<_> = theirs.difference(&english).collect();
            assert!(
                missing.is_empty() && extra.is_empty(),
                "{locale}: missing {missing:?}, not in English {extra:?}"
            );
        }
    }

    #[test]
    fn english_comes_first_and_chinese_is_there() {
        let tags: Vec<String> = Locale::all().map(Locale::tag).collect();
        assert_eq!(tags.first().map(String::as_str), Some("en"));
        assert!(tags.contains(&"zh-CN".to_string()), "{tags:?}");
        assert_eq!(
            Locale::parse("zh-cn").map(Locale::tag).as_deref(),
            Some("zh-CN")
        );
        assert_eq!(Locale::parse("fr"), None);
    }

    #[test]
    fn accept_language_picks_the_best_catalogue() {
        let pick = |header: &str| Locale::from_accept_language(header).map(Locale::tag);
        assert_eq!(pick("zh-CN,zh;q=0.9,en;q=0.8").as_deref(), Some("zh-CN"));
        assert_eq!(pick("zh").as_deref(), Some("zh-CN"));
        assert_eq!(pick("en-US,en;q=0.9").as_deref(), Some("en"));
        assert_eq!(pick("fr-FR, zh;q=0.5").as_deref(), Some("zh-CN"));
        assert_eq!(pick("en;q=0.4, zh-Hans;q=0.8").as_deref(), Some("zh-CN"));
        assert_eq!(pick("zh;q=0, en").as_deref(), Some("en"));
        assert_eq!(pick("*").as_deref(), None);
        assert_eq!(pick("fr-FR, de;q=0.5"), None);
        assert_eq!(pick(""), None);
        assert_eq!(pick("%%%garbage"), None);
    }

    #[test]
    fn arguments_and_plurals_are_filled_in() {
        let en = Locale::english();
        let zh = Locale::parse("zh-CN").expect("zh-CN");
        assert_eq!(en.name(), "English");
        assert_eq!(zh.name(), "简体中文");
        assert_eq!(t!(in en, "count-runs", count = 1), "1 run");
        assert_eq!(t!(in en, "count-runs", count = 3), "3 runs");
        assert_eq!(t!(in zh, "count-runs", count = 3), "3 次运行");
        assert_eq!(en.text("no-such-key"), "no-such-key");
        assert_eq!(en.duration(5_430_000.0), "1 h 31 min");
        assert_eq!(zh.duration(5_430_000.0), "1 小时 31 分钟");
        assert_eq!(zh.duration(1_500.0), "1.5 秒");
        assert_eq!(en.percent(0.9), "90.0 %");
        assert_eq!(zh.percent(1.0), "100%");
    }
}
