//! Filters as URLs, forms and the command line hold them (text), parsed in one place by one
//! rule each: a day is `YYYY-MM-DD` everywhere, a bad value is refused with a message naming
//! its field, and services only ever receive the parsed values.
//!
//! - [`TrafficFilter`]: a range (preset or two days), visitor type, bot category and source,
//!   and site; with
//!   [`HitsSelection`], the hits list's extra filters, order and page cursor.
//! - [`QueueQuery`]: the failed queue's job, error class, days and message text; with
//!   [`QueueCursor`], where a page of it ends.

use chrono::{DateTime, NaiveDate, Utc};
use chrono_tz::Tz;

use super::FieldProblem;
use super::bots::BotCategory;
use super::run::ErrorClass;
use super::traffic_range::{self, RangeError, RangeSpec, Resolved, VisitorType, parse_day};
use crate::problem;

/// Empty text means "not given".
fn given(text: Option<&str>) -> Option<&str> {
    text.map(str::trim).filter(|t| !t.is_empty())
}

fn range_error(e: RangeError) -> FieldProblem {
    let field = match e {
        RangeError::VisitorType(_) => "type",
        _ => "range",
    };
    FieldProblem::new(field, e.problem())
}

/// Which traffic the figures, the chart and the hits list count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrafficFilter {
    pub spec: RangeSpec,
    pub visitors: VisitorType,
    /// Only this category of bots.
    pub category: Option<BotCategory>,
    /// Only this bot source (`google`, …, `other`).
    pub source: Option<String>,
    /// Only this site, by host (all sites when `None`).
    pub site: Option<String>,
    /// Only visitors from this country (ISO 3166-1 alpha-2, upper case; `""`: unknown).
    pub country: Option<String>,
    /// Only page views of URLs tagged with this `utm_campaign`.
    pub campaign: Option<String>,
    /// Only hits answered with this HTTP status code.
    pub status: Option<u16>,
}

impl TrafficFilter {
    /// Narrows the filter to one site, given by host as typed (`site` in URLs); none or empty
    /// text keeps all sites.
    pub fn with_site(mut self, site: Option<&str>) -> Result<Self, FieldProblem> {
        self.site = given(site)
            .map(|s| super::sites::normalise_host(s).map_err(|e| FieldProblem::new("site", e)))
            .transpose()?;
        Ok(self)
    }

    /// Narrows the filter to visitors from one country: a two-letter code in either case, or
    /// `unknown`; none or empty text keeps every country.
    pub fn with_country(mut self, country: Option<&str>) -> Result<Self, FieldProblem> {
        self.country = given(country)
            .map(|c| {
                if c.eq_ignore_ascii_case("unknown") {
                    Ok(String::new())
                } else if c.len() == 2 && c.bytes().all(|b| b.is_ascii_alphabetic()) {
                    Ok(c.to_ascii_uppercase())
                } else {
                    Err(FieldProblem::new(
                        "country",
                        problem!("error-filter-country", value = c.to_string()),
                    ))
                }
            })
            .transpose()?;
        Ok(self)
    }

    /// Narrows the filter to page views of URLs tagged with one `utm_campaign`, as typed; none
    /// or empty text keeps everything.
    pub fn with_campaign(mut self, campaign: Option<&str>) -> Self {
        self.campaign = given(campaign).map(str::to_string);
        self
    }

    /// Narrows the filter to hits answered with one status code (100–999); none or empty text
    /// keeps every hit.
    pub fn with_status(mut self, status: Option<&str>) -> Result<Self, FieldProblem> {
        self.status = given(status)
            .map(|s| {
                s.parse::<u16>()
                    .ok()
                    .filter(|code| (100..1000).contains(code))
                    .ok_or_else(|| {
                        FieldProblem::new(
                            "status",
                            problem!("error-filter-status", value = s.to_string()),
                        )
                    })
            })
            .transpose()?;
        Ok(self)
    }

    /// `range` alone (default: the last 7 days), or `from` and `to`; `kind` is `all`, `human`
    /// or `bot`; `category` one of [`BotCategory`]'s words.
    pub fn parse(
        range: Option<&str>,
        from: Option<&str>,
        to: Option<&str>,
        kind: Option<&str>,
        category: Option<&str>,
        source: Option<&str>,
    ) -> Result<Self, FieldProblem> {
        Ok(TrafficFilter {
            spec: traffic_range::parse_spec(given(range), given(from), given(to))
                .map_err(range_error)?,
            visitors: VisitorType::parse(given(kind).unwrap_or("all")).map_err(range_error)?,
            category: given(category)
                .map(|c| {
                    c.parse::<BotCategory>().map_err(|e| {
                        FieldProblem::new(
                            "category",
                            problem!("error-filter-category", error = e.to_string()),
                        )
                    })
                })
                .transpose()?,
            source: given(source).map(str::to_string),
            site: None,
            country: None,
            campaign: None,
            status: None,
        })
    }

