//! A time zone as a table of its UTC offsets over time.
//!
//! Every page writes times in the console's zone, on the server and again in the browser when
//! it hydrates, and the two must agree to the letter; the job editor previews fire times and
//! retry times in the job's own zone. The tz database (chrono-tz) would make the browser's code
//! much larger for the one or two zones it needs; instead the server turns a zone into its
//! offsets and abbreviations from `FIRST_YEAR` to `LAST_YEAR` (a few hundred bytes: the
//! console's zone in `<html data-zone-spans>`, a job's zone from the `jobs/zone` server
//! function) and both sides work from the same table. [`ZoneTable`] is a chrono [`TimeZone`],
//! so cron's search runs on it as on a zone of the tz database.

use std::sync::Arc;

use chrono::{
    DateTime, FixedOffset, LocalResult, NaiveDate, NaiveDateTime, NaiveTime, Offset, TimeZone, Utc,
};

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
    /// The spans as every page carries them ([`ZoneTable::encode`]), written once.
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

/// A zone as its table of offsets: the console's (`timezone` in the configuration) or a job's.
/// Cheap to clone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZoneTable(Arc<Table>);

impl ZoneTable {
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
        static TABLES: OnceLock<Mutex<HashMap<chrono_tz::Tz, ZoneTable>>> = OnceLock::new();
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
        let span = &self.0.spans[self.span_at(t.timestamp())];
        let local = t
            .naive_utc()
            .checked_add_signed(chrono::Duration::seconds(span.offset.into()))
            .unwrap_or(t.naive_utc());
        let pattern = pattern.replace("%Z", &span.abbr.replace('%', "%%"));
        local.format(&pattern).to_string()
    }

    /// The index of the span holding the instant `secs`; the first span reaches back and the
    /// last forward without end.
    fn span_at(&self, secs: i64) -> usize {
        self.0
            .spans
            .partition_point(|s| s.from <= secs)
            .saturating_sub(1)
    }
}

/// One span of a [`ZoneTable`]: the offset a `DateTime<ZoneTable>` carries, written `%Z` as the
/// zone's abbreviation.
#[derive(Clone)]
pub struct TableOffset {
    zone: ZoneTable,
    span: usize,
}

impl TableOffset {
    fn span(&self) -> &Span {
        &self.zone.0.spans[self.span]
    }
}

impl Offset for TableOffset {
    fn fix(&self) -> FixedOffset {
        FixedOffset::east_opt(self.span().offset).unwrap_or(Utc.fix())
    }
}

impl std::fmt::Display for TableOffset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.span().abbr)
    }
}

impl std::fmt::Debug for TableOffset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.span().abbr, self.fix())
    }
}

impl TimeZone for ZoneTable {
    type Offset = TableOffset;

    fn from_offset(offset: &TableOffset) -> Self {
        offset.zone.clone()
    }

    fn offset_from_local_date(&self, local: &NaiveDate) -> LocalResult<TableOffset> {
        self.offset_from_local_datetime(&local.and_time(NaiveTime::MIN))
    }

    /// A wall-clock time belongs to every span whose offset takes it back into that span: none
    /// in a gap (clocks jumped over it), two in an overlap (clocks went back), earlier first,
    /// as chrono-tz answers.
    fn offset_from_local_datetime(&self, local: &NaiveDateTime) -> LocalResult<TableOffset> {
        let wall = local.and_utc().timestamp();
        let spans = &self.0.spans;
        // No offset reaches a day and a half, so only spans near the wall time can hold it.
        const REACH: i64 = 36 * 3_600;
        let first = self.span_at(wall.saturating_sub(REACH));
        let last = self.span_at(wall.saturating_add(REACH));
        let mut holding = (first..=last).filter(|&i| {
            let utc = wall - i64::from(spans[i].offset);
            let starts = i == 0 || spans[i].from <= utc;
            let ends = spans.get(i + 1).is_none_or(|next| utc < next.from);
            starts && ends
        });
        let offset = |span| TableOffset {
            zone: self.clone(),
            span,
        };
        match (holding.next(), holding.next()) {
            (None, _) => LocalResult::None,
            (Some(only), None) => LocalResult::Single(offset(only)),
            (Some(earlier), Some(later)) => LocalResult::Ambiguous(offset(earlier), offset(later)),
        }
    }

