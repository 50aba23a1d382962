//! Named secrets, encrypted at rest with the key from `secret_key_file`.
//!
//! Each value is sealed with XChaCha20-Poly1305 (a random 192-bit nonce per value, so nonces
//! never repeat in practice) and the secret's name as associated data, so a sealed value cannot
//! be moved to another name. Values are written and replaced, never read back to anyone: the
//! engine opens them just before an attempt ([`open_all`]). Every node must hold the same key;
//! `crate::services::sealed::check_key` tells a node with another key at start.

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use chrono::{DateTime, Utc};
use rand_core::{OsRng, RngCore};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder,
    Set,
};

use crate::domain::secrets::SecretName;
use crate::entities::secret;
use crate::services::audit::{self, Actor};

#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    #[error("cannot read the secret key {path}: {source}")]
    ReadKey {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot create the secret key {path}: {source}")]
    CreateKey {
        path: String,
        source: std::io::Error,
    },
    #[error("the secret key {0} is not 32 bytes (64 hex characters)")]
    BadKey(String),
    #[error(
        "the secret key cannot decrypt the stored secrets (first: '{0}'): every node must be \
         given the same secret_key_file"
    )]
    WrongKey(String),
    #[error("there is no secret named '{0}'")]
    NotFound(String),
    #[error("a secret's value must not be empty")]
    Empty,
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// The 256-bit key every secret is sealed with.
#[derive(Clone)]
pub struct SecretKey(chacha20poly1305::Key);

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretKey(..)")
    }
}

impl SecretKey {
    pub fn generate() -> SecretKey {
        let mut bytes = [0u8; 32];
        OsRng.fill_bytes(&mut bytes);
        SecretKey(bytes.into())
    }

    /// Reads the key (64 hex characters) from `path`.
    pub fn read(path: &Path) -> Result<SecretKey, SecretError> {
        let text = std::fs::read_to_string(path).map_err(|source| SecretError::ReadKey {
            path: path.display().to_string(),
            source,
        })?;
        let bytes = hex::decode(text.trim())
            .ok()
            .filter(|b| b.len() == 32)
            .ok_or_else(|| SecretError::BadKey(path.display().to_string()))?;
        Ok(SecretKey(chacha20poly1305::Key::clone_from_slice(&bytes)))
    }

    /// Reads the key from `path`, creating it (mode 0600, in a new directory if need be) when
    /// there is none yet. Returns whether it was created.
    pub fn read_or_create(path: &Path) -> Result<(SecretKey, bool), SecretError> {
        if path.exists() {
            return Ok((SecretKey::read(path)?, false));
        }
        let key = SecretKey::generate();
        key.write(path)?;
        Ok((key, true))
    }

