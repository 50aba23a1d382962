//! E-mail addresses as people type them: one parsed value, one rule for lists.

use serde::{Deserialize, Serialize};

/// An address that passed [`EmailAddress::parse`]: `local@domain`, no spaces or angle
/// brackets. Deliberately lenient: the SMTP server has the last word on whether it exists.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct EmailAddress(String);

/// Why text is not an address (or a list of them). The message names the culprit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not an e-mail address")]
pub struct NotAnAddress(pub String);

impl NotAnAddress {
    /// The refusal as the catalogue words it ([`crate::domain::problem`]).
    pub fn problem(&self) -> crate::domain::Problem {
        crate::problem!("error-email", text = &self.0)
    }
}

impl EmailAddress {
    pub fn parse(text: &str) -> Result<Self, NotAnAddress> {
        let address = text.trim();
        let plausible = match address.split_once('@') {
            Some((local, domain)) => {
                !local.is_empty()
                    && !domain.is_empty()
                    && !domain.contains('@')
                    && !domain.starts_with('.')
                    && !domain.ends_with('.')
                    && !address
                        .contains(|c: char| c.is_whitespace() || matches!(c, '<' | '>' | ','))
            }
            None => false,
        };
        if plausible {
            Ok(EmailAddress(address.to_string()))
        } else {
            Err(NotAnAddress(address.to_string()))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for EmailAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for EmailAddress {
    type Error = NotAnAddress;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        EmailAddress::parse(&text)
    }
}

impl From<EmailAddress> for String {
    fn from(address: EmailAddress) -> String {
        address.0
    }
}

/// Every address of a list as people type it (commas, semicolons or new lines between, blanks
/// ignored), each parsed; on failure every bad entry, in order.
pub fn parse_list(text: &str) -> Result<Vec<EmailAddress>, Vec<NotAnAddress>> {
    let mut good = Vec::new();
    let mut bad = Vec::new();
    for entry in text
        .split([',', '\n', ';'])
        .map(str::trim)
        .filter(|a| !a.is_empty())
    {
        match EmailAddress::parse(entry) {
            Ok(address) => good.push(address),
            Err(e) => bad.push(e),
        }
    }
    if bad.is_empty() { Ok(good) } else { Err(bad) }
}

/// [`parse_list`] for one form field: the first bad entry's message.
pub fn address_list(text: &str) -> Result<Vec<EmailAddress>, NotAnAddress> {
    parse_list(text).map_err(|mut bad| bad.remove(0))
}

/// A list joined for display: `a@x, b@y`.
pub fn join(addresses: &[EmailAddress]) -> String {
    addresses
        .iter()
        .map(EmailAddress::as_str)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses() {
        assert_eq!(
            EmailAddress::parse(" oncall@example.com ")
                .unwrap()
                .as_str(),
            "oncall@example.com"
        );
        for bad in [
            "", "no-at", "@x.org", "a@", "a@b@c", "a@.x", "a@x.", "a b@x", "<a@x>",
        ] {
            assert!(EmailAddress::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn lists_name_their_bad_entries() {
        let list = parse_list("a@x.org; b@y.org\n\n c@z.org,").unwrap();
        assert_eq!(join(&list), "a@x.org, b@y.org, c@z.org");
        assert_eq!(
            parse_list("a@x.org, nope, also bad").unwrap_err(),
            vec![NotAnAddress("nope".into()), NotAnAddress("also bad".into())]
        );
        assert_eq!(
            address_list("nope").unwrap_err().to_string(),
            "'nope' is not an e-mail address"
        );
        assert_eq!(parse_list("").unwrap(), Vec::<EmailAddress>::new());
    }

    #[test]
    fn stored_lists_are_checked_when_read() {
        let json = r#"["a@x.org","broken"]"#;
        assert!(serde_json::from_str::<Vec<EmailAddress>>(json).is_err());
        let list: Vec<EmailAddress> = serde_json::from_str(r#"["a@x.org"]"#).unwrap();
        assert_eq!(serde_json::to_string(&list).unwrap(), r#"["a@x.org"]"#);
    }
}
