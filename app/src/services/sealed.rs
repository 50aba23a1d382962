//! Every column holding values sealed with the secret key, in one list: what `bulwark secret
//! rekey` seals again under the new key (all in one transaction) and what the start-up key check
//! opens one value of, so a node given the wrong key refuses to start instead of failing every
//! channel and signed hook later. A column sealed anywhere else must be added here; the test
//! below reads the code for `seal_value` and fails when a file that seals is not listed.

use chrono::{DateTime, Utc};
use sea_orm::ConnectionTrait;

use super::secrets::{SecretError, SecretKey};

/// A sealed column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    /// `secrets.ciphertext`: the named secrets jobs refer to.
    Secrets,
    /// `channels.sealed`: a channel's URL (its robot token) and signing secret.
    ChannelCredentials,
    /// `jobs.hook_secret`: a trigger URL's signing secret.
    HookSecrets,
    /// `jobs.ping_token`: a watched job's ping token.
    PingTokens,
    /// `users.totp_seed`: a local account's second factor.
    TotpSeeds,
    /// `job_revisions.sealed`: every saved definition of a job.
    JobRevisions,
}

impl Column {
    pub const ALL: [Column; 6] = [
        Column::Secrets,
        Column::ChannelCredentials,
        Column::HookSecrets,
        Column::PingTokens,
        Column::TotpSeeds,
        Column::JobRevisions,
    ];

    /// The file whose code seals values into the column.
    pub fn sealed_by(self) -> &'static str {
        match self {
            Column::Secrets => "app/src/services/secrets.rs",
            Column::ChannelCredentials => "app/src/services/notifications/channels.rs",
            Column::HookSecrets => "app/src/services/hooks.rs",
            Column::PingTokens => "app/src/services/watch.rs",
            Column::TotpSeeds => "app/src/services/second_factor.rs",
            Column::JobRevisions => "app/src/services/revisions.rs",
        }
    }

    /// What the column holds, for the rekey's summary.
    pub fn label(self) -> &'static str {
        match self {
            Column::Secrets => "secrets",
            Column::ChannelCredentials => "channel credentials",
            Column::HookSecrets => "trigger-URL signing secrets",
            Column::PingTokens => "ping URLs",
            Column::TotpSeeds => "second factors",
            Column::JobRevisions => "job revisions",
        }
    }

    async fn reseal(
        self,
        db: &impl ConnectionTrait,
        old: &SecretKey,
        new: &SecretKey,
        now: DateTime<Utc>,
    ) -> Result<usize, SecretError> {
        match self {
            Column::Secrets => super::secrets::reseal(db, old, new, now).await,
            Column::ChannelCredentials => {
                super::notifications::channels::reseal(db, old, new).await
            }
            Column::HookSecrets => HOOK_SECRETS.reseal(db, old, new).await,
            Column::PingTokens => PING_TOKENS.reseal(db, old, new).await,
            Column::TotpSeeds => super::second_factor::reseal(db, old, new).await,
            Column::JobRevisions => super::revisions::reseal(db, old, new).await,
        }
    }

    async fn open_one(self, db: &impl ConnectionTrait, key: &SecretKey) -> Result<(), SecretError> {
        match self {
            Column::Secrets => super::secrets::open_all(db, key).await.map(|_| ()),
            Column::ChannelCredentials => super::notifications::channels::open_one(db, key).await,
            Column::HookSecrets => HOOK_SECRETS.open_one(db, key).await,
            Column::PingTokens => PING_TOKENS.open_one(db, key).await,
            Column::TotpSeeds => super::second_factor::open_one(db, key).await,
            Column::JobRevisions => super::revisions::open_one(db, key).await,
        }
    }
}

/// A sealed column of `jobs`: which, how a row's value is read, and the context each row's
/// value is sealed under.
struct JobsColumn {
    column: crate::entities::job::Column,
    value: fn(&crate::entities::job::Model) -> Option<&str>,
    context: fn(i64) -> String,
}

/// `jobs.hook_secret`.
const HOOK_SECRETS: JobsColumn = JobsColumn {
    column: crate::entities::job::Column::HookSecret,
    value: |row| row.hook_secret.as_deref(),
    context: super::hooks::context,
};

