//! `bulwark token …`: API tokens for the systems around Bulwark. `create` prints the token
//! alone on standard output, once (so `TOKEN=$(bulwark token create …)` works); everything else
//! goes to standard error. Changes are audited with the actor `cli`.

use super::cli;
use anyhow::Context;
use app::services::tokens::{self, NewToken};
use sea_orm::DatabaseConnection;

/// `token create NAME --owner USER --scope S [--tags T1,T2] [--expires 30d]`.
pub async fn create(db: &DatabaseConnection, new: &NewToken<'_>) -> anyhow::Result<()> {
    let (token, info) = tokens::create(db, new, &cli(), crate::clock::now()).await?;
    println!("{token}");
    let tags = if info.tags.is_empty() {
        String::new()
    } else {
        format!(" for the jobs tagged {}", info.tags.join(", "))
    };
    eprintln!(
        "token {} ({}{tags}, owned by {}) created{}; it is shown this once: keep it where its user reads it",
        info.name,
        info.scope,
        new.owner.trim(),
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
    println!("name\tscope\ttags\towner\tstate\tcreated\texpires\tlast_used\tlast_used_from");
    let now = crate::clock::now();
    for t in listed {
        println!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
            t.name,
            t.scope,
            if t.tags.is_empty() {
                "-".into()
            } else {
                t.tags.join(",")
            },
            t.owner.as_deref().unwrap_or("-"),
            t.state(now),
            t.created_at.to_rfc3339(),
            date(t.expires_at),
            date(t.last_used_at),
            t.last_used_from.as_deref().unwrap_or("-"),
        );
    }
    Ok(())
}

/// `token revoke NAME`.
pub async fn revoke(db: &DatabaseConnection, name: &str) -> anyhow::Result<()> {
    let info = tokens::revoke(db, name, &cli(), crate::clock::now()).await?;
    println!("token {} revoked", info.name);
    Ok(())
}
