//! The console's time zone as a table of its UTC offsets over time.
//!
//! Every page writes times in the configured zone, on the server and again in the browser when
//! it hydrates, and the two must agree to the letter. The tz database (chrono-tz) would make
//! the browser's main module about a third larger for one zone it needs; instead the server
//! turns that zone into its offsets and abbreviations from `FIRST_YEAR` to `LAST_YEAR`
//! (`<html data-zone-spans>`, a few hundred bytes) and both sides format from the same table.
//! The tz database stays in the browser only where a job's own zone is edited (the job editor).

use std::sync::Arc;

use chrono::{DateTime, Utc};

/// The table covers instants from the start of this year…
#[cfg(feature = "ssr")]
pub const FIRST_YEAR: i32 = 2000;
/// …to the start of this one; before and after, the nearest span's offset applies.
#[cfg(feature = "ssr")]
pub const LAST_YEAR: i32 = 2070;

/// From `from` (Unix seconds) on, local time is UTC + `offset` seconds, written `abbr`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Span {
    from: i64,
    offset: i32,
    abbr: String,
}

#[derive(Debug, PartialEq, Eq)]
struct Table {
    name: String,
    /// Ordered by `from`; never empty.
    spans: Vec<Span>,
    /// The spans as every page carries them ([`ConsoleZone::encode`]), written once.
    encoded: String,
}

impl Table {
    fn new(name: String, spans: Vec<Span>) -> Self {
        let encoded = spans
            .iter()
            .map(|s| format!("{},{},{}", s.from, s.offset, s.abbr))
            .collect::<Vec<_>>()
            .join(";");
        Self {
            name,
            spans,
            encoded,
        }
    }
}

/// The zone the console writes times in (`timezone` in the configuration). Cheap to clone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsoleZone(Arc<Table>);

impl ConsoleZone {
    pub fn utc() -> Self {
        Self(Arc::new(Table::new(
            "UTC".into(),
            vec![Span {
                from: 0,
                offset: 0,
                abbr: "UTC".into(),
            }],
        )))
    }

    /// The zone's IANA name, `Asia/Shanghai`.
    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// The table of `tz`, read from the tz database: its offset sampled daily, each change
    /// found to the second.
    #[cfg(feature = "ssr")]
    pub fn of(tz: chrono_tz::Tz) -> Self {
        use chrono::{Offset, TimeZone};
        let at = |secs: i64| {
            let instant = DateTime::from_timestamp(secs, 0).unwrap_or_default();
            let offset = tz.offset_from_utc_datetime(&instant.naive_utc());
            (offset.fix().local_minus_utc(), offset.to_string())
        };
        let year_start = |year| {
            Utc.with_ymd_and_hms(year, 1, 1, 0, 0, 0)
                .single()
                .map_or(0, |t| t.timestamp())
        };
        let (start, end) = (year_start(FIRST_YEAR), year_start(LAST_YEAR));
        let (offset, abbr) = at(start);
        let mut spans = vec![Span {
            from: start,
            offset,
            abbr,
        }];
        // No zone changes its offset twice within a day, so a daily sample sees every change.
        const DAY: i64 = 86_400;
        let mut t = start;
        while t < end {
            let next = t + DAY;
            let last = spans.last().map(|s| (s.offset, s.abbr.clone()));
            if Some(at(next)) != last {
                let (mut same, mut changed) = (t, next);
                while changed - same > 1 {
                    let mid = same + (changed - same) / 2;
                    if Some(at(mid)) == last {
                        same = mid;
                    } else {
                        changed = mid;
                    }
                }
                let (offset, abbr) = at(changed);
                spans.push(Span {
                    from: changed,
                    offset,
                    abbr,
                });
            }
            t = next;
        }
        Self(Arc::new(Table::new(tz.name().to_string(), spans)))
    }

    /// [`Self::of`], computed once per zone for the process.
    #[cfg(feature = "ssr")]
    pub fn cached(tz: chrono_tz::Tz) -> Self {
        use std::collections::HashMap;
        use std::sync::{Mutex, OnceLock};
        static TABLES: OnceLock<Mutex<HashMap<chrono_tz::Tz, ConsoleZone>>> = OnceLock::new();
        let tables = TABLES.get_or_init(Default::default);
        let mut tables = tables
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        tables.entry(tz).or_insert_with(|| Self::of(tz)).clone()
    }

    /// The spans as the page carries them: `from,offset,abbr` joined by `;`.
    pub fn encode(&self) -> String {
        self.0.encoded.clone()
    }

