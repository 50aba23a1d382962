//! A second factor for local accounts: TOTP codes (RFC 6238: 6 digits, 30-second steps, one
//! step either side tolerated) and one-time recovery codes.
//!
//! Enrolment is two steps: [`begin`] makes a seed (sealed with the secret key, in the registry
//! of `super::sealed`) and the `otpauth://` link an authenticator app reads from a QR code;
//! [`confirm`] turns it on once the person types a code it shows, and returns
//! [`RECOVERY_CODES`] recovery codes — the only time they exist outside their SHA-256 hashes.
//! At sign-in [`check`] takes a code or a recovery code, each once: a code's time step is kept
//! so the same code cannot sign in twice, and a recovery code is spent by the update that marks
//! it, so two racing sign-ins cannot both use it.

use chrono::{DateTime, Utc};
use rand_core::{OsRng, RngCore};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait,
    QueryFilter, Set,
};
use sha2::{Digest, Sha256};
use totp_rs::{Builder, Secret, Totp};

use super::audit::{self, Actor};
use super::secrets::{SecretError, SecretKey};
use crate::entities::{recovery_code, user};

/// Recovery codes made at each enrolment.
pub const RECOVERY_CODES: usize = 10;
/// The name authenticator apps show beside the account.
const ISSUER: &str = "Bulwark";

