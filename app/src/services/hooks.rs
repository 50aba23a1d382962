//! Trigger URLs: `POST /hooks/<id>` starts a run of one job, for systems that cannot hold an
//! API token. The id (128 random bits) is the credential, so it is stored only as its SHA-256
//! (in `jobs.hook_id`, 64 hex digits), shown once when it is made and rotated by making
//! another; an optional signing secret (sealed like other secrets) makes the caller prove it
//! knows more than the URL. Ids stored in plain by earlier versions (32 hex digits) are hashed
//! at start-up ([`hash_stored_ids`]), so their URLs keep working.

use chrono::{DateTime, Utc};
use rand_core::{OsRng, RngCore};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait,
    QueryFilter, Set,
};
use sha2::{Digest, Sha256};

use super::audit::{self, Actor};
use super::secrets::SecretKey;
use super::sql::begin_write;
use crate::domain::job::WhenPaused;
use crate::entities::job;

/// What a trigger URL's secret is sealed under (`super::sealed` opens it with the same).
pub(crate) fn context(job_id: i64) -> String {
    format!("hook:{job_id}")
}

pub use crate::views::jobs::Hook;

/// What is stored of a trigger URL's id.
fn stored(id: &str) -> String {
    hex::encode(Sha256::digest(id.as_bytes()))
}

/// What a trigger URL is, as its change is given to [`create`].
pub struct NewHook<'a> {
    /// The signing secret, when one is typed.
    pub secret: Option<&'a str>,
    pub when_paused: WhenPaused,
}

/// Gives the job a new trigger URL (the old one stops working), signed when the new hook has
/// a secret, and records who did. Returns it, with its path: the one time it is known.
pub async fn create(
    db: &DatabaseConnection,
    key: &SecretKey,
    job: &job::Model,
    new: NewHook<'_>,
    who: &Actor<'_>,
    now: DateTime<Utc>,
) -> Result<Hook, DbErr> {
    let mut bytes = [0u8; 16];
    OsRng.fill_bytes(&mut bytes);
    let id = hex::encode(bytes);
    let sealed = new
        .secret
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| key.seal_value(&context(job.id), s));
    let hook = Hook {
        path: Some(format!("/hooks/{id}")),
        signed: sealed.is_some(),
        when_paused: new.when_paused,
    };
    let txn = begin_write(db).await?;
    job::ActiveModel {
        id: Set(job.id),
        hook_id: Set(Some(stored(&id))),
        hook_secret: Set(sealed),
        hook_when_paused: Set(new.when_paused),
        ..Default::default()
    }
    .update(&txn)
    .await?;
    let detail =
        serde_json::json!({ "signed": hook.signed, "when_paused": hook.when_paused.as_str() });
    audit::record(&txn, who, "job.hook_created", &job.name, detail, now).await?;
    txn.commit().await?;
    Ok(hook)
}

/// Changes what the job's trigger URL does while the job is paused, keeping the URL, and
/// records who did; `None` (and nothing recorded) when the job has no trigger URL.
pub async fn set_when_paused(
    db: &DatabaseConnection,
    job: &job::Model,
    when_paused: WhenPaused,
    who: &Actor<'_>,
    now: DateTime<Utc>,
) -> Result<Option<Hook>, DbErr> {
    if job.hook_id.is_none() {
        return Ok(None);
    }
    let txn = begin_write(db).await?;
    let row = job::ActiveModel {
        id: Set(job.id),
        hook_when_paused: Set(when_paused),
        ..Default::default()
    }
    .update(&txn)
    .await?;
    let detail = serde_json::json!({ "when_paused": when_paused.as_str() });
    audit::record(&txn, who, "job.hook_changed", &job.name, detail, now).await?;
    txn.commit().await?;
    Ok(of(&row))
}

/// Hashes the trigger URL ids an earlier version stored in plain; how many. Run at start-up,
/// before anything serves.
pub async fn hash_stored_ids(db: &impl ConnectionTrait) -> Result<usize, DbErr> {
    let plain: Vec<job::Model> = job::Entity::find()
        .filter(job::Column::HookId.is_not_null())
        .all(db)
        .await?
        .into_iter()
        .filter(|row| row.hook_id.as_deref().is_some_and(|id| id.len() == 32))
        .collect();
    for row in &plain {
        job::ActiveModel {
            id: Set(row.id),
            hook_id: Set(row.hook_id.as_deref().map(stored)),
            ..Default::default()
        }
        .update(db)
        .await?;
    }
    Ok(plain.len())
}

/// Takes the job's trigger URL away, and records who did.
pub async fn remove(
    db: &DatabaseConnection,
    job: &job::Model,
    who: &Actor<'_>,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    let txn = begin_write(db).await?;
    job::ActiveModel {
        id: Set(job.id),
        hook_id: Set(None),
        hook_secret: Set(None),
        ..Default::default()
    }
    .update(&txn)
    .await?;
    let detail = serde_json::json!({});
    audit::record(&txn, who, "job.hook_removed", &job.name, detail, now).await?;
    txn.commit().await?;
    Ok(())
}

/// Whether the job has a trigger URL, and whether it is signed (its path is not kept).
pub fn of(row: &job::Model) -> Option<Hook> {
    row.hook_id.as_ref().map(|_| Hook {
        path: None,
        signed: row.hook_secret.is_some(),
        when_paused: row.hook_when_paused,
    })
}

/// The job a trigger URL's id belongs to, with its signing secret (`Err` when the secret is
/// sealed under another key).
pub async fn find(
    db: &impl ConnectionTrait,
    key: &SecretKey,
    hook_id: &str,
) -> Result<Option<(job::Model, Result<Option<String>, ()>)>, DbErr> {
    // Anything that is not 32 hex digits cannot be an id: no query for it.
    if hook_id.len() != 32 || !hook_id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok(None);
    }
    let Some(row) = job::Entity::find()
        .filter(job::Column::HookId.eq(stored(&hook_id.to_ascii_lowercase())))
        .one(db)
        .await?
    else {
        return Ok(None);
    };
    let secret = match &row.hook_secret {
        None => Ok(None),
        Some(sealed) => key.open_value(&context(row.id), sealed).map(Some).ok_or(()),
    };
    Ok(Some((row, secret)))
}
