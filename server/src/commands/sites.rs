//! `bulwark site …`: the sites whose page views `/api/collect` accepts. Changes are audited
//! with the actor `cli`; running servers pick them up within seconds.

use anyhow::Context;
pub use app::domain::goals::GoalTarget;
use app::domain::traffic_report::Every;
use app::services::traffic::{goals, reports, shares, sites};
use sea_orm::DatabaseConnection;

use crate::config::Config;

/// `site add HOST`.
pub async fn add(db: &DatabaseConnection, config: &Config, host: &str) -> anyhow::Result<()> {
    let now = crate::clock::now();
    let host = sites::add(db, host, &config.console_host(), &super::cli(), now).await?;
    println!("site {host} registered: only registered sites (and this console) can report now");
    println!(
        "embed on its pages: <script async src=\"{}/collect.js\"></script>",
        config.public_url().trim_end_matches('/')
    );
    Ok(())
}

/// `site list [--json]`: the console's host first, then the registered ones.
pub async fn list(db: &DatabaseConnection, config: &Config, json: bool) -> anyhow::Result<()> {
    let listed = sites::list(db, &config.console_host())
        .await
        .context("could not list the sites")?;
    if json {
        println!("{}", serde_json::to_string_pretty(&listed)?);
        return Ok(());
    }
    println!("host\tkind\texcluded");
    for site in &listed {
        let kind = if site.console { "console" } else { "site" };
        let excluded = site.excluded.replace('\n', ",");
        println!("{}\t{kind}\t{excluded}", site.host);
    }
    if listed.iter().all(|s| s.console) {
        eprintln!("no site is registered: any site that embeds collect.js can report");
    }
    Ok(())
}

/// `site remove HOST`: its reports are refused from now on, its scheduled report and share link
/// end; what it counted stays.
pub async fn remove(db: &DatabaseConnection, config: &Config, host: &str) -> anyhow::Result<()> {
    let now = crate::clock::now();
    let host = sites::remove(db, host, &config.console_host(), &super::cli(), now).await?;
    println!("site {host} removed; its counted page views stay");
    Ok(())
}

/// `site report SITE [--every day|week --to ADDRESS… --channel NAME… | --off]`.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// The site's host (the console's own or a registered one).
    site: String,
    /// How often: `day` (yesterday's figures) or `week` (last Monday to Sunday); the
    /// traffic-reports job queues them at 07:00.
    #[arg(long, value_enum, conflicts_with = "off")]
    every: Option<Every>,
    /// Addresses the mail goes to, in the language of mails.
    #[arg(long, num_args = 1.., value_name = "ADDRESS", requires = "every")]
    to: Vec<String>,
    /// Channels it goes to, each in its own language.
    #[arg(long, num_args = 1.., value_name = "NAME", requires = "every")]
    channel: Vec<String>,
    /// Stop the site's report.
    #[arg(long)]
    off: bool,
    /// With the site alone: its report as JSON (`null`: none).
    #[arg(long, conflicts_with_all = ["every", "off"])]
    json: bool,
}

pub async fn report(
    db: &DatabaseConnection,
    config: &Config,
    args: ReportArgs,
) -> anyhow::Result<()> {
    let now = crate::clock::now();
    if args.off {
        let site = reports::off(db, &args.site, &super::cli(), now).await?;
        println!("the report of {site} is off");
        return Ok(());
    }
    let Some(every) = args.every else {
        let found = reports::get(db, &args.site).await?;
        if args.json {
            println!("{}", serde_json::to_string_pretty(&found)?);
        } else if let Some(found) = found {
            println!("{}", described(&found));
        } else {
            println!("{} has no report", args.site);
        }
        return Ok(());
    };
    let new = reports::NewReport {
        site: &args.site,
        every,
        to: &args.to,
        channels: &args.channel,
    };
    let saved = reports::set(db, new, &config.console_host(), &super::cli(), now).await?;
    println!("{}", described(&saved));
    Ok(())
}

/// `shop.example: every week to a@example.com, channel ops`.
fn described(report: &app::views::traffic::ReportInfo) -> String {
    let mut to: Vec<String> = report.to.clone();
    to.extend(report.channels.iter().map(|c| format!("channel {c}")));
    format!(
        "{}: every {} to {}",
        report.site,
        report.every,
        to.join(", ")
    )
}

/// `site share SITE [--password-stdin] [--expires 30d]`: prints the link alone.
pub async fn share(
    db: &DatabaseConnection,
    config: &Config,
    site: &str,
    password: Option<&str>,
    expires: Option<&str>,
) -> anyhow::Result<()> {
    let now = crate::clock::now();
    let expires_at = match expires {
        None => None,
        Some(typed) => app::domain::api_token::parse_expiry(typed, now)
            .map_err(|p| anyhow::anyhow!("{}", app::i18n::current().say(&p)))?,
    };
    let new = shares::NewShare {
        site,
        password,
        expires_at,
    };
    let token = shares::create(db, new, &config.console_host(), &super::cli(), now).await?;
    println!(
        "{}/share/{token}",
        config.public_url().trim_end_matches('/')
    );
    Ok(())
}

/// `site unshare SITE`.
pub async fn unshare(db: &DatabaseConnection, site: &str) -> anyhow::Result<()> {
    let site = shares::revoke(db, site, &super::cli(), crate::clock::now()).await?;
    eprintln!("the share link of {site} is revoked");
    Ok(())
}

/// `site goal add SITE NAME --page PATTERN | --event NAME`.
pub async fn add_goal(
    db: &DatabaseConnection,
    config: &Config,
    site: &str,
    name: &str,
    target: GoalTarget,
) -> anyhow::Result<()> {
    let new = goals::NewGoal { site, name, target };
    let now = crate::clock::now();
    let goal = goals::add(db, new, &config.console_host(), &super::cli(), now).await?;
    println!(
        "goal {} added to {}: {} {}",
        goal.name, goal.site, goal.kind, goal.target
    );
    Ok(())
}

/// `site goal list [SITE] [--json]`.
pub async fn goals(db: &DatabaseConnection, site: Option<&str>, json: bool) -> anyhow::Result<()> {
    let listed = goals::list(db, site)
        .await
        .context("could not list the goals")?;
    if json {
        println!("{}", serde_json::to_string_pretty(&listed)?);
        return Ok(());
    }
    println!("site\tname\tkind\ttarget");
    for goal in &listed {
        println!(
            "{}\t{}\t{}\t{}",
            goal.site, goal.name, goal.kind, goal.target
        );
    }
    Ok(())
}

/// `site goal remove SITE NAME`: its conversions go; the page views and events stay.
pub async fn remove_goal(db: &DatabaseConnection, site: &str, name: &str) -> anyhow::Result<()> {
    goals::remove(db, site, name, &super::cli(), crate::clock::now()).await?;
    println!("goal {name} removed from {site}");
    Ok(())
}
