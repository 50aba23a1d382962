//! `bulwark traffic …`: classify User-Agents, import access logs, flush running servers'
//! buffers, delete old hits.

use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;
use std::time::Duration;

use crate::traffic::bots::classify;
use anyhow::Context;
use sea_orm::DatabaseConnection;

use crate::cluster;
use crate::config::Config;
use crate::engine::builtin::FlushSummary;
use crate::traffic::{import as log_import, store};

pub async fn import(
    db: &DatabaseConnection,
    file: &Path,
    config: &Config,
    site: Option<&str>,
    json: bool,
) -> anyhow::Result<()> {
    let console = config.console_host();
    let site = match site {
        Some(typed) => {
            app::domain::sites::normalise_host(typed).map_err(|e| anyhow::anyhow!("--site: {e}"))?
        }
        None => console.clone(),
    };
    let rules = app::services::traffic::sites::rules(db, &console, crate::clock::now())
        .await
        .context("could not read the registered sites")?;
    let Some(excluded) = rules.accepts(&site, &console).cloned() else {
        anyhow::bail!(
            "--site: {site} is not a registered site; register it first with `bulwark site add {site}`"
        );
    };
    let size = std::fs::metadata(file)
        .with_context(|| format!("cannot open the log file {}", file.display()))?
        .len();
    let progress = if std::io::stderr().is_terminal() {
        let bar = indicatif::ProgressBar::new(size);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{bar:40} {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    } else {
        indicatif::ProgressBar::hidden()
    };
    let summary = log_import::import(
        db,
        file,
        &log_import::Target {
            site: &site,
            excluded: &excluded,
        },
        &config.traffic_settings(),
        config.traffic_ip,
        &progress,
    )
    .await?;
    progress.finish_and_clear();
    if json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
        return Ok(());
    }
    println!("lines read      {}", summary.lines);
    println!("hits recorded   {}", summary.hits);
    println!("rows written    {}", summary.rows_written);
    let excluded: u64 = summary.excluded.values().sum();
    println!("excluded        {excluded}");
    for (why, n) in &summary.excluded {
        println!("  {:<14}{n}", why.describe());
    }
    println!("unparsable      {}", summary.unparsable);
    for (line, why) in &summary.unparsable_lines {
        println!("  line {line}: {why}");
    }
    if summary.unparsable > summary.unparsable_lines.len() as u64 {
        println!(
            "  … and {} more",
            summary.unparsable - summary.unparsable_lines.len() as u64
        );
    }
    if summary.truncated > 0 {
        println!(
            "truncated       {} (a field longer than its limit was cut)",
            summary.truncated
        );
    }
    if summary.dropped > 0 {
        println!("dropped         {} (the buffer was full)", summary.dropped);
    }
    println!(
        "time            {:.2} s ({:.0} lines/s)",
        summary.seconds,
        summary.lines as f64 / summary.seconds.max(1e-9)
    );
    Ok(())
}

/// Asks every live server to write its buffer and waits for each (30 s at most).
pub async fn flush(db: &DatabaseConnection) -> anyhow::Result<()> {
    let broadcast = cluster::broadcast(
        db,
        cluster::TRAFFIC_FLUSH,
        "bulwark traffic flush",
        Duration::from_secs(30),
    )
    .await
    .context("could not send the flush request through the database")?;
    let summary = FlushSummary::of(&broadcast);
    println!("{}", summary.text);
    if !broadcast.silent.is_empty() || summary.failed > 0 {
        anyhow::bail!("not every server wrote its buffer");
    }
    Ok(())
}

pub async fn generate(
    db: &DatabaseConnection,
    site: &str,
    days: u32,
    per_day: u64,
    if_empty: bool,
    remove: bool,
) -> anyhow::Result<()> {
    use crate::traffic::generate;
    if remove {
        let deleted = generate::remove(db).await?;
        println!("removed {deleted} generated traffic rows; real hits are untouched");
        return Ok(());
    }
    if if_empty
        && generate::any_traffic(db)
            .await
            .context("could not read traffic")?
    {
        println!("traffic: the database already has traffic; nothing generated");
        return Ok(());
    }
    let rows = generate::generate(db, site, days, per_day, crate::clock::now(), 7).await?;
    println!(
        "traffic: generated {} hits over {days} days ({rows} rows), marked as generated; \
         remove them with `bulwark traffic generate --remove`",
        u64::from(days) * per_day
    );
    Ok(())
}

/// `traffic stats` as typed.
pub struct StatsRequest {
    pub range: Option<String>,
    pub from: Option<String>,
    pub to: Option<String>,
    pub visitors: String,
    pub category: Option<app::domain::bots::BotCategory>,
    pub source: Option<String>,
    pub site: Option<String>,
    pub country: Option<String>,
    pub campaign: Option<String>,
    pub status: Option<String>,
}

