//! How the traffic rollups split what they count, so every dashboard filter is a sum or a
//! union over fewer rows (how the rollups use them: `docs/ARCHITECTURE.md`, "Traffic").
//!
//! - A [`Part`] is who made a hit: people, or one bot source. Hourly views and daily sets are
//!   kept per part.
//! - A [`View`] is what a filter shows: everyone, people, all bots, or one bot source. Daily top
//!   pages and blocks are kept per view, since a path's rank is not a sum over parts.
//!
//! Both are stored as short codes (`h`, `b:google`; `all`, `b`), written and read only here.

use super::traffic_range::VisitorType;

/// The source a bot without a name is counted under.
pub const OTHER_SOURCE: &str = "other";

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
    /// People from a bot source: nothing can match.
    Nothing,
}

impl Parts {
    pub fn for_filter(visitors: VisitorType, source: Option<&str>) -> Parts {
        match (visitors, source) {
            (VisitorType::All, None) => Parts::Every,
            (VisitorType::Human, None) => Parts::Only(Part::Human),
            (VisitorType::Bot, None) => Parts::AllBut(Part::Human),
            (VisitorType::Human, Some(_)) => Parts::Nothing,
            (_, Some(source)) => Parts::Only(Part::Bot(source.to_string())),
        }
    }
}

/// What a filter shows, as far as per-view rollups are concerned.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum View {
    All,
    Human,
    Bots,
    Source(String),
}

impl View {
    /// The stored code: `all`, `h`, `b`, or `b:` and the source (a view of one part has that
    /// part's code).
    pub fn code(&self) -> String {
        match self {
            View::All => "all".into(),
            View::Human => Part::Human.code(),
            View::Bots => "b".into(),
            View::Source(source) => Part::Bot(source.clone()).code(),
        }
    }

    pub fn parse(code: &str) -> Option<View> {
        match code {
            "all" => Some(View::All),
            "b" => Some(View::Bots),
            _ => Part::parse(code).map(View::of_part),
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
    pub fn for_filter(visitors: VisitorType, source: Option<&str>) -> Option<View> {
        match Parts::for_filter(visitors, source) {
            Parts::Every => Some(View::All),
            Parts::AllBut(_) => Some(View::Bots),
            Parts::Only(part) => Some(View::of_part(part)),
            Parts::Nothing => None,
        }
    }

    /// Every view a hit of `part` counts in.
    pub fn containing(part: &Part) -> Vec<View> {
        match part {
            Part::Human => vec![View::All, View::Human],
            Part::Bot(source) => vec![View::All, View::Bots, View::Source(source.clone())],
        }
    }

    /// The parts this view sums or unites.
    pub fn parts(&self) -> Parts {
        match self {
            View::All => Parts::Every,
            View::Human => Parts::Only(Part::Human),
            View::Bots => Parts::AllBut(Part::Human),
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
            View::Source("bing".into()),
        ] {
            assert_eq!(View::parse(&view.code()), Some(view));
        }
        assert_eq!(Part::of(false, Some("google")).code(), "h");
        assert_eq!(Part::of(true, None).code(), "b:other");
        assert_eq!(Part::parse("b:"), None);
    }

    #[test]
    fn every_filter_is_a_set_of_parts() {
        assert_eq!(Parts::for_filter(VisitorType::All, None), Parts::Every);
        assert_eq!(
            Parts::for_filter(VisitorType::Bot, Some("bing")),
            Parts::Only(Part::Bot("bing".into()))
        );
        assert_eq!(View::for_filter(VisitorType::Human, Some("bing")), None);
        assert_eq!(View::for_filter(VisitorType::Bot, None), Some(View::Bots));
        assert_eq!(
            View::containing(&Part::Bot("x".into())),
            [View::All, View::Bots, View::Source("x".into())]
        );
    }
}
