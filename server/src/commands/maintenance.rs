//! `bulwark pause`, `resume` and `status`: maintenance from the operator's shell, by the same
//! rules as the console (`app::services::maintenance`). The pause is rows in the database, so
//! every running instance sees it at its next trigger pass or claim.

use anyhow::Context;
use app::services::maintenance::{self, MaintenanceError, NewWindow};
use sea_orm::DatabaseConnection;

/// Who the banner says paused: the operator's login name when the shell has one.
fn operator() -> String {
    match std::env::var("USER").or_else(|_| std::env::var("USERNAME")) {
        Ok(user) if !user.trim().is_empty() => format!("{} (command line)", user.trim()),
        _ => "command line".into(),
    }
}

pub async fn pause(
    db: &DatabaseConnection,
    reason: &str,
    until: Option<&str>,
    tag: Option<&str>,
) -> anyhow::Result<()> {
    let now = crate::clock::now();
    let ends_at = until
        .map(|text| app::domain::maintenance::parse_time(text, now))
        .transpose()
        .map_err(|e| anyhow::anyhow!("--until: {e}"))?;
    let window = NewWindow {
        starts_at: now,
        ends_at,
        reason: reason.to_string(),
        tag: tag.map(str::to_string),
    };
    let operator = operator();
    let who = app::services::audit::Actor::named(&operator);
    match maintenance::schedule(db, window, &who, now).await {
        Ok(_) => {}
        Err(MaintenanceError::Db(e)) => {
            return Err(e).context("could not record the pause");
        }
        Err(e) => anyhow::bail!("{e}"),
    }
    let status = maintenance::status(db, now)
        .await
        .context("paused, but could not read the state back")?;
    println!(
        "{}",
        status
            .summary(app::i18n::Locale::english())
            .unwrap_or_default()
    );
    Ok(())
}

pub async fn resume(db: &DatabaseConnection) -> anyhow::Result<()> {
    let operator = operator();
    let who = app::services::audit::Actor::named(&operator);
    let ended = maintenance::resume(db, &who, crate::clock::now())
        .await
        .context("could not end the pause")?;
    if ended.is_empty() {
        println!("Nothing was paused.");
        return Ok(());
    }
    for window in &ended {
        let subject = window.tag.clone().unwrap_or_else(|| "all jobs".into());
        println!(
            "Resumed {subject} (paused by {}: {}).",
            window.created_by, window.reason
        );
    }
    println!("Ticks missed while paused follow each job's misfire policy.");
    Ok(())
}

pub async fn status(db: &DatabaseConnection, json: bool) -> anyhow::Result<()> {
    let status = maintenance::status(db, crate::clock::now())
        .await
        .context("could not read the maintenance state")?;
    if json {
        println!(
            "{}",
            serde_json::json!({
                "paused": status.pausing_all().is_some(),
                "active": status.active,
                "ahead": status.ahead,
                "paused_jobs": status.paused_jobs,
            })
        );
        return Ok(());
    }
    match status.summary(app::i18n::Locale::english()) {
        Some(summary) => println!("{summary}"),
        None => println!("Not paused: jobs run on their schedules."),
    }
    for window in &status.ahead {
        println!(
            "Scheduled: {} from {} UTC to {} UTC by {}: {}",
            window
                .tag
                .as_deref()
                .map_or("every job".to_string(), |t| format!("jobs tagged {t}")),
            window.starts_at.format("%Y-%m-%d %H:%M"),
            window.ends_at.map_or("(open)".to_string(), |e| e
                .format("%Y-%m-%d %H:%M")
                .to_string()),
            window.created_by,
            window.reason
        );
    }
    if !status.paused_jobs.is_empty() {
        println!("Paused jobs: {}", status.paused_jobs.join(", "));
    }
    Ok(())
}
