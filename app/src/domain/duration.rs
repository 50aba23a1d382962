//! Human durations as administrators type them: `500ms`, `10s`, `1.5s`, `5m`, `1h30m`.
//!
//! Millisecond precision: the retry contract works in whole milliseconds.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    #[error("is empty; write a duration such as 500ms, 10s, 5m or 1h")]
    Empty,
    #[error("'{0}' needs a unit: ms, s, m or h (for example 10s)")]
    MissingUnit(String),
    #[error("'{0}' is not a duration; write it like 500ms, 10s, 5m or 1h30m")]
    Malformed(String),
    #[error("'{0}' is finer than a millisecond")]
    SubMillisecond(String),
    #[error("'{0}' is too long (at most 30 days)")]
    TooLong(String),
}

impl DurationError {
    /// The refusal as the catalogue words it ([`crate::domain::problem`]).
    pub fn problem(&self) -> crate::domain::Problem {
        use crate::problem;
        match self {
            DurationError::Empty => problem!("error-duration-empty"),
            DurationError::MissingUnit(text) => problem!("error-duration-unit", text = text),
            DurationError::Malformed(text) => problem!("error-duration-malformed", text = text),
            DurationError::SubMillisecond(text) => problem!("error-duration-fine", text = text),
            DurationError::TooLong(text) => problem!("error-duration-long", text = text),
        }
    }
}

/// 30 days: longer waits belong in a cron schedule, not a retry policy.
pub const MAX_MS: u64 = 30 * 24 * 3_600_000;

/// Parses a duration into milliseconds.
pub fn parse_ms(input: &str) -> Result<u64, DurationError> {
    let text = input.trim();
    if text.is_empty() {
        return Err(DurationError::Empty);
    }
    let malformed = || DurationError::Malformed(text.to_string());
    let mut total: f64 = 0.0;
    let mut rest = text;
    while !rest.is_empty() {
        let number_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if number_len == 0 {
            return Err(malformed());
        }
        let number: f64 = rest[..number_len].parse().map_err(|_| malformed())?;
        // `10 s` reads like `10s`.
        rest = rest[number_len..].trim_start();
        let unit_len = rest
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(rest.len());
        let unit = &rest[..unit_len];
        rest = rest[unit_len..].trim_start();
        let factor = match unit {
            "" => return Err(DurationError::MissingUnit(text.to_string())),
            "ms" => 1.0,
            "s" | "sec" => 1_000.0,
            "m" | "min" => 60_000.0,
            "h" => 3_600_000.0,
            "d" => 86_400_000.0,
            _ => return Err(malformed()),
        };
        total += number * factor;
    }
    if total.fract().abs() > 1e-9 {
        return Err(DurationError::SubMillisecond(text.to_string()));
    }
    if total > MAX_MS as f64 {
        return Err(DurationError::TooLong(text.to_string()));
    }
    Ok(total.round() as u64)
}

/// Milliseconds in the largest units that keep it exact and short: `90000` → `1m30s`.
pub fn format_ms(ms: u64) -> String {
    if ms == 0 {
        return "0s".into();
    }
    let mut out = String::new();
    let mut rest = ms;
    for (unit, size) in [
        ("d", 86_400_000),
        ("h", 3_600_000),
        ("m", 60_000),
        ("s", 1_000),
    ] {
        if rest >= size {
            out.push_str(&format!("{}{unit}", rest / size));
            rest %= size;
        }
    }
    if rest > 0 {
        out.push_str(&format!("{rest}ms"));
    }
    out
}

