//! API tokens as people type and read them: the token's shape, a name, a scope, the tags a
//! trigger token is kept to, an expiry such as `30d`. Pure: storing and hashing tokens is the
//! layers' above.

use crate::domain::Problem;
use crate::domain::account::Role;
use crate::problem;
use chrono::{DateTime, Duration, Utc};

crate::text_enum! {
    /// What a token may do. `read`: what a viewer reads. `trigger`: start runs (of every job,
    /// or of the jobs with one of its tags) and read those jobs and their runs, nothing else.
    /// `admin`: what an administrator does.
    pub enum Scope {
        Read = "read",
        Trigger = "trigger",
        Admin = "admin",
    }
}

impl Scope {
    /// A scope as typed: its own word, or a role's (`viewer` is `read`), which `--role` used.
    pub fn from_word(text: &str) -> Option<Scope> {
        let text = text.trim();
        Scope::parse(text).or_else(|| Role::parse(text).map(Scope::of_role))
    }

    /// What a person with `role` may do, as a scope: a session's.
    pub fn of_role(role: Role) -> Scope {
        match role {
            Role::Viewer => Scope::Read,
            Role::Admin => Scope::Admin,
        }
    }

    /// The role a request with this token acts with, wherever a role decides.
    pub fn acts_as(self) -> Role {
        match self {
            Scope::Admin => Role::Admin,
            Scope::Read | Scope::Trigger => Role::Viewer,
        }
    }

    /// Whether an owner with `role` may hold (and keep) a token of this scope: starting runs is a
    /// change, as it is in the console, so `trigger` needs an administrator too.
    pub fn allowed_for(self, role: Role) -> bool {
        match self {
            Scope::Read => true,
            Scope::Trigger | Scope::Admin => role.can_change(),
        }
    }
}

/// How long a token lives when its maker says nothing.
pub const DEFAULT_EXPIRY: &str = "90d";

/// A trigger token's tags, typed as the job editor takes them; other scopes take none.
pub fn parse_scope_tags(scope: Scope, text: &str) -> Result<Vec<String>, Problem> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    if scope != Scope::Trigger {
        return Err(problem!("error-token-tags-scope"));
    }
    // The first bad tag is enough to correct; each names its tag.
    crate::domain::job::tags::parse_tags(text).map_err(|mut errors| errors.swap_remove(0))
}

/// Every token starts with this, so a leaked one is recognisable (secret scanners, logs).
pub const PREFIX: &str = "bwk_";

/// A token's length: the prefix and 64 hex digits (256 random bits).
pub const LEN: usize = PREFIX.len() + 64;

