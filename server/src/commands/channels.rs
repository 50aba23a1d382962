//! `bulwark channel …`: notification channels from the command line. A robot's URL carries
//! its token, so `--url -` reads it from stdin (first line), and `--secret-stdin` the signing
//! secret (the next line).

use super::audited;
use anyhow::Context;
use app::domain::chat::ChannelKind;
use app::services::notifications::channels::{self, NewChannel};
use app::services::secrets::SecretKey;
use sea_orm::DatabaseConnection;

use crate::channels::deliver;
use crate::config::Config;

#[derive(Debug, clap::Args)]
pub struct AddArgs {
    name: String,
    #[arg(long, value_enum)]
    kind: ChannelKind,
    /// The robot's or receiver's URL; `-` reads it from standard input.
    #[arg(long)]
    url: Option<String>,
    /// Read the signing secret from standard input (after the URL, when that is read too).
    #[arg(long)]
    secret_stdin: bool,
    /// For `email`: an address (repeat for more).
    #[arg(long)]
    to: Vec<String>,
}

fn stdin_line(what: &str) -> anyhow::Result<String> {
    use std::io::BufRead;
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .with_context(|| format!("could not read the {what} from standard input"))?;
    Ok(line.trim_end_matches(['\n', '\r']).to_string())
}

pub async fn add(db: &DatabaseConnection, key: &SecretKey, args: AddArgs) -> anyhow::Result<()> {
    let url = match args.url.as_deref() {
        Some("-") => Some(stdin_line("URL")?),
        other => other.map(str::to_string),
    };
    let secret = if args.secret_stdin {
        Some(stdin_line("signing secret")?)
    } else {
        None
    };
    let new = NewChannel {
        name: args.name,
        kind: Some(args.kind),
        url,
        secret,
        to: args.to,
    };
    let added = channels::add(db, key, &new, &super::cli(), crate::clock::now()).await?;
    println!("added {} ({}, {})", added.name, added.kind, added.target);
    Ok(())
}

pub async fn list(db: &DatabaseConnection, key: &SecretKey, json: bool) -> anyhow::Result<()> {
    let listed = channels::list(db, key)
        .await
        .context("could not list the channels")?;
    if json {
        println!("{}", serde_json::to_string_pretty(&listed)?);
        return Ok(());
    }
    println!("name\tkind\ttarget\tsigned\tlast_answer");
    for c in listed {
        println!(
            "{}\t{}\t{}\t{}\t{}",
            c.name,
            c.kind,
            c.target,
            if c.signed { "yes" } else { "no" },
            c.last_answer.unwrap_or_else(|| "-".into())
        );
    }
    Ok(())
}

/// Sends a test message; `Ok(true)` when the platform accepted it. The answer is printed:
/// `accepted: …` on stdout, anything else on stderr.
pub async fn test(
    db: &DatabaseConnection,
    key: &SecretKey,
    config: &Config,
    name: &str,
) -> anyhow::Result<bool> {
    let (accepted, answer) = deliver::deliver_test(db, key, config, name).await?;
    audited(db, "channel.tested", name).await?;
    if accepted {
        println!("accepted: {answer}");
    } else {
        eprintln!("{answer}");
    }
    Ok(accepted)
}

pub async fn remove(db: &DatabaseConnection, name: &str) -> anyhow::Result<()> {
    channels::remove(db, name, &super::cli(), crate::clock::now()).await?;
    println!("channel {name} removed");
    Ok(())
}
