//! The country of a visitor's address, from an offline MaxMind DB file: the one compiled in
//! (`server/data/geo/`, where it comes from and its licence) or `geoip_database`'s.
//!
//! A flush looks each distinct address up once (`super::store`), before an address is hashed,
//! so a country is stored beside the hit in either IP mode. Private, reserved and unparsable
//! addresses, and addresses the file does not cover, have no country (stored as `""`).

use std::borrow::Cow;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use maxminddb::{MaxMindDbError, Reader, path};

/// The bundled database (`make geo-data` updates it).
static BUNDLED: &[u8] = include_bytes!("../../data/geo/geo-whois-asn-country.mmdb");

#[derive(Debug, thiserror::Error)]
pub enum GeoError {
    #[error("cannot read the country database {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not a MaxMind DB file: {source}")]
    Format {
        path: PathBuf,
        source: MaxMindDbError,
    },
    #[error(
        "{path} holds no country for 8.8.8.8 (a country database has a `country_code` or \
         `country.iso_code` for every public address)"
    )]
    NoCountries { path: PathBuf },
}

/// A country database.
pub struct Countries {
    reader: Reader<Cow<'static, [u8]>>,
}

impl Countries {
    /// The database compiled into Bulwark.
    pub fn bundled() -> Countries {
        let reader = Reader::from_source(Cow::Borrowed(BUNDLED))
            // The file is checked by this module's tests, so a build that passes them has a
            // readable one.
            .expect("the bundled country database reads (see server/data/geo/)");
        Countries { reader }
    }

    /// The database in `path`, checked to answer a well-known public address.
    pub fn open(path: &Path) -> Result<Countries, GeoError> {
        let bytes = std::fs::read(path).map_err(|source| GeoError::Read {
            path: path.into(),
            source,
        })?;
        let reader = Reader::from_source(Cow::Owned(bytes)).map_err(|source| GeoError::Format {
            path: path.into(),
            source,
        })?;
        let countries = Countries { reader };
        match countries.country("8.8.8.8") {
            Some(_) => Ok(countries),
            None => Err(GeoError::NoCountries { path: path.into() }),
        }
    }

    /// The ISO 3166-1 alpha-2 code of `address`'s country, upper case, when known.
    pub fn country(&self, address: &str) -> Option<String> {
        let ip: IpAddr = address.trim().parse().ok()?;
        let found = self.reader.lookup(ip).ok()?;
        let code: Option<&str> = found
            .decode_path(&path!["country_code"])
            .ok()
            .flatten()
            .or_else(|| found.decode_path(&path!["country", "iso_code"]).ok()?);
        code.filter(|c| c.len() == 2 && c.bytes().all(|b| b.is_ascii_alphabetic()))
            .map(str::to_ascii_uppercase)
    }
}

static CHOSEN: OnceLock<Countries> = OnceLock::new();

/// Uses the database in `path` (the configuration's `geoip_database`) for this process instead
/// of the bundled one. Called while the configuration is read, before any flush; the first
/// choice holds.
pub fn use_database(path: &Path) -> Result<(), GeoError> {
    if CHOSEN.get().is_none() {
        let countries = Countries::open(path)?;
        let _ = CHOSEN.set(countries);
    }
    Ok(())
}

/// The process's database: the configured one, else the bundled one.
pub fn countries() -> &'static Countries {
    CHOSEN.get_or_init(Countries::bundled)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_addresses_have_their_country_and_others_none() {
        let db = Countries::bundled();
        assert_eq!(db.country("8.8.8.8").as_deref(), Some("US"));
        assert_eq!(db.country("81.2.69.142").as_deref(), Some("GB"));
        assert_eq!(db.country("114.114.114.114").as_deref(), Some("CN"));
        assert_eq!(db.country("2001:4860:4860::8888").as_deref(), Some("US"));
        for none in [
            "127.0.0.1",
            "10.1.2.3",
            "::1",
            "",
            "not an address",
            "h:abc",
        ] {
            assert_eq!(db.country(none), None, "{none:?}");
        }
    }

    #[test]
    fn another_file_must_be_a_country_database() {
        let dir = std::env::temp_dir().join(format!("bulwark-geo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let junk = dir.join("junk.mmdb");
        std::fs::write(&junk, b"not a database").unwrap();
        let message = Countries::open(&junk).err().unwrap().to_string();
        assert!(message.contains("not a MaxMind DB file"), "{message}");
        let missing = Countries::open(&dir.join("missing.mmdb")).err().unwrap();
        assert!(missing.to_string().contains("cannot read"), "{missing}");
        let copy = dir.join("copy.mmdb");
        std::fs::write(&copy, BUNDLED).unwrap();
        assert_eq!(
            Countries::open(&copy)
                .unwrap()
                .country("81.2.69.142")
                .as_deref(),
            Some("GB")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