/// `jobs.ping_token`.
const PING_TOKENS: JobsColumn = JobsColumn {
    column: crate::entities::job::Column::PingToken,
    value: |row| row.ping_token.as_deref(),
    context: super::watch::context,
};

impl JobsColumn {
    /// Every value sealed again from `old` to `new`; the count.
    async fn reseal(
        &self,
        db: &impl ConnectionTrait,
        old: &SecretKey,
        new: &SecretKey,
    ) -> Result<usize, SecretError> {
        use crate::entities::job;
        use sea_orm::{ActiveModelTrait, ColumnTrait, EntityTrait, QueryFilter, Set};
        let rows = job::Entity::find()
            .filter(self.column.is_not_null())
            .all(db)
            .await?;
        for row in &rows {
            let sealed = (self.value)(row).unwrap_or_default();
            let resealed = old.reseal_value(new, &(self.context)(row.id), sealed)?;
            let mut model = job::ActiveModel {
                id: Set(row.id),
                ..Default::default()
            };
            model.set(self.column, Some(resealed).into());
            model.update(db).await?;
        }
        Ok(rows.len())
    }

    /// Opens one value with `key`, if any row has one: the start-up check.
    async fn open_one(
        &self,
        db: &impl ConnectionTrait,
        key: &SecretKey,
    ) -> Result<(), SecretError> {
        use crate::entities::job;
        use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
        let Some(row) = job::Entity::find()
            .filter(self.column.is_not_null())
            .one(db)
            .await?
        else {
            return Ok(());
        };
        key.check_opens(
            &(self.context)(row.id),
            (self.value)(&row).unwrap_or_default(),
        )
    }
}

/// Refuses a key that cannot open what is stored (another node's, or a lost one): every secret,
/// and one value of each other sealed column.
pub async fn check_key(db: &impl ConnectionTrait, key: &SecretKey) -> Result<(), SecretError> {
    for column in Column::ALL {
        column.open_one(db, key).await?;
    }
    Ok(())
}

/// Seals every sealed value again under `new`, in one transaction: all or nothing. Returns how
/// many of each column.
pub async fn rekey(
    db: &sea_orm::DatabaseConnection,
    old: &SecretKey,
    new: &SecretKey,
    who: &super::audit::Actor<'_>,
    now: DateTime<Utc>,
) -> Result<Vec<(Column, usize)>, SecretError> {
    let txn = super::sql::begin_write(db).await?;
    let mut counts = Vec::new();
    for column in Column::ALL {
        counts.push((column, column.reseal(&txn, old, new, now).await?));
    }
    let detail = serde_json::json!({});
    super::audit::record(&txn, who, "secret.rekeyed", &summary(&counts), detail, now).await?;
    txn.commit().await?;
    Ok(counts)
}

/// What a rekey sealed again, e.g. `3 secrets, 1 channel credentials`.
pub fn summary(counts: &[(Column, usize)]) -> String {
    counts
        .iter()
        .map(|(column, n)| format!("{n} {}", column.label()))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every file under `app/src` and `server/src` that seals a value is one the list names.
    #[test]
    fn every_file_that_seals_is_in_the_list() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut sealing = Vec::new();
        for dir in ["app/src", "server/src"] {
            let mut stack = vec![root.join(dir)];
            while let Some(dir) = stack.pop() {
                for entry in std::fs::read_dir(&dir).unwrap() {
                    let path = entry.unwrap().path();
                    if path.is_dir() {
                        stack.push(path);
                    } else if path.extension().is_some_and(|e| e == "rs") {
                        let text = std::fs::read_to_string(&path).unwrap();
                        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
                        if code.contains(".seal_value(") || code.contains("key.seal(") {
                            let relative = path.strip_prefix(&root).unwrap();
                            sealing.push(relative.to_string_lossy().into_owned());
                        }
                    }
                }
            }
        }
        assert!(!sealing.is_empty());
        let listed: Vec<&str> = Column::ALL.iter().map(|c| c.sealed_by()).collect();
        for file in &sealing {
            assert!(
                listed.contains(&file.as_str()),
                "{file} seals values with the secret key: add its column to services/sealed.rs"
            );
        }
    }
}