    /// Writes the key to a new file readable by its owner only; never overwrites one.
    pub fn write(&self, path: &Path) -> Result<(), SecretError> {
        use std::io::Write;
        let failed = |source| SecretError::CreateKey {
            path: path.display().to_string(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(failed)?;
        }
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(path).map_err(failed)?;
        writeln!(file, "{}", hex::encode(self.0)).map_err(failed)?;
        file.sync_all().map_err(failed)
    }

    fn cipher(&self) -> XChaCha20Poly1305 {
        XChaCha20Poly1305::new(&self.0)
    }

    fn seal(&self, name: &str, value: &str) -> (String, String) {
        let mut nonce = [0u8; 24];
        OsRng.fill_bytes(&mut nonce);
        let sealed = self
            .cipher()
            .encrypt(
                XNonce::from_slice(&nonce),
                Payload {
                    msg: value.as_bytes(),
                    aad: name.as_bytes(),
                },
            )
            // Encryption fails only for messages beyond what any secret can be (2^38 bytes).
            .unwrap_or_default();
        (B64.encode(nonce), B64.encode(sealed))
    }

    fn open(&self, row: &secret::Model) -> Option<String> {
        self.open_parts(&row.name, &row.nonce, &row.ciphertext)
    }

    fn open_parts(&self, context: &str, nonce: &str, ciphertext: &str) -> Option<String> {
        let nonce = B64.decode(nonce).ok().filter(|n| n.len() == 24)?;
        let sealed = B64.decode(ciphertext).ok()?;
        let plain = self
            .cipher()
            .decrypt(
                XNonce::from_slice(&nonce),
                Payload {
                    msg: &sealed,
                    aad: context.as_bytes(),
                },
            )
            .ok()?;
        String::from_utf8(plain).ok()
    }

    /// Seals a credential that is not a named secret (a channel's URL), bound to `context`:
    /// one text, `nonce.ciphertext` in Base64.
    pub fn seal_value(&self, context: &str, value: &str) -> String {
        let (nonce, ciphertext) = self.seal(context, value);
        format!("{nonce}.{ciphertext}")
    }

    /// Opens what [`SecretKey::seal_value`] sealed for the same `context`.
    pub fn open_value(&self, context: &str, sealed: &str) -> Option<String> {
        let (nonce, ciphertext) = sealed.split_once('.')?;
        self.open_parts(context, nonce, ciphertext)
    }

    /// A value sealed with this key under `context`, sealed again with `new` (a rekey); an
    /// error naming the context when this key cannot open it.
    pub fn reseal_value(
        &self,
        new: &SecretKey,
        context: &str,
        sealed: &str,
    ) -> Result<String, SecretError> {
        self.open_value(context, sealed)
            .map(|value| new.seal_value(context, &value))
            .ok_or_else(|| SecretError::WrongKey(context.to_string()))
    }

    /// Whether this key opens `sealed` (the start-up check): an error naming the context if not.
    pub fn check_opens(&self, context: &str, sealed: &str) -> Result<(), SecretError> {
        self.open_value(context, sealed)
            .map(|_| ())
            .ok_or_else(|| SecretError::WrongKey(context.to_string()))
    }
}

/// A secret as anyone may see it: its name and when it was set, never its value.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Listed {
    pub name: String,
    pub updated_at: DateTime<Utc>,
}

pub async fn list(db: &impl ConnectionTrait) -> Result<Vec<Listed>, DbErr> {
    Ok(secret::Entity::find()
        .order_by_asc(secret::Column::Name)
        .all(db)
        .await?
        .into_iter()
        .map(|s| Listed {
            name: s.name,
            updated_at: s.updated_at,
        })
        .collect())
}

/// Sets or replaces a secret, and records who did (never the value); returns true when it
/// was new.
pub async fn set(
    db: &sea_orm::DatabaseConnection,
    key: &SecretKey,
    name: &SecretName,
    value: &str,
    who: &Actor<'_>,
    now: DateTime<Utc>,
) -> Result<bool, SecretError> {
    let txn = super::sql::begin_write(db).await?;
    let created = store(&txn, key, name, value, now).await?;
    let action = if created {
        "secret.created"
    } else {
        "secret.replaced"
    };
    audit::record(&txn, who, action, name.as_str(), serde_json::json!({}), now).await?;
    txn.commit().await?;
    Ok(created)
}

/// Seals and stores a secret's value; true when the name was new.
async fn store(
    db: &impl ConnectionTrait,
    key: &SecretKey,
    name: &SecretName,
    value: &str,
    now: DateTime<Utc>,
) -> Result<bool, SecretError> {
    if value.is_empty() {
        return Err(SecretError::Empty);
    }
    let (nonce, ciphertext) = key.seal(name.as_str(), value);
    let existing = secret::Entity::find()
        .filter(secret::Column::Name.eq(name.as_str()))
        .one(db)
        .await?;
    match existing {
        Some(row) => {
            let mut row: secret::ActiveModel = row.into();
            row.nonce = Set(nonce);
            row.ciphertext = Set(ciphertext);
            row.updated_at = Set(now);
            row.update(db).await?;
            Ok(false)
        }
        None => {
            secret::ActiveModel {
                name: Set(name.to_string()),
                nonce: Set(nonce),
                ciphertext: Set(ciphertext),
                created_at: Set(now),
                updated_at: Set(now),
                ..Default::default()
            }
            .insert(db)
            .await?;
            Ok(true)
        }
    }
}

/// Removes a secret, and records who did.
pub async fn remove(
    db: &sea_orm::DatabaseConnection,
    name: &str,
    who: &Actor<'_>,
    now: DateTime<Utc>,
) -> Result<(), SecretError> {
    let txn = super::sql::begin_write(db).await?;
    let deleted = secret::Entity::delete_many()
        .filter(secret::Column::Name.eq(name))
        .exec(&txn)
        .await?
        .rows_affected;
    if deleted == 0 {
        return Err(SecretError::NotFound(name.to_string()));
    }
    audit::record(
        &txn,
        who,
        "secret.removed",
        name,
        serde_json::json!({}),
        now,
    )
    .await?;
    txn.commit().await?;
    Ok(())
}