    /// What [`Self::encode`] wrote, under the zone's `name`; `None` when it is not that.
    pub fn decode(name: &str, spans: &str) -> Option<Self> {
        let spans = spans
            .split(';')
            .map(|span| {
                let mut parts = span.splitn(3, ',');
                Some(Span {
                    from: parts.next()?.parse().ok()?,
                    offset: parts.next()?.parse().ok()?,
                    abbr: parts.next()?.to_string(),
                })
            })
            .collect::<Option<Vec<_>>>()?;
        let ordered = spans.windows(2).all(|w| w[0].from < w[1].from);
        (!spans.is_empty() && ordered).then(|| Self(Arc::new(Table::new(name.to_string(), spans))))
    }

    /// `t` in this zone, written by a chrono `pattern` whose `%Z` is the zone's abbreviation.
    pub fn format(&self, t: DateTime<Utc>, pattern: &str) -> String {
        let spans = &self.0.spans;
        let index = spans
            .partition_point(|s| s.from <= t.timestamp())
            .saturating_sub(1);
        let span = &spans[index];
        let local = t
            .naive_utc()
            .checked_add_signed(chrono::Duration::seconds(span.offset.into()))
            .unwrap_or(t.naive_utc());
        let pattern = pattern.replace("%Z", &span.abbr.replace('%', "%%"));
        local.format(&pattern).to_string()
    }
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use chrono_tz::Tz;

    const PATTERN: &str = "%Y-%m-%d %H:%M:%S %Z";

    /// The table writes every instant as the tz database does: around each change, and at
    /// random instants across the years it covers, in zones with and without daylight saving,
    /// half-hour offsets and numeric abbreviations.
    #[test]
    fn formats_as_the_tz_database_does() {
        let zones = [
            Tz::UTC,
            Tz::Europe__Berlin,
            Tz::America__New_York,
            Tz::America__Sao_Paulo,
            Tz::Asia__Shanghai,
            Tz::Asia__Kolkata,
            Tz::Australia__Lord_Howe,
            Tz::Pacific__Apia,
            Tz::Africa__Casablanca,
        ];
        let from = Utc.with_ymd_and_hms(FIRST_YEAR, 1, 1, 0, 0, 0).unwrap();
        let to = Utc.with_ymd_and_hms(LAST_YEAR, 1, 1, 0, 0, 0).unwrap();
        let mut rng = fastrand::Rng::with_seed(7);
        for tz in zones {
            let zone = ConsoleZone::of(tz);
            let mut instants: Vec<DateTime<Utc>> = (0..2_000)
                .map(|_| {
                    DateTime::from_timestamp(rng.i64(from.timestamp()..to.timestamp()), 0).unwrap()
                })
                .collect();
            for span in &zone.0.spans {
                for delta in [-1, 0, 1] {
                    instants.extend(DateTime::from_timestamp(span.from + delta, 0));
                }
            }
            for t in instants {
                assert_eq!(
                    zone.format(t, PATTERN),
                    t.with_timezone(&tz).format(PATTERN).to_string(),
                    "{tz} at {t}"
                );
            }
        }
    }

    #[test]
    fn survives_the_page_and_stays_small() {
        let zone = ConsoleZone::of(Tz::Europe__Berlin);
        let encoded = zone.encode();
        assert_eq!(ConsoleZone::decode("Europe/Berlin", &encoded), Some(zone));
        // Two changes a year for seventy years, each about twenty characters.
        assert!(encoded.len() < 3_200, "{}", encoded.len());
        assert_eq!(ConsoleZone::decode("X", ""), None);
        assert_eq!(ConsoleZone::decode("X", "1,2"), None);
        assert_eq!(ConsoleZone::decode("X", "5,0,A;4,0,B"), None);
    }

    #[test]
    fn outside_the_table_the_nearest_offset_applies() {
        let zone = ConsoleZone::of(Tz::Asia__Shanghai);
        let early = Utc.with_ymd_and_hms(1995, 6, 1, 12, 0, 0).unwrap();
        let late = Utc.with_ymd_and_hms(2090, 6, 1, 12, 0, 0).unwrap();
        assert_eq!(zone.format(early, PATTERN), "1995-06-01 20:00:00 CST");
        assert_eq!(zone.format(late, PATTERN), "2090-06-01 20:00:00 CST");
        assert_eq!(
            ConsoleZone::utc().format(early, PATTERN),
            "1995-06-01 12:00:00 UTC"
        );
    }
}