pub async fn stats(
    db: &DatabaseConnection,
    config: &Config,
    request: &StatsRequest,
    json: bool,
) -> anyhow::Result<()> {
    let tz = app::domain::cron::parse_timezone(&config.timezone)?;
    let filter = app::domain::filters::TrafficFilter::parse(
        request.range.as_deref(),
        request.from.as_deref(),
        request.to.as_deref(),
        Some(&request.visitors),
        request.category.map(|c| c.as_str()),
        request.source.as_deref(),
    )
    .and_then(|f| f.with_site(request.site.as_deref()))
    .and_then(|f| f.with_country(request.country.as_deref()))
    .map(|f| f.with_campaign(request.campaign.as_deref()))
    .and_then(|f| f.with_status(request.status.as_deref()))
    .map_err(|e| anyhow::anyhow!("--{}: {}", e.field, e.problem))?;
    let range = filter
        .resolve(crate::clock::now(), tz)
        .map_err(|e| anyhow::anyhow!("--{}: {}", e.field, e.problem))?;
    let query = app::services::traffic::StatsQuery::new(&filter, &range, tz);
    let stats = app::services::traffic::stats(db, &query)
        .await
        .context("could not read traffic figures")?;
    if json {
        println!("{}", serde_json::to_string_pretty(&stats)?);
        return Ok(());
    }
    println!(
        "{} to {} ({}), {}, {}",
        range.from,
        range.to,
        config.timezone,
        query.visitors.as_str(),
        query.site.as_deref().unwrap_or("all sites")
    );
    println!("page views    {}", stats.page_views);
    println!("visits        {}", stats.visits);
    println!("unique IPs    {}", stats.unique_ips);
    println!("unique pages  {}", stats.unique_pages);
    println!("people        {}", stats.human);
    println!("bots          {}", stats.bot);
    for (category, n) in &stats.by_category {
        println!("  {category:<12}{n}");
    }
    println!("bot sources");
    for (source, n) in &stats.by_source {
        println!("  {source:<12}{n}");
    }
    println!("top pages");
    for page in &stats.top_pages {
        println!(
            "  {:>8}  {:>8} people  {:>8} bots  {}{}",
            page.count,
            page.human,
            page.bot,
            if query.site.is_some() { "" } else { &page.site },
            page.path
        );
    }
    let people = &stats.people;
    for (title, list) in [
        ("referrers (people's arrivals)", &people.referrers),
        ("landing pages", &people.landing_pages),
        ("browsers", &people.browsers),
        ("operating systems", &people.systems),
        ("devices", &people.devices),
        ("countries", &stats.countries),
        ("channels (people's arrivals)", &stats.channels),
    ] {
        println!("{title}");
        for r in list {
            let name = match (r.name.is_empty(), title) {
                (false, _) => &r.name,
                (true, "countries") => "(unknown)",
                (true, _) => "(direct)",
            };
            println!("  {:>8}  {name}", r.views);
        }
    }
    println!("campaigns (source / medium / campaign)");
    for c in &stats.campaigns {
        println!(
            "  {:>8}  {} / {} / {}",
            c.views, c.source, c.medium, c.campaign
        );
    }
    Ok(())
}

pub async fn clean(db: &DatabaseConnection, days: u32) -> anyhow::Result<()> {
    let cleaned = store::clean(db, crate::clock::now(), days).await?;
    println!(
        "deleted {} traffic rows older than {days} days (before {})",
        cleaned.rows,
        cleaned.before.format("%Y-%m-%d %H:%M UTC")
    );
    Ok(())
}

/// Reads until end of input; invalid UTF-8 is read lossily rather than refused, as the capture
/// pipeline does.
pub fn classify_stdin(json: bool) -> anyhow::Result<()> {
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut line = Vec::new();
    loop {
        line.clear();
        if input
            .read_until(b'\n', &mut line)
            .context("could not read standard input")?
            == 0
        {
            break;
        }
        let text = String::from_utf8_lossy(&line);
        let verdict = classify(text.trim_end_matches(['\n', '\r']));
        if json {
            #[derive(serde::Serialize)]
            struct Line {
                is_bot: bool,
                source: Option<&'static str>,
                category: Option<app::domain::bots::BotCategory>,
            }
            let line = Line {
                is_bot: verdict.is_bot,
                source: verdict.source,
                category: verdict.category(),
            };
            serde_json::to_writer(&mut out, &line)?;
            writeln!(out)?;
        } else {
            match verdict.source {
                Some(source) => writeln!(out, "bot\t{source}")?,
                None => writeln!(out, "human")?,
            }
        }
    }
    out.flush()?;
    Ok(())
}
