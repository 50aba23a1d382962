//! `bulwark calendar import FILE | export NAME | list`: work calendars from the shell
//! (`app/src/domain/calendar.rs`), in the jobs file's `[[calendar]]` form.

use std::path::Path;

use anyhow::Context;
use app::domain::calendar::{BaseInput, CalendarInput, DateInput};
use sea_orm::DatabaseConnection;

/// Keeps every `[[calendar]]` of the file (a file of jobs goes to `jobs apply`), all or none.
pub async fn import(
    db: &DatabaseConnection,
    key: &app::services::secrets::SecretKey,
    path: &Path,
) -> anyhow::Result<()> {
    let text = if path == Path::new("-") {
        std::io::read_to_string(std::io::stdin()).context("cannot read standard input")?
    } else {
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?
    };
    let refused = |problems: Vec<String>| {
        anyhow::anyhow!(
            "{} was not imported (nothing was changed):\n  {}",
            path.display(),
            problems.join("\n  ")
        )
    };
    let doc = crate::jobs_file::parse_document(&text).map_err(refused)?;
    if !doc.jobs.is_empty() {
        return Err(refused(vec![
            "the file defines jobs too: apply it with `bulwark jobs apply`".into(),
        ]));
    }
    if doc.calendars.is_empty() {
        return Err(refused(vec!["the file defines no [[calendar]]".into()]));
    }
    let names: Vec<String> = doc.calendars.iter().map(|c| c.name.clone()).collect();
    let applied = crate::jobs_file::apply_checked(db, doc, false, &super::cli(), key)
        .await
        .map_err(refused)?;
    for name in names {
        let said = if applied.calendars.contains(&name) {
            "saved"
        } else {
            "unchanged"
        };
        println!("{name}: {said}");
    }
    Ok(())
}

/// Prints the calendar as a `[[calendar]]` table `import` reads back.
pub async fn export(db: &DatabaseConnection, name: &str) -> anyhow::Result<()> {
    let calendar = app::services::calendars::named(db, name)
        .await
        .context("could not read the calendar")?
        .ok_or_else(|| {
            anyhow::anyhow!("there is no calendar named '{name}' (see `bulwark calendar list`)")
        })?;
    print!("{}", toml_table(&calendar.to_input()));
    Ok(())
}

/// A calendar as the jobs file writes it: one date to a line, named ones as inline tables.
pub fn toml_table(c: &CalendarInput) -> String {
    let quote = |s: &str| toml::Value::String(s.to_string()).to_string();
    let base = match &c.base {
        BaseInput::Text(text) => quote(text),
        BaseInput::Days(days) => {
            let days: Vec<String> = days.iter().map(|d| quote(d)).collect();
            format!("[{}]", days.join(", "))
        }
    };
    let dates = |list: &[DateInput]| -> String {
        if list.is_empty() {
            return "[]".into();
        }
        let lines: Vec<String> = list
            .iter()
            .map(|d| match d {
                DateInput::Date(date) => format!("  {},", quote(date)),
                DateInput::Named { date, name } => {
                    format!("  {{ date = {}, name = {} }},", quote(date), quote(name))
                }
            })
            .collect();
        format!("[\n{}\n]", lines.join("\n"))
    };
    format!(
        "[[calendar]]\nname = {}\nbase = {base}\noff = {}\non = {}\n",
        quote(&c.name),
        dates(&c.off),
        dates(&c.on)
    )
}

/// Every calendar: its base, the years it has dates for, and the jobs following it.
pub async fn list(db: &DatabaseConnection, json: bool) -> anyhow::Result<()> {
    let rows = app::services::calendars::list(db)
        .await
        .context("could not list the calendars")?;
    if json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(());
    }
    println!(
        "{:<24} {:<28} {:<12} {:>4} {:>4}  jobs",
        "name", "base", "years", "off", "on"
    );
    for row in rows {
        let years: Vec<String> = row.years.iter().map(i32::to_string).collect();
        println!(
            "{:<24} {:<28} {:<12} {:>4} {:>4}  {}",
            row.calendar.name,
            row.base,
            years.join(","),
            row.off,
            row.on,
            row.jobs.join(", ")
        );
    }
    Ok(())
}