#[derive(Debug, thiserror::Error)]
pub enum SecondFactorError {
    #[error("the second factor is already on; turn it off first")]
    AlreadyOn,
    #[error("no enrolment is under way")]
    NotStarted,
    #[error("that code is not the one the authenticator shows now")]
    WrongCode,
    #[error("the account is not a local one")]
    NotLocal,
    #[error(transparent)]
    Secret(#[from] SecretError),
    #[error("{0}")]
    Totp(String),
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// What the person's authenticator app needs: the seed in base32 and the `otpauth://` link.
#[derive(Debug, Clone)]
pub struct Enrolment {
    pub secret: String,
    pub link: String,
}

/// The context a seed is sealed under: the account's, so a seed moved to another row opens
/// for nobody.
pub fn context(user_id: i64) -> String {
    format!("users.totp_seed:{user_id}")
}

fn totp(seed: Vec<u8>, account: &str) -> Result<Totp, SecondFactorError> {
    Builder::new()
        .with_secret(Secret::from(seed))
        .with_issuer(Some(ISSUER))
        .with_account_name(account)
        .build()
        .map_err(|e| SecondFactorError::Totp(e.to_string()))
}

fn seed_of(key: &SecretKey, account: &user::Model) -> Result<Option<Vec<u8>>, SecondFactorError> {
    let Some(sealed) = &account.totp_seed else {
        return Ok(None);
    };
    let base32 = key
        .open_value(&context(account.id), sealed)
        .ok_or_else(|| SecretError::WrongKey(context(account.id)))?;
    let secret =
        Secret::try_from_base32(&base32).map_err(|e| SecondFactorError::Totp(format!("{e:?}")))?;
    Ok(Some(secret.as_bytes().to_vec()))
}

/// Starts (or starts again) an enrolment: a new seed, not yet asked for at sign-in.
pub async fn begin(
    db: &impl ConnectionTrait,
    key: &SecretKey,
    account: &user::Model,
) -> Result<Enrolment, SecondFactorError> {
    if !account.sign_in.eq("password") {
        return Err(SecondFactorError::NotLocal);
    }
    if account.totp_enabled_at.is_some() {
        return Err(SecondFactorError::AlreadyOn);
    }
    let mut seed = [0u8; 20];
    OsRng.fill_bytes(&mut seed);
    let totp = totp(seed.to_vec(), &account.username)?;
    let secret = totp.secret().to_base32();
    let link = totp
        .to_url()
        .map_err(|e| SecondFactorError::Totp(e.to_string()))?;
    user::Entity::update_many()
        .col_expr(
            user::Column::TotpSeed,
            Expr::value(key.seal_value(&context(account.id), &secret)),
        )
        .filter(user::Column::Id.eq(account.id))
        .exec(db)
        .await?;
    Ok(Enrolment { secret, link })
}

/// Turns the second factor on once `code` matches the enrolment's seed; returns the recovery
/// codes, shown this once.
pub async fn confirm(
    db: &DatabaseConnection,
    key: &SecretKey,
    account: &user::Model,
    code: &str,
    who: &Actor<'_>,
    now: DateTime<Utc>,
) -> Result<Vec<String>, SecondFactorError> {
    if account.totp_enabled_at.is_some() {
        return Err(SecondFactorError::AlreadyOn);
    }
    let seed = seed_of(key, account)?.ok_or(SecondFactorError::NotStarted)?;
    let step = totp(seed, &account.username)?
        .check(code.trim(), now.timestamp().max(0) as u64)
        .ok_or(SecondFactorError::WrongCode)?;
    let txn = super::sql::begin_write(db).await?;
    user::Entity::update_many()
        .col_expr(user::Column::TotpEnabledAt, Expr::value(now))
        .col_expr(user::Column::TotpLastStep, Expr::value(step as i64))
        .filter(user::Column::Id.eq(account.id))
        .exec(&txn)
        .await?;
    let codes = new_recovery_codes(&txn, account.id).await?;
    let detail = serde_json::json!({});
    audit::record(
        &txn,
        who,
        "user.second_factor_on",
        &account.username,
        detail,
        now,
    )
    .await?;
    txn.commit().await?;
    Ok(codes)
}

async fn new_recovery_codes(db: &impl ConnectionTrait, user_id: i64) -> Result<Vec<String>, DbErr> {
    recovery_code::Entity::delete_many()
        .filter(recovery_code::Column::UserId.eq(user_id))
        .exec(db)
        .await?;
    let mut codes = Vec::with_capacity(RECOVERY_CODES);
    for _ in 0..RECOVERY_CODES {
        let mut bytes = [0u8; 8];
        OsRng.fill_bytes(&mut bytes);
        let hex = hex::encode(bytes);
        let code = format!(
            "{}-{}-{}-{}",
            &hex[0..4],
            &hex[4..8],
            &hex[8..12],
            &hex[12..16]
        );
        recovery_code::ActiveModel {
            user_id: Set(user_id),
            code_hash: Set(recovery_hash(&code)),
            used_at: Set(None),
            ..Default::default()
        }
        .insert(db)
        .await?;
        codes.push(code);
    }
    Ok(codes)
}

/// A recovery code's hash, however it was typed (case, blanks and dashes do not count).
fn recovery_hash(typed: &str) -> String {
    let normal: String = typed
        .chars()
        .filter(char::is_ascii_hexdigit)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    hex::encode(Sha256::digest(normal.as_bytes()))
}

/// Turns the second factor off and spends every recovery code.
pub async fn turn_off(
    db: &DatabaseConnection,
    account: &user::Model,
    who: &Actor<'_>,
    now: DateTime<Utc>,
) -> Result<bool, DbErr> {
    if account.totp_seed.is_none() {
        return Ok(false);
    }
    let txn = super::sql::begin_write(db).await?;
    user::Entity::update_many()
        .col_expr(user::Column::TotpSeed, Expr::value(Option::<String>::None))
        .col_expr(
            user::Column::TotpEnabledAt,
            Expr::value(Option::<DateTime<Utc>>::None),
        )
        .col_expr(user::Column::TotpLastStep, Expr::value(Option::<i64>::None))
        .filter(user::Column::Id.eq(account.id))
        .exec(&txn)
        .await?;
    recovery_code::Entity::delete_many()
        .filter(recovery_code::Column::UserId.eq(account.id))
        .exec(&txn)
        .await?;
    let detail = serde_json::json!({});
    audit::record(
        &txn,
        who,
        "user.second_factor_off",
        &account.username,
        detail,
        now,
    )
    .await?;
    txn.commit().await?;
    Ok(true)
}

/// Whether `account` must give a code to sign in.
pub fn required(account: &user::Model) -> bool {
    account.totp_enabled_at.is_some()
}

/// Checks a code from the authenticator, or a recovery code, and spends it.
pub async fn check(
    db: &impl ConnectionTrait,
    key: &SecretKey,
    account: &user::Model,
    typed: &str,
    now: DateTime<Utc>,
) -> Result<bool, SecondFactorError> {
    let typed = typed.trim();
    if typed.len() == 6 && typed.bytes().all(|b| b.is_ascii_digit()) {
        return check_code(db, key, account, typed, now).await;
    }
    let spent = recovery_code::Entity::update_many()
        .col_expr(recovery_code::Column::UsedAt, Expr::value(now))
        .filter(recovery_code::Column::UserId.eq(account.id))
        .filter(recovery_code::Column::CodeHash.eq(recovery_hash(typed)))
        .filter(recovery_code::Column::UsedAt.is_null())
        .exec(db)
        .await?
        .rows_affected;
    Ok(spent == 1)
}

async fn check_code(
    db: &impl ConnectionTrait,
    key: &SecretKey,
    account: &user::Model,
    code: &str,
    now: DateTime<Utc>,
) -> Result<bool, SecondFactorError> {
    let Some(seed) = seed_of(key, account)? else {
        return Ok(false);
    };
    let Some(step) = totp(seed, &account.username)?.check(code, now.timestamp().max(0) as u64)
    else {
        return Ok(false);
    };
    // Taken once: only a step after the last accepted one moves it on.
    let step = step as i64;
    let taken = user::Entity::update_many()
        .col_expr(user::Column::TotpLastStep, Expr::value(step))
        .filter(user::Column::Id.eq(account.id))
        .filter(
            sea_orm::Condition::any()
                .add(user::Column::TotpLastStep.is_null())
                .add(user::Column::TotpLastStep.lt(step)),
        )
        .exec(db)
        .await?
        .rows_affected;
    Ok(taken == 1)
}

/// Every seed sealed again from `old` to `new` (`super::sealed::rekey`); the count.
pub(crate) async fn reseal(
    db: &impl ConnectionTrait,
    old: &SecretKey,
    new: &SecretKey,
) -> Result<usize, SecretError> {
    let rows = user::Entity::find()
        .filter(user::Column::TotpSeed.is_not_null())
        .all(db)
        .await?;
    for row in &rows {
        let sealed = row.totp_seed.as_deref().unwrap_or_default();
        let resealed = old.reseal_value(new, &context(row.id), sealed)?;
        user::Entity::update_many()
            .col_expr(user::Column::TotpSeed, Expr::value(resealed))
            .filter(user::Column::Id.eq(row.id))
            .exec(db)
            .await?;
    }
    Ok(rows.len())
}

/// Opens one seed with `key`, if any account has one: the start-up check.
pub(crate) async fn open_one(
    db: &impl ConnectionTrait,
    key: &SecretKey,
) -> Result<(), SecretError> {
    let Some(row) = user::Entity::find()
        .filter(user::Column::TotpSeed.is_not_null())
        .one(db)
        .await?
    else {
        return Ok(());
    };
    key.check_opens(
        &context(row.id),
        row.totp_seed.as_deref().unwrap_or_default(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovery_codes_are_read_however_they_are_typed() {
        let code = "a1b2-c3d4-e5f6-0718";
        assert_eq!(recovery_hash(code), recovery_hash(" A1B2 C3D4E5F6-0718 "));
        assert_ne!(recovery_hash(code), recovery_hash("a1b2-c3d4-e5f6-0719"));
    }
}
