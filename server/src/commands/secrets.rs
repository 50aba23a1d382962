//! `bulwark secret …`: named secrets jobs refer to as `${secret:NAME}`. Values come from
//! standard input and are never printed; changes are audited with the actor `cli`.

use std::path::Path;

use anyhow::Context;
use app::domain::secrets::SecretName;
use app::services::secrets::{self, SecretKey};
use sea_orm::DatabaseConnection;

/// `secret set NAME`, the value on stdin.
pub async fn set(
    db: &DatabaseConnection,
    key: &SecretKey,
    name: &str,
    value: &str,
) -> anyhow::Result<()> {
    let name = SecretName::parse(name).map_err(anyhow::Error::msg)?;
    app::services::sealed::check_key(db, key).await?;
    let created = secrets::set(db, key, &name, value, &super::cli(), crate::clock::now()).await?;
    println!(
        "secret {name} {}; jobs refer to it as ${{secret:{name}}}",
        if created { "set" } else { "replaced" }
    );
    Ok(())
}

/// `secret list [--json]`: names and when they were set, never values.
pub async fn list(db: &DatabaseConnection, json: bool) -> anyhow::Result<()> {
    let listed = secrets::list(db)
        .await
        .context("could not list the secrets")?;
    if json {
        println!("{}", serde_json::to_string_pretty(&listed)?);
        return Ok(());
    }
    println!("name\tupdated");
    for s in listed {
        println!("{}\t{}", s.name, s.updated_at.to_rfc3339());
    }
    Ok(())
}

/// `secret remove NAME`.
pub async fn remove(db: &DatabaseConnection, name: &str) -> anyhow::Result<()> {
    secrets::remove(db, name, &super::cli(), crate::clock::now()).await?;
    println!("secret {name} removed");
    Ok(())
}

/// `secret rekey --new-key-file F`: every secret sealed again under a new key, written to a
/// new file `F` first (it must not exist); the operator then points `secret_key_file` at it on
/// every instance.
pub async fn rekey(
    db: &DatabaseConnection,
    old: &SecretKey,
    new_file: &Path,
) -> anyhow::Result<()> {
    if new_file.exists() {
        anyhow::bail!(
            "{} exists already: name a new file for the new key",
            new_file.display()
        );
    }
    let new = SecretKey::generate();
    new.write(new_file)?;
    let now = crate::clock::now();
    match app::services::sealed::rekey(db, old, &new, &super::cli(), now).await {
        Ok(counts) => {
            let summary = app::services::sealed::summary(&counts);
            println!(
                "{summary} now sealed with the key in {}: set secret_key_file to it on every \
                 instance and restart them",
                new_file.display()
            );
            Ok(())
        }
        Err(e) => {
            // Nothing was changed (one transaction); the unused key file goes.
            let _ = std::fs::remove_file(new_file);
            Err(e.into())
        }
    }
}
