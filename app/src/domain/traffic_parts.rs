//! How the traffic rollups split what they count, so every dashboard filter is a sum or a
//! union over fewer rows (how the rollups use them: `docs/ARCHITECTURE.md`, "Traffic").
//!
//! - A [`Part`] is who made a hit: people, or one bot source. Hourly views and daily sets are
//!   kept per part.
//! - A [`View`] is what a filter shows: everyone, people, all bots, one category of bots, or
//!   one bot source. Daily top pages and blocks are kept per view, since a path's rank is not a
//!   sum over parts.
//!
//! Both are stored as short codes (`h`, `b:google`; `all`, `b`, `c:ai`), written and read only
//! here. A category's parts are its sources' ([`super::bots::category_of`]); when that table
//! changes, [`layout`] changes and the rollups are rebuilt at the next start.

use super::bots::{self, BotCategory};
use super::traffic_range::VisitorType;

pub use super::bots::OTHER_SOURCE;

/// What the stored rollups' codes depend on besides the minute rows: the version of this
/// scheme and every source's category. Stored with the rollups; a start that finds another
/// rebuilds them.
pub fn layout() -> String {
    // FNV-1a: stable across builds and platforms, unlike `std`'s hasher.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for (source, category) in bots::SOURCES {
        for byte in source
            .bytes()
            .chain([b'='])
            .chain(category.as_str().bytes())
            .chain([b';'])
        {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    // 4: AI crawlers' fetches became facts; an upgrade rebuilds them from the stored rows.
    format!("4:{hash:016x}")
}

/// Who made a hit.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Part {
    Human,
    Bot(String),
}

impl Part {
    pub fn of(is_bot: bool, source: Option<&str>) -> Part {
        if is_bot {
            Part::Bot(source.unwrap_or(OTHER_SOURCE).to_string())
        } else {
            Part::Human
        }
    }

    /// The stored code: `h`, or `b:` and the source.
    pub fn code(&self) -> String {
        match self {
            Part::Human => "h".into(),
            Part::Bot(source) => format!("b:{source}"),
        }
    }

    pub fn parse(code: &str) -> Option<Part> {
        match code {
            "h" => Some(Part::Human),
            _ => code
                .strip_prefix("b:")
                .filter(|s| !s.is_empty())
                .map(|s| Part::Bot(s.to_string())),
        }
    }

    /// The bot source, for a bot's part.
    pub fn source(&self) -> Option<&str> {
        match self {
            Part::Human => None,
            Part::Bot(source) => Some(source),
        }
    }
}

/// Which parts a filter covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parts {
    Every,
    Only(Part),
    AllBut(Part),
    /// The bots of one category.
    Category(BotCategory),
    /// People from a bot source or category, or a source outside the category: nothing can
    /// match.
    Nothing,
}

/// Who a filter counts: everyone, people or bots, narrowed to a bot category or source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Who<'a> {
    pub visitors: VisitorType,
    pub category: Option<BotCategory>,
    pub source: Option<&'a str>,
}

impl<'a> Who<'a> {
    pub fn everyone() -> Who<'static> {
        Who {
            visitors: VisitorType::All,
            category: None,
            source: None,
        }
    }
}

impl Parts {
    pub fn for_filter(who: Who<'_>) -> Parts {
        match (who.visitors, who.category, who.source) {
            (VisitorType::Human, None, None) => Parts::Only(Part::Human),
            (VisitorType::Human, _, _) => Parts::Nothing,
            (VisitorType::All, None, None) => Parts::Every,
            (VisitorType::Bot, None, None) => Parts::AllBut(Part::Human),
            (_, Some(category), None) => Parts::Category(category),
            (_, Some(category), Some(source)) if bots::category_of(source) != category => {
                Parts::Nothing
            }
            (_, _, Some(source)) => Parts::Only(Part::Bot(source.to_string())),
        }
    }

    /// Whether a part is among these.
    pub fn contains(&self, part: &Part) -> bool {
        match self {
            Parts::Every => true,
            Parts::Only(only) => only == part,
            Parts::AllBut(but) => but != part,
            Parts::Category(category) => part
                .source()
                .is_some_and(|s| bots::category_of(s) == *category),
            Parts::Nothing => false,
        }
    }
}

/// What a filter shows, as far as per-view rollups are concerned.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum View {
    All,
    Human,
    Bots,
    Category(BotCategory),
    Source(String),
}