/// Every secret, opened: what the engine fills references in with.
pub async fn open_all(
    db: &impl ConnectionTrait,
    key: &SecretKey,
) -> Result<BTreeMap<String, String>, SecretError> {
    let mut open = BTreeMap::new();
    for row in secret::Entity::find().all(db).await? {
        let value = key
            .open(&row)
            .ok_or_else(|| SecretError::WrongKey(row.name.clone()))?;
        open.insert(row.name, value);
    }
    Ok(open)
}

/// Every secret sealed again from `old` to `new` inside the caller's transaction
/// ([`super::sealed::rekey`]); the count.
pub(crate) async fn reseal(
    db: &impl ConnectionTrait,
    old: &SecretKey,
    new: &SecretKey,
    now: DateTime<Utc>,
) -> Result<usize, SecretError> {
    let open = open_all(db, old).await?;
    for (name, value) in &open {
        let name = SecretName::parse(name).map_err(|_| SecretError::NotFound(name.clone()))?;
        store(db, new, &name, value, now).await?;
    }
    Ok(open.len())
}

/// Marks that [`move_literal_credentials`] has run.
const MOVED_SETTING: &str = "secrets.literal_credentials_moved";

/// Once per database: credentials typed literally into HTTP jobs before secrets existed
/// (values of secret-looking headers, URL passwords) become secrets named after the job and
/// the header (`nightly-export.authorization`, `nightly-export.url-password`), and the job
/// refers to them. Returns (job, secret) for each one moved. Runs in one transaction: all or
/// nothing.
pub async fn move_literal_credentials(
    db: &sea_orm::DatabaseConnection,
    key: &SecretKey,
    now: DateTime<Utc>,
) -> Result<Vec<(String, String)>, SecretError> {
    use sea_orm::TransactionTrait;

    use crate::domain::job::JobKind;
    use crate::entities::{job, setting};

    let txn = db.begin().await?;
    if !claim_the_move(&txn, now).await? {
        return Ok(Vec::new());
    }
    let mut taken: BTreeSet<String> = list(&txn).await?.into_iter().map(|s| s.name).collect();
    let mut moved = Vec::new();
    for row in job::Entity::find().all(&txn).await? {
        let Ok(JobKind::Http {
            method,
            mut url,
            mut headers,
            body,
            expected,
            follow_redirects,
        }) = serde_json::from_str::<JobKind>(&row.config)
        else {
            continue;
        };
        let sealed = take_literals(&row.name, &mut url, &mut headers, &mut taken);
        if sealed.is_empty() {
            continue;
        }
        for (secret, plain) in &sealed {
            seal_moved(&txn, key, &row.name, secret, plain, now).await?;
            moved.push((row.name.clone(), secret.to_string()));
        }
        let config = JobKind::Http {
            method,
            url,
            headers,
            body,
            expected,
            follow_redirects,
        };
        let mut active: job::ActiveModel = row.into();
        active.config = Set(serde_json::to_string(&config)
            .map_err(|e| DbErr::Custom(format!("cannot store a job definition: {e}")))?);
        active.update(&txn).await?;
    }
    setting::ActiveModel {
        key: Set(MOVED_SETTING.to_string()),
        value: Set(moved.len().to_string()),
        updated_at: Set(now),
    }
    .update(&txn)
    .await?;
    txn.commit().await?;
    Ok(moved)
}

/// Claims the one-time move, with a write first: a second node starting at the same time
/// waits here and then finds it, and on SQLite the transaction holds the write lock from its
/// first statement (one that read first and wrote later could fail with SQLITE_BUSY_SNAPSHOT
/// when another connection wrote in between). False when it was done before.
async fn claim_the_move(
    txn: &sea_orm::DatabaseTransaction,
    now: DateTime<Utc>,
) -> Result<bool, DbErr> {
    use crate::entities::setting;
    let claimed = setting::Entity::insert(setting::ActiveModel {
        key: Set(MOVED_SETTING.to_string()),
        value: Set(String::new()),
        updated_at: Set(now),
    })
    .on_conflict(
        sea_orm::sea_query::OnConflict::column(setting::Column::Key)
            .do_nothing()
            .to_owned(),
    )
    .exec_without_returning(txn)
    .await?;
    Ok(claimed > 0)
}