    fn offset_from_utc_date(&self, utc: &NaiveDate) -> TableOffset {
        self.offset_from_utc_datetime(&utc.and_time(NaiveTime::MIN))
    }

    fn offset_from_utc_datetime(&self, utc: &NaiveDateTime) -> TableOffset {
        TableOffset {
            zone: self.clone(),
            span: self.span_at(utc.and_utc().timestamp()),
        }
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
            let zone = ZoneTable::of(tz);
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

    /// Wall-clock times map back to instants as the tz database maps them, around every change
    /// (the skipped hour of spring, the repeated one of autumn) and at random times, and
    /// instants carry the same offset and abbreviation.
    #[test]
    fn is_a_time_zone_as_the_tz_database_is() {
        let zones = [
            Tz::UTC,
            Tz::Europe__Berlin,
            Tz::America__New_York,
            Tz::Australia__Lord_Howe,
            Tz::Pacific__Apia,
            Tz::Africa__Casablanca,
            Tz::America__St_Johns,
        ];
        let mut rng = fastrand::Rng::with_seed(11);
        let from = Utc.with_ymd_and_hms(FIRST_YEAR, 1, 2, 0, 0, 0).unwrap();
        let to = Utc
            .with_ymd_and_hms(LAST_YEAR - 1, 12, 30, 0, 0, 0)
            .unwrap();
        for tz in zones {
            let zone = ZoneTable::of(tz);
            let mut walls: Vec<NaiveDateTime> = (0..500)
                .map(|_| {
                    let secs = rng.i64(from.timestamp()..to.timestamp());
                    DateTime::from_timestamp(secs, 0).unwrap().naive_utc()
                })
                .collect();
            for span in zone.0.spans.iter().skip(1) {
                let change = DateTime::from_timestamp(span.from, 0).unwrap().naive_utc();
                for minutes in (-180..=180).step_by(15) {
                    walls.push(change + chrono::Duration::minutes(minutes));
                }
            }
            let instants = |r: LocalResult<DateTime<Utc>>| match r {
                LocalResult::None => vec![],
                LocalResult::Single(t) => vec![t],
                LocalResult::Ambiguous(a, b) => vec![a, b],
            };
            for wall in walls {
                let ours = zone
                    .from_local_datetime(&wall)
                    .map(|t| t.with_timezone(&Utc));
                let theirs = tz.from_local_datetime(&wall).map(|t| t.with_timezone(&Utc));
                assert_eq!(instants(ours), instants(theirs), "{tz} at wall time {wall}");
                let instant = wall.and_utc();
                assert_eq!(
                    instant.with_timezone(&zone).format(PATTERN).to_string(),
                    instant.with_timezone(&tz).format(PATTERN).to_string(),
                    "{tz} at {instant}"
                );
            }
        }
    }

    #[test]
    fn survives_the_page_and_stays_small() {
        let zone = ZoneTable::of(Tz::Europe__Berlin);
        let encoded = zone.encode();
        assert_eq!(ZoneTable::decode("Europe/Berlin", &encoded), Some(zone));
        // Two changes a year for seventy years, each about twenty characters.
        assert!(encoded.len() < 3_200, "{}", encoded.len());
        assert_eq!(ZoneTable::decode("X", ""), None);
        assert_eq!(ZoneTable::decode("X", "1,2"), None);
        assert_eq!(ZoneTable::decode("X", "5,0,A;4,0,B"), None);
    }

    #[test]
    fn outside_the_table_the_nearest_offset_applies() {
        let zone = ZoneTable::of(Tz::Asia__Shanghai);
        let early = Utc.with_ymd_and_hms(1995, 6, 1, 12, 0, 0).unwrap();
        let late = Utc.with_ymd_and_hms(2090, 6, 1, 12, 0, 0).unwrap();
        assert_eq!(zone.format(early, PATTERN), "1995-06-01 20:00:00 CST");
        assert_eq!(zone.format(late, PATTERN), "2090-06-01 20:00:00 CST");
        assert_eq!(
            ZoneTable::utc().format(early, PATTERN),
            "1995-06-01 12:00:00 UTC"
        );
    }
}