    /// The range's days for someone whose clock says `now`, in `zone`, within the retention.
    pub fn resolve(&self, now: DateTime<Utc>, zone: Tz) -> Result<Resolved, FieldProblem> {
        traffic_range::resolve(
            self.spec,
            traffic_range::today(now, zone),
            zone,
            traffic_range::DEFAULT_RETENTION_DAYS,
        )
        .map_err(range_error)
    }
}

/// The hits list's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HitSort {
    #[default]
    Newest,
    MostHits,
}

/// Where a page of the hits list ends: the sort key and id of its last row (keyset paging, so
/// page 500 costs what page 1 costs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HitCursor {
    Newest { at: DateTime<Utc>, id: i64 },
    MostHits { count: i64, id: i64 },
}

impl HitCursor {
    pub fn encode(&self) -> String {
        match self {
            HitCursor::Newest { at, id } => format!("t{}.{id}", at.timestamp()),
            HitCursor::MostHits { count, id } => format!("c{count}.{id}"),
        }
    }

    pub fn decode(text: &str) -> Option<HitCursor> {
        let (kind, rest) = text.split_at_checked(1)?;
        let (value, id) = rest.split_once('.')?;
        let (value, id): (i64, i64) = (value.parse().ok()?, id.parse().ok()?);
        match kind {
            "t" => Some(HitCursor::Newest {
                at: DateTime::<Utc>::from_timestamp(value, 0)?,
                id,
            }),
            "c" => Some(HitCursor::MostHits { count: value, id }),
            _ => None,
        }
    }
}

/// The hits list's filters, order and page, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HitsSelection {
    pub traffic: TrafficFilter,
    /// Text the path contains.
    pub path: Option<String>,
    pub ip: Option<String>,
    pub sort: HitSort,
    /// The last row of the previous page.
    pub after: Option<HitCursor>,
}

impl HitsSelection {
    /// `sort` is `newest` (default) or `count`; `after` a cursor from the previous page.
    pub fn parse(
        traffic: TrafficFilter,
        path: Option<&str>,
        ip: Option<&str>,
        sort: Option<&str>,
        after: Option<&str>,
    ) -> Result<Self, FieldProblem> {
        let sort = match given(sort) {
            None | Some("newest") => HitSort::Newest,
            Some("count") => HitSort::MostHits,
            Some(other) => {
                return Err(FieldProblem::new(
                    "sort",
                    problem!("error-filter-sort", text = other),
                ));
            }
        };
        let after = match given(after) {
            None => None,
            Some(text) => Some(HitCursor::decode(text).ok_or_else(|| {
                FieldProblem::new("after", problem!("error-filter-after", text = text))
            })?),
        };
        Ok(HitsSelection {
            traffic,
            path: given(path).map(str::to_string),
            ip: given(ip).map(str::to_string),
            sort,
            after,
        })
    }
}

/// Which dead runs the failed queue shows or acts on. Days are UTC, both ends inclusive.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueueQuery {
    pub job: Option<String>,
    pub class: Option<ErrorClass>,
    pub from: Option<NaiveDate>,
    pub to: Option<NaiveDate>,
    /// Text to find in the last error message (case-insensitive).
    pub text: Option<String>,
    /// Only runs of jobs with this tag.
    pub tag: Option<String>,
}

impl QueueQuery {
    /// Narrows the query to the jobs with a tag, as typed (`tag` in URLs); none or empty text
    /// keeps every job.
    pub fn with_tag(mut self, tag: Option<&str>) -> Result<Self, FieldProblem> {
        self.tag = given(tag)
            .map(|t| super::job::tags::parse_tag(t).map_err(|e| FieldProblem::new("tag", e)))
            .transpose()?;
        Ok(self)
    }

    pub fn parse(
        job: Option<&str>,
        class: Option<&str>,
        from: Option<&str>,
        to: Option<&str>,
        text: Option<&str>,
    ) -> Result<Self, FieldProblem> {
        let day = |field: &'static str, text: Option<&str>| -> Result<_, FieldProblem> {
            given(text)
                .map(|text| {
                    parse_day(text).ok_or_else(|| {
                        FieldProblem::new(
                            field,
                            problem!("error-filter-day", field = field, text = text),
                        )
                    })
                })
                .transpose()
        };
        let (from, to) = (day("from", from)?, day("to", to)?);
        if let (Some(from), Some(to)) = (from, to)
            && from > to
        {
            return Err(FieldProblem::new(
                "from",
                problem!(
                    "error-filter-reversed",
                    from = from.to_string(),
                    to = to.to_string()
                ),
            ));
        }
        let class = given(class)
            .map(|text| {
                text.parse::<ErrorClass>().map_err(|e| {
                    FieldProblem::new(
                        "class",
                        problem!("error-filter-class", error = e.to_string()),
                    )
                })
            })
            .transpose()?;
        Ok(QueueQuery {
            job: given(job).map(str::to_string),
            class,
            from,
            to,
            text: given(text).map(str::to_string),
            tag: None,
        })
    }
}