/// Whether `text` could be a token at all: anything else costs no database query.
pub fn well_formed(text: &str) -> bool {
    text.len() == LEN
        && text.starts_with(PREFIX)
        && text[PREFIX.len()..]
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// A token's name: what the audit log shows as `token:NAME`.
pub fn parse_name(name: &str) -> Result<String, Problem> {
    let name = name.trim();
    if name.is_empty() {
        return Err(problem!("error-token-name-empty"));
    }
    if name.chars().count() > 64 {
        return Err(problem!("error-token-name-long"));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    {
        return Err(problem!("error-token-name-chars", name = name.to_string()));
    }
    Ok(name.to_string())
}

/// The longest a token may live: five years. Longer is "never", said plainly.
const MAX_DAYS: i64 = 5 * 366;

/// When a token created at `now` expires: `None` for `never` (said explicitly); `30d`, `12h`,
/// `8w`, or a date (`2027-06-30`, the end of that day in UTC); nothing typed is
/// [`DEFAULT_EXPIRY`].
pub fn parse_expiry(text: &str, now: DateTime<Utc>) -> Result<Option<DateTime<Utc>>, Problem> {
    let text = match text.trim() {
        "" => DEFAULT_EXPIRY,
        typed => typed,
    };
    if text.eq_ignore_ascii_case("never") {
        return Ok(None);
    }
    let bad = || problem!("error-token-expiry", text = text.to_string());
    if let Ok(date) = chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        let end = date.and_hms_opt(23, 59, 59).ok_or_else(bad)?.and_utc();
        if end <= now {
            return Err(problem!("error-token-date-passed", text = text.to_string()));
        }
        if end > now + Duration::days(MAX_DAYS) {
            return Err(problem!("error-token-too-long"));
        }
        return Ok(Some(end));
    }
    // The unit is the last character, whatever its width.
    let unit_at = text.char_indices().last().map_or(0, |(i, _)| i);
    let (number, unit) = text.split_at(unit_at);
    let n: i64 = number.trim().parse().map_err(|_| bad())?;
    // The checked constructors: a number too large for any length is "too long", not a panic.
    let length = match unit {
        "h" => Duration::try_hours(n),
        "d" => Duration::try_days(n),
        "w" => Duration::try_weeks(n),
        _ => return Err(bad()),
    };
    if n <= 0 {
        return Err(problem!("error-token-past"));
    }
    let Some(length) = length.filter(|l| *l <= Duration::days(MAX_DAYS)) else {
        return Err(problem!("error-token-too-long"));
    };
    Ok(Some(now + length))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expiries() {
        let now: DateTime<Utc> = "2026-12-01T00:00:00Z".parse().unwrap();
        assert_eq!(
            parse_expiry("", now),
            Ok(Some("2027-03-01T00:00:00Z".parse().unwrap())),
            "ninety days unless said otherwise"
        );
        assert_eq!(parse_expiry("never", now), Ok(None));
        for huge in ["200000000000d", "9223372036854775807h", "99999999999999w"] {
            assert!(parse_expiry(huge, now).is_err(), "{huge}");
        }
        assert_eq!(
            parse_expiry("30d", now),
            Ok(Some("2026-12-31T00:00:00Z".parse().unwrap()))
        );
        assert_eq!(
            parse_expiry("12h", now),
            Ok(Some("2026-12-01T12:00:00Z".parse().unwrap()))
        );
        assert_eq!(
            parse_expiry("2027-06-30", now),
            Ok(Some("2027-06-30T23:59:59Z".parse().unwrap()))
        );
        for bad in ["0d", "-1d", "30", "soon", "2020-01-01", "9999w", "é", "d"] {
            assert!(parse_expiry(bad, now).is_err(), "{bad}");
        }
    }

    #[test]
    fn scopes_roles_and_tags() {
        assert_eq!(Scope::from_word("viewer"), Some(Scope::Read));
        assert_eq!(Scope::from_word(" admin "), Some(Scope::Admin));
        assert_eq!(Scope::from_word("trigger"), Some(Scope::Trigger));
        assert_eq!(Scope::from_word("root"), None);
        assert!(Scope::Read.allowed_for(Role::Viewer));
        assert!(!Scope::Trigger.allowed_for(Role::Viewer));
        assert!(Scope::Trigger.allowed_for(Role::Admin));
        assert_eq!(Scope::Trigger.acts_as(), Role::Viewer);
        assert_eq!(
            parse_scope_tags(Scope::Trigger, "deploy, nightly"),
            Ok(vec!["deploy".to_string(), "nightly".to_string()])
        );
        assert!(parse_scope_tags(Scope::Read, "deploy").is_err());
        assert_eq!(parse_scope_tags(Scope::Admin, " "), Ok(vec![]));
    }

    #[test]
    fn tokens_and_names() {
        assert!(well_formed(&format!("bwk_{}", "a1".repeat(32))));
        assert!(!well_formed(&format!("bwk_{}", "A1".repeat(32))));
        assert!(!well_formed("bwk_short"));
        assert!(!well_formed(&"a".repeat(LEN)));
        assert_eq!(
            parse_name(" deploy-pipeline "),
            Ok("deploy-pipeline".into())
        );
        assert!(parse_name("with space").is_err());
        assert!(parse_name("").is_err());
    }
}