impl View {
    /// The stored code: `all`, `h`, `b`, `c:` and the category, or `b:` and the source (a
    /// view of one part has that part's code).
    pub fn code(&self) -> String {
        match self {
            View::All => "all".into(),
            View::Human => Part::Human.code(),
            View::Bots => "b".into(),
            View::Category(category) => format!("c:{category}"),
            View::Source(source) => Part::Bot(source.clone()).code(),
        }
    }

    pub fn parse(code: &str) -> Option<View> {
        match code {
            "all" => Some(View::All),
            "b" => Some(View::Bots),
            _ => match code.strip_prefix("c:") {
                Some(category) => BotCategory::parse(category).map(View::Category),
                None => Part::parse(code).map(View::of_part),
            },
        }
    }

    /// The view of exactly one part.
    pub fn of_part(part: Part) -> View {
        match part {
            Part::Human => View::Human,
            Part::Bot(source) => View::Source(source),
        }
    }

    /// The view a filter reads; `None` when nothing can match.
    pub fn for_filter(who: Who<'_>) -> Option<View> {
        match Parts::for_filter(who) {
            Parts::Every => Some(View::All),
            Parts::AllBut(_) => Some(View::Bots),
            Parts::Category(category) => Some(View::Category(category)),
            Parts::Only(part) => Some(View::of_part(part)),
            Parts::Nothing => None,
        }
    }

    /// Every view a hit of `part` counts in.
    pub fn containing(part: &Part) -> Vec<View> {
        match part {
            Part::Human => vec![View::All, View::Human],
            Part::Bot(source) => vec![
                View::All,
                View::Bots,
                View::Category(bots::category_of(source)),
                View::Source(source.clone()),
            ],
        }
    }

    /// The parts this view sums or unites.
    pub fn parts(&self) -> Parts {
        match self {
            View::All => Parts::Every,
            View::Human => Parts::Only(Part::Human),
            View::Bots => Parts::AllBut(Part::Human),
            View::Category(category) => Parts::Category(*category),
            View::Source(source) => Parts::Only(Part::Bot(source.clone())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip() {
        for part in [Part::Human, Part::Bot("google".into())] {
            assert_eq!(Part::parse(&part.code()), Some(part));
        }
        for view in [
            View::All,
            View::Human,
            View::Bots,
            View::Category(BotCategory::Ai),
            View::Source("bing".into()),
        ] {
            assert_eq!(View::parse(&view.code()), Some(view));
        }
        assert_eq!(Part::of(false, Some("google")).code(), "h");
        assert_eq!(Part::of(true, None).code(), "b:other");
        assert_eq!(Part::parse("b:"), None);
    }

    fn who(visitors: VisitorType, category: Option<BotCategory>, source: Option<&str>) -> Who<'_> {
        Who {
            visitors,
            category,
            source,
        }
    }

    #[test]
    fn every_filter_is_a_set_of_parts() {
        use BotCategory::*;
        use VisitorType::*;
        assert_eq!(Parts::for_filter(who(All, None, None)), Parts::Every);
        assert_eq!(
            Parts::for_filter(who(Bot, None, Some("bing"))),
            Parts::Only(Part::Bot("bing".into()))
        );
        assert_eq!(View::for_filter(who(Human, None, Some("bing"))), None);
        assert_eq!(View::for_filter(who(Human, Some(Ai), None)), None);
        assert_eq!(View::for_filter(who(Bot, None, None)), Some(View::Bots));
        assert_eq!(
            View::for_filter(who(All, Some(Ai), None)),
            Some(View::Category(Ai))
        );
        assert_eq!(
            View::for_filter(who(Bot, Some(Ai), Some("openai"))),
            Some(View::Source("openai".into()))
        );
        assert_eq!(
            View::for_filter(who(Bot, Some(Search), Some("openai"))),
            None
        );
        assert_eq!(
            View::containing(&Part::Bot("openai".into())),
            [
                View::All,
                View::Bots,
                View::Category(Ai),
                View::Source("openai".into())
            ]
        );
        // A source this build does not know counts as `other`.
        assert!(Parts::Category(Other).contains(&Part::Bot("retired-name".into())));
        assert!(!Parts::Category(Other).contains(&Part::Human));
        assert!(Parts::Category(Ai).contains(&Part::Bot("anthropic".into())));
    }

    #[test]
    fn the_layout_is_stable() {
        assert_eq!(layout(), layout());
        assert!(layout().starts_with("4:"));
    }
}