/// A free secret name for `job`'s credential `label` (`nightly.authorization`, then `-2`…).
fn free_name(taken: &mut BTreeSet<String>, job: &str, label: &str) -> Option<SecretName> {
    let base: String = format!("{job}.{}", label.to_ascii_lowercase())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                c
            } else {
                '-'
            }
        })
        .take(SecretName::MAX_LEN - 4)
        .collect();
    let mut candidate = base.clone();
    let mut n = 2;
    while taken.contains(&candidate) {
        candidate = format!("{base}-{n}");
        n += 1;
    }
    taken.insert(candidate.clone());
    SecretName::parse(&candidate).ok()
}

/// Replaces the literal credentials of an HTTP job — secret headers' values and the URL's
/// password — by references to new secrets; returns each new secret with its value.
fn take_literals(
    job: &str,
    url: &mut String,
    headers: &mut [(String, String)],
    taken: &mut BTreeSet<String>,
) -> Vec<(SecretName, String)> {
    use crate::domain::job::{is_secret_header, redact::url_password};
    use crate::domain::secrets::{reference, references};
    let mut sealed: Vec<(SecretName, String)> = Vec::new();
    for (name, value) in headers.iter_mut() {
        if is_secret_header(name)
            && !value.is_empty()
            && references(value).is_empty()
            && let Some(secret) = free_name(taken, job, name)
        {
            let plain = std::mem::replace(value, reference(secret.as_str()));
            sealed.push((secret, plain));
        }
    }
    if let Some((from, to)) = url_password(url)
        && from < to
        && references(&url[from..to]).is_empty()
        && let Some(secret) = free_name(taken, job, "url-password")
    {
        let plain = url[from..to].to_string();
        url.replace_range(from..to, &reference(secret.as_str()));
        sealed.push((secret, plain));
    }
    sealed
}

/// Stores one moved credential sealed, and audits it as the system's doing.
async fn seal_moved(
    txn: &sea_orm::DatabaseTransaction,
    key: &SecretKey,
    job: &str,
    secret: &SecretName,
    plain: &str,
    now: DateTime<Utc>,
) -> Result<(), SecretError> {
    store(txn, key, secret, plain, now).await?;
    crate::services::audit::record(
        txn,
        &crate::services::audit::Actor::named("bulwark"),
        "secret.moved_from_job",
        secret.as_str(),
        serde_json::json!({ "job": job }),
        now,
    )
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, (nonce, ciphertext): (String, String)) -> secret::Model {
        secret::Model {
            id: 1,
            name: name.into(),
            nonce,
            ciphertext,
            created_at: Utc::now(),
            updated_at: Utc::now(),
        }
    }

    #[test]
    fn sealed_values_open_with_their_key_and_name_only() {
        let key = SecretKey::generate();
        let sealed = key.seal("TOKEN", "s3cret-value");
        assert!(!sealed.1.contains("s3cret"));
        assert_eq!(
            key.open(&row("TOKEN", sealed.clone())).as_deref(),
            Some("s3cret-value")
        );
        assert_eq!(
            key.open(&row("OTHER", sealed.clone())),
            None,
            "bound to its name"
        );
        assert_eq!(SecretKey::generate().open(&row("TOKEN", sealed)), None);
        let again = key.seal("TOKEN", "s3cret-value");
        assert_ne!(
            again,
            key.seal("TOKEN", "s3cret-value"),
            "fresh nonce each time"
        );
    }

    #[test]
    fn the_key_file_is_created_private_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data/secret.key");
        let (key, created) = SecretKey::read_or_create(&path).unwrap();
        assert!(created);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let (again, created) = SecretKey::read_or_create(&path).unwrap();
        assert!(!created);
        let sealed = key.seal("A", "value");
        assert_eq!(again.open(&row("A", sealed)).as_deref(), Some("value"));
        std::fs::write(dir.path().join("bad.key"), "short").unwrap();
        assert!(matches!(
            SecretKey::read(&dir.path().join("bad.key")),
            Err(SecretError::BadKey(_))
        ));
    }
}
