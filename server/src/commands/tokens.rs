//! `bulwark token …`: API tokens for the systems around Bulwark. `create` prints the token
//! alone on standard output, once (so `TOKEN=$(bulwark token create …)` works); everything else
//! goes to standard error. Changes are audited with the actor `cli`.

use super::audited;
use anyhow::Context;
use app::domain::account::Role;
use app::services::tokens;
use sea_orm::DatabaseConnection;

/// `token create NAME --role R [--expires 30d]`.
pub async fn create(
    db: &DatabaseConnection,
    name: &str,
    role: Role,
    expires: Option<&str>,
) -> anyhow::Result<()> {
    let (token, info) = tokens::create(
        db,
        name,
        role,
        expires.unwrap_or(""),
        "cli",
        crate::clock::now(),
    )
    .await?;
    audited(db, "token.created", &info.name).await?;
    println!("{token}");
    eprintln!(
        "token {} ({}) created{}; it is shown this once: keep it where its user reads it",
        info.name,
        info.role,
        info.expires_at
            .map(|at| format!(", expires {}", at.to_rfc3339()))
            .unwrap_or_else(|| ", never expires".into())
    );
    Ok(())
}

/// `token list [--json]`: names, roles, dates; never a token.
pub async fn list(db: &DatabaseConnection, json: bool) -> anyhow::Result<()> {
    let listed = tokens::list(db)
        .await
        .context("could not list the tokens")?;
    if json {
        println!("{}", serde_json::to_string_pretty(&listed)?);
        return Ok(());
    }
    let date = |at: Option<chrono::DateTime<chrono::Utc>>| {
        at.map_or_else(|| "-".to_string(), |at| at.to_rfc3339())
    };
    println!("name\trole\tstate\tcreated\texpires\tlast_used");
    for t in listed {
        let state = if t.revoked_at.is_some() {
            "revoked"
        } else if t.expires_at.is_some_and(|at| at <= crate::clock::now()) {
            "expired"
        } else {
            "active"
        };
        println!(
            "{}\t{}\t{state}\t{}\t{}\t{}",
            t.name,
            t.role,
            t.created_at.to_rfc3339(),
            date(t.expires_at),
            date(t.last_used_at)
        );
    }
    Ok(())
}

/// `token revoke NAME`.
pub async fn revoke(db: &DatabaseConnection, name: &str) -> anyhow::Result<()> {
    let info = tokens::revoke(db, name, crate::clock::now()).await?;
    audited(db, "token.revoked", &info.name).await?;
    println!("token {} revoked", info.name);
    Ok(())
}