/// Where a page of the failed queue ends: the last run's failure time and id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueCursor {
    pub finished_at: DateTime<Utc>,
    pub id: i64,
}

impl QueueCursor {
    pub fn encode(&self) -> Option<String> {
        Some(format!(
            "{}.{}",
            self.finished_at.timestamp_nanos_opt()?,
            self.id
        ))
    }

    pub fn parse(text: &str) -> Result<Self, FieldProblem> {
        let invalid = || FieldProblem::new("cursor", problem!("error-filter-cursor"));
        let (nanos, id) = text.trim().split_once('.').ok_or_else(invalid)?;
        Ok(QueueCursor {
            finished_at: DateTime::from_timestamp_nanos(nanos.parse().map_err(|_| invalid())?),
            id: id.parse().map_err(|_| invalid())?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_are_one_rule() {
        assert_eq!(
            parse_day(" 2026-11-30 "),
            NaiveDate::from_ymd_opt(2026, 11, 30)
        );
        for bad in ["2026-13-01", "30.11.2026", "", "yesterday"] {
            assert_eq!(parse_day(bad), None, "{bad}");
        }
    }

    #[test]
    fn queue_filters_name_their_bad_field() {
        let field = |r: Result<QueueQuery, FieldProblem>| r.unwrap_err().field;
        assert_eq!(
            field(QueueQuery::parse(
                None,
                None,
                Some("2026-11-30"),
                Some("2026-11-01"),
                None
            )),
            "from"
        );
        assert_eq!(
            field(QueueQuery::parse(None, None, None, Some("soon"), None)),
            "to"
        );
        assert_eq!(
            field(QueueQuery::parse(None, Some("flaky"), None, None, None)),
            "class"
        );
        let ok =
            QueueQuery::parse(Some(" sync "), Some("timeout"), None, None, Some("   ")).unwrap();
        assert_eq!(ok.job.as_deref(), Some("sync"));
        assert_eq!(ok.class, Some(ErrorClass::Timeout));
        assert_eq!(ok.text, None);
    }

    #[test]
    fn cursors_round_trip_and_damaged_ones_are_refused() {
        let cursor = QueueCursor {
            finished_at: DateTime::from_timestamp(1_800_000_000, 5).unwrap(),
            id: 42,
        };
        assert_eq!(
            QueueCursor::parse(&cursor.encode().unwrap()).unwrap(),
            cursor
        );
        assert!(QueueCursor::parse("nonsense").is_err());
        for c in [
            HitCursor::Newest {
                at: DateTime::from_timestamp(1_800_000_000, 0).unwrap(),
                id: 7,
            },
            HitCursor::MostHits { count: 3, id: 9 },
        ] {
            assert_eq!(HitCursor::decode(&c.encode()), Some(c));
        }
        assert_eq!(HitCursor::decode("x1.2"), None);
    }

    #[test]
    fn traffic_filters() {
        let f = TrafficFilter::parse(
            Some(""),
            None,
            None,
            Some("bots"),
            Some(" "),
            Some(" google "),
        )
        .unwrap();
        assert_eq!(f.visitors, VisitorType::Bot);
        assert_eq!(f.category, None);
        assert_eq!(f.source.as_deref(), Some("google"));
        let ai = TrafficFilter::parse(None, None, None, None, Some("ai"), None).unwrap();
        assert_eq!(ai.category, Some(BotCategory::Ai));
        let unknown =
            TrafficFilter::parse(None, None, None, None, Some("robots"), None).unwrap_err();
        assert_eq!(unknown.field, "category");
        assert!(
            unknown.problem.to_string().contains("search, ai, social"),
            "{}",
            unknown.problem
        );
        assert_eq!(
            TrafficFilter::parse(None, None, None, Some("aliens"), None, None)
                .unwrap_err()
                .field,
            "type"
        );
        assert_eq!(
            TrafficFilter::parse(None, Some("2026-11-01"), None, None, None, None)
                .unwrap_err()
                .field,
            "range"
        );
        let bad_sort = HitsSelection::parse(f, None, None, Some("random"), None);
        assert_eq!(bad_sort.unwrap_err().field, "sort");
    }
}
