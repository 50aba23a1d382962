//! `bulwark user …`: accounts from the command line, for the operator who is locked out of the
//! web console (or scripts it). Every change is audited with the actor `cli`.

use anyhow::Context;
use app::domain::account::{NewPassword, Role};
use app::services::users::{self, Change, ManageError};
use sea_orm::DatabaseConnection;
use serde::Serialize;

fn explain(e: ManageError) -> anyhow::Error {
    match e {
        ManageError::NotFound(_) | ManageError::LastAdmin(_) => anyhow::Error::new(e),
        other => anyhow::Error::new(other).context("could not change the account"),
    }
}

/// `user passwd USER`: sets the password read from stdin and ends the user's sessions.
pub async fn passwd(db: &DatabaseConnection, username: &str, password: &str) -> anyhow::Result<()> {
    let password = NewPassword::parse(password)?;
    users::set_password(db, username, &password, false, &super::cli())
        .await
        .map_err(explain)?;
    println!("password of {username} changed; their sessions ended");
    Ok(())
}

/// `user role|disable|enable|delete USER`.
pub async fn change(db: &DatabaseConnection, username: &str, change: Change) -> anyhow::Result<()> {
    let changed = users::change(db, username, change, &super::cli(), crate::clock::now())
        .await
        .map_err(explain)?;
    let done = match change {
        Change::Role(Role::Admin) => "is now an admin",
        Change::Role(Role::Viewer) => "is now a viewer",
        Change::Disabled(true) => "is disabled; their sessions ended",
        Change::Disabled(false) => "is enabled",
        Change::Delete => "is deleted",
    };
    if changed {
        println!("{username} {done}");
    } else {
        println!(
            "{username} already {}",
            done.split(';').next().unwrap_or(done)
        );
    }
    Ok(())
}

#[derive(Serialize)]
struct Listed {
    username: String,
    role: Role,
    state: app::domain::account::AccountState,
    last_sign_in: Option<chrono::DateTime<chrono::Utc>>,
    /// `password`, `oidc:NAME` or `header`.
    sign_in: String,
}

/// `user list [--json]`: `username role state last_sign_in sign_in`, tab-separated under a
/// header.
pub async fn list(db: &DatabaseConnection, json: bool) -> anyhow::Result<()> {
    let listed: Vec<Listed> = users::list(db)
        .await
        .context("could not list users")?
        .into_iter()
        .map(|u| Listed {
            username: u.username,
            role: u.role,
            state: u.state,
            last_sign_in: u.last_sign_in_at,
            sign_in: u.sign_in.to_string(),
        })
        .collect();
    if json {
        println!("{}", serde_json::to_string_pretty(&listed)?);
        return Ok(());
    }
    println!("username\trole\tstate\tlast_sign_in\tsign_in");
    for u in listed {
        println!(
            "{}\t{}\t{}\t{}\t{}",
            u.username,
            u.role,
            u.state,
            u.last_sign_in
                .map_or_else(|| "-".to_string(), |t| t.to_rfc3339()),
            u.sign_in
        );
    }
    Ok(())
}

/// `user sessions USER [--end]`: the user's live sessions, or ends them all.
pub async fn sessions(
    db: &DatabaseConnection,
    lifetimes: app::services::sessions::Lifetimes,
    username: &str,
    end: bool,
) -> anyhow::Result<()> {
    let account = users::find_by_username(db, username)
        .await
        .context("could not read the account")?
        .ok_or_else(|| anyhow::Error::new(ManageError::NotFound(username.to_string())))?;
    if end {
        use app::services::sessions::{self, Which};
        let (user, now) = ((account.id, username), crate::clock::now());
        let cli = super::cli();
        let ended = sessions::end(
            db,
            user,
            Which::AllBut(None),
            &cli,
            "user.end_sessions",
            now,
        )
        .await
        .context("could not end the sessions")?;
        println!("{ended} session(s) of {username} ended");
        return Ok(());
    }
    let sessions =
        app::services::sessions::list_for_user(db, account.id, lifetimes, crate::clock::now())
            .await
            .context("could not list the sessions")?;
    println!("created\tlast_seen\taddress\tuser_agent");
    for s in sessions {
        println!(
            "{}\t{}\t{}\t{}",
            s.created_at.to_rfc3339(),
            s.last_seen_at.unwrap_or(s.created_at).to_rfc3339(),
            s.ip.as_deref().unwrap_or("-"),
            s.user_agent.as_deref().unwrap_or("-")
        );
    }
    Ok(())
}

/// `user link NAME --oidc PROVIDER:SUB`: from now on the person with subject SUB at the
/// configured provider PROVIDER signs in as NAME's account.
pub async fn link(
    db: &DatabaseConnection,
    config: &crate::config::Config,
    username: &str,
    identity: &str,
) -> anyhow::Result<()> {
    let (provider, subject) = app::domain::sign_in::parse_link(identity).with_context(|| {
        format!("--oidc '{identity}' must be PROVIDER:SUB, the provider's name and the person's subject there")
    })?;
    let configured = config
        .oidc_providers()
        .into_iter()
        .find(|p| p.name == provider.as_str())
        .with_context(|| {
            format!(
                "no OpenID provider is named '{}' in the configuration",
                provider.as_str()
            )
        })?;
    let claimed = app::services::identities::Claimed {
        provider: &provider,
        issuer: &configured.issuer,
        subject: &subject,
        name: None,
        role: None,
        ip: None,
    };
    let now = crate::clock::now();
    let cli = crate::commands::cli();
    let days = configured.token_max_days;
    app::services::identities::link(db, username, &claimed, days, &cli, now).await?;
    println!("linked {username} to oidc:{}", provider.as_str());
    Ok(())
}