/// A wait for people to read: `2 h 5 min`, `1.5 s`, `350 ms`. Rounded; not for parsing. In
/// English unit symbols (logs, the command line); pages say it in their language from
/// [`human_parts`].
pub fn human_ms(ms: f64) -> String {
    human_parts(ms)
        .into_iter()
        .map(|(n, unit)| format!("{n} {}", unit.symbol()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The units [`human_parts`] counts in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeUnit {
    Ms,
    S,
    Min,
    H,
    D,
}

impl TimeUnit {
    pub fn symbol(self) -> &'static str {
        match self {
            TimeUnit::Ms => "ms",
            TimeUnit::S => "s",
            TimeUnit::Min => "min",
            TimeUnit::H => "h",
            TimeUnit::D => "d",
        }
    }
}

/// A rounded wait as one or two numbers with their units, largest first: `[("2", H), ("5",
/// Min)]`, `[("1.5", S)]`.
pub fn human_parts(ms: f64) -> Vec<(String, TimeUnit)> {
    let ms = ms.max(0.0);
    let two = |big: u64, big_unit, small: u64, small_unit| {
        let mut parts = vec![(big.to_string(), big_unit)];
        if small > 0 {
            parts.push((small.to_string(), small_unit));
        }
        parts
    };
    if ms < 1_000.0 {
        vec![(ms.round().to_string(), TimeUnit::Ms)]
    } else if ms < 60_000.0 {
        let s = ms / 1_000.0;
        let text = if (s - s.round()).abs() < 0.05 {
            s.round().to_string()
        } else {
            format!("{s:.1}")
        };
        vec![(text, TimeUnit::S)]
    } else if ms < 3_600_000.0 {
        let total_s = (ms / 1_000.0).round() as u64;
        two(total_s / 60, TimeUnit::Min, total_s % 60, TimeUnit::S)
    } else if ms < 86_400_000.0 {
        let total_min = (ms / 60_000.0).round() as u64;
        two(total_min / 60, TimeUnit::H, total_min % 60, TimeUnit::Min)
    } else {
        let total_h = (ms / 3_600_000.0).round() as u64;
        two(total_h / 24, TimeUnit::D, total_h % 24, TimeUnit::H)
    }
}

/// A parsed, valid duration in milliseconds, for fields that hold one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Millis(pub u64);

impl fmt::Display for Millis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_ms(self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_usual_forms() {
        assert_eq!(parse_ms("500ms"), Ok(500));
        assert_eq!(parse_ms("10s"), Ok(10_000));
        assert_eq!(parse_ms("1.5s"), Ok(1_500));
        assert_eq!(parse_ms("5m"), Ok(300_000));
        assert_eq!(parse_ms("1h"), Ok(3_600_000));
        assert_eq!(parse_ms("1h30m"), Ok(5_400_000));
        assert_eq!(parse_ms(" 2m 5s "), Ok(125_000));
        assert_eq!(parse_ms("10 s"), Ok(10_000));
        assert_eq!(parse_ms("0.001s"), Ok(1));
    }

    #[test]
    fn refuses_what_it_cannot_read_exactly() {
        assert_eq!(parse_ms(""), Err(DurationError::Empty));
        assert_eq!(parse_ms("10"), Err(DurationError::MissingUnit("10".into())));
        assert_eq!(
            parse_ms("ten s"),
            Err(DurationError::Malformed("ten s".into()))
        );
        assert_eq!(
            parse_ms("10 parsecs"),
            Err(DurationError::Malformed("10 parsecs".into()))
        );
        assert_eq!(parse_ms("-5s"), Err(DurationError::Malformed("-5s".into())));
        assert_eq!(
            parse_ms("1.2.3s"),
            Err(DurationError::Malformed("1.2.3s".into()))
        );
        assert_eq!(
            parse_ms("0.5ms"),
            Err(DurationError::SubMillisecond("0.5ms".into()))
        );
        assert_eq!(parse_ms("31d"), Err(DurationError::TooLong("31d".into())));
    }

    #[test]
    fn formats_round_trip() {
        for ms in [
            1,
            500,
            1_000,
            1_500,
            90_000,
            3_600_000,
            5_400_000,
            86_400_000 + 1,
        ] {
            assert_eq!(parse_ms(&format_ms(ms)), Ok(ms), "{}", format_ms(ms));
        }
        assert_eq!(format_ms(90_000), "1m30s");
    }

    #[test]
    fn human_units() {
        assert_eq!(human_ms(350.0), "350 ms");
        assert_eq!(human_ms(1_500.0), "1.5 s");
        assert_eq!(human_ms(62_000.0), "1 min 2 s");
        assert_eq!(human_ms(1_023_000.0), "17 min 3 s");
        assert_eq!(human_ms(32_767_000.0), "9 h 6 min");
        assert_eq!(human_ms(3.0 * 86_400_000.0), "3 d");
    }
}
